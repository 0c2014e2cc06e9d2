//! rlvr-train: the GRPO loop of rlvr, with checkpoints, metrics and evaluation.
//!
//! [`grpo`] holds the algorithm, one function per phase (rollout, reward, advantage, old
//! log-probs, update, report), each phase's output a named struct, and the one constructor of a
//! trainer, fresh or resumed ([`grpo::Start`]). Around it: [`config`] (the TOML file, one file
//! per section, every key documented; [`config::RunTask`]: the testbed or a model on data),
//! [`policy`] (the model being trained, with its tokenizer), [`task`] (problems, their
//! tokenized prompts and verifier), [`eval_set`] (the task of every evaluation set), [`optim`]
//! (AdamW with f32 moments, clipping, schedule), [`loss`] (the per-token policy loss on
//! tensors, mirroring `rlvr_core::policy_loss`), [`seed`] (every random choice as a function of
//! the seed and the step), [`checkpoint`] (atomic, exactly resumable), [`metrics`]
//! (`metrics.jsonl`), [`tracking`] (where each metrics line goes: `metrics.jsonl` and, with
//! `trainer.logger`, TensorBoard under verl's names; the event format in [`tensorboard`]),
//! [`progress`] (where a step stands while it runs, for the progress line), [`eval`] (mean@k /
//! pass@k on held-out problems), [`warm_start`]
//! (supervised start of the testbed model), [`setup`] (device, datasets, reward functions: what
//! every task source shares) and [`run`] (what `rlvr train` does end to end, over the task
//! sources of `source.rs` (`testbed.rs`, or a checkpoint and datasets: `datasets.rs`) and the
//! progress output in `ui.rs`).
//!
//! Out of scope: the math of advantages, aggregation weights and diagnostics (rlvr-core), the
//! model and sampler (rlvr-model), datasets and verifiers (rlvr-tasks).
//!
//! # Contract
//! - Aggregation weights come from `rlvr_core::aggregation::weights` over each WHOLE optimizer
//!   mini-batch; micro-batches only sum `w_i * l_it` over their tokens, so the update does not
//!   depend on `ppo_micro_batch_size` (up to float rounding).
//! - A step whose rewards, loss or gradient norm are not finite in any of its mini-batches
//!   changes no weight and no optimizer state (earlier mini-batches' steps are rolled back); it
//!   is logged with `skipped: true` and the reason.
//! - A run resumed from its last checkpoint ends bit-identical to an uninterrupted run (same
//!   machine and thread count): all randomness is seeded by (seed, step).

pub mod checkpoint;
pub mod config;
mod datasets;
pub mod dump;
pub mod environment;
pub mod eval;
pub mod eval_set;
pub mod grpo;
pub mod loss;
pub mod memory_plan;
pub mod metrics;
pub mod optim;
pub mod policy;
pub mod progress;
pub mod run;
pub mod seed;
pub mod setup;
mod source;
pub mod task;
pub mod tensorboard;
pub mod testbed;
mod testbed_heldout;
pub mod tracking;
mod ui;
pub mod warm_start;

pub use config::{ConfigError, TrainConfig};
pub use grpo::Trainer;
pub use policy::Policy;
pub use task::Task;

/// Errors of rlvr-train. [`TrainError::is_user_input`] tells bad input (config, data, model
/// files) from failures.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrainError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Data(#[from] rlvr_tasks::DataError),
    #[error(transparent)]
    Model(#[from] rlvr_model::Error),
    /// Reward setup or scoring (a problem its scorer cannot score, no sandbox).
    #[error("reward: {0}")]
    Reward(#[from] rlvr_tasks::RewardError),
    #[error(transparent)]
    Core(#[from] rlvr_core::CoreError),
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
    #[error("{}: {source}", .path.display())]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// A run directory or checkpoint that cannot be resumed, with the reason.
    #[error("{0}")]
    Resume(String),
    /// An environment variable the run reads (`TENSORBOARD_DIR`) that it cannot use.
    #[error("environment variable {var}: {message}")]
    Environment { var: String, message: String },
    #[error("{0}")]
    Msg(String),
}

impl TrainError {
    /// True when the error comes from the user's input rather than from a failure.
    pub fn is_user_input(&self) -> bool {
        match self {
            TrainError::Config(_)
            | TrainError::Data(_)
            | TrainError::Resume(_)
            | TrainError::Environment { .. } => true,
            TrainError::Model(e) => e.is_user_input(),
            TrainError::Reward(e) => e.is_user_input(),
            _ => false,
        }
    }

    pub(crate) fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> Self {
        TrainError::Io {
            path: path.into(),
            source,
        }
    }
}
