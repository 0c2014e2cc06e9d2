//! Evaluation estimators over `n` samples per problem.
//!
//! ```text
//! pass@k = 1 - C(n - c, k) / C(n, k)      (Chen et al. 2021, unbiased; c = correct samples)
//! mean@k = c / n                           (mean accuracy over the samples; "avg@k")
//! maj@k  = [the most frequent extracted answer is correct]
//! ```

use crate::CoreError;

/// Unbiased pass@k for `n` samples of which `c` are correct, computed as the stable product
/// `1 - Π_{i=n-c+1}^{n} (1 - k/i)`. Requires `1 <= k <= n` and `c <= n`.
pub fn pass_at_k(n: usize, c: usize, k: usize) -> Result<f64, CoreError> {
    if k == 0 || k > n {
        return Err(CoreError::InvalidParameter {
            name: "k",
            reason: format!("k = {k} must be in 1..={n} (samples)"),
        });
    }
    if c > n {
        return Err(CoreError::InvalidParameter {
            name: "c",
            reason: format!("{c} correct of {n} samples"),
        });
    }
    if n - c < k {
        return Ok(1.0);
    }
    Ok(1.0
        - (n - c + 1..=n)
            .map(|i| 1.0 - k as f64 / i as f64)
            .product::<f64>())
}

/// mean@k: the fraction of correct samples, `c / n` (0 for no samples).
pub fn mean_at_k(correct: &[bool]) -> f64 {
    if correct.is_empty() {
        return 0.0;
    }
    correct.iter().filter(|&&c| c).count() as f64 / correct.len() as f64
}

/// One sample's vote: its extracted answer (None if nothing could be extracted) and whether
/// it was judged correct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vote {
    /// The normalized extracted answer.
    pub answer: Option<String>,
    /// The verifier's verdict.
    pub correct: bool,
}

/// maj@k: 1 if the most frequent extracted answer among the votes is correct, else 0.
/// Samples without an answer do not vote; ties go to the answer seen first; no votes gives 0.
/// A voted answer counts as correct if any of its samples was judged correct.
pub fn maj_at_k(votes: &[Vote]) -> f64 {
    let mut tally: Vec<(&str, usize, bool)> = Vec::new();
    for v in votes {
        let Some(a) = v.answer.as_deref() else {
            continue;
        };
        match tally.iter_mut().find(|t| t.0 == a) {
            Some(t) => {
                t.1 += 1;
                t.2 |= v.correct;
            }
            None => tally.push((a, 1, v.correct)),
        }
    }
    let mut best: Option<&(&str, usize, bool)> = None;
    for t in &tally {
        if best.is_none_or(|b| t.1 > b.1) {
            best = Some(t);
        }
    }
    best.map_or(0.0, |b| if b.2 { 1.0 } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binom(n: u64, k: u64) -> f64 {
        if k > n {
            return 0.0;
        }
        (0..k).map(|i| (n - i) as f64 / (i + 1) as f64).product()
    }

    #[test]
    fn pass_at_k_matches_the_binomial_formula() {
        for n in 1..=16u64 {
            for c in 0..=n {
                for k in 1..=n {
                    let want = 1.0 - binom(n - c, k) / binom(n, k);
                    let got = pass_at_k(n as usize, c as usize, k as usize).unwrap();
                    assert!(
                        (got - want).abs() < 1e-12,
                        "n={n} c={c} k={k}: {got} vs {want}"
                    );
                }
            }
        }
        // by hand: n = 4, c = 1, k = 2: 1 - C(3,2)/C(4,2) = 1 - 3/6
        assert_eq!(pass_at_k(4, 1, 2).unwrap(), 0.5);
        assert_eq!(pass_at_k(4, 1, 1).unwrap(), 0.25);
    }

    #[test]
    fn pass_at_k_rejects_bad_k() {
        assert!(pass_at_k(4, 1, 5)
            .unwrap_err()
            .to_string()
            .contains("k = 5"));
        assert!(pass_at_k(4, 5, 1).is_err());
    }

    #[test]
    fn mean_and_majority() {
        assert_eq!(mean_at_k(&[true, false, false, true]), 0.5);
        let v = |a: Option<&str>, c| Vote {
            answer: a.map(String::from),
            correct: c,
        };
        assert_eq!(
            maj_at_k(&[v(Some("3"), true), v(Some("4"), false), v(Some("4"), false)]),
            0.0
        );
        assert_eq!(
            maj_at_k(&[
                v(Some("3"), true),
                v(None, false),
                v(None, false),
                v(Some("4"), false)
            ]),
            1.0
        );
        assert_eq!(maj_at_k(&[v(None, false)]), 0.0);
    }
}
