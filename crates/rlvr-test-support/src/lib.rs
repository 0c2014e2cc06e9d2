//! What rlvr's tests share, one rule for each need (docs/architecture.md, conventions): a test
//! that needs something the machine may lack (the real data directory, python3 for the code
//! sandbox) skips with a printed reason, and under `CI=true` fails instead, so CI never passes
//! by skipping.
//!
//! Tiny models for the crates above rlvr-model are in `models` (feature `models`);
//! rlvr-model's own tests build theirs in its `tests/common`, the CLI's runner is in
//! rlvr-cli's `tests/common`.

#[cfg(feature = "models")]
pub mod models;

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// True under `CI=true`: a missing prerequisite is then a failure.
pub fn ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// `found`'s value; or, when it is an error, `None` after printing `skipping: {what}: {error}`
/// (a panic naming the same under `CI=true`).
pub fn or_skip<T, E: Display>(found: Result<T, E>, what: &str) -> Option<T> {
    match found {
        Ok(v) => Some(v),
        Err(e) if ci() => panic!("CI=true but {what}: {e}"),
        Err(e) => {
            eprintln!("skipping: {what}: {e}");
            None
        }
    }
}

/// `python` when it exists, else [`or_skip`]'s skip (the code sandbox's interpreter).
pub fn python(python: &Path) -> Option<PathBuf> {
    let found = if python.exists() {
        Ok(python.to_path_buf())
    } else {
        Err(format!("{} does not exist", python.display()))
    };
    or_skip(found, "no python3")
}

/// The real SmolLM2-135M-Instruct that `scripts/real-model.sh` converts, named by
/// `RLVR_REAL_MODEL` (its `model.safetensors` must be there), else [`or_skip`]'s skip.
pub fn real_model_dir() -> Option<PathBuf> {
    let dir = std::env::var("RLVR_REAL_MODEL")
        .map_err(|_| {
            "RLVR_REAL_MODEL is not set (scripts/real-model.sh prints the directory)".to_string()
        })
        .map(PathBuf::from)
        .and_then(|d| {
            if d.join("model.safetensors").is_file() {
                Ok(d)
            } else {
                Err(format!("{}/model.safetensors does not exist", d.display()))
            }
        });
    or_skip(dir, "the real model (SmolLM2-135M-Instruct)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_found_value_passes_and_a_missing_one_skips_or_fails_under_ci() {
        assert_eq!(or_skip(Ok::<_, String>(3), "x"), Some(3));
        let missing = std::panic::catch_unwind(|| or_skip(Err::<u8, _>("gone"), "no data"));
        if ci() {
            let msg = missing.unwrap_err();
            let msg = msg.downcast_ref::<String>().unwrap();
            assert!(msg.contains("no data") && msg.contains("gone"), "{msg}");
        } else {
            assert_eq!(missing.unwrap(), None);
        }
        if !ci() {
            assert_eq!(python(Path::new("/nonexistent/python3")), None);
        }
    }
}
