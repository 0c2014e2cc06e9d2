//! Aggregation weights: every loss aggregation rule as one weight per sequence (docs/architecture.md §2).
//!
//! Every supported rule is linear in the token terms,
//!
//! ```text
//! loss = Σ_i Σ_{t ∈ o_i} w_i · l_{i,t}
//! ```
//!
//! so the rule is fully described by the vector `w`. [`weights`] computes it once per
//! optimizer batch, over the WHOLE batch; micro-batches, gradient-accumulation steps and
//! data-parallel ranks then only sum `w_i · l_{i,t}` over their own tokens (see
//! [`crate::split`]), and the gradient does not depend on how the batch was cut.
//!
//! Notation: groups `g = 1..B`; group `g` has `G_g` sequences; `|o_i|` = loss tokens of sequence
//! `i`; `n` = sequences in the batch (empty ones included); `N` = loss tokens in the batch;
//! `L` = a constant length (the configured max response length). Inside group `g`:
//! `S+ = {A_i > 0}`, `S- = {A_i < 0}`, `S0 = {A_i = 0}`, `N+`/`N-`/`N0` their token totals,
//! `M+`/`M-` the sums of `|A_i|` over `S+`/`S-`.
//!
//! Edge cases, the same for every rule: an empty response (`|o_i| = 0`) gets `w_i = 0`; a
//! normalizer that would be zero (no tokens at all in the batch, the group or the class) gives
//! weight 0 to the sequences it would divide, never a NaN.

use crate::error::ensure_finite;
use crate::sequence::{dense_groups, SignClass};
use crate::{AggRule, CoreError, Sequence};

/// The weight `w_i` of every sequence under `rule`, for one whole optimizer batch.
///
/// `max_len` is `L` of `seq-mean-token-sum-norm` (the configured max response length; must be
/// positive); the other rules do not read it. Fails when an advantage is not finite.
///
/// | rule | `w_i` |
/// |---|---|
/// | `token-mean` | `1/N` |
/// | `seq-mean-token-mean` | `1/(n·|o_i|)` |
/// | `seq-mean-token-sum` | `1/n` |
/// | `seq-mean-token-sum-norm` | `1/(n·L)` |
/// | `group-token-mean` | `(1/B)·1/N_g` |
/// | `balanced` | `(1/B)·(|S|/G_g)/N_S`, `S ∈ {S+, S-, S0}` the class holding `i` |
/// | `balanced-mass` | `(1/B)·(M_±/G_g)/Σ_{j∈S±}|A_j|·|o_j|` for `i ∈ S±`; `i ∈ S0` as in `balanced` |
///
/// Invariants (tested): for a batch without empty responses the mean rules
/// ([`AggRule::is_mean`]) give `Σ_i w_i·|o_i| = 1`; the result is the same, entry for entry,
/// under any permutation of the batch; `balanced` equals `balanced-mass` when the advantage is
/// constant within each sign of each group (binary rewards).
pub fn weights(rule: AggRule, seqs: &[Sequence], max_len: usize) -> Result<Vec<f64>, CoreError> {
    let adv: Vec<f64> = seqs.iter().map(|s| s.advantage).collect();
    ensure_finite("advantage", &adv)?;
    Ok(match rule {
        AggRule::TokenMean => token_mean(seqs),
        AggRule::SeqMeanTokenMean => seq_mean_token_mean(seqs),
        AggRule::SeqMeanTokenSum => seq_mean_token_sum(seqs),
        AggRule::SeqMeanTokenSumNorm => seq_mean_token_sum_norm(seqs, max_len)?,
        AggRule::GroupTokenMean => group_token_mean(seqs),
        AggRule::Balanced => balanced(seqs, ClassMass::SequenceCount),
        AggRule::BalancedMass => balanced(seqs, ClassMass::AdvantageMass),
    })
}

/// The weights of every rule at once, in the order of [`AggRule::ALL`].
pub fn all_weights(
    seqs: &[Sequence],
    max_len: usize,
) -> Result<Vec<(AggRule, Vec<f64>)>, CoreError> {
    AggRule::ALL
        .into_iter()
        .map(|rule| Ok((rule, weights(rule, seqs, max_len)?)))
        .collect()
}

/// `1/x`, or 0 where `x = 0` (a normalizer over nothing gives no weight).
fn inv(x: f64) -> f64 {
    if x == 0.0 {
        0.0
    } else {
        1.0 / x
    }
}

/// `token-mean`: `w_i = 1/N`, `N` = loss tokens of the whole batch.
fn token_mean(seqs: &[Sequence]) -> Vec<f64> {
    let total: usize = seqs.iter().map(|s| s.tokens).sum();
    let w = inv(total as f64);
    seqs.iter()
        .map(|s| if s.tokens == 0 { 0.0 } else { w })
        .collect()
}

/// `seq-mean-token-mean`: `w_i = 1/(n·|o_i|)`.
fn seq_mean_token_mean(seqs: &[Sequence]) -> Vec<f64> {
    let n = seqs.len() as f64;
    seqs.iter().map(|s| inv(n * s.tokens as f64)).collect()
}

/// `seq-mean-token-sum`: `w_i = 1/n`.
fn seq_mean_token_sum(seqs: &[Sequence]) -> Vec<f64> {
    let w = inv(seqs.len() as f64);
    seqs.iter()
        .map(|s| if s.tokens == 0 { 0.0 } else { w })
        .collect()
}

/// `seq-mean-token-sum-norm`: `w_i = 1/(n·L)`.
fn seq_mean_token_sum_norm(seqs: &[Sequence], max_len: usize) -> Result<Vec<f64>, CoreError> {
    if max_len == 0 {
        return Err(CoreError::InvalidParameter {
            name: "max_len",
            reason: "L of seq-mean-token-sum-norm must be at least 1".into(),
        });
    }
    let w = inv(seqs.len() as f64 * max_len as f64);
    Ok(seqs
        .iter()
        .map(|s| if s.tokens == 0 { 0.0 } else { w })
        .collect())
}

/// `group-token-mean`: `w_i = (1/B)·1/N_g`.
fn group_token_mean(seqs: &[Sequence]) -> Vec<f64> {
    let (group, b) = dense_groups(seqs);
    let mut tokens = vec![0usize; b];
    for (s, &g) in seqs.iter().zip(&group) {
        tokens[g] += s.tokens;
    }
    seqs.iter()
        .zip(&group)
        .map(|(s, &g)| {
            if s.tokens == 0 {
                0.0
            } else {
                inv(b as f64 * tokens[g] as f64)
            }
        })
        .collect()
}

/// What a sign class's share of its group is in the `balanced` family.
#[derive(Clone, Copy, PartialEq)]
enum ClassMass {
    /// `|S|/G_g`, spread over `N_S` tokens (`balanced`).
    SequenceCount,
    /// `M_±/G_g`, spread over `Σ_{j∈S±}|A_j|·|o_j|` (`balanced-mass`); `S0` as `SequenceCount`.
    AdvantageMass,
}

/// `balanced` and `balanced-mass` (see [`weights`] for the formulas).
fn balanced(seqs: &[Sequence], mass: ClassMass) -> Vec<f64> {
    let (group, b) = dense_groups(seqs);
    // Per group and sign class: sequence count, token count, Σ|A|, Σ|A|·|o|.
    let mut count = vec![[0usize; 3]; b];
    let mut tokens = vec![[0usize; 3]; b];
    let mut adv_sum = vec![[0.0f64; 3]; b];
    let mut adv_tokens = vec![[0.0f64; 3]; b];
    let mut size = vec![0usize; b];
    for (s, &g) in seqs.iter().zip(&group) {
        let c = SignClass::of(s.advantage) as usize;
        size[g] += 1;
        count[g][c] += 1;
        tokens[g][c] += s.tokens;
        adv_sum[g][c] += s.advantage.abs();
        adv_tokens[g][c] += s.advantage.abs() * s.tokens as f64;
    }
    seqs.iter()
        .zip(&group)
        .map(|(s, &g)| {
            if s.tokens == 0 {
                return 0.0;
            }
            let class = SignClass::of(s.advantage);
            let c = class as usize;
            let group_share = 1.0 / (b as f64 * size[g] as f64);
            if mass == ClassMass::AdvantageMass && class != SignClass::Zero {
                group_share * adv_sum[g][c] * inv(adv_tokens[g][c])
            } else {
                group_share * count[g][c] as f64 * inv(tokens[g][c] as f64)
            }
        })
        .collect()
}

/// The aggregated loss `Σ_i w_i · Σ_t l_{i,t}` from per-sequence token sums.
///
/// `token_sums[i] = Σ_t l_{i,t}`. A helper for tests and for trainers that reduce per sequence.
pub fn aggregate(weights: &[f64], token_sums: &[f64]) -> Result<f64, CoreError> {
    if weights.len() != token_sums.len() {
        return Err(CoreError::LengthMismatch {
            left_name: "weights",
            left: weights.len(),
            right_name: "token_sums",
            right: token_sums.len(),
        });
    }
    Ok(weights.iter().zip(token_sums).map(|(w, l)| w * l).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-15 * a.abs().max(b.abs()).max(1.0)
    }

    fn assert_weights(rule: AggRule, seqs: &[Sequence], max_len: usize, want: &[f64]) {
        let got = weights(rule, seqs, max_len).unwrap();
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(close(*g, *w), "{rule} w[{i}] = {g}, want {w}");
        }
    }

    /// Binary group, k = 3 of G = 8, unequal lengths. Rewards 1,1,1,0,0,0,0,0; population-std
    /// advantages: p = 3/8, σ = sqrt(15)/8, A+ = (5/8)/σ, A- = -(3/8)/σ.
    fn k3_of_8() -> Vec<Sequence> {
        let sigma = 15f64.sqrt() / 8.0;
        let (ap, an) = (0.625 / sigma, -0.375 / sigma);
        let lens = [10, 20, 30, 40, 50, 60, 70, 80];
        let adv = [ap, ap, ap, an, an, an, an, an];
        adv.iter()
            .zip(lens)
            .map(|(&a, l)| Sequence::new(0, a, l))
            .collect()
    }

    #[test]
    fn k3_of_8_every_rule_by_hand() {
        let s = k3_of_8();
        // N = 360, N+ = 60, N- = 300, n = 8, B = 1, L = 100.
        let lens = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0];
        assert_weights(AggRule::TokenMean, &s, 100, &[1.0 / 360.0; 8]);
        assert_weights(
            AggRule::SeqMeanTokenMean,
            &s,
            100,
            &lens.map(|l| 1.0 / (8.0 * l)),
        );
        assert_weights(AggRule::SeqMeanTokenSum, &s, 100, &[1.0 / 8.0; 8]);
        assert_weights(AggRule::SeqMeanTokenSumNorm, &s, 100, &[1.0 / 800.0; 8]);
        assert_weights(AggRule::GroupTokenMean, &s, 100, &[1.0 / 360.0; 8]);
        let (wp, wn) = (3.0 / 8.0 / 60.0, 5.0 / 8.0 / 300.0);
        let ba = [wp, wp, wp, wn, wn, wn, wn, wn];
        assert_weights(AggRule::Balanced, &s, 100, &ba);
        assert_weights(AggRule::BalancedMass, &s, 100, &ba);
    }

    #[test]
    fn zero_advantage_member_gets_its_own_share() {
        // G = 4: A = (2, 0, -1, -1) with lengths (5, 10, 20, 30).
        // balanced: S+ = {0} 1/4 over 5; S0 = {1} 1/4 over 10; S- = {2,3} 2/4 over 50.
        let s = [
            Sequence::new(7, 2.0, 5),
            Sequence::new(7, 0.0, 10),
            Sequence::new(7, -1.0, 20),
            Sequence::new(7, -1.0, 30),
        ];
        assert_weights(
            AggRule::Balanced,
            &s,
            30,
            &[0.25 / 5.0, 0.25 / 10.0, 0.5 / 50.0, 0.5 / 50.0],
        );
        // balanced-mass: M+ = 2 over Σ|A||o| = 10; M- = 2 over 50; S0 as balanced.
        assert_weights(
            AggRule::BalancedMass,
            &s,
            30,
            &[
                0.25 * 2.0 / 10.0,
                0.25 / 10.0,
                0.25 * 2.0 / 50.0,
                0.25 * 2.0 / 50.0,
            ],
        );
        assert_weights(AggRule::TokenMean, &s, 30, &[1.0 / 65.0; 4]);
    }

    #[test]
    fn non_binary_advantages_in_balanced_mass() {
        // S+ = {3.0 x 10 tokens, 1.0 x 30 tokens}: M+ = 4, Σ|A||o| = 60; S- = {-4.0 x 5}: M- = 4, 20.
        let s = [
            Sequence::new(0, 3.0, 10),
            Sequence::new(0, 1.0, 30),
            Sequence::new(0, -4.0, 5),
        ];
        let (wp, wn) = (4.0 / 3.0 / 60.0, 4.0 / 3.0 / 20.0);
        assert_weights(AggRule::BalancedMass, &s, 30, &[wp, wp, wn]);
        // balanced by count: S+ 2/3 over 40 tokens, S- 1/3 over 5.
        assert_weights(
            AggRule::Balanced,
            &s,
            30,
            &[2.0 / 3.0 / 40.0, 2.0 / 3.0 / 40.0, 1.0 / 3.0 / 5.0],
        );
    }

    #[test]
    fn empty_response_gets_zero_and_no_nan() {
        // G = 3: one positive empty response, two negative ones of 4 and 6 tokens.
        let s = [
            Sequence::new(0, 1.0, 0),
            Sequence::new(0, -0.5, 4),
            Sequence::new(0, -0.5, 6),
        ];
        for rule in AggRule::ALL {
            let w = weights(rule, &s, 8).unwrap();
            assert_eq!(w[0], 0.0, "{rule}");
            assert!(w.iter().all(|x| x.is_finite()), "{rule}: {w:?}");
        }
        // balanced: S+ has no tokens, so its share is absent; S- gets 2/3 over 10 tokens.
        assert_weights(
            AggRule::Balanced,
            &s,
            8,
            &[0.0, 2.0 / 3.0 / 10.0, 2.0 / 3.0 / 10.0],
        );
        assert_weights(
            AggRule::SeqMeanTokenMean,
            &s,
            8,
            &[0.0, 1.0 / 12.0, 1.0 / 18.0],
        );
        assert_weights(AggRule::TokenMean, &s, 8, &[0.0, 0.1, 0.1]);
        // A batch whose only response is empty: all weights 0.
        for rule in AggRule::ALL {
            assert_eq!(
                weights(rule, &[Sequence::new(0, 1.0, 0)], 8).unwrap(),
                [0.0]
            );
        }
    }

    #[test]
    fn two_groups_of_different_sizes() {
        // Group 10: G = 2, A = (+1, -1), lengths (4, 8). Group 20: G = 3, A = (+1, -0.5, -0.5),
        // lengths (2, 6, 10). B = 2, n = 5, N = 30.
        let s = [
            Sequence::new(10, 1.0, 4),
            Sequence::new(20, 1.0, 2),
            Sequence::new(10, -1.0, 8),
            Sequence::new(20, -0.5, 6),
            Sequence::new(20, -0.5, 10),
        ];
        assert_weights(AggRule::TokenMean, &s, 10, &[1.0 / 30.0; 5]);
        assert_weights(
            AggRule::SeqMeanTokenMean,
            &s,
            10,
            &[1.0 / 20.0, 1.0 / 10.0, 1.0 / 40.0, 1.0 / 30.0, 1.0 / 50.0],
        );
        assert_weights(AggRule::SeqMeanTokenSumNorm, &s, 10, &[1.0 / 50.0; 5]);
        assert_weights(
            AggRule::GroupTokenMean,
            &s,
            10,
            &[1.0 / 24.0, 1.0 / 36.0, 1.0 / 24.0, 1.0 / 36.0, 1.0 / 36.0],
        );
        // balanced: group 10: each sign 1/2 over its tokens; group 20: S+ 1/3 over 2, S- 2/3 over 16.
        assert_weights(
            AggRule::Balanced,
            &s,
            10,
            &[
                0.5 * 0.5 / 4.0,
                0.5 / 3.0 / 2.0,
                0.5 * 0.5 / 8.0,
                0.5 * 2.0 / 3.0 / 16.0,
                0.5 * 2.0 / 3.0 / 16.0,
            ],
        );
    }

    #[test]
    fn non_finite_advantage_is_an_error_naming_its_index() {
        let s = [Sequence::new(0, 1.0, 3), Sequence::new(0, f64::NAN, 3)];
        let err = weights(AggRule::Balanced, &s, 3).unwrap_err();
        assert!(
            matches!(err, CoreError::NotFinite { index: 1, .. }),
            "{err}"
        );
    }

    #[test]
    fn zero_max_len_is_an_error() {
        let err =
            weights(AggRule::SeqMeanTokenSumNorm, &[Sequence::new(0, 1.0, 3)], 0).unwrap_err();
        assert!(err.to_string().contains("max_len"), "{err}");
    }
}
