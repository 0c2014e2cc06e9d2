//! rlvr-hub: a Hugging Face hub client that trusts no server, for models and datasets alike.
//!
//! A hub id that is not in the local cache is fetched into the cache layout `huggingface_hub`
//! writes, so either tool reads what the other fetched; every name, size and hash a server
//! sends is checked before it is used (docs/hub.md). Pickle weights are refused, never opened.
//!
//! | module | what it holds |
//! |---|---|
//! | `options` | [`HubOptions`]: endpoint, cache, token, offline, timeouts, minimum rate, from the environment |
//! | `repo` | [`RepoType`] and one repository at one revision, its id and revision checked |
//! | `cache` | the cache layout on disk: [`cached_file`], snapshots, refs, locks |
//! | `client` | HTTP downloads: [`fetch_file`], resumable, checked, with a progress bar |
//! | `model` | [`download_model`]: the files of a model repository rlvr reads, at one commit |
//! | `resolve` | [`resolve_model_dir`]: a model directory, or a hub id through the cache |
//! | `names` | the checks on commits, ETags, repository ids and revisions ([`is_commit`]) |
//! | [`files`] | the rules for a checkpoint's file names, shared with rlvr-model's loader |

mod cache;
mod client;
pub mod error;
pub mod files;
mod model;
mod names;
mod options;
mod repo;
mod resolve;

pub use cache::cached_file;
pub use client::fetch_file;
pub use error::{Error, Result};
pub use model::download_model;
pub use names::is_commit;
pub use options::{
    hub_cache_dir, HubOptions, CONNECT_TIMEOUT, MIN_RATE, RATE_WINDOW, READ_TIMEOUT,
};
pub use repo::RepoType;
pub use resolve::{
    resolve_in_cache, resolve_model_dir, resolve_model_dir_local, resolve_model_dir_with,
};
