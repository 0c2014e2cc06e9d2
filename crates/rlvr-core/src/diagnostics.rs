//! Aggregation-bias diagnostics (docs/architecture.md §3): for one batch, per group and for the batch,
//! the length statistics the paper's analysis rests on and, for every aggregation rule at once,
//! where the gradient mass goes.
//!
//! Definitions (notation of [`crate::aggregation`]):
//!
//! ```text
//! mass_i      = w_i · |A_i| · |o_i|                          (the gradient mass of response i)
//! P (rule)    = Σ_{i∈S+} mass_i / Σ_i mass_i                 (positive share; 0.5 = signs balanced)
//! Q (rule)    = Σ_{i ∈ longest quarter} mass_i / Σ_i mass_i  (longest-quartile share)
//! L+, L-      = mean |o_i| over S+, S-                        gap = L+ - L-, ratio = L+/L-
//! CV          = std(|o_i|) / mean(|o_i|)                      (population std)
//! prefactor   = sqrt(k (G - k)) / G,  k = |S+|, G = group size
//! ```
//!
//! The longest quarter is the `ceil(n/4)` longest responses (ties broken by position). Shares
//! are `None` when the denominator is 0 (no response carries gradient). Under binary rewards
//! with std-normalized advantages, `balanced` and `seq-mean-token-mean` give `P = 0.5` in every
//! mixed group while `token-mean` gives `P = L+/(L+ + L-)`: the sign-length coupling made
//! visible. `seq-mean-token-mean` gives long responses less mass than `token-mean` does (lower
//! `Q`): the length down-weighting.

use crate::aggregation::all_weights;
use crate::sequence::{dense_groups, SignClass};
use crate::{AggRule, CoreError, Sequence};

/// Where one rule puts the gradient mass.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RuleShares {
    /// `P`: share of the mass on positive-advantage responses.
    pub positive_share: Option<f64>,
    /// `Q`: share of the mass on the longest quarter of responses.
    pub longest_quartile_share: Option<f64>,
}

/// Length statistics of a set of responses.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LengthStats {
    /// Mean `|o_i|`.
    pub mean: f64,
    /// Smallest `|o_i|`.
    pub min: usize,
    /// Largest `|o_i|`.
    pub max: usize,
    /// `std/mean` (population std; 0 when the mean is 0).
    pub cv: f64,
    /// `L+`: mean length of positive-advantage responses.
    pub mean_positive: Option<f64>,
    /// `L-`: mean length of negative-advantage responses.
    pub mean_negative: Option<f64>,
}

/// Diagnostics of one group.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GroupDiagnostics {
    /// The group id as given in the input.
    pub group: usize,
    /// `G`: responses in the group.
    pub size: usize,
    /// `k`: responses with `A > 0`.
    pub positives: usize,
    /// Responses with `A < 0`.
    pub negatives: usize,
    /// Lengths.
    pub length: LengthStats,
    /// `L+ - L-` (None unless both signs are present).
    pub pos_neg_gap: Option<f64>,
    /// `L+ / L-` (None unless both signs are present and `L- > 0`).
    pub pos_neg_ratio: Option<f64>,
    /// `sqrt(k (G - k)) / G`.
    pub prefactor: f64,
    /// Per rule, in the order of [`AggRule::ALL`].
    pub rules: Vec<(AggRule, RuleShares)>,
}

/// Diagnostics of a whole batch.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BatchDiagnostics {
    /// `n`: responses.
    pub sequences: usize,
    /// `N`: loss tokens.
    pub tokens: usize,
    /// Lengths over the batch (`L+`/`L-` pooled over all groups).
    pub length: LengthStats,
    /// Groups with both a positive and a negative advantage.
    pub mixed_groups: usize,
    /// Mean over mixed groups of the within-group gap `L+_g - L-_g` (None without mixed groups).
    pub pos_neg_gap: Option<f64>,
    /// Mean over mixed groups of `L+_g / L-_g`.
    pub pos_neg_ratio: Option<f64>,
    /// Mean over groups of `sqrt(k(G - k))/G`.
    pub mean_prefactor: f64,
    /// Per rule, over the whole batch, in the order of [`AggRule::ALL`].
    pub rules: Vec<(AggRule, RuleShares)>,
    /// Per group, in order of first appearance.
    pub groups: Vec<GroupDiagnostics>,
}

impl BatchDiagnostics {
    /// The shares of one rule.
    pub fn rule(&self, rule: AggRule) -> RuleShares {
        self.rules
            .iter()
            .find(|(r, _)| *r == rule)
            .map(|(_, s)| *s)
            .expect("every rule is present")
    }
}

/// Diagnostics of `seqs` for every rule at once; `max_len` is `L` of
/// `seq-mean-token-sum-norm`. Fails on a non-finite advantage or `max_len = 0`.
pub fn batch_diagnostics(seqs: &[Sequence], max_len: usize) -> Result<BatchDiagnostics, CoreError> {
    let weights = all_weights(seqs, max_len)?;
    let all: Vec<usize> = (0..seqs.len()).collect();
    let (dense, b) = dense_groups(seqs);
    let mut members = vec![Vec::new(); b];
    for (i, &g) in dense.iter().enumerate() {
        members[g].push(i);
    }
    let groups: Vec<GroupDiagnostics> = members
        .iter()
        .map(|m| group_diagnostics(seqs, m, &weights))
        .collect();
    let mixed: Vec<&GroupDiagnostics> = groups.iter().filter(|g| g.pos_neg_gap.is_some()).collect();
    let mean_of = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    Ok(BatchDiagnostics {
        sequences: seqs.len(),
        tokens: seqs.iter().map(|s| s.tokens).sum(),
        length: length_stats(seqs, &all),
        mixed_groups: mixed.len(),
        pos_neg_gap: mean_of(mixed.iter().filter_map(|g| g.pos_neg_gap).collect()),
        pos_neg_ratio: mean_of(mixed.iter().filter_map(|g| g.pos_neg_ratio).collect()),
        mean_prefactor: mean_of(groups.iter().map(|g| g.prefactor).collect()).unwrap_or(0.0),
        rules: weights
            .iter()
            .map(|(r, w)| (*r, shares(seqs, &all, w)))
            .collect(),
        groups,
    })
}

fn group_diagnostics(
    seqs: &[Sequence],
    members: &[usize],
    weights: &[(AggRule, Vec<f64>)],
) -> GroupDiagnostics {
    let count = |c: SignClass| {
        members
            .iter()
            .filter(|&&i| SignClass::of(seqs[i].advantage) == c)
            .count()
    };
    let (k, neg, size) = (
        count(SignClass::Positive),
        count(SignClass::Negative),
        members.len(),
    );
    let length = length_stats(seqs, members);
    let (gap, ratio) = match (length.mean_positive, length.mean_negative) {
        (Some(p), Some(n)) => (Some(p - n), (n > 0.0).then(|| p / n)),
        _ => (None, None),
    };
    GroupDiagnostics {
        group: seqs[members[0]].group,
        size,
        positives: k,
        negatives: neg,
        length,
        pos_neg_gap: gap,
        pos_neg_ratio: ratio,
        prefactor: ((k * (size - k)) as f64).sqrt() / size as f64,
        rules: weights
            .iter()
            .map(|(r, w)| (*r, shares(seqs, members, w)))
            .collect(),
    }
}

fn length_stats(seqs: &[Sequence], members: &[usize]) -> LengthStats {
    let lens: Vec<f64> = members.iter().map(|&i| seqs[i].tokens as f64).collect();
    let n = lens.len().max(1) as f64;
    let mean = lens.iter().sum::<f64>() / n;
    let var = lens.iter().map(|l| (l - mean) * (l - mean)).sum::<f64>() / n;
    let class_mean = |c: SignClass| {
        let v: Vec<f64> = members
            .iter()
            .filter(|&&i| SignClass::of(seqs[i].advantage) == c)
            .map(|&i| seqs[i].tokens as f64)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    LengthStats {
        mean,
        min: members.iter().map(|&i| seqs[i].tokens).min().unwrap_or(0),
        max: members.iter().map(|&i| seqs[i].tokens).max().unwrap_or(0),
        cv: if mean > 0.0 { var.sqrt() / mean } else { 0.0 },
        mean_positive: class_mean(SignClass::Positive),
        mean_negative: class_mean(SignClass::Negative),
    }
}

fn shares(seqs: &[Sequence], members: &[usize], w: &[f64]) -> RuleShares {
    let mass = |i: usize| w[i] * seqs[i].advantage.abs() * seqs[i].tokens as f64;
    let total: f64 = members.iter().map(|&i| mass(i)).sum();
    let ratio = |part: f64| (total > 0.0).then(|| part / total);
    let positive: f64 = members
        .iter()
        .filter(|&&i| seqs[i].advantage > 0.0)
        .map(|&i| mass(i))
        .sum();
    let mut by_len = members.to_vec();
    by_len.sort_by(|&a, &b| seqs[b].tokens.cmp(&seqs[a].tokens).then(a.cmp(&b)));
    let quarter = members.len().div_ceil(4);
    let longest: f64 = by_len[..quarter].iter().map(|&i| mass(i)).sum();
    RuleShares {
        positive_share: ratio(positive),
        longest_quartile_share: ratio(longest),
    }
}

/// Threshold on `|P(token-mean) - P(balanced)|` above which the verdict reports sign-length
/// coupling.
pub const COUPLING_THRESHOLD: f64 = 0.05;
/// Ratio `Q(seq-mean-token-mean) / Q(balanced)` below which the verdict reports long-response
/// down-weighting. Both rules balance the signs, and differ only in how a sign's weight spreads
/// over its responses (per sequence or per token), so their ratio isolates the length effect.
pub const DOWNWEIGHT_THRESHOLD: f64 = 0.9;

/// A one-line, plain-words verdict on which aggregation bias the batch is exposed to:
/// sign-length coupling (token aggregation: `|P_token-mean - P_balanced| >=`
/// [`COUPLING_THRESHOLD`]) and/or long-response down-weighting (sequence aggregation:
/// `Q_seq-mean-token-mean < `[`DOWNWEIGHT_THRESHOLD`]` · Q_balanced`).
pub fn verdict(d: &BatchDiagnostics) -> String {
    if d.mixed_groups == 0 {
        return "no group has both positive and negative advantages: no policy-gradient signal to aggregate, so no aggregation bias".into();
    }
    let tm = d.rule(AggRule::TokenMean);
    let ba = d.rule(AggRule::Balanced);
    let sm = d.rule(AggRule::SeqMeanTokenMean);
    let mut found = Vec::new();
    if let (Some(p_tm), Some(p_ba)) = (tm.positive_share, ba.positive_share) {
        if (p_tm - p_ba).abs() >= COUPLING_THRESHOLD {
            let side = if p_tm < p_ba {
                "negative responses are longer"
            } else {
                "positive responses are longer"
            };
            found.push(format!(
                "sign-length coupling under token-mean ({side}: it puts {p_tm:.2} of the gradient mass on positives, balanced {p_ba:.2})"
            ));
        }
    }
    if let (Some(q_sm), Some(q_ba)) = (sm.longest_quartile_share, ba.longest_quartile_share) {
        if q_sm < DOWNWEIGHT_THRESHOLD * q_ba {
            found.push(format!(
                "long-response down-weighting under seq-mean-token-mean (the longest quarter of responses gets {q_sm:.2} of the gradient mass, {q_ba:.2} under balanced)"
            ));
        }
    }
    let fix = format!(
        "balanced: positive share {}, longest quarter {}",
        fmt_opt(ba.positive_share),
        fmt_opt(ba.longest_quartile_share)
    );
    match found.len() {
        0 => format!("no material aggregation bias in this batch: token and sequence aggregation agree within the thresholds ({fix})"),
        _ => format!("exposed to {}; {fix}", found.join(" and to ")),
    }
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".into(), |v| format!("{v:.2}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// k = 1 of G = 4 with a long positive: L+ = 40, L- = 10.
    fn long_positive() -> Vec<Sequence> {
        vec![
            Sequence::new(0, 1.5, 40),
            Sequence::new(0, -0.5, 10),
            Sequence::new(0, -0.5, 10),
            Sequence::new(0, -0.5, 10),
        ]
    }

    #[test]
    fn shares_by_hand() {
        let d = batch_diagnostics(&long_positive(), 40).unwrap();
        // token-mean: masses 1.5·40 = 60 vs 3·0.5·10 = 15 -> P = 0.8 = L+/(L+ + L-)
        assert!((d.rule(AggRule::TokenMean).positive_share.unwrap() - 0.8).abs() < 1e-12);
        // balanced and seq-mean-token-mean: 1/4·1.5 vs 3/4·0.5 -> 0.5
        for r in [AggRule::Balanced, AggRule::SeqMeanTokenMean] {
            assert!(
                (d.rule(r).positive_share.unwrap() - 0.5).abs() < 1e-12,
                "{r}"
            );
        }
        // longest quarter = the positive response (1 of 4): Q equals P here.
        assert!((d.rule(AggRule::TokenMean).longest_quartile_share.unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(d.mixed_groups, 1);
        assert_eq!(d.pos_neg_gap, Some(30.0));
        assert_eq!(d.pos_neg_ratio, Some(4.0));
        assert!((d.mean_prefactor - 3f64.sqrt() / 4.0).abs() < 1e-15);
        // CV: lengths 40,10,10,10: mean 17.5, population std sqrt(168.75)
        assert!((d.length.cv - 168.75f64.sqrt() / 17.5).abs() < 1e-12);
        let v = verdict(&d);
        assert!(
            v.contains("sign-length coupling") && v.contains("positive responses are longer"),
            "{v}"
        );
        // one positive: seq-mean and balanced spread it alike, so no down-weighting is reported
        assert!(!v.contains("down-weighting"), "{v}");
    }

    #[test]
    fn down_weighting_by_hand() {
        // k = 2 of G = 4, A = ±1: positives of 40 and 10 tokens, negatives of 10 and 10.
        let s = [
            Sequence::new(0, 1.0, 40),
            Sequence::new(0, 1.0, 10),
            Sequence::new(0, -1.0, 10),
            Sequence::new(0, -1.0, 10),
        ];
        let d = batch_diagnostics(&s, 40).unwrap();
        let q = |r| d.rule(r).longest_quartile_share.unwrap();
        // seq-mean: every response carries 1/4 of the mass; balanced: 0.4 (40/50 of the positive half);
        // token-mean: 40/70.
        assert!((q(AggRule::SeqMeanTokenMean) - 0.25).abs() < 1e-12);
        assert!((q(AggRule::Balanced) - 0.4).abs() < 1e-12);
        assert!((q(AggRule::TokenMean) - 40.0 / 70.0).abs() < 1e-12);
        assert!((d.rule(AggRule::TokenMean).positive_share.unwrap() - 50.0 / 70.0).abs() < 1e-12);
        let v = verdict(&d);
        assert!(
            v.contains("sign-length coupling") && v.contains("down-weighting"),
            "{v}"
        );
    }

    #[test]
    fn equal_lengths_show_no_bias() {
        let s: Vec<Sequence> = [1.0, 1.0, -1.0, -1.0]
            .iter()
            .map(|&a| Sequence::new(3, a, 20))
            .collect();
        let d = batch_diagnostics(&s, 20).unwrap();
        let v = verdict(&d);
        assert!(v.starts_with("no material aggregation bias"), "{v}");
    }

    #[test]
    fn no_signal_batch() {
        let s = [Sequence::new(0, 0.0, 5), Sequence::new(1, 0.0, 7)];
        let d = batch_diagnostics(&s, 7).unwrap();
        assert_eq!(d.rule(AggRule::Balanced).positive_share, None);
        assert!(verdict(&d).starts_with("no group has both"));
        assert_eq!(d.groups.len(), 2);
        assert_eq!(d.groups[1].group, 1);
    }
}
