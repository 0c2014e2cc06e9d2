//! Where a model lives on disk: a local directory, or a hub id resolved through the local
//! cache and downloaded into it when missing ([`resolve_model_dir`]).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::download_model;
use crate::names::is_commit;
use crate::options::{hub_cache_dir, HubOptions};

fn looks_like_hub_id(s: &str) -> bool {
    let parts: Vec<&str> = s.split('/').collect();
    parts.len() == 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && !p.starts_with('.')
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
}

/// Files a usable model directory must hold (weights checked separately).
const REQUIRED_FILES: &[&str] = &["config.json", "tokenizer.json"];

fn snapshot_complete(dir: &Path) -> bool {
    REQUIRED_FILES.iter().all(|f| dir.join(f).is_file())
        && (dir.join("model.safetensors").is_file()
            || dir.join("model.safetensors.index.json").is_file())
}

/// Resolves a directory, or a hub id through the local cache
/// (`<cache>/models--owner--name/snapshots/<refs/main>/`), downloading it when not cached
/// ([`download_model`]; `HF_ENDPOINT`, `HF_TOKEN`, `HF_HUB_OFFLINE` honoured).
///
/// Offline and not cached: an error naming the files needed and where they must be.
pub fn resolve_model_dir(dir_or_hub_id: &str) -> Result<PathBuf> {
    resolve_model_dir_with(dir_or_hub_id, &HubOptions::from_env())
}

/// [`resolve_model_dir`] with explicit hub options.
pub fn resolve_model_dir_with(dir_or_hub_id: &str, opts: &HubOptions) -> Result<PathBuf> {
    let path = Path::new(dir_or_hub_id);
    if path.is_dir() {
        return Ok(path.to_path_buf());
    }
    if !looks_like_hub_id(dir_or_hub_id) {
        return Err(Error::NotFound { path: path.into() });
    }
    match resolve_in_cache(dir_or_hub_id, &opts.cache) {
        Ok(dir) => Ok(dir),
        Err(Error::NotCached(miss)) if opts.offline => Err(Error::NotCached(format!(
            "HF_HUB_OFFLINE is set, so nothing is downloaded: {miss}"
        ))),
        Err(_) => download_model(opts, dir_or_hub_id),
    }
}

/// A directory, or a hub id already in the local cache; never downloads (dry runs).
pub fn resolve_model_dir_local(dir_or_hub_id: &str) -> Result<PathBuf> {
    let path = Path::new(dir_or_hub_id);
    if path.is_dir() {
        return Ok(path.to_path_buf());
    }
    if !looks_like_hub_id(dir_or_hub_id) {
        return Err(Error::NotFound { path: path.into() });
    }
    resolve_in_cache(dir_or_hub_id, &hub_cache_dir())
}

/// Resolves hub id `owner/name` in the hub cache directory `cache` (see [`resolve_model_dir`]).
pub fn resolve_in_cache(hub_id: &str, cache: &Path) -> Result<PathBuf> {
    let dir_or_hub_id = hub_id;
    let repo = cache.join(format!("models--{}", dir_or_hub_id.replace('/', "--")));
    let snapshots = repo.join("snapshots");
    // refs/main must name a commit (40 hex) before it is used as a path
    let by_ref = std::fs::read_to_string(repo.join("refs").join("main"))
        .ok()
        .filter(|rev| is_commit(rev.trim()))
        .map(|rev| snapshots.join(rev.trim()));
    let candidates: Vec<PathBuf> = match by_ref {
        Some(p) => vec![p],
        None => std::fs::read_dir(&snapshots)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default(),
    };
    if let Some(found) = candidates.into_iter().find(|p| snapshot_complete(p)) {
        return Ok(found);
    }
    Err(Error::NotCached(format!(
        "model {dir_or_hub_id} is not in the local Hugging Face cache: \
         need config.json, tokenizer.json, tokenizer_config.json, model.safetensors (or \
         model.safetensors.index.json and its model-*.safetensors shards) and, if the model has one, \
         generation_config.json under {}/<revision>/ with {}/refs/main naming the revision \
         (the cache is HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub). \
         rlvr downloads them when HF_HUB_OFFLINE is unset; elsewhere: `hf download {dir_or_hub_id}`, \
         or pass a local model directory",
        snapshots.display(),
        repo.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_ids_are_recognized() {
        assert!(looks_like_hub_id("Qwen/Qwen3-1.7B"));
        assert!(!looks_like_hub_id("./models/x"));
        assert!(!looks_like_hub_id("a/b/c"));
        assert!(!looks_like_hub_id("../x"));
    }
}
