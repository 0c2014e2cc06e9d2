//! `[trainer]`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::section::{Keys, Section};
use super::ConfigError;

/// `[trainer]`: run length, batch, seed, checkpoints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainerConfig {
    /// GRPO steps (rollout batches) to run (verl `total_training_steps`).
    pub total_training_steps: usize,
    /// Prompts per rollout batch (verl `data.train_batch_size`).
    pub train_batch_size: usize,
    /// Seed of everything random: initialization, data order, sampling.
    pub seed: u64,
    /// Run name; files go to `<runs_dir>/<name>`. Empty: `<task>-<rule>-s<seed>` (task: `testbed`,
    /// the preset, or the training file's stem), numbered when taken. One plain path component:
    /// no `/` or `\`, not `.` or `..`, not absolute, so a run stays inside `runs_dir`.
    pub run_name: String,
    /// Directory that holds the runs.
    pub runs_dir: PathBuf,
    /// Save a checkpoint every this many steps (and at the end); 0 = only at the end.
    pub save_freq: usize,
    /// Checkpoints kept: the newest is `checkpoint/`, older ones `checkpoint-step<N>/`; a
    /// resume that finds the newest damaged falls back to the next (`checkpoint.rs`).
    pub keep_checkpoints: usize,
    /// Write each step's training rollouts to `<dir>/<step>.jsonl` (verl's
    /// `trainer.rollout_data_dir` layout: `input`, `output`, `score`, `step`, plus `uid`,
    /// `advantage`, `length`, `acc`); unset: no dump. A relative path is under the run directory.
    pub rollout_data_dir: Option<PathBuf>,
    /// Where metrics go besides `metrics.jsonl` (verl's `trainer.logger`): `console` (the step
    /// lines of `logging.print_freq`), `tensorboard` (event files in `<run>/tensorboard`, or
    /// `$TENSORBOARD_DIR/<run name>`, every step and evaluation under verl's metric names:
    /// configs/README.md, "Metric names"). A single name is read as a list of one, as verl
    /// reads it.
    #[serde(deserialize_with = "one_or_many")]
    pub logger: Vec<Logger>,
}

/// A metrics destination of `trainer.logger`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Logger {
    /// The step lines on stderr.
    Console,
    /// TensorBoard event files.
    Tensorboard,
}

/// A list of loggers, or one logger name.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Logger>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(Logger),
        Many(Vec<Logger>),
    }
    match OneOrMany::deserialize(d) {
        Ok(OneOrMany::One(l)) => Ok(vec![l]),
        Ok(OneOrMany::Many(ls)) => Ok(ls),
        Err(_) => Err(serde::de::Error::custom(
            "expected `console`, `tensorboard` or a list of them, e.g. ['console','tensorboard']",
        )),
    }
}

impl TrainerConfig {
    /// Whether `trainer.logger` names `logger`.
    pub fn logs_to(&self, logger: Logger) -> bool {
        self.logger.contains(&logger)
    }
}

impl Default for TrainerConfig {
    fn default() -> Self {
        Self {
            total_training_steps: 100,
            train_batch_size: 16,
            seed: 0,
            run_name: String::new(),
            runs_dir: "runs".into(),
            save_freq: 50,
            keep_checkpoints: 2,
            rollout_data_dir: None,
            logger: vec![Logger::Console],
        }
    }
}

impl Section for TrainerConfig {
    const NAME: &'static str = "trainer";

    /// A positive batch and checkpoint count, and a run name that stays inside `runs_dir`.
    fn validate(&self) -> Result<(), ConfigError> {
        Keys::<Self>::at_least_one("train_batch_size", self.train_batch_size)?;
        Keys::<Self>::at_least_one("keep_checkpoints", self.keep_checkpoints)?;
        validate_run_name(&self.run_name)
    }
}

/// `trainer.run_name`: empty (an automatic name) or one plain path component, so that
/// `<runs_dir>/<run_name>` stays inside `runs_dir`.
fn validate_run_name(name: &str) -> Result<(), ConfigError> {
    if name.is_empty() {
        return Ok(());
    }
    let mut parts = std::path::Path::new(name).components();
    let plain = matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(c)), None) if c == std::ffi::OsStr::new(name)
    );
    if !plain || name.contains(['/', '\\']) || name.chars().any(char::is_control) {
        return Err(Keys::<TrainerConfig>::invalid(
            "run_name",
            format!(
                "{name:?}: a run name is one plain directory name inside trainer.runs_dir (no \
                 `/` or `\\`, no control characters, not `.` or `..`, not an absolute path); set \
                 trainer.runs_dir to put runs elsewhere"
            ),
        ));
    }
    Ok(())
}
