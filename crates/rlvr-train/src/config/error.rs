//! Errors of the configuration: each names its file, section and key.

use std::path::PathBuf;

use super::SECTIONS;

/// An error in a configuration file or override; it names the file, section and key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("{}: invalid TOML: {message}", .path.display())]
    Syntax { path: PathBuf, message: String },
    /// A top-level table that is not one of the sections.
    #[error("{origin}: unknown section [{section}] (expected one of: {})", SECTIONS.join(", "))]
    UnknownSection { origin: String, section: String },
    /// A key that its section does not have, or a value of the wrong type.
    #[error("{origin}: config key `{section}.{key}`: {message}")]
    Key {
        origin: String,
        section: String,
        key: String,
        message: String,
    },
    /// An error in a section that could not be traced to one key.
    #[error("{origin}: section [{section}]: {message}")]
    Section {
        origin: String,
        section: String,
        message: String,
    },
    /// A `--set` override that is not `section.key=value`.
    #[error(
        "override `{0}`: expected section.key=value, for example algorithm.loss_agg_mode=balanced"
    )]
    BadOverride(String),
    /// Keys that parse but do not make sense together.
    #[error("config key `{key}`: {message}")]
    Invalid { key: String, message: String },
}
