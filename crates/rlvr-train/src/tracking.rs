//! Where a run's metrics go as they are made (verl's `tracking.py`): `metrics.jsonl` always,
//! and TensorBoard event files when `trainer.logger` names `tensorboard`.
//!
//! TensorBoard tags are verl's metric names where verl logs the same quantity
//! ([`TRAIN_TAGS`]; configs/README.md, "Metric names", is the same table), so dashboards
//! and scripts written for verl runs read rlvr runs; what only rlvr computes is under
//! `rlvr/`. Evaluations are `val-core/<dataset>/acc/mean@<k>` and
//! `val-core/<dataset>/acc/best@<k>/mean` (verl's names for mean@k and best-of-k; rlvr's
//! best-of-k is the unbiased pass@k estimator where verl bootstraps it). A missing value (a
//! `null` in `metrics.jsonl`, such as the loss of a skipped step) is not written.

use rlvr_core::run_dir::RunDir;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::metrics::MetricsWriter;
use crate::tensorboard::EventWriter;
use crate::TrainError;
use rlvr_core::metrics::{EvalLine, MetricsLine, TrainLine};

/// Every scalar of a train line but `step`, with its TensorBoard tag.
pub const TRAIN_TAGS: [(&str, &str); 26] = [
    ("reward_mean", "critic/score/mean"),
    ("reward_std", "rlvr/critic/score/std"),
    ("accuracy", "rlvr/acc/mean"),
    ("response_length_mean", "response_length/mean"),
    ("response_length_min", "response_length/min"),
    ("response_length_max", "response_length/max"),
    ("response_length_cv", "rlvr/response_length/cv"),
    ("truncated_share", "response_length/clip_ratio"),
    ("pos_neg_gap", "rlvr/pos_neg_gap"),
    ("pos_neg_gap_rel", "rlvr/pos_neg_gap_rel"),
    ("pg_loss", "actor/pg_loss"),
    ("kl", "actor/kl_loss"),
    ("entropy", "actor/entropy"),
    ("pg_clipfrac_low", "rlvr/actor/pg_clipfrac_low"),
    ("pg_clipfrac_high", "rlvr/actor/pg_clipfrac_high"),
    ("grad_norm", "actor/grad_norm"),
    ("lr", "actor/lr"),
    ("rollout_tokens_per_s", "rlvr/perf/rollout_tokens_per_s"),
    ("train_tokens_per_s", "rlvr/perf/train_tokens_per_s"),
    ("time_rollout_s", "timing_s/gen"),
    ("time_reward_s", "timing_s/reward"),
    ("time_train_s", "rlvr/timing_s/train"),
    ("groups_kept", "rlvr/groups_kept"),
    ("gen_batches", "train/num_gen_batches"),
    ("wall_s", "rlvr/wall_s"),
    ("skipped", "rlvr/skipped"),
];

/// The tag of a rule's positive share (`positive_share.<rule>` in `metrics.jsonl`).
pub fn positive_share_tag(rule: &str) -> String {
    format!("rlvr/positive_share/{rule}")
}

/// The tag of the step's bias verdict (text).
pub const VERDICT_TAG: &str = "rlvr/verdict";

/// The scalars of a train line as `(tag, value)`: [`TRAIN_TAGS`] then the positive shares,
/// NaN (missing) values left out.
pub fn train_scalars(line: &TrainLine) -> Vec<(String, f64)> {
    let fields = TRAIN_TAGS
        .iter()
        .filter_map(|&(name, tag)| Some((tag.to_string(), line.value(name)?)));
    let shares = line
        .positive_share
        .iter()
        .map(|(rule, &v)| (positive_share_tag(rule), v));
    fields.chain(shares).filter(|(_, v)| !v.is_nan()).collect()
}

/// The scalars of an eval line as `(tag, value)`, NaN values left out.
pub fn eval_scalars(line: &EvalLine) -> Vec<(String, f64)> {
    let (ds, k) = (&line.dataset, line.k);
    [
        (format!("val-core/{ds}/acc/mean@{k}"), line.mean_at_k),
        (format!("val-core/{ds}/acc/best@{k}/mean"), line.pass_at_k),
        (format!("rlvr/val/{ds}/n_problems"), line.n_problems as f64),
        (
            format!("rlvr/val/{ds}/distinct_problems"),
            line.distinct_problems as f64,
        ),
    ]
    .into_iter()
    .filter(|(_, v)| !v.is_nan())
    .collect()
}

/// Where a run's TensorBoard events go: `$TENSORBOARD_DIR/<run name>` when the variable is
/// set (verl reads it; the run's name keeps the runs of a sweep apart), else
/// `<run dir>/tensorboard`.
pub fn tensorboard_dir(run_dir: &Path, tensorboard_env: Option<OsString>) -> PathBuf {
    match tensorboard_env.filter(|v| !v.is_empty()) {
        Some(root) => PathBuf::from(root).join(run_dir.file_name().unwrap_or_default()),
        None => run_dir.join("tensorboard"),
    }
}

/// The run's metric sinks.
pub struct Tracking {
    metrics: MetricsWriter,
    eval_samples: MetricsWriter,
    tensorboard: Option<EventWriter>,
}

impl Tracking {
    /// Opens `metrics.jsonl` (dropping lines after `resumed_at`, the step a resumed run
    /// continues from) and, with `tensorboard` set, a new event file there; a resumed run's
    /// event file starts with a session start at `resumed_at + 1`, so that TensorBoard drops
    /// what an earlier session wrote for the steps this one redoes.
    pub fn open(
        run_dir: &Path,
        resumed_at: Option<usize>,
        tensorboard: Option<&Path>,
    ) -> Result<Self, TrainError> {
        let path = RunDir::new(run_dir).metrics();
        let metrics =
            MetricsWriter::open(&path, resumed_at).map_err(|e| TrainError::io(&path, e))?;
        let path = RunDir::new(run_dir).eval_samples();
        let eval_samples =
            MetricsWriter::open(&path, resumed_at).map_err(|e| TrainError::io(&path, e))?;
        let tensorboard = match tensorboard {
            None => None,
            Some(dir) => {
                let mut w = EventWriter::create(dir).map_err(|e| TrainError::io(dir, e))?;
                if let Some(step) = resumed_at {
                    w.session_start(step + 1)
                        .map_err(|e| TrainError::io(w.path(), e))?;
                }
                Some(w)
            }
        };
        Ok(Self {
            metrics,
            eval_samples,
            tensorboard,
        })
    }

    /// Writes an evaluation's samples to `eval-samples.jsonl`, one line each: `step`,
    /// `dataset`, `problem` (its index in the evaluation), `question` (the text asked, options
    /// included), `choices` (a multiple-choice problem's options, else null), `sample`,
    /// `answer` (the gold), `response`, `correct`: what `rlvr verify --jsonl FILE --gold-field
    /// answer --question-field question` needs to score a math problem's samples again as the
    /// run did.
    pub fn log_eval_samples(
        &mut self,
        step: usize,
        task: &crate::task::Task,
        r: &crate::eval::EvalResult,
    ) -> Result<(), TrainError> {
        for (n, s) in r.samples.iter().enumerate() {
            let problem = task.problems.get(s.problem);
            let line = serde_json::json!({
                "step": step,
                "dataset": r.dataset,
                "problem": s.problem,
                "question": problem.map(|p| p.question()),
                "choices": problem.and_then(|p| p.choices.as_ref()),
                "sample": n % r.k.max(1),
                "answer": problem.map(|p| p.answer.as_str()),
                "response": s.text,
                "correct": s.correct,
            });
            self.eval_samples
                .write_json(&line)
                .map_err(|e| TrainError::io(self.eval_samples.path(), e))?;
        }
        Ok(())
    }

    /// The event file, when TensorBoard is on.
    pub fn tensorboard_file(&self) -> Option<&Path> {
        self.tensorboard.as_ref().map(EventWriter::path)
    }

    /// Writes one line to `metrics.jsonl` and its values to TensorBoard (a train line's
    /// verdict as text). A failed `metrics.jsonl` write is an error; a failed event write a
    /// warning in the run log, after which TensorBoard logging stops.
    pub fn log(&mut self, line: &MetricsLine) -> Result<(), TrainError> {
        self.metrics
            .write(line)
            .map_err(|e| TrainError::io(self.metrics.path(), e))?;
        let Some(tb) = &mut self.tensorboard else {
            return Ok(());
        };
        let written = match line {
            MetricsLine::Train(t) => tb.scalars(t.step, &train_scalars(t)).and_then(|()| match &t
                .verdict
            {
                Some(v) => tb.text(t.step, VERDICT_TAG, v),
                None => Ok(()),
            }),
            MetricsLine::Eval(e) => tb.scalars(e.step, &eval_scalars(e)),
            MetricsLine::Other => Ok(()),
        };
        if let Err(e) = written {
            // the event file is a view of metrics.jsonl: a failed write (a full disk) is a
            // warning, and the run goes on with metrics.jsonl and its checkpoints
            crate::ui::log_line(&format!(
                "warning: tensorboard: {}: {e}; TensorBoard logging stops for this run \
                 (metrics.jsonl goes on)",
                tb.path().display()
            ));
            self.tensorboard = None;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_train_scalar_but_step_has_one_tag() {
        let named: BTreeSet<&str> = TRAIN_TAGS.iter().map(|&(n, _)| n).collect();
        let scalars: BTreeSet<&str> = TrainLine::SCALARS
            .iter()
            .copied()
            .filter(|&n| n != "step")
            .collect();
        assert_eq!(named, scalars);
        let tags: BTreeSet<&str> = TRAIN_TAGS.iter().map(|&(_, t)| t).collect();
        assert_eq!(tags.len(), TRAIN_TAGS.len(), "two metrics share a tag");
    }

    /// configs/README.md's "Metric names" table is [`TRAIN_TAGS`], row for row, plus the
    /// positive-share, verdict and eval rows.
    #[test]
    fn the_readme_table_is_the_tag_table() {
        let readme = include_str!("../../../configs/README.md");
        let section = readme
            .split("## Metric names")
            .nth(1)
            .expect("configs/README.md has a '## Metric names' section");
        let section = section.split("\n## ").next().unwrap();
        let rows: BTreeSet<(String, String)> = section
            .lines()
            .filter(|l| l.starts_with("| `"))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                (
                    cells[1].trim_matches('`').to_string(),
                    cells[2].trim_matches('`').to_string(),
                )
            })
            .collect();
        let mut want: BTreeSet<(String, String)> = TRAIN_TAGS
            .iter()
            .map(|&(n, t)| (n.to_string(), t.to_string()))
            .collect();
        want.insert(("positive_share.<rule>".into(), positive_share_tag("<rule>")));
        want.insert(("verdict".into(), VERDICT_TAG.into()));
        let eval = EvalLine {
            step: 0,
            dataset: "<dataset>".into(),
            k: 0,
            n_problems: 0,
            distinct_problems: 0,
            mean_at_k: 0.0,
            pass_at_k: 0.0,
        };
        let names = ["mean_at_k", "pass_at_k", "n_problems", "distinct_problems"];
        for (name, (tag, _)) in names.iter().zip(eval_scalars(&eval)) {
            want.insert((format!("eval {name}"), tag.replace("@0", "@<k>")));
        }
        let missing: Vec<_> = want.difference(&rows).collect();
        let extra: Vec<_> = rows.difference(&want).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "configs/README.md metric table: missing {missing:?}, not a metric {extra:?}"
        );
    }

    #[test]
    fn missing_values_are_left_out_and_shares_are_tagged_by_rule() {
        let mut line: TrainLine = serde_json::from_str(
            r#"{"step": 4, "reward_mean": 0.25, "pg_loss": null,
                "positive_share": {"balanced": 0.5, "token-mean": null}}"#,
        )
        .unwrap();
        line.skipped = true;
        let s = train_scalars(&line);
        let get = |tag: &str| s.iter().find(|(t, _)| t == tag).map(|&(_, v)| v);
        assert_eq!(get("critic/score/mean"), Some(0.25));
        assert_eq!(get("actor/pg_loss"), None);
        assert_eq!(get("rlvr/positive_share/balanced"), Some(0.5));
        assert_eq!(get("rlvr/positive_share/token-mean"), None);
        assert_eq!(get("rlvr/skipped"), Some(1.0));
        assert_eq!(get("rlvr/groups_kept"), Some(0.0));
    }

    #[test]
    fn eval_tags_are_verls_validation_names() {
        let e = EvalLine {
            step: 10,
            dataset: "math500".into(),
            k: 4,
            n_problems: 500,
            distinct_problems: 500,
            mean_at_k: 0.5,
            pass_at_k: f64::NAN,
        };
        let tags: Vec<String> = eval_scalars(&e).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            tags,
            [
                "val-core/math500/acc/mean@4",
                "rlvr/val/math500/n_problems",
                "rlvr/val/math500/distinct_problems"
            ]
        );
    }

    #[test]
    fn tensorboard_dir_follows_verls_variable_with_the_run_name() {
        let run = Path::new("runs/testbed-balanced-s0");
        assert_eq!(
            tensorboard_dir(run, None),
            Path::new("runs/testbed-balanced-s0/tensorboard")
        );
        assert_eq!(
            tensorboard_dir(run, Some("".into())),
            Path::new("runs/testbed-balanced-s0/tensorboard")
        );
        assert_eq!(
            tensorboard_dir(run, Some("/tmp/tb".into())),
            Path::new("/tmp/tb/testbed-balanced-s0")
        );
    }
}
