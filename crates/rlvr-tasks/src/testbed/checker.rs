//! The environment's step checker of the verified regimes: [`checker_verdict`] and the
//! verdicts it inserts.

/// The environment's verdict on a step of a verified regime that continues the right sum.
pub const VERDICT_OK: &str = "ok";
/// The environment's verdict on a failed step.
pub const VERDICT_NO: &str = "no";

/// The checker of the verified regimes: `Some(true)` (`ok`) or `Some(false)` (`no`) when the
/// response so far ends with a step the checker has not judged yet, `None` otherwise.
///
/// A step is a word `a+b=c` followed by a space. Its verdict is `ok` iff it continues the
/// right sum: with `i` = 1 + the number of `ok` steps before it, `a` is the sum of the first
/// `i` terms, `b` is term `i` and `c = a + b`; a step after the last term is `no`. The verdict
/// reads only the problem's terms and the response, so the policy cannot make a wrong step
/// pass.
pub fn checker_verdict(terms: &[u32], response: &str) -> Option<bool> {
    let body = response.strip_suffix(' ')?;
    let words: Vec<&str> = body.split(' ').collect();
    let (last, before) = words.split_last()?;
    let (a, b, c) = parse_step(last)?;
    let done = before
        .windows(2)
        .filter(|w| w[1] == VERDICT_OK && parse_step(w[0]).is_some())
        .count();
    let i = done + 1;
    if i >= terms.len() {
        return Some(false);
    }
    let prefix: i64 = terms[..i].iter().map(|&t| i64::from(t)).sum();
    let term = i64::from(terms[i]);
    Some(a == prefix && b == term && c == prefix + term)
}

/// `a+b=c` as its three numbers (at most 18 digits each).
fn parse_step(word: &str) -> Option<(i64, i64, i64)> {
    let num = |x: &str| {
        if x.is_empty() || x.len() > 18 || !x.bytes().all(|d| d.is_ascii_digit()) {
            return None;
        }
        x.parse::<i64>().ok()
    };
    let (a, rest) = word.split_once('+')?;
    let (b, c) = rest.split_once('=')?;
    Some((num(a)?, num(b)?, num(c)?))
}

#[cfg(test)]
mod tests {
    use super::super::study;
    use super::*;
    use crate::testbed::{sample_terms, worked_solution, Regime, Split};
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    /// The checker judges exactly the steps the writer judged, the same way, at the point
    /// where the environment inserts its verdict, and nothing else.
    #[test]
    fn the_checker_agrees_with_every_written_verdict() {
        for regime in [Regime::VerifiedRetry, Regime::VerifiedAbort] {
            let cfg = study(regime);
            let mut rng = StdRng::seed_from_u64(5);
            let mut judged = 0;
            for _ in 0..300 {
                let terms = sample_terms(&cfg, Split::Train, &mut rng);
                let (text, _) = worked_solution(&cfg, &terms, &mut rng);
                for (at, c) in text.char_indices() {
                    if c != ' ' {
                        continue;
                    }
                    let prefix = &text[..=at];
                    let rest = &text[at + 1..];
                    let expected = if rest.starts_with(VERDICT_OK) {
                        Some(true)
                    } else if rest.starts_with(VERDICT_NO) {
                        Some(false)
                    } else {
                        None
                    };
                    assert_eq!(
                        checker_verdict(&terms, prefix),
                        expected,
                        "{text:?} at {at}"
                    );
                    judged += usize::from(expected.is_some());
                }
            }
            assert!(judged > 600, "{regime:?}: {judged}");
        }
    }

    #[test]
    fn the_checker_refuses_what_does_not_continue_the_sum() {
        let t = [7, 9, 5, 3];
        assert_eq!(checker_verdict(&t, " 7+9=16 "), Some(true));
        assert_eq!(
            checker_verdict(&t, " 7+9=16"),
            None,
            "no space yet: the number may go on"
        );
        assert_eq!(checker_verdict(&t, " 7+9=16 ok "), None, "already judged");
        assert_eq!(checker_verdict(&t, ""), None);
        assert_eq!(checker_verdict(&t, " "), None);
        // right arithmetic, wrong chain: a skipped term, a wrong start, a reordered step
        assert_eq!(checker_verdict(&t, " 7+5=12 "), Some(false));
        assert_eq!(checker_verdict(&t, " 6+9=15 "), Some(false));
        assert_eq!(checker_verdict(&t, " 9+7=16 "), Some(false));
        assert_eq!(checker_verdict(&t, " 7+9=16 ok 16+5=21 "), Some(true));
        // an `ok` the policy writes after a wrong step does not advance the chain
        assert_eq!(checker_verdict(&t, " 7+9=17 no ok 16+5=21 "), Some(false));
        assert_eq!(
            checker_verdict(&t, " 7+9=16 ok 16+5=21 ok 21+3=24 ok 24+1=25 "),
            Some(false),
            "past the last term"
        );
        // hostile numbers: too long, signs, empty parts
        assert_eq!(
            checker_verdict(&t, &format!(" 7+9={} ", "1".repeat(40))),
            None
        );
        assert_eq!(checker_verdict(&t, " 7+-9=-2 "), None);
        assert_eq!(checker_verdict(&t, " +9= "), None);
        assert_eq!(checker_verdict(&t, " 7+9=16=16 "), None);
    }
}
