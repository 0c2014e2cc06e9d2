//! The training configuration: a TOML file in sections, every key documented here.
//!
//! Sections, one file each: `[model]` (model.rs), `[data]`, `[rollout]`, `[algorithm]`,
//! `[reward]`, `[optim]`, `[trainer]`, `[eval]`, `[logging]`, `[testbed]`. Every key has a
//! default (the CPU testbed run; `configs/testbed.toml` spells them all out), so a file only
//! names what it changes. Names follow verl and TRL where those have the option
//! (`configs/README.md` maps them). What a run trains is [`TrainConfig::task`]: the testbed
//! when `model.path` and `data.train_files` are unset, else that model on that data.
//!
//! Unknown keys are errors that name the section and the key, never silent defaults; keys that
//! moved are errors that name the new key. Values can be overridden from the command line with
//! `section.key=value` (the value is TOML; a bare word is taken as a string; parse.rs).
//! Validation (validate.rs) names the key of every range, bound and combination it refuses.

use std::path::Path;

use serde::{Deserialize, Serialize};

mod algorithm;
mod data;
mod error;
mod eval;
mod logging;
mod model;
mod optim;
mod parse;
mod reward;
mod rollout;
mod section;
mod testbed;
mod trainer;
mod validate;

pub use algorithm::AlgorithmConfig;
pub use data::DataConfig;
pub use error::ConfigError;
pub use eval::{EvalConfig, EvalSet};
pub use logging::LoggingConfig;
pub use model::ModelConfig;
pub use optim::{LrScheduler, OptimConfig};
pub use parse::apply_override;
pub use reward::RewardConfig;
pub use rollout::RolloutConfig;
pub use section::{Keys, Section};
pub use testbed::{TestbedSection, MOVED_KEYS};
pub use trainer::{Logger, TrainerConfig};
pub use validate::{
    host_memory_bytes, max_reward_workers, FIXED_ON_RESUME, PARAM_HOST_COPIES, PROBLEM_HOST_BYTES,
    SEQUENCE_HOST_BYTES, TOKEN_HOST_BYTES,
};

use parse::section;

/// The section names, in file order.
pub const SECTIONS: [&str; 10] = [
    "model",
    "data",
    "rollout",
    "algorithm",
    "reward",
    "optim",
    "trainer",
    "eval",
    "logging",
    "testbed",
];

/// The whole configuration of a training run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    pub model: ModelConfig,
    pub data: DataConfig,
    pub rollout: RolloutConfig,
    pub algorithm: AlgorithmConfig,
    pub reward: RewardConfig,
    pub optim: OptimConfig,
    pub trainer: TrainerConfig,
    pub eval: EvalConfig,
    pub logging: LoggingConfig,
    pub testbed: TestbedSection,
}

/// What a run trains, as [`TrainConfig::task`] reads it from `model.path` and
/// `data.train_files` (validation keeps the two set together or unset together).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunTask<'a> {
    /// The generated testbed task with its own tiny model, both built from `[testbed]`.
    Testbed(&'a TestbedSection),
    /// A Hugging Face model (`model.path`) trained on a dataset (`data.train_files`).
    Datasets {
        model: &'a str,
        train_files: &'a str,
    },
}

impl TrainConfig {
    /// Reads a config file and applies `section.key=value` overrides.
    pub fn load(path: Option<&Path>, overrides: &[String]) -> Result<Self, ConfigError> {
        let (mut table, origin) = match path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                    path: p.to_path_buf(),
                    source,
                })?;
                let table: toml::Table =
                    toml::from_str(&text).map_err(|e| ConfigError::Syntax {
                        path: p.to_path_buf(),
                        message: e.to_string(),
                    })?;
                (table, p.display().to_string())
            }
            None => (toml::Table::new(), "default config".to_string()),
        };
        let origin = if overrides.is_empty() {
            origin
        } else {
            format!("{origin} with overrides")
        };
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        let cfg = Self::from_table(&table, &origin)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Parses a TOML string (with `origin` used in error messages).
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            path: origin.into(),
            message: e.to_string(),
        })?;
        let cfg = Self::from_table(&table, origin)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Builds the config section by section, so that an error names its section and key.
    fn from_table(table: &toml::Table, origin: &str) -> Result<Self, ConfigError> {
        for (name, value) in table {
            if !SECTIONS.contains(&name.as_str()) || !value.is_table() {
                return Err(ConfigError::UnknownSection {
                    origin: origin.into(),
                    section: name.clone(),
                });
            }
        }
        parse::moved_key(table, origin)?;
        Ok(Self {
            model: section(table, "model", origin)?,
            data: section(table, "data", origin)?,
            rollout: section(table, "rollout", origin)?,
            algorithm: section(table, "algorithm", origin)?,
            reward: section(table, "reward", origin)?,
            optim: section(table, "optim", origin)?,
            trainer: section(table, "trainer", origin)?,
            eval: section(table, "eval", origin)?,
            logging: section(table, "logging", origin)?,
            testbed: section(table, "testbed", origin)?,
        })
    }

    /// The config as TOML (every key, as the run used it; `[testbed]` only for a testbed run,
    /// the one run that reads it).
    pub fn to_toml(&self) -> String {
        let mut table = toml::Table::try_from(self).expect("a TrainConfig always serializes");
        if let RunTask::Datasets { .. } = self.task() {
            table.remove("testbed");
        }
        toml::to_string(&table).expect("a TOML table always serializes")
    }

    /// Optimizer steps over the whole run (for the cosine schedule).
    pub fn total_optimizer_steps(&self) -> usize {
        self.trainer
            .total_training_steps
            .saturating_mul(
                (self.trainer.train_batch_size / self.algorithm.ppo_mini_batch_size.max(1)).max(1),
            )
            .saturating_mul(self.algorithm.ppo_epochs)
    }

    /// What the run trains: the testbed when `model.path` is unset, else the model on
    /// `data.train_files` (validation refuses one set without the other).
    pub fn task(&self) -> RunTask<'_> {
        match &self.model.path {
            None => RunTask::Testbed(&self.testbed),
            Some(model) => RunTask::Datasets {
                model,
                train_files: self.data.train_files.as_deref().unwrap_or_default(),
            },
        }
    }

    /// The model's name in logs: its path or hub id, or `testbed`.
    pub fn model_name(&self) -> &str {
        self.model
            .path
            .as_deref()
            .unwrap_or(rlvr_tasks::testbed::NAME)
    }

    /// Max tokens of an evaluation response.
    pub fn eval_max_tokens(&self) -> usize {
        if self.eval.max_response_length == 0 {
            self.rollout.max_response_length
        } else {
            self.eval.max_response_length
        }
    }
}

#[cfg(test)]
mod tests;
