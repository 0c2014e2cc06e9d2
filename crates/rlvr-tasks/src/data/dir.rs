//! The data directory: [`resolve_data_dir`] from a `--data-dir` flag or [`DATA_DIR_ENV`]
//! (the order is in the module docs of [`crate::data`]).

use std::path::{Path, PathBuf};

use super::DataError;

/// The environment variable naming the data directory.
pub const DATA_DIR_ENV: &str = "RLVR_DATA_DIR";

/// Finds the data directory (order in the module docs): `flag`, else `RLVR_DATA_DIR`. With
/// neither, [`DataError::NoDataDir`]: callers then read presets from their hub copies.
pub fn resolve_data_dir(flag: Option<&Path>) -> Result<PathBuf, DataError> {
    let env = std::env::var_os(DATA_DIR_ENV).map(PathBuf::from);
    resolve_data_dir_from(flag, env.as_deref())
}

fn resolve_data_dir_from(flag: Option<&Path>, env: Option<&Path>) -> Result<PathBuf, DataError> {
    if let Some(dir) = flag {
        return existing_dir(dir, "--data-dir");
    }
    if let Some(dir) = env.filter(|d| !d.as_os_str().is_empty()) {
        return existing_dir(dir, DATA_DIR_ENV);
    }
    Err(DataError::NoDataDir {
        reason: format!("no --data-dir given and {DATA_DIR_ENV} is not set"),
    })
}

fn existing_dir(dir: &Path, from: &str) -> Result<PathBuf, DataError> {
    if dir.is_dir() {
        Ok(dir.to_path_buf())
    } else {
        Err(DataError::NoDataDir {
            reason: format!("{} (from {from}) is not a directory", dir.display()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_dir_resolution_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(resolve_data_dir_from(Some(d), None).unwrap(), d);
        assert_eq!(resolve_data_dir_from(None, Some(d)).unwrap(), d);
        let missing = d.join("nope");
        let err = resolve_data_dir_from(Some(&missing), Some(d))
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope") && err.contains("--data-dir"), "{err}");
        let err = resolve_data_dir_from(None, Some(&missing))
            .unwrap_err()
            .to_string();
        assert!(err.contains(DATA_DIR_ENV), "{err}");
    }

    #[test]
    fn no_data_dir_without_flag_or_variable() {
        let err = resolve_data_dir_from(None, None).unwrap_err().to_string();
        assert!(
            err.contains("--data-dir") && err.contains(DATA_DIR_ENV),
            "{err}"
        );
        let err = resolve_data_dir_from(None, Some(Path::new("")))
            .unwrap_err()
            .to_string();
        assert!(err.contains(DATA_DIR_ENV), "{err}");
    }
}
