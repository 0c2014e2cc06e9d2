//! The testbed's verifier: the answer a response states ([`extract_answer`]) against the sum
//! of the terms ([`TestbedVerifier`]).

use crate::{Problem, Score, Verifier};

/// The answer a response states: the integer after the last `Answer:` (None if there is none).
pub fn extract_answer(response: &str) -> Option<i64> {
    let at = response.rfind("Answer:")?;
    let rest = response[at + "Answer:".len()..].trim_start();
    let end = rest
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(rest.len(), |(i, _)| i);
    let digits = &rest[..end];
    if digits.len() > 18 {
        return None; // longer than any testbed answer; avoid overflow
    }
    digits.parse().ok()
}

/// The testbed's verifier: reward 1 iff the stated answer equals the sum of the terms.
#[derive(Debug, Clone, Copy, Default)]
pub struct TestbedVerifier;

impl Verifier for TestbedVerifier {
    fn score(&self, response: &str, problem: &Problem) -> Score {
        let Ok(gold) = problem.answer.trim().parse::<i64>() else {
            return Score::binary(
                false,
                None,
                format!("reference {:?} is not an integer", problem.answer),
            );
        };
        match extract_answer(response) {
            None => Score::binary(false, None, "no \"Answer: <integer>\" found"),
            Some(a) if a == gold => Score::binary(true, Some(a.to_string()), "exact integer match"),
            Some(a) => Score::binary(false, Some(a.to_string()), format!("{a} != {gold}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbed::problem;

    #[test]
    fn verifier_reads_the_last_answer() {
        let p = problem(&[7, 9, 5]);
        assert_eq!(p.answer, "21");
        let v = TestbedVerifier;
        assert!(v.score(" 7+9=16 16+5=21 Answer: 21", &p).correct);
        assert!(
            v.score(" Answer: 20 ... Answer: 21<|endoftext|>", &p)
                .correct
        );
        let s = v.score(" 7+9=17 17+5=22 Answer: 22", &p);
        assert!(!s.correct && s.extracted.as_deref() == Some("22"));
        assert!(!v.score(" 7+9=16 16+5=21", &p).correct);
        assert!(!v.score(" Answer: 99999999999999999999999999", &p).correct);
        assert_eq!(v.score(" Answer: 21", &p).reward, 1.0);
    }
}
