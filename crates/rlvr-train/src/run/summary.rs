//! The summary of a run, built from its metrics file and printed at the end of `rlvr train`.

use rlvr_core::run_dir::RunDir;
use std::path::{Path, PathBuf};

use crate::checkpoint::PhaseTimes;
use crate::config::TrainConfig;
use crate::eval::EvalResult;
use crate::metrics;
use crate::TrainError;
use rlvr_core::metrics::{EvalLine, MetricsLine, TrainLine};

/// What a finished (or stopped) session reports.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub run_dir: PathBuf,
    pub steps: usize,
    pub total_steps: usize,
    pub rule: String,
    /// What it trained on: the testbed's regime and term counts, or the train files.
    pub task: String,
    /// Evaluations at step 0 and at the last step (one per dataset).
    pub before: Vec<EvalResult>,
    pub after: Vec<EvalResult>,
    /// Reward mean per step (NaN for skipped steps).
    pub rewards: Vec<f64>,
    /// Why steps were skipped: each distinct `skip_reason`, with its count, most frequent first.
    pub skip_reasons: Vec<(String, usize)>,
    /// The bias diagnostics of the live batches, averaged over steps.
    pub live_bias: Option<LiveBias>,
    pub times: PhaseTimes,
    pub wall_s: f64,
    pub warm_start: Option<String>,
    pub n_params: usize,
}

/// docs/architecture.md §3 diagnostics of a run's batches, each the mean over the steps that have it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveBias {
    /// Response length coefficient of variation.
    pub length_cv: f64,
    /// Within-group `L+ - L-` in tokens (None when no step had a group with both signs).
    pub pos_neg_gap: Option<f64>,
    /// Per rule: share of the advantage-weighted token mass on positive responses.
    pub positive_share: Vec<(String, f64)>,
}

impl LiveBias {
    /// From the `"train"` lines of `metrics.jsonl` (skipped steps and nulls left out).
    pub fn from_lines(train: &[&TrainLine]) -> Option<Self> {
        let live: Vec<&TrainLine> = train.iter().copied().filter(|t| !t.skipped).collect();
        let mean = |get: &dyn Fn(&TrainLine) -> Option<f64>| {
            let xs: Vec<f64> = live
                .iter()
                .filter_map(|t| get(t))
                .filter(|x| x.is_finite())
                .collect();
            (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
        };
        let length_cv = mean(&|t| Some(t.response_length_cv))?;
        let rules: Vec<String> = live
            .first()
            .map(|t| t.positive_share.keys().cloned().collect())
            .unwrap_or_default();
        let positive_share = rules
            .into_iter()
            .filter_map(|r| Some((r.clone(), mean(&|t| t.positive_share.get(&r).copied())?)))
            .collect();
        Some(Self {
            length_cv,
            pos_neg_gap: mean(&|t| Some(t.pos_neg_gap)),
            positive_share,
        })
    }
}

/// The distinct `skip_reason`s of the skipped `"train"` lines with their counts, most frequent
/// first (ties in order of first appearance).
fn skip_reasons(train: &[&TrainLine]) -> Vec<(String, usize)> {
    let mut reasons: Vec<(String, usize)> = Vec::new();
    for t in train.iter().filter(|t| t.skipped) {
        let reason = t.skip_reason.as_deref().unwrap_or("no reason recorded");
        match reasons.iter_mut().find(|(r, _)| r == reason) {
            Some((_, n)) => *n += 1,
            None => reasons.push((reason.to_string(), 1)),
        }
    }
    reasons.sort_by_key(|r| std::cmp::Reverse(r.1));
    reasons
}

/// Builds the summary from the run's metrics file.
pub(super) fn summarize(
    run_dir: &Path,
    cfg: &TrainConfig,
    steps: usize,
    n_params: usize,
    warm_start: Option<String>,
    times: PhaseTimes,
    wall_s: f64,
) -> Result<RunSummary, TrainError> {
    let path = RunDir::new(run_dir).metrics();
    let lines = metrics::read_lines(&path).map_err(|e| TrainError::io(&path, e))?;
    let eval_at = |step: usize| -> Vec<EvalResult> {
        lines
            .iter()
            .filter_map(|l| match l {
                MetricsLine::Eval(e) if e.step == step => Some(e),
                _ => None,
            })
            .map(|e: &EvalLine| EvalResult {
                dataset: e.dataset.clone(),
                k: e.k,
                n_problems: e.n_problems,
                distinct_problems: e.distinct_problems,
                mean_at_k: e.mean_at_k,
                pass_at_k: e.pass_at_k,
                correct: Vec::new(),
                samples: Vec::new(),
                response_length_mean: f64::NAN,
                secs: 0.0,
            })
            .collect()
    };
    let train: Vec<&TrainLine> = lines
        .iter()
        .filter_map(|l| match l {
            MetricsLine::Train(t) => Some(t),
            _ => None,
        })
        .collect();
    Ok(RunSummary {
        run_dir: run_dir.to_path_buf(),
        steps,
        total_steps: cfg.trainer.total_training_steps,
        rule: cfg.algorithm.loss_agg_mode.to_string(),
        task: crate::source::task_source(cfg).describe(cfg),
        before: eval_at(0),
        after: if steps > 0 {
            eval_at(steps)
        } else {
            Vec::new()
        },
        rewards: train.iter().map(|t| t.reward_mean).collect(),
        skip_reasons: skip_reasons(&train),
        live_bias: LiveBias::from_lines(&train),
        times,
        wall_s,
        warm_start,
        n_params,
    })
}

impl RunSummary {
    /// Steps skipped (nothing applied), over all reasons.
    pub fn skipped_steps(&self) -> usize {
        self.skip_reasons.iter().map(|(_, n)| n).sum()
    }

    /// The text printed at the end of `rlvr train`.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let t = &self.times;
        s += &format!(
            "\n== rlvr train: {} steps of {} ({} skipped), aggregation `{}` ==\n",
            self.steps,
            self.total_steps,
            self.skipped_steps(),
            self.rule
        );
        let skipped = self.skipped_steps();
        if skipped > 0 {
            let reasons: Vec<String> = self
                .skip_reasons
                .iter()
                .map(|(r, n)| format!("{r} ({n})"))
                .collect();
            if skipped == self.steps {
                s += &format!(
                    "WARNING: every step was skipped, so the policy was not updated: {}\n",
                    reasons.join("; ")
                );
            } else {
                s += &format!("skipped steps: {}\n", reasons.join("; "));
            }
        }
        s += &format!("task: {}\n", self.task);
        s += &format!("policy: {} parameters\n", self.n_params);
        if let Some(w) = &self.warm_start {
            s += &format!("warm start: {w}\n");
        }
        for after in &self.after {
            let before = self.before.iter().find(|b| b.dataset == after.dataset);
            match before {
                Some(b) => {
                    s += &format!(
                        "held-out accuracy ({}, {}, mean@{k} sampled): {:.3} before -> {:.3} after ({:+.3}); pass@{k}: {:.3} -> {:.3}\n",
                        after.dataset, after.problems_text(), b.mean_at_k, after.mean_at_k,
                        after.mean_at_k - b.mean_at_k, b.pass_at_k, after.pass_at_k, k = after.k
                    );
                }
                None => {
                    s += &format!(
                        "held-out accuracy ({}, {}): mean@{k} {:.3}, pass@{k} {:.3}\n",
                        after.dataset,
                        after.problems_text(),
                        after.mean_at_k,
                        after.pass_at_k,
                        k = after.k
                    );
                }
            }
        }
        if !self.rewards.is_empty() {
            let r = &self.rewards;
            let last = &r[r.len().saturating_sub(10)..];
            s += &format!(
                "training reward: {} (first {:.3}, mean of last {} {:.3})\n",
                metrics::sparkline(r, 60),
                r[0],
                last.len(),
                crate::warm_start::mean(last)
            );
        }
        if let Some(b) = &self.live_bias {
            let gap = b
                .pos_neg_gap
                .map_or("n/a".to_string(), |g| format!("{g:+.1} tokens"));
            let mut rules = vec!["token-mean", "seq-mean-token-mean", "balanced"];
            if !rules.contains(&self.rule.as_str()) {
                rules.push(&self.rule);
            }
            let shares: Vec<String> = rules
                .iter()
                .filter_map(|r| {
                    let (_, v) = b.positive_share.iter().find(|(n, _)| n == r)?;
                    let this = if *r == self.rule { " (this run)" } else { "" };
                    Some(format!("{r} {v:.3}{this}"))
                })
                .collect();
            let shares = if shares.is_empty() {
                "n/a (no step had both right and wrong responses)".to_string()
            } else {
                shares.join(", ")
            };
            s += &format!(
                "live batches (mean over steps): length CV {:.2}, L+ - L- {gap}; gradient share on correct responses: {shares}\n",
                b.length_cv,
            );
        }
        s += &format!(
            "time: {:.0}s wall; setup {:.0}s, warm start {:.0}s, rollout {:.0}s, reward {:.1}s, train {:.0}s, eval {:.0}s, checkpoints {:.1}s\n",
            self.wall_s, t.setup_s, t.warm_start_s, t.rollout_s, t.reward_s, t.train_s, t.eval_s, t.checkpoint_s
        );
        s += &format!(
            "files: {}/ (metrics.jsonl, eval-samples.jsonl, config.toml, host.jsonl, checkpoint/ in Hugging Face layout)\n",
            self.run_dir.display()
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_bias_averages_the_live_steps() {
        let lines: Vec<TrainLine> = [
            r#"{"step":1,"skipped":false,"response_length_cv":0.4,"pos_neg_gap":-2.0,
               "positive_share":{"balanced":0.5,"token-mean":0.44}}"#,
            r#"{"step":2,"skipped":false,"response_length_cv":0.2,"pos_neg_gap":null,
               "positive_share":{"balanced":0.5,"token-mean":0.48}}"#,
            r#"{"step":3,"skipped":true,"response_length_cv":9.0,"pos_neg_gap":9.0,
               "positive_share":{"balanced":0.0,"token-mean":0.0}}"#,
        ]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
        let refs: Vec<&TrainLine> = lines.iter().collect();
        let b = LiveBias::from_lines(&refs).unwrap();
        assert!((b.length_cv - 0.3).abs() < 1e-12);
        assert_eq!(b.pos_neg_gap, Some(-2.0));
        let share = |r: &str| b.positive_share.iter().find(|(n, _)| n == r).unwrap().1;
        assert!((share("token-mean") - 0.46).abs() < 1e-12);
        assert_eq!(share("balanced"), 0.5);
        assert_eq!(LiveBias::from_lines(&refs[2..]), None);
    }

    fn summary_of(lines: &[&str]) -> RunSummary {
        let values: Vec<TrainLine> = lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let train: Vec<&TrainLine> = values.iter().collect();
        RunSummary {
            run_dir: PathBuf::from("run"),
            steps: train.len(),
            total_steps: train.len(),
            rule: "balanced".into(),
            task: "testbed".into(),
            before: Vec::new(),
            after: Vec::new(),
            rewards: Vec::new(),
            skip_reasons: skip_reasons(&train),
            live_bias: None,
            times: PhaseTimes::default(),
            wall_s: 0.0,
            warm_start: None,
            n_params: 0,
        }
    }

    /// A run whose every step was skipped says so, with the reasons counted; one that skipped
    /// some steps lists them; one that skipped none says nothing about skipping.
    #[test]
    fn skipped_steps_are_reported_with_their_reasons() {
        let novar = r#"{"step":1,"skipped":true,"skip_reason":"no group with reward variation"}"#;
        let nan = r#"{"step":1,"skipped":true,"skip_reason":"non-finite loss (NaN)"}"#;
        let ok = r#"{"step":1,"skipped":false}"#;
        let all = summary_of(&[nan, novar, novar]).render();
        assert!(
            all.contains(
                "WARNING: every step was skipped, so the policy was not updated: \
                 no group with reward variation (2); non-finite loss (NaN) (1)\n"
            ),
            "{all}"
        );
        let some = summary_of(&[ok, novar, ok]).render();
        assert!(!some.contains("WARNING"), "{some}");
        assert!(
            some.contains("skipped steps: no group with reward variation (1)\n"),
            "{some}"
        );
        let none = summary_of(&[ok, ok]).render();
        assert!(
            !none.contains("skipped steps") && !none.contains("WARNING"),
            "{none}"
        );
        let unexplained = summary_of(&[r#"{"step":1,"skipped":true}"#]).render();
        assert!(
            unexplained.contains("no reason recorded (1)"),
            "{unexplained}"
        );
    }
}
