//! A run directory's layout: the names of the files `rlvr train` writes there, and the part of
//! its saved `config.toml` that readers of finished runs (`rlvr report`, `rlvr sweep`) use.
//!
//! One place for both, so that the writer (rlvr-train) and the readers (rlvr-report, rlvr-cli)
//! cannot drift apart: a renamed file or config key changes here, and rlvr-train's test that
//! reads its own saved config through [`SavedConfig`] fails until both sides agree.
//!
//! ```text
//! <run>/config.toml        the resolved config of the run (CONFIG_FILE)
//! <run>/metrics.jsonl      one metrics line per step and evaluation (METRICS_FILE, crate::metrics)
//! <run>/host.jsonl         one line per start or resume: the machine (HOST_FILE)
//! <run>/run.lock           held while a process trains the run (LOCK_FILE)
//! <run>/train.log          the run's output when `rlvr sweep` started it (TRAIN_LOG)
//! <run>/checkpoint/        the latest checkpoint (LATEST_CHECKPOINT; older ones beside it)
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The resolved config of the run.
pub const CONFIG_FILE: &str = "config.toml";
/// One [`crate::metrics::MetricsLine`] a line.
pub const METRICS_FILE: &str = "metrics.jsonl";
/// Every in-run evaluation's samples, one JSON line each (see [`RunDir::eval_samples`]).
pub const EVAL_SAMPLES_FILE: &str = "eval-samples.jsonl";
/// The machine of each start or resume.
pub const HOST_FILE: &str = "host.jsonl";
/// Held while a process trains the run.
pub const LOCK_FILE: &str = "run.lock";
/// The output of a run `rlvr sweep` started.
pub const TRAIN_LOG: &str = "train.log";
/// The latest checkpoint's directory (older ones are `checkpoint-step<N>`).
pub const LATEST_CHECKPOINT: &str = "checkpoint";

/// A run directory: its path and the paths of its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir(PathBuf);

impl RunDir {
    /// The run directory at `path` (nothing is read or created).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self(path.into())
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `<run>/config.toml`.
    pub fn config(&self) -> PathBuf {
        self.0.join(CONFIG_FILE)
    }

    /// `<run>/metrics.jsonl`.
    pub fn metrics(&self) -> PathBuf {
        self.0.join(METRICS_FILE)
    }

    /// `<run>/eval-samples.jsonl`: each in-run evaluation's samples (step, dataset, problem,
    /// question, choices, sample, gold answer, response, verdict), so a later checker can
    /// score a run's evaluations again (`rlvr verify --jsonl FILE --gold-field answer
    /// --question-field question`).
    pub fn eval_samples(&self) -> PathBuf {
        self.0.join(EVAL_SAMPLES_FILE)
    }

    /// `<run>/host.jsonl`.
    pub fn host(&self) -> PathBuf {
        self.0.join(HOST_FILE)
    }

    /// `<run>/run.lock`.
    pub fn lock(&self) -> PathBuf {
        self.0.join(LOCK_FILE)
    }

    /// `<run>/train.log`.
    pub fn train_log(&self) -> PathBuf {
        self.0.join(TRAIN_LOG)
    }

    /// `<run>/checkpoint`.
    pub fn latest_checkpoint(&self) -> PathBuf {
        self.0.join(LATEST_CHECKPOINT)
    }
}

/// What readers of finished runs take from a saved `config.toml`: each key optional (a run of
/// an older build may lack it), every other key ignored. The layouts of older builds are read
/// too: `data.testbed_regime` (now `testbed.regime`) and `trainer.warm_start_steps` (now
/// `testbed.warm_start_steps`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SavedConfig {
    pub model: SavedModel,
    pub algorithm: SavedAlgorithm,
    pub trainer: SavedTrainer,
    pub data: SavedData,
    pub testbed: SavedTestbed,
    pub optim: SavedOptim,
}

/// `[model]` as [`SavedConfig`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SavedModel {
    /// The model the run started from (a directory or a hub id; unset for the testbed's).
    pub path: Option<String>,
}

/// `[algorithm]` as [`SavedConfig`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SavedAlgorithm {
    /// The aggregation rule's name.
    pub loss_agg_mode: Option<String>,
}

/// `[trainer]` as [`SavedConfig`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SavedTrainer {
    pub seed: Option<u64>,
    /// The GRPO steps the run was set to take (a run whose metrics stop short is still
    /// training, or was stopped).
    pub total_training_steps: Option<u64>,
    /// Older builds' place of `testbed.warm_start_steps`.
    pub warm_start_steps: Option<u64>,
}

/// `[data]` as [`SavedConfig`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SavedData {
    /// The training data (unset for the testbed; `"testbed"` in older builds).
    pub train_files: Option<String>,
    /// Older builds' place of `testbed.regime`.
    pub testbed_regime: Option<String>,
}

/// `[testbed]` as [`SavedConfig`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SavedTestbed {
    pub regime: Option<String>,
    pub warm_start_steps: Option<u64>,
}

/// `[optim]` as [`SavedConfig`] reads it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SavedOptim {
    pub lr: Option<f64>,
}

impl SavedConfig {
    /// What the run trained on, as the report groups runs: the training data for a run on a
    /// dataset, else the testbed's regime (`"default"` when none is recorded).
    pub fn condition(&self) -> String {
        let nonempty = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
        nonempty(&self.data.train_files)
            .filter(|f| f != "testbed")
            .or_else(|| nonempty(&self.testbed.regime))
            .or_else(|| nonempty(&self.data.testbed_regime))
            .unwrap_or_else(|| "default".into())
    }

    /// The testbed's supervised warm-start steps, wherever the build that wrote it kept them.
    pub fn warm_start_steps(&self) -> Option<u64> {
        self.testbed
            .warm_start_steps
            .or(self.trainer.warm_start_steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_the_layout() {
        let r = RunDir::new("runs/x");
        assert_eq!(r.metrics(), Path::new("runs/x/metrics.jsonl"));
        assert_eq!(r.config(), Path::new("runs/x/config.toml"));
        assert_eq!(r.host(), Path::new("runs/x/host.jsonl"));
        assert_eq!(r.lock(), Path::new("runs/x/run.lock"));
        assert_eq!(r.train_log(), Path::new("runs/x/train.log"));
        assert_eq!(r.latest_checkpoint(), Path::new("runs/x/checkpoint"));
        assert_eq!(r.path(), Path::new("runs/x"));
    }

    #[test]
    fn conditions_of_each_layout() {
        let mut c = SavedConfig::default();
        assert_eq!(c.condition(), "default");
        c.data.testbed_regime = Some("wrong-long".into());
        assert_eq!(c.condition(), "wrong-long");
        c.testbed.regime = Some("control".into());
        assert_eq!(c.condition(), "control");
        c.data.train_files = Some("testbed".into());
        assert_eq!(c.condition(), "control");
        c.data.train_files = Some("gsm8k".into());
        assert_eq!(c.condition(), "gsm8k");
        c.data.train_files = Some(String::new());
        assert_eq!(c.condition(), "control");
        c.trainer.warm_start_steps = Some(3);
        assert_eq!(c.warm_start_steps(), Some(3));
        c.testbed.warm_start_steps = Some(5);
        assert_eq!(c.warm_start_steps(), Some(5));
    }
}
