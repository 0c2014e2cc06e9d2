//! The rules for a checkpoint directory's file names, shared by rlvr-model's loader and the hub
//! client: names that become paths, the shard list of a sharded checkpoint, and refused pickle
//! weights.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};

/// Why `name` is not a plain relative path inside a directory, or `None` when it is one:
/// `/`-separated components, none empty, `.` or `..`, no leading `/`, no backslash, NUL or
/// other control character, at most 1024 bytes.
pub(crate) fn unsafe_path_reason(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.len() > 1024 {
        return Some("it is longer than 1024 bytes");
    }
    if name.contains('\\') {
        return Some("it contains a backslash");
    }
    if name.contains('\0') {
        return Some("it contains a NUL byte");
    }
    if name.chars().any(char::is_control) {
        return Some("it contains a control character");
    }
    if name.starts_with('/') {
        return Some("it is an absolute path");
    }
    for c in name.split('/') {
        match c {
            "" => return Some("it has an empty path component"),
            "." | ".." => return Some("it has a `.` or `..` path component"),
            _ => {}
        }
    }
    // a drive prefix (`C:`) would make the path absolute on Windows
    if name.as_bytes().get(1) == Some(&b':') {
        return Some("it starts with a drive prefix");
    }
    None
}

/// The shard files `model.safetensors.index.json` at `index_path` names in its `weight_map`,
/// sorted and without repeats. Each must be a plain relative path inside the model directory
/// (no `..`, no absolute path, no empty component, no backslash or NUL): the index may come
/// from a hub server, and its names become paths.
pub fn index_shards(index_path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(index_path).map_err(|e| Error::io(index_path, e))?;
    let bad = |reason: String| Error::BadFile {
        path: index_path.to_path_buf(),
        reason,
    };
    let index: Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("invalid JSON: {e}")))?;
    let map = index
        .get("weight_map")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("no weight_map object".into()))?;
    let mut files = Vec::new();
    for (tensor, v) in map {
        let f = v.as_str().ok_or_else(|| {
            bad(format!(
                "weight_map entry {tensor:?} is not a file name but {v}"
            ))
        })?;
        if let Some(why) = unsafe_path_reason(f) {
            return Err(bad(format!(
                "weight_map names the shard {f:?} (for tensor {tensor:?}), which is not a plain \
                 relative path inside the model directory: {why}"
            )));
        }
        files.push(f.to_string());
    }
    files.sort_unstable();
    files.dedup();
    Ok(files)
}

/// Whether a weight file name is PyTorch's pickle format: `pytorch_model*.bin`, `*.pt`,
/// `*.pth`, `*.ckpt`.
pub fn is_pickle_weight(name: &str) -> bool {
    (name.starts_with("pytorch_model") && name.ends_with(".bin"))
        || [".pt", ".pth", ".ckpt"]
            .iter()
            .any(|ext| name.ends_with(ext))
}

/// Weights that exist only as pickles (in directory or hub repository `dir`): refused
/// (unpickling runs arbitrary code), with the two lines of Python that convert them to
/// safetensors.
pub fn pickle_refused(dir: &str, found: &[String]) -> Error {
    let dir = Path::new(dir);
    Error::Unsupported {
        path: dir.join(&found[0]),
        what: format!(
            "weight format: {} {} PyTorch pickle (not loaded: unpickling can run arbitrary \
             code). Convert the directory to safetensors once, with transformers:\n  \
             python -c \"from transformers import AutoModelForCausalLM as M; \
             M.from_pretrained('{d}').save_pretrained('{d}', safe_serialization=True)\"\n\
             or, for a plain state dict, with safetensors:\n  \
             python -c \"import torch; from safetensors.torch import save_file; \
             save_file({{k: v.contiguous() for k, v in torch.load('{f}', weights_only=True).items()}}, \
             '{d}/model.safetensors', metadata={{'format': 'pt'}})\"",
            found.join(", "),
            if found.len() == 1 { "is" } else { "are" },
            d = dir.display(),
            f = dir.join(&found[0]).display(),
        ),
    }
}
