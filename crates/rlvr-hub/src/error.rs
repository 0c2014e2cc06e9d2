//! The error type of rlvr-hub: every variant names the repository, file or path and says why.

use std::path::PathBuf;

/// Errors of rlvr-hub. Those about something a server sent name the server and the name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be fetched: a refused repository id, revision or file name, a server
    /// that failed or sent something refused, a cache miss under `HF_HUB_OFFLINE`, or a lock
    /// another process holds.
    #[error("{0}")]
    Download(String),
    /// The model argument is neither an existing directory nor a hub id.
    #[error("{}: no such model directory (and not a hub id owner/name)", .path.display())]
    NotFound { path: PathBuf },
    /// A hub id is not in the local cache, and nothing was downloaded (offline, or a lookup
    /// that never downloads).
    #[error("{0}")]
    NotCached(String),
    /// A file system operation failed.
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file exists but could not be read or parsed (`model.safetensors.index.json`).
    #[error("{}: {reason}", .path.display())]
    BadFile { path: PathBuf, reason: String },
    /// Weights in a format that is refused (PyTorch pickle).
    #[error("{}: unsupported {what}", .path.display())]
    Unsupported { path: PathBuf, what: String },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result alias of rlvr-hub.
pub type Result<T> = std::result::Result<T, Error>;
