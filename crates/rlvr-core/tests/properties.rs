//! Property tests of the aggregation contract (docs/architecture.md §2): split invariance, permutation
//! invariance, BA's sign balance and the identities between rules.

use proptest::prelude::*;
use rlvr_core::aggregation::{all_weights, weights};
use rlvr_core::split::{by_count, by_tokens};

/// The loss of one piece: `Σ_{i ∈ piece} w_i · token_sums[i]`, with `token_sums[i] = Σ_t l_{i,t}`.
fn piece_loss(piece: &[usize], weights: &[f64], token_sums: &[f64]) -> f64 {
    piece.iter().map(|&i| weights[i] * token_sums[i]).sum()
}
use rlvr_core::{advantage, AdvEstimator, AdvantageConfig, AggRule, Sequence, StdScope};

/// A batch: groups of 1..9 responses, lengths 0..300 (some empty), rewards binary or graded,
/// advantages from GRPO; plus per-token loss terms for each response.
fn batch(binary: bool) -> impl Strategy<Value = (Vec<Sequence>, Vec<Vec<f64>>)> {
    let response = (0usize..300, 0u8..4, -2.0f64..2.0);
    prop::collection::vec(prop::collection::vec(response, 1..9), 1..7).prop_flat_map(
        move |groups| {
            let mut ids = Vec::new();
            let mut lens = Vec::new();
            let mut rewards = Vec::new();
            for (g, members) in groups.iter().enumerate() {
                for &(len, r, _) in members {
                    ids.push(g * 7 + 3); // sparse, non-dense ids
                    lens.push(len);
                    rewards.push(if binary {
                        f64::from(r % 2)
                    } else {
                        f64::from(r) / 3.0
                    });
                }
            }
            let adv = advantage::compute(&AdvantageConfig::default(), &ids, &rewards).unwrap();
            let seqs: Vec<Sequence> = ids
                .iter()
                .zip(&adv)
                .zip(&lens)
                .map(|((&g, &a), &l)| Sequence::new(g, a, l))
                .collect();
            let terms = lens
                .iter()
                .map(|&l| prop::collection::vec(-3.0f64..3.0, l))
                .collect::<Vec<_>>();
            (Just(seqs), terms)
        },
    )
}

fn full_loss(w: &[f64], terms: &[Vec<f64>]) -> f64 {
    w.iter()
        .zip(terms)
        .map(|(w, t)| t.iter().map(|l| w * l).sum::<f64>())
        .sum()
}

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Summing `w_i · l_{i,t}` over any split into ranks and micro-batches (by count or by a
    /// token budget) gives the full-batch loss, for every rule.
    #[test]
    fn split_invariance((seqs, terms) in batch(false), ranks in 1usize..5, micro in 1usize..6, budget in 1usize..800) {
        let sums: Vec<f64> = terms.iter().map(|t| t.iter().sum()).collect();
        let lens: Vec<usize> = seqs.iter().map(|s| s.tokens).collect();
        for (rule, w) in all_weights(&seqs, 300).unwrap() {
            let whole = full_loss(&w, &terms);
            for plan in [by_count(seqs.len(), ranks, micro).unwrap(), by_tokens(&lens, ranks, budget).unwrap()] {
                let pieces: f64 = plan.iter().flatten().map(|p| piece_loss(p, &w, &sums)).sum();
                prop_assert!(rel_close(whole, pieces, 1e-12), "{rule}: whole {whole} vs pieces {pieces}");
            }
        }
    }

    /// Permuting the batch permutes the weights and changes nothing else.
    #[test]
    fn permutation_invariance((seqs, _) in batch(false), seed in any::<u64>()) {
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        let mut s = seed | 1;
        for i in (1..order.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            order.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let permuted: Vec<Sequence> = order.iter().map(|&i| seqs[i]).collect();
        for rule in AggRule::ALL {
            let w = weights(rule, &seqs, 300).unwrap();
            let wp = weights(rule, &permuted, 300).unwrap();
            for (j, &i) in order.iter().enumerate() {
                prop_assert!(rel_close(wp[j], w[i], 1e-14), "{rule}: {} vs {}", wp[j], w[i]);
            }
        }
    }

    /// With binary rewards the advantage is constant within a sign, so `balanced-mass` is
    /// `balanced`.
    #[test]
    fn balanced_equals_balanced_mass_for_binary_rewards((seqs, _) in batch(true)) {
        let a = weights(AggRule::Balanced, &seqs, 300).unwrap();
        let b = weights(AggRule::BalancedMass, &seqs, 300).unwrap();
        for (x, y) in a.iter().zip(&b) {
            prop_assert!(rel_close(*x, *y, 1e-12), "{x} vs {y}");
        }
    }

    /// The mean rules are means: `Σ_i w_i·|o_i| = 1` when no response is empty.
    #[test]
    fn mean_rules_cover_one_unit((seqs, _) in batch(false)) {
        let seqs: Vec<Sequence> = seqs.into_iter().map(|s| Sequence { tokens: s.tokens.max(1), ..s }).collect();
        for rule in AggRule::ALL.into_iter().filter(|r| r.is_mean()) {
            let w = weights(rule, &seqs, 300).unwrap();
            let total: f64 = w.iter().zip(&seqs).map(|(w, s)| w * s.tokens as f64).sum();
            prop_assert!((total - 1.0).abs() < 1e-12, "{rule}: {total}");
        }
    }

    /// Binary rewards, population-std advantages (ε = 0), B groups of equal size G, no empty
    /// responses: under `balanced` and `seq-mean-token-mean` each sign of each mixed group gets
    /// the prefactor `sqrt(k(G-k))/G` (divided by B) and a positive share of 0.5; under
    /// `token-mean` the positive-to-negative mass ratio is `L+/L-`.
    #[test]
    fn ba_balances_signs_and_token_mean_couples_them(
        g in 2usize..12, b in 1usize..5, seed in any::<u64>(),
    ) {
        let mut s = seed | 1;
        let mut next = move |m: u64| { s ^= s << 13; s ^= s >> 7; s ^= s << 17; s % m };
        let n = g * b;
        let groups: Vec<usize> = (0..n).map(|i| i / g).collect();
        let rewards: Vec<f64> = (0..n).map(|_| next(2) as f64).collect();
        let lens: Vec<usize> = (0..n).map(|_| 1 + next(500) as usize).collect();
        let cfg = AdvantageConfig { estimator: AdvEstimator::Grpo, std_scope: StdScope::Group, unbiased_std: false, eps: 0.0 };
        let adv = advantage::compute(&cfg, &groups, &rewards).unwrap();
        let seqs: Vec<Sequence> = (0..n).map(|i| Sequence::new(groups[i], adv[i], lens[i])).collect();
        let mass = |w: &[f64], i: usize| w[i] * adv[i].abs() * lens[i] as f64;
        for gi in 0..b {
            let members: Vec<usize> = (gi * g..(gi + 1) * g).collect();
            let k = members.iter().filter(|&&i| rewards[i] == 1.0).count();
            if k == 0 || k == g { continue; }
            let prefactor = ((k * (g - k)) as f64).sqrt() / g as f64 / b as f64;
            for rule in [AggRule::Balanced, AggRule::SeqMeanTokenMean] {
                let w = weights(rule, &seqs, 500).unwrap();
                let pos: f64 = members.iter().filter(|&&i| adv[i] > 0.0).map(|&i| mass(&w, i)).sum();
                let neg: f64 = members.iter().filter(|&&i| adv[i] < 0.0).map(|&i| mass(&w, i)).sum();
                prop_assert!(rel_close(pos, prefactor, 1e-12) && rel_close(neg, prefactor, 1e-12),
                    "{rule}: pos {pos} neg {neg} prefactor {prefactor}");
                prop_assert!((pos / (pos + neg) - 0.5).abs() < 1e-12);
            }
            let w = weights(AggRule::TokenMean, &seqs, 500).unwrap();
            let pos: f64 = members.iter().filter(|&&i| adv[i] > 0.0).map(|&i| mass(&w, i)).sum();
            let neg: f64 = members.iter().filter(|&&i| adv[i] < 0.0).map(|&i| mass(&w, i)).sum();
            let mean_len = |sign: f64| {
                let v: Vec<f64> = members.iter().filter(|&&i| adv[i] * sign > 0.0).map(|&i| lens[i] as f64).collect();
                v.iter().sum::<f64>() / v.len() as f64
            };
            let want = mean_len(1.0) / mean_len(-1.0);
            prop_assert!(rel_close(pos / neg, want, 1e-10), "token-mean mass ratio {} vs L+/L- {want}", pos / neg);
        }
    }
}
