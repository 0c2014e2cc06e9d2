//! Hugging Face hub downloads through the `hf-hub` crate's blocking API (ureq, rustls).
//!
//! A hub id that is not in the local cache is fetched into the standard cache layout
//! (`<cache>/models--owner--name/{blobs,snapshots/<commit>,refs/main}`, datasets under
//! `datasets--owner--name`), the same layout `huggingface_hub` writes, so either tool reads what
//! the other fetched. Environment, as `huggingface_hub` reads it:
//!
//! | variable | effect |
//! |---|---|
//! | `HF_ENDPOINT` | the hub's base URL (default `https://huggingface.co`) |
//! | `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub` | the cache |
//! | `HF_HUB_OFFLINE=1` | never download: an uncached id is an error that says so |
//! | `HF_TOKEN`, else `HF_HOME/token` | bearer token (gated and private repositories) |
//!
//! Downloads are resumable: a file is written to `blobs/<etag>.part` and renamed when
//! complete; an interrupted download leaves the `.part` file, and the next call asks the
//! server for the remaining bytes only (HTTP `Range`). A progress bar per file is drawn on
//! stderr when `progress` is on.

use std::path::{Path, PathBuf};

use hf_hub::api::sync::{ApiBuilder, ApiError, ApiRepo};
pub use hf_hub::RepoType;
use hf_hub::{Cache, Repo};

use crate::error::{Error, Result};

/// Where and how to reach the hub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubOptions {
    /// Base URL, without a trailing `/`.
    pub endpoint: String,
    /// The hub cache directory (the one holding `models--*`).
    pub cache: PathBuf,
    pub token: Option<String>,
    /// `HF_HUB_OFFLINE`: never download.
    pub offline: bool,
    /// Draw a progress bar per file on stderr.
    pub progress: bool,
}

/// True for `1`, `true`, `yes`, `on` (any case), as `huggingface_hub` parses its flags.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

impl HubOptions {
    /// From `HF_ENDPOINT`, `HF_HUB_CACHE`/`HF_HOME`, `HF_TOKEN` and `HF_HUB_OFFLINE`; the
    /// progress bar is on when stderr is a terminal.
    pub fn from_env() -> Self {
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| "https://huggingface.co".to_string());
        let cache = crate::io::hub_cache_dir();
        let token = std::env::var("HF_TOKEN")
            .or_else(|_| std::env::var("HUGGING_FACE_HUB_TOKEN"))
            .ok()
            .or_else(|| {
                let home = std::env::var_os("HF_HOME")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| cache.parent().unwrap_or(Path::new(".")).to_path_buf());
                std::fs::read_to_string(home.join("token")).ok()
            })
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        Self {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            cache,
            token,
            offline: env_flag("HF_HUB_OFFLINE"),
            progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        }
    }

    fn repo(&self, id: &str, kind: RepoType, revision: &str) -> Result<ApiRepo> {
        let api = ApiBuilder::from_cache(Cache::new(self.cache.clone()))
            .with_endpoint(self.endpoint.clone())
            .with_token(self.token.clone())
            .with_progress(self.progress)
            .build()
            .map_err(|e| Error::Hub(format!("hub client: {e}")))?;
        Ok(api.repo(Repo::with_revision(
            id.to_string(),
            kind,
            revision.to_string(),
        )))
    }

    fn offline_error(&self, what: &str) -> Error {
        Error::Hub(format!(
            "{what} is not in the local Hugging Face cache ({}) and HF_HUB_OFFLINE is set, so \
             nothing is downloaded: unset HF_HUB_OFFLINE to fetch it from {}, or fetch it \
             elsewhere with `hf download` and copy the cache",
            self.cache.display(),
            self.endpoint
        ))
    }
}

fn kind_name(kind: RepoType) -> &'static str {
    match kind {
        RepoType::Model => "model",
        RepoType::Dataset => "dataset",
        RepoType::Space => "space",
    }
}

/// The HTTP status of a failed request, if the server answered.
fn status(e: &ApiError) -> Option<u16> {
    let inner = match e {
        ApiError::RequestError(r) => r,
        ApiError::TooManyRetries(b) => return status(b),
        _ => return None,
    };
    match **inner {
        ureq::Error::Status(code, _) => Some(code),
        _ => None,
    }
}

fn file_error(opts: &HubOptions, kind: RepoType, repo: &str, file: &str, e: &ApiError) -> Error {
    let why = match status(e) {
        Some(404) => "not found (404): check the repository id and the file name".to_string(),
        Some(401 | 403) => {
            "access denied: the repository is gated or private; set HF_TOKEN".to_string()
        }
        _ => e.to_string(),
    };
    Error::Hub(format!(
        "hub {} {repo}: cannot download {file} from {}: {why}",
        kind_name(kind),
        opts.endpoint
    ))
}

/// One file of a hub repository at `revision` (a branch, a tag or a 40-hex commit): from the
/// cache when there, else downloaded (resuming a `.part` file left by an interrupted
/// download). Returns its path in the snapshot.
pub fn fetch_file(
    opts: &HubOptions,
    kind: RepoType,
    repo: &str,
    revision: &str,
    file: &str,
) -> Result<PathBuf> {
    let cached = Cache::new(opts.cache.clone())
        .repo(Repo::with_revision(
            repo.to_string(),
            kind,
            revision.to_string(),
        ))
        .get(file);
    if let Some(p) = cached {
        return Ok(p);
    }
    if opts.offline {
        return Err(opts.offline_error(&format!("{} {repo} file {file}", kind_name(kind))));
    }
    opts.repo(repo, kind, revision)?
        .download(file)
        .map_err(|e| file_error(opts, kind, repo, file, &e))
}

/// The files of a model repository rlvr reads, from the repository's file list: config,
/// tokenizer, generation config, chat template and safetensors weights (single or sharded).
/// A repository with only pickle weights is refused before anything is downloaded.
fn model_files(repo: &str, listed: &[String]) -> Result<Vec<String>> {
    let has = |f: &str| listed.iter().any(|l| l == f);
    for f in ["config.json", "tokenizer.json"] {
        if !has(f) {
            return Err(Error::Hub(format!(
                "hub model {repo} has no {f}: not a transformers causal-LM repository rlvr can load"
            )));
        }
    }
    let mut files: Vec<String> = [
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "generation_config.json",
        "chat_template.jinja",
    ]
    .iter()
    .filter(|f| has(f))
    .map(|f| f.to_string())
    .collect();
    if has("model.safetensors") {
        files.push("model.safetensors".into());
    } else if has("model.safetensors.index.json") {
        files.push("model.safetensors.index.json".into());
        files.extend(
            listed
                .iter()
                .filter(|f| f.starts_with("model-") && f.ends_with(".safetensors"))
                .cloned(),
        );
    } else {
        let pickles: Vec<String> = listed
            .iter()
            .filter(|n| crate::io::is_pickle_weight(n))
            .cloned()
            .collect();
        if !pickles.is_empty() {
            return Err(crate::io::pickle_refused(
                &format!("hub model {repo}"),
                &pickles,
            ));
        }
        return Err(Error::Hub(format!(
            "hub model {repo} has no model.safetensors or model.safetensors.index.json"
        )));
    }
    Ok(files)
}

/// Downloads the files of model `repo` that rlvr reads (see [`model_files`]) into the cache
/// and returns the snapshot directory. Files already cached are not fetched again.
pub fn download_model(opts: &HubOptions, repo: &str) -> Result<PathBuf> {
    if opts.offline {
        return Err(opts.offline_error(&format!("model {repo}")));
    }
    let api = opts.repo(repo, RepoType::Model, "main")?;
    let info = api.info().map_err(|e| {
        let why = match status(&e) {
            Some(404) => {
                "repository not found (404); a gated or private one needs HF_TOKEN".to_string()
            }
            Some(401 | 403) => "access denied: gated or private; set HF_TOKEN".to_string(),
            _ => e.to_string(),
        };
        Error::Hub(format!(
            "hub model {repo}: cannot list its files at {}: {why} (and no local directory \
             {repo} exists)",
            opts.endpoint
        ))
    })?;
    let listed: Vec<String> = info.siblings.into_iter().map(|s| s.rfilename).collect();
    let mut dir = None;
    for f in model_files(repo, &listed)? {
        let path = fetch_file(opts, RepoType::Model, repo, "main", &f)?;
        if f == "config.json" {
            dir = path.parent().map(Path::to_path_buf);
        }
    }
    dir.ok_or_else(|| Error::Hub(format!("hub model {repo}: no config.json downloaded")))
}
