//! The run directory: its name, and the config it holds (read back on resume, written atomically).

use std::path::{Path, PathBuf};

use super::TrainOptions;
use crate::checkpoint;
use crate::config::TrainConfig;
use crate::TrainError;

/// Reads the config: the file (or the default) with overrides, or a run's saved config.
pub fn resolve_config(opts: &TrainOptions) -> Result<TrainConfig, TrainError> {
    match &opts.resume {
        Some(run) => {
            let path = run.join("config.toml");
            if !path.is_file() {
                return Err(TrainError::Resume(format!(
                    "{}: no config.toml; is this a run directory (runs/<name>)?",
                    run.display()
                )));
            }
            Ok(TrainConfig::load(Some(&path), &opts.overrides)?)
        }
        None => Ok(TrainConfig::load(opts.config.as_deref(), &opts.overrides)?),
    }
}

/// The task part of an automatic run name: the preset's name, or the training file's stem
/// (`data/train.parquet` -> `train`, `testbed` -> `testbed`); characters other than ASCII
/// letters, digits, `-`, `_` and `.` become `-`.
pub fn task_label(train_files: &str) -> String {
    let name = if rlvr_tasks::data::preset(train_files).is_ok() {
        train_files.to_string()
    } else {
        Path::new(train_files)
            .file_stem()
            .map_or("data".to_string(), |s| s.to_string_lossy().into_owned())
    };
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The run directory: `<runs_dir>/<run_name>`; an automatic name is
/// `<task>-<rule>-s<seed>` ([`task_label`]) with a numeric suffix when taken (`-2`, `-3`, ...);
/// an explicit one that already holds a run with a checkpoint is an error (one without any
/// is started over).
pub fn new_run_dir(cfg: &TrainConfig) -> Result<PathBuf, TrainError> {
    let runs = &cfg.trainer.runs_dir;
    if !cfg.trainer.run_name.is_empty() {
        let dir = runs.join(&cfg.trainer.run_name);
        // a run stopped before its first checkpoint holds nothing to continue: it is
        // started over under its name
        if dir.join("config.toml").exists() && !checkpoint::candidates(&dir).is_empty() {
            return Err(TrainError::Resume(format!(
                "{} already holds a run: continue it with --resume {}, or set trainer.run_name",
                dir.display(),
                dir.display()
            )));
        }
        return Ok(dir);
    }
    let base = format!(
        "{}-{}-s{}",
        task_label(&cfg.data.train_files),
        cfg.algorithm.loss_agg_mode,
        cfg.trainer.seed
    );
    for i in 1.. {
        let name = if i == 1 {
            base.clone()
        } else {
            format!("{base}-{i}")
        };
        let dir = runs.join(name);
        if !dir.exists() {
            return Ok(dir);
        }
    }
    unreachable!()
}

/// Writes `<run>/config.toml` through a temporary file and a rename.
pub(super) fn write_config(run_dir: &Path, cfg: &TrainConfig) -> Result<(), TrainError> {
    let path = run_dir.join("config.toml");
    let tmp = run_dir.join("config.toml.tmp");
    std::fs::write(&tmp, cfg.to_toml()).map_err(|e| TrainError::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| TrainError::io(&path, e))
}
