//! Statistics over seeds: curves with a band, and the peak / last / drop table.

use std::collections::BTreeMap;

use crate::runs::Run;

/// Mean, min and max of a quantity over seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Mean over seeds.
    pub mean: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Number of seeds.
    pub n: usize,
}

impl Spread {
    /// The spread of `values` (None when empty).
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        Some(Spread {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            min: values.iter().cloned().fold(f64::INFINITY, f64::min),
            max: values.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
            n: values.len(),
        })
    }
}

/// The comparison row of one rule: peak accuracy `max_t acc_t`, last-step accuracy
/// `acc_T`, and the drop `max_t acc_t - acc_T`, each over the rule's seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSummary {
    /// The aggregation rule.
    pub rule: String,
    /// Seeds (runs) behind the row.
    pub seeds: Vec<u64>,
    /// Peak evaluation accuracy per run.
    pub peak: Spread,
    /// Last evaluation accuracy per run.
    pub last: Spread,
    /// Peak minus last per run.
    pub drop: Spread,
    /// Last minus first evaluation per run (the gain over the starting checkpoint; runs of one
    /// seed share their warm start, so this removes most of the seed-to-seed spread).
    pub gain: Spread,
    /// Mean of the last five evaluations per run.
    pub last5: Spread,
    /// Mean response-length CV over the run's training steps.
    pub length_cv: Option<Spread>,
    /// Mean within-group pos-neg length gap over the run's training steps.
    pub pos_neg_gap: Option<Spread>,
}

/// One row per rule among `runs` (runs without evaluations are left out of peak/last).
pub fn rule_summaries(runs: &[&Run]) -> Vec<RuleSummary> {
    let mut by_rule: BTreeMap<&str, Vec<&Run>> = BTreeMap::new();
    for r in runs {
        by_rule.entry(r.rule.as_str()).or_default().push(r);
    }
    by_rule
        .into_iter()
        .filter_map(|(rule, rs)| {
            let accs: Vec<Vec<(usize, f64)>> = rs
                .iter()
                .map(|r| r.accuracy())
                .filter(|a| !a.is_empty())
                .collect();
            let peaks: Vec<f64> = accs
                .iter()
                .map(|a| a.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max))
                .collect();
            let lasts: Vec<f64> = accs.iter().map(|a| a.last().unwrap().1).collect();
            let drops: Vec<f64> = peaks.iter().zip(&lasts).map(|(p, l)| p - l).collect();
            let gains: Vec<f64> = accs.iter().map(|a| a.last().unwrap().1 - a[0].1).collect();
            let last5: Vec<f64> = accs
                .iter()
                .map(|a| {
                    let tail = &a[a.len().saturating_sub(5)..];
                    tail.iter().map(|p| p.1).sum::<f64>() / tail.len() as f64
                })
                .collect();
            Some(RuleSummary {
                rule: rule.to_string(),
                seeds: rs.iter().map(|r| r.seed).collect(),
                peak: Spread::of(&peaks)?,
                last: Spread::of(&lasts)?,
                drop: Spread::of(&drops)?,
                gain: Spread::of(&gains)?,
                last5: Spread::of(&last5)?,
                length_cv: mean_over_runs(&rs, "response_length_cv"),
                pos_neg_gap: mean_over_runs(&rs, "pos_neg_gap"),
            })
        })
        .collect()
}

/// The spread over `runs` of each run's mean of the train metric `key` over its steps
/// (runs without the metric are left out).
pub(crate) fn mean_over_runs(runs: &[&Run], key: &str) -> Option<Spread> {
    window_over_runs(runs, key, 0, usize::MAX)
}

/// The spread over `runs` of each run's mean of the train metric `key` over the steps in
/// `from..=to` (runs without the metric there are left out).
pub(crate) fn window_over_runs(runs: &[&Run], key: &str, from: usize, to: usize) -> Option<Spread> {
    let v: Vec<f64> = runs
        .iter()
        .filter_map(|r| {
            let s: Vec<f64> = r
                .series(key)
                .into_iter()
                .filter(|(step, _)| (from..=to).contains(step))
                .map(|p| p.1)
                .collect();
            (!s.is_empty()).then(|| s.iter().sum::<f64>() / s.len() as f64)
        })
        .collect();
    Spread::of(&v)
}

/// A curve over seeds: for every step present in at least one run, the mean, min and max of
/// the runs that have that step.
pub(crate) fn band(series: &[Vec<(usize, f64)>]) -> Vec<(usize, Spread)> {
    let mut at: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for s in series {
        for &(step, v) in s {
            at.entry(step).or_default().push(v);
        }
    }
    at.into_iter()
        .filter_map(|(s, v)| Spread::of(&v).map(|sp| (s, sp)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rlvr_core::metrics::TrainLine;
    use serde_json::json;

    fn line(v: serde_json::Value) -> TrainLine {
        serde_json::from_value(v).unwrap()
    }

    fn run(rule: &str, seed: u64, acc: &[(usize, f64)]) -> Run {
        Run {
            dir: format!("/x/{rule}-{seed}").into(),
            rule: rule.into(),
            seed,
            regime: "r".into(),
            lr: None,
            warm_start_steps: None,
            model: None,
            settings: Default::default(),
            machines: Vec::new(),
            planned_steps: None,
            train: vec![
                line(json!({"step": 1, "response_length_cv": 0.5, "pos_neg_gap": 10.0})),
                line(json!({"step": 2, "response_length_cv": 0.3, "pos_neg_gap": null})),
            ],
            eval: acc
                .iter()
                .map(|&(step, a)| crate::runs::EvalPoint {
                    step,
                    dataset: "d".into(),
                    mean_at_k: a,
                    pass_at_k: a,
                })
                .collect(),
        }
    }

    #[test]
    fn peak_last_drop_by_hand() {
        let a = run("balanced", 1, &[(0, 0.2), (10, 0.6), (20, 0.5)]);
        let b = run("balanced", 2, &[(0, 0.2), (10, 0.4), (20, 0.4)]);
        let c = run("token-mean", 1, &[(0, 0.2), (10, 0.3)]);
        let rows = rule_summaries(&[&a, &b, &c]);
        assert_eq!(rows.len(), 2);
        let ba = &rows[0];
        assert_eq!(ba.rule, "balanced");
        assert!((ba.peak.mean - 0.5).abs() < 1e-12 && ba.peak.min == 0.4 && ba.peak.max == 0.6);
        assert!((ba.last.mean - 0.45).abs() < 1e-12);
        assert!(
            (ba.drop.mean - 0.05).abs() < 1e-12
                && ba.drop.min == 0.0
                && (ba.drop.max - 0.1).abs() < 1e-12
        );
        // gains: 0.5 - 0.2 and 0.4 - 0.2
        assert!(
            (ba.gain.mean - 0.25).abs() < 1e-12
                && (ba.gain.min - 0.2).abs() < 1e-12
                && (ba.gain.max - 0.3).abs() < 1e-12
        );
        assert!((ba.length_cv.unwrap().mean - 0.4).abs() < 1e-12);
        assert_eq!(
            ba.pos_neg_gap.unwrap().mean,
            10.0,
            "null values are skipped"
        );
        assert_eq!(rows[1].seeds, [1]);
    }

    #[test]
    fn band_takes_min_mean_max_per_step() {
        let b = band(&[vec![(0, 1.0), (1, 2.0)], vec![(0, 3.0)]]);
        assert_eq!(b.len(), 2);
        assert_eq!(
            (b[0].1.mean, b[0].1.min, b[0].1.max, b[0].1.n),
            (2.0, 1.0, 3.0, 2)
        );
        assert_eq!((b[1].1.mean, b[1].1.n), (2.0, 1));
    }
}
