//! `runs/<name>/metrics.jsonl`: one JSON object per line, flat keys.
//!
//! Two kinds of line, told apart by `"kind"`:
//!
//! - `"train"`, one per GRPO step: `step`, `reward_mean`, `reward_std`, `accuracy`,
//!   `response_length_mean/min/max/cv`, `truncated_share`, `pos_neg_gap` (mean over mixed groups
//!   of `L+ - L-`), `pos_neg_gap_rel` (`pos_neg_gap / response_length_mean`), `positive_share` (an object: rule name -> share of the advantage-weighted
//!   token mass on positive responses under that rule, docs/architecture.md §3), `pg_loss`, `kl`,
//!   `entropy`, `pg_clipfrac_low`, `pg_clipfrac_high`, `grad_norm`, `lr`,
//!   `rollout_tokens_per_s`, `train_tokens_per_s`, `time_rollout_s`, `time_reward_s`,
//!   `time_train_s`, `skipped` and, when skipped, `skip_reason`. Also `groups_kept`,
//!   `gen_batches` (dynamic sampling) and `wall_s` (seconds since the run started). Lengths
//!   and the gap count the tokens the policy sampled, not those a task's environment inserted
//!   (`rlvr_train::environment`).
//! - `"eval"`: `step`, `dataset`, `k`, `n_problems`, `distinct_problems`, `mean_at_k`,
//!   `pass_at_k`.
//!
//! Non-finite numbers are written as `null` (JSON has no NaN).
//! `rlvr report` reads these lines; keep the names stable.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One `"kind":"train"` line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainLine {
    pub kind: String,
    pub step: usize,
    pub reward_mean: f64,
    pub reward_std: f64,
    pub accuracy: f64,
    pub response_length_mean: f64,
    pub response_length_min: f64,
    pub response_length_max: f64,
    pub response_length_cv: f64,
    pub truncated_share: f64,
    pub pos_neg_gap: f64,
    pub pos_neg_gap_rel: f64,
    pub positive_share: BTreeMap<String, f64>,
    pub pg_loss: f64,
    pub kl: f64,
    pub entropy: f64,
    pub pg_clipfrac_low: f64,
    pub pg_clipfrac_high: f64,
    pub grad_norm: f64,
    pub lr: f64,
    pub rollout_tokens_per_s: f64,
    pub train_tokens_per_s: f64,
    pub time_rollout_s: f64,
    pub time_reward_s: f64,
    pub time_train_s: f64,
    pub groups_kept: usize,
    pub gen_batches: usize,
    pub wall_s: f64,
    pub skipped: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub skip_reason: Option<String>,
}

/// One `"kind":"eval"` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalLine {
    pub kind: String,
    pub step: usize,
    pub dataset: String,
    pub k: usize,
    /// Problems evaluated (the testbed draws held-out problems with replacement, so some
    /// repeat; see `distinct_problems`).
    pub n_problems: usize,
    /// Distinct problems among them.
    #[serde(default)]
    pub distinct_problems: usize,
    pub mean_at_k: f64,
    pub pass_at_k: f64,
}

/// Appends lines to a metrics file, flushing each.
pub struct MetricsWriter {
    path: PathBuf,
    file: File,
}

impl MetricsWriter {
    /// Opens `path` for appending, first dropping lines of steps after `keep_through` (a resumed
    /// run rewrites the steps it redoes). `None` keeps everything.
    pub fn open(path: &Path, keep_through: Option<usize>) -> std::io::Result<Self> {
        if let (Some(last), true) = (keep_through, path.exists()) {
            let kept: Vec<String> = BufReader::new(File::open(path)?)
                .lines()
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .filter(|line| {
                    serde_json::from_str::<serde_json::Value>(line)
                        .ok()
                        .and_then(|v| v.get("step").and_then(|s| s.as_u64()))
                        .is_some_and(|s| s as usize <= last)
                })
                .collect();
            let tmp = path.with_extension("jsonl.tmp");
            let mut f = File::create(&tmp)?;
            for line in kept {
                writeln!(f, "{line}")?;
            }
            f.sync_all()?;
            std::fs::rename(&tmp, path)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one object as one line.
    pub fn write<T: Serialize>(&mut self, line: &T) -> std::io::Result<()> {
        let text = serde_json::to_string(line).map_err(std::io::Error::other)?;
        writeln!(self.file, "{text}")?;
        self.file.flush()
    }
}

/// Reads every line of a metrics file as JSON values (for summaries and tests).
pub fn read_lines(path: &Path) -> std::io::Result<Vec<serde_json::Value>> {
    BufReader::new(File::open(path)?)
        .lines()
        .filter_map(|l| match l {
            Ok(l) if l.trim().is_empty() => None,
            Ok(l) => Some(serde_json::from_str(&l).map_err(std::io::Error::other)),
            Err(e) => Some(Err(e)),
        })
        .collect()
}

/// A text sparkline of `values` (one character per value, at most `width`, averaging buckets).
pub fn sparkline(values: &[f64], width: usize) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() || width == 0 {
        return String::new();
    }
    let buckets = finite.len().min(width);
    let means: Vec<f64> = (0..buckets)
        .map(|b| {
            let (s, e) = (
                b * finite.len() / buckets,
                ((b + 1) * finite.len() / buckets).max(b * finite.len() / buckets + 1),
            );
            finite[s..e].iter().sum::<f64>() / (e - s) as f64
        })
        .collect();
    let lo = means.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    means
        .iter()
        .map(|&v| {
            let x = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
            BARS[((x * 7.0).round() as usize).min(7)]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn train_line_keys_are_flat_and_named() {
        let mut line = TrainLine {
            kind: "train".into(),
            step: 3,
            reward_mean: f64::NAN,
            ..Default::default()
        };
        line.positive_share.insert("balanced".into(), 0.5);
        let v: serde_json::Value = serde_json::to_value(&line).unwrap();
        for key in [
            "kind",
            "step",
            "reward_mean",
            "reward_std",
            "accuracy",
            "response_length_mean",
            "response_length_min",
            "response_length_max",
            "response_length_cv",
            "truncated_share",
            "pos_neg_gap",
            "pos_neg_gap_rel",
            "positive_share",
            "pg_loss",
            "kl",
            "entropy",
            "pg_clipfrac_low",
            "pg_clipfrac_high",
            "grad_norm",
            "lr",
            "rollout_tokens_per_s",
            "train_tokens_per_s",
            "time_rollout_s",
            "time_reward_s",
            "time_train_s",
            "skipped",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert!(v["reward_mean"].is_null());
        assert!(v.get("skip_reason").is_none());
        assert_eq!(v["positive_share"]["balanced"], 0.5);
    }

    #[test]
    fn reopening_drops_later_steps() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        let mut w = MetricsWriter::open(&path, None).unwrap();
        for step in 1..=5 {
            w.write(&serde_json::json!({"kind": "train", "step": step}))
                .unwrap();
        }
        drop(w);
        let mut w = MetricsWriter::open(&path, Some(3)).unwrap();
        w.write(&serde_json::json!({"kind": "train", "step": 4}))
            .unwrap();
        let steps: Vec<u64> = read_lines(&path)
            .unwrap()
            .iter()
            .map(|v| v["step"].as_u64().unwrap())
            .collect();
        assert_eq!(steps, [1, 2, 3, 4]);
    }

    #[test]
    fn sparkline_spans_the_range() {
        assert_eq!(sparkline(&[0.0, 1.0], 10), "▁█");
        assert_eq!(sparkline(&[0.0, 0.0, 1.0, 1.0], 2), "▁█");
        assert_eq!(sparkline(&[], 5), "");
    }
}
