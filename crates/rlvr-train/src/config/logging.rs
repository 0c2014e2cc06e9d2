//! `[logging]`.

use serde::{Deserialize, Serialize};

use super::section::{Keys, Section};
use super::ConfigError;

/// `[logging]`: what is shown and kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoggingConfig {
    /// Progress on stderr: on a terminal, bars whose line shows where the step stands (rollout
    /// tokens, tokens/s, longest response; micro-batches of the update); off a terminal (a log
    /// file), that line printed as plain text every `progress_interval_s` seconds.
    pub progress: bool,
    /// Off a terminal: at most one progress line every this many seconds (0 = every event),
    /// plus the closing line of a phase that printed one. Steps shorter than this print none.
    pub progress_interval_s: f64,
    /// Print a one-line summary every this many steps (0 = never).
    pub print_freq: usize,
}

impl Default for LoggingConfig {
    fn default() -> Self {
        Self {
            progress: true,
            progress_interval_s: 30.0,
            print_freq: 10,
        }
    }
}

impl Section for LoggingConfig {
    const NAME: &'static str = "logging";

    /// A finite progress interval `>= 0`.
    fn validate(&self) -> Result<(), ConfigError> {
        Keys::<Self>::finite_at_least("progress_interval_s", self.progress_interval_s, 0.0)
    }
}
