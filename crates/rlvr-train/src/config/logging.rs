//! `[logging]`.

use serde::{Deserialize, Serialize};

/// `[logging]`: what is shown and kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoggingConfig {
    /// Progress bars on stderr (off automatically when stderr is not a terminal).
    pub progress: bool,
    /// Print a one-line summary every this many steps (0 = never).
    pub print_freq: usize,
}

impl Default for LoggingConfig {
    fn default() -> Self {
        Self {
            progress: true,
            print_freq: 10,
        }
    }
}
