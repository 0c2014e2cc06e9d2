//! Model repositories: which files of one rlvr reads, and downloading them all at one commit
//! ([`download_model`]).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::files::{index_shards, is_pickle_weight, pickle_refused};
use crate::options::HubOptions;
use crate::repo::{Remote, RepoType};

/// The files of a model repository rlvr reads, from the repository's file list: config,
/// tokenizer, generation config, chat template and safetensors weights (single, or the index
/// whose shards are fetched after it). A repository with only pickle weights is refused
/// before anything is downloaded.
fn model_files(repo: &str, listed: &[String]) -> Result<Vec<String>> {
    let has = |f: &str| listed.iter().any(|l| l == f);
    for f in ["config.json", "tokenizer.json"] {
        if !has(f) {
            return Err(Error::Download(format!(
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
    } else {
        let pickles: Vec<String> = listed
            .iter()
            .filter(|n| is_pickle_weight(n))
            .cloned()
            .collect();
        if !pickles.is_empty() {
            return Err(pickle_refused(&format!("hub model {repo}"), &pickles));
        }
        return Err(Error::Download(format!(
            "hub model {repo} has no model.safetensors or model.safetensors.index.json"
        )));
    }
    Ok(files)
}

/// Downloads the files of model `repo` (branch `main`) that rlvr reads into the cache and
/// returns the snapshot directory: `config.json` and `tokenizer.json`; where the repository
/// has them `tokenizer_config.json`, `generation_config.json` and `chat_template.jinja`; and
/// `model.safetensors`, else `model.safetensors.index.json` with the shards it names. All files
/// come from the one commit the listing names; files already cached are not fetched again. A
/// repository with only pickle weights is refused before anything is downloaded.
pub fn download_model(opts: &HubOptions, repo: &str) -> Result<PathBuf> {
    let main = Remote::new(opts, RepoType::Model, repo, "main")?;
    if opts.offline {
        return Err(opts.offline_error(&format!("model {repo}")));
    }
    let (commit, listed) = main.list().map_err(|e| match e {
        Error::Download(m) => {
            Error::Download(format!("{m} (and no local directory {repo} exists)"))
        }
        e => e,
    })?;
    let at = Remote::new(opts, RepoType::Model, repo, &commit)?;
    let fetch = |f: &str| -> Result<PathBuf> {
        match at.cached(f) {
            Some(p) => Ok(p),
            None => at.download(f),
        }
    };
    let mut dir = None;
    for f in model_files(repo, &listed)? {
        let path = fetch(&f)?;
        if f == "config.json" {
            dir = path.parent().map(Path::to_path_buf);
        }
        if f == "model.safetensors.index.json" {
            let shards = index_shards(&path).map_err(|e| match e {
                Error::BadFile { reason, .. } => at.server_error(format!(
                    "sent a model.safetensors.index.json that rlvr refuses: {reason}"
                )),
                e => e,
            })?;
            for s in shards {
                fetch(&s)?;
            }
        }
    }
    main.write_ref(&commit)?;
    dir.ok_or_else(|| Error::Download(format!("hub model {repo}: no config.json downloaded")))
}
