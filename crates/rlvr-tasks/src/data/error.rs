//! The errors of dataset loading: [`DataError`], and [`HubMiss`] for a preset in neither a
//! data directory nor the hub.

use std::path::PathBuf;

/// Errors of dataset loading; each names the file and the line, row or field at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A record that could not be parsed or lacks a required field; `at` is `line N`
    /// (jsonl, 1-based), `element N` (json array, 0-based) or `row N` (parquet, 0-based).
    #[error("{}: {at}: {reason}", .path.display())]
    BadRecord {
        path: PathBuf,
        at: String,
        reason: String,
    },
    #[error("{}: {reason}", .path.display())]
    BadFile { path: PathBuf, reason: String },
    #[error("no local data directory: {reason}")]
    NoDataDir { reason: String },
    #[error("unknown preset {name:?}; known presets: {known}")]
    UnknownPreset { name: String, known: String },
    /// A preset whose file is not in the data directory (offline: nothing is downloaded).
    #[error("preset {preset}: {} not found. Put {file} there (inside the data directory {}); source: {source_hint}", .expected.display(), .data_dir.display())]
    PresetMissing {
        preset: String,
        expected: PathBuf,
        data_dir: PathBuf,
        file: String,
        source_hint: String,
    },
    /// An error in the files of a preset's hub copy.
    #[error("preset {preset} (hub dataset {repo}): {source}")]
    InPreset {
        preset: String,
        repo: String,
        source: Box<DataError>,
    },
    /// An error in the file of a preset's local copy.
    #[error("preset {preset} (local copy): {source}")]
    InLocalCopy {
        preset: String,
        source: Box<DataError>,
    },
    /// [`load_hub_files`](super::load_hub_files) of a preset that has only a local copy.
    #[error("preset {preset} has no hub copy (docs/data.md)")]
    NoHubSource { preset: String },
    /// A preset in neither a data directory nor the hub (or the hub cache when offline).
    #[error("{0}")]
    HubUnavailable(Box<HubMiss>),
}

/// A preset in neither a data directory nor the hub (or the hub cache when offline): one
/// message with both places and how to fill either.
#[derive(Debug, thiserror::Error)]
#[error(
    "preset {preset}: {local}; and its hub copy (dataset {repo}, revision {revision}) \
         could not be read: {reason}. Fetch it with `hf download {repo} {files} --repo-type \
         dataset --revision {revision}` (into the Hugging Face cache), or put a local copy at \
         {file} in a data directory given by --data-dir or RLVR_DATA_DIR (docs/data.md)"
)]
pub struct HubMiss {
    pub preset: String,
    /// Why the local copy was not read (no data directory, or the file is missing).
    pub local: String,
    pub repo: String,
    pub revision: String,
    /// The hub files, space-separated.
    pub files: String,
    /// The local copy's path inside a data directory.
    pub file: String,
    pub reason: String,
}
