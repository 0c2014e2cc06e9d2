//! Paired comparisons over seeds: each rule against a reference rule (by default `balanced`),
//! seed by seed, with a Student-t 95% confidence interval of the mean difference.
//!
//! Runs of one seed share their warm-started weights, their data order and their sampling
//! seeds, so the difference `d_s = x(rule, s) - x(reference, s)` removes the seed's own luck;
//! the interval is `mean(d) ± t_{0.975, n-1} · sd(d) / sqrt(n)` over the `n` seeds that both
//! rules finished.

use std::collections::BTreeMap;

use crate::runs::Run;

/// A mean with its 95% confidence interval over `n` values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Mean of the values.
    pub mean: f64,
    /// Lower end of the 95% interval (the mean itself when `n < 2`).
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Number of values.
    pub n: usize,
}

impl Interval {
    /// `mean ± t_{0.975, n-1} · sd / sqrt(n)` of `values` (sd with `n - 1`); None when empty.
    pub fn of(values: &[f64]) -> Option<Interval> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Some(Interval {
                mean,
                lo: mean,
                hi: mean,
                n,
            });
        }
        let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
        let half = t_975(n - 1) * (var / n as f64).sqrt();
        Some(Interval {
            mean,
            lo: mean - half,
            hi: mean + half,
            n,
        })
    }

    /// Half the interval's width.
    pub fn half_width(&self) -> f64 {
        (self.hi - self.lo) / 2.0
    }

    /// True when the interval lies entirely above or below zero.
    pub fn excludes_zero(&self) -> bool {
        self.n > 1 && (self.lo > 0.0 || self.hi < 0.0)
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom: exact to three decimals
/// for `df <= 30` (table), then the Cornish-Fisher expansion
/// `z + (z^3 + z) / (4 df) + (5 z^5 + 16 z^3 + 3 z) / (96 df^2)`.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => {
            let (z, d) = (1.959_964_f64, df as f64);
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// What one run scored on its held-out evaluations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunScores {
    /// Best evaluation.
    pub peak: f64,
    /// Last evaluation.
    pub last: f64,
    /// `peak - last`.
    pub drop: f64,
    /// Mean of the last five evaluations (of all, when there are fewer).
    pub last5: f64,
}

impl RunScores {
    /// The scores of `run` (None without evaluations).
    pub fn of(run: &Run) -> Option<RunScores> {
        let acc = run.accuracy();
        let last = acc.last()?.1;
        let peak = acc.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let tail = &acc[acc.len().saturating_sub(5)..];
        Some(RunScores {
            peak,
            last,
            drop: peak - last,
            last5: tail.iter().map(|p| p.1).sum::<f64>() / tail.len() as f64,
        })
    }
}

/// One rule against the reference: the paired differences (rule minus reference) of each score.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedRow {
    /// The rule.
    pub rule: String,
    /// The reference rule.
    pub reference: String,
    /// Seeds both rules finished.
    pub seeds: Vec<u64>,
    /// Peak accuracy difference.
    pub peak: Interval,
    /// Last-step accuracy difference.
    pub last: Interval,
    /// Peak-to-last drop difference.
    pub drop: Interval,
    /// Difference of the mean of the last five evaluations.
    pub last5: Interval,
}

/// One row per rule other than `reference` among `runs` (one condition), over the seeds both
/// finished; rules without a common seed are left out. A seed with two runs of one rule keeps
/// the later directory (in path order).
pub fn paired_differences(runs: &[&Run], reference: &str) -> Vec<PairedRow> {
    let mut scores: BTreeMap<&str, BTreeMap<u64, RunScores>> = BTreeMap::new();
    let mut sorted: Vec<&&Run> = runs.iter().collect();
    sorted.sort_by(|a, b| a.dir.cmp(&b.dir));
    for r in sorted {
        if let Some(s) = RunScores::of(r) {
            scores.entry(r.rule.as_str()).or_default().insert(r.seed, s);
        }
    }
    let Some(refs) = scores.get(reference) else {
        return Vec::new();
    };
    scores
        .iter()
        .filter(|(rule, _)| **rule != reference)
        .filter_map(|(rule, by_seed)| {
            let pairs: Vec<(u64, &RunScores, &RunScores)> = by_seed
                .iter()
                .filter_map(|(seed, s)| refs.get(seed).map(|r| (*seed, s, r)))
                .collect();
            let diff = |f: fn(&RunScores) -> f64| {
                Interval::of(
                    &pairs
                        .iter()
                        .map(|(_, s, r)| f(s) - f(r))
                        .collect::<Vec<_>>(),
                )
            };
            Some(PairedRow {
                rule: rule.to_string(),
                reference: reference.to_string(),
                seeds: pairs.iter().map(|p| p.0).collect(),
                peak: diff(|s| s.peak)?,
                last: diff(|s| s.last)?,
                drop: diff(|s| s.drop)?,
                last5: diff(|s| s.last5)?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::EvalPoint;

    fn run(rule: &str, seed: u64, acc: &[f64]) -> Run {
        Run {
            dir: format!("/x/{rule}-s{seed}").into(),
            rule: rule.into(),
            seed,
            regime: "r".into(),
            lr: None,
            warm_start_steps: None,
            model: None,
            settings: Default::default(),
            machines: Vec::new(),
            planned_steps: None,
            train: Vec::new(),
            eval: acc
                .iter()
                .enumerate()
                .map(|(i, &a)| EvalPoint {
                    step: 10 * i,
                    dataset: "d".into(),
                    mean_at_k: a,
                    pass_at_k: a,
                })
                .collect(),
        }
    }

    #[test]
    fn interval_by_hand() {
        // d = 1, 2, 3: mean 2, sd 1, t(2) = 4.303, half = 4.303 / sqrt 3
        let i = Interval::of(&[1.0, 2.0, 3.0]).unwrap();
        let half = 4.303 / 3f64.sqrt();
        assert!((i.mean - 2.0).abs() < 1e-12);
        assert!((i.lo - (2.0 - half)).abs() < 1e-12 && (i.hi - (2.0 + half)).abs() < 1e-12);
        assert!(!i.excludes_zero(), "2 - 2.48 < 0");
        assert!(Interval::of(&[2.0, 3.0, 4.0]).unwrap().excludes_zero());
        assert!(!Interval::of(&[-1.0, 1.0]).unwrap().excludes_zero());
        let one = Interval::of(&[0.5]).unwrap();
        assert_eq!((one.lo, one.hi, one.n), (0.5, 0.5, 1));
        assert!(!one.excludes_zero(), "one seed proves nothing");
        assert!(Interval::of(&[]).is_none());
        // the expansion meets the table near df = 30 and tends to the normal quantile
        // t(0.975, 31) = 2.0395, t(0.975, 60) = 2.0003
        assert!((t_975(31) - 2.0395).abs() < 1e-3, "{}", t_975(31));
        assert!((t_975(60) - 2.0003).abs() < 1e-3, "{}", t_975(60));
        assert!((t_975(100_000) - 1.96).abs() < 1e-3);
        assert_eq!(t_975(7), 2.365);
    }

    #[test]
    fn scores_of_a_run_by_hand() {
        let r = run("a", 1, &[0.2, 0.5, 0.7, 0.6, 0.6, 0.5, 0.4]);
        let s = RunScores::of(&r).unwrap();
        assert_eq!((s.peak, s.last), (0.7, 0.4));
        assert!((s.drop - 0.3).abs() < 1e-12);
        // last five: 0.7 0.6 0.6 0.5 0.4
        assert!((s.last5 - 0.56).abs() < 1e-12);
        let short = RunScores::of(&run("a", 1, &[0.2, 0.4])).unwrap();
        assert!((short.last5 - 0.3).abs() < 1e-12);
        assert!(RunScores::of(&run("a", 1, &[])).is_none());
    }

    #[test]
    fn differences_pair_by_seed() {
        // token-mean beats balanced by 0.1, 0.2 on seeds 1, 2; seed 3 has no balanced run
        let runs = [
            run("balanced", 1, &[0.1, 0.5]),
            run("balanced", 2, &[0.1, 0.3]),
            run("token-mean", 1, &[0.1, 0.6]),
            run("token-mean", 2, &[0.1, 0.5]),
            run("token-mean", 3, &[0.1, 0.9]),
            run("seq-mean-token-mean", 9, &[0.1, 0.9]),
        ];
        let refs: Vec<&Run> = runs.iter().collect();
        let rows = paired_differences(&refs, "balanced");
        assert_eq!(rows.len(), 1, "no common seed for seq-mean-token-mean");
        let r = &rows[0];
        assert_eq!(
            (r.rule.as_str(), r.seeds.as_slice()),
            ("token-mean", &[1, 2][..])
        );
        assert!((r.last.mean - 0.15).abs() < 1e-12);
        // d = 0.1, 0.2: sd = 0.0707, t(1) = 12.706
        let half = 12.706 * (0.005f64 / 2.0).sqrt();
        assert!((r.last.hi - (0.15 + half)).abs() < 1e-9);
        assert!((r.drop.mean).abs() < 1e-12);
        // permuting the runs changes nothing
        let mut rev = refs.clone();
        rev.reverse();
        assert_eq!(paired_differences(&rev, "balanced"), rows);
        assert!(paired_differences(&refs, "missing").is_empty());
    }
}
