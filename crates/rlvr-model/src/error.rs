//! The error type of rlvr-model: every variant says where (file, tensor, key) and why.

use std::path::PathBuf;

/// Errors of rlvr-model. Variants that come from user input name the file, key or tensor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file the model directory must contain is absent.
    #[error("{}: missing file {file} (needed: {needed})", .dir.display())]
    MissingFile {
        dir: PathBuf,
        file: String,
        needed: String,
    },
    /// A file exists but could not be read or parsed.
    #[error("{}: {reason}", .path.display())]
    BadFile { path: PathBuf, reason: String },
    /// config.json names an architecture or option this crate does not implement.
    #[error("{}: unsupported {what}", .path.display())]
    Unsupported { path: PathBuf, what: String },
    /// A checkpoint tensor has the wrong shape for the configuration.
    #[error("{}: tensor {name} has shape {got:?}, config.json implies {expected:?}", .path.display())]
    ShapeMismatch {
        path: PathBuf,
        name: String,
        expected: Vec<usize>,
        got: Vec<usize>,
    },
    /// A tensor the configuration needs is absent from the checkpoint.
    #[error("{}: tensor {name} is missing from the checkpoint", .path.display())]
    MissingTensor { path: PathBuf, name: String },
    /// From rlvr-hub: a model argument that is no directory and no hub id, a hub id not cached
    /// or not downloadable, or a checkpoint's file names that break its rules (a shard name outside the directory, pickle-only weights).
    #[error(transparent)]
    Hub(#[from] rlvr_hub::Error),
    /// A chat template failed to render.
    #[error("chat template: {0}")]
    Template(String),
    /// A tokenizer failed to encode or decode.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// Invalid arguments to an API call (empty batch, out-of-range parameter, ...).
    #[error("{0}")]
    InvalidArgument(String),
    /// A tensor operation failed.
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
    /// A file system operation failed.
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Error {
    /// True when the error comes from the caller's input (a missing or malformed file, an
    /// unsupported configuration, a bad argument) rather than from a failure inside the crate.
    pub fn is_user_input(&self) -> bool {
        !matches!(self, Error::Candle(_))
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result alias of rlvr-model.
pub type Result<T> = std::result::Result<T, Error>;
