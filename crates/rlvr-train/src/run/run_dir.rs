//! The run directory: its name, claiming it for one writer ([`RunLock`]), and the config it
//! holds (read back on resume, written atomically).

use rlvr_core::run_dir::RunDir;
use std::path::{Path, PathBuf};

use super::lock::RunLock;
use super::TrainOptions;
use crate::checkpoint;
use crate::config::TrainConfig;
use crate::TrainError;

/// Reads the config: the file (or the default) with overrides, or a run's saved config with
/// overrides. On resume an override of a key fixed at the start of a run
/// ([`crate::config::FIXED_ON_RESUME`]: the model's shape, the seed, the warm start, the
/// testbed problems, the run's place) that changes its value is an error naming the key, so
/// the saved config never records a setting the run did not use.
pub fn resolve_config(opts: &TrainOptions) -> Result<TrainConfig, TrainError> {
    match &opts.resume {
        Some(run) => {
            let path = run_config_path(run)?;
            if opts.overrides.is_empty() {
                return Ok(TrainConfig::load(Some(&path), &[])?);
            }
            let saved = TrainConfig::load(Some(&path), &[])?;
            let cfg = TrainConfig::load(Some(&path), &opts.overrides)?;
            saved.check_resume_overrides(&cfg)?;
            Ok(cfg)
        }
        None => Ok(TrainConfig::load(opts.config.as_deref(), &opts.overrides)?),
    }
}

/// `<run>/config.toml`, or an error when `run` has none (not a run directory).
pub(super) fn run_config_path(run: &Path) -> Result<PathBuf, TrainError> {
    let path = RunDir::new(run).config();
    if !path.is_file() {
        return Err(TrainError::Resume(format!(
            "{}: no config.toml; is this a run directory (runs/<name>)?",
            run.display()
        )));
    }
    Ok(path)
}

/// The task part of an automatic run name: the preset's name, or the training file's stem
/// (`data/train.parquet` -> `train`, `testbed` -> `testbed`); characters other than ASCII
/// letters, digits, `-`, `_` and `.` become `-`.
pub fn task_label(train_files: Option<&str>) -> String {
    let Some(train_files) = train_files else {
        return rlvr_tasks::testbed::NAME.to_string();
    };
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
/// is started over), and so is one whose checkpoints were all refused as damaged (it is
/// restarted only by `--resume <dir> --restart`).
pub fn new_run_dir(cfg: &TrainConfig) -> Result<PathBuf, TrainError> {
    let runs = &cfg.trainer.runs_dir;
    if !cfg.trainer.run_name.is_empty() {
        let dir = runs.join(&cfg.trainer.run_name);
        // a run stopped before its first checkpoint holds nothing to continue: it is
        // started over under its name
        if RunDir::new(&dir).config().exists() && !checkpoint::candidates(&dir).is_empty() {
            return Err(TrainError::Resume(format!(
                "{} already holds a run: continue it with --resume {}, or set trainer.run_name",
                dir.display(),
                dir.display()
            )));
        }
        let damaged = checkpoint::damaged(&dir);
        if !damaged.is_empty() {
            return Err(TrainError::Resume(format!(
                "{} holds a run whose checkpoints were all refused as damaged ({}): train it \
                 again from step 0 with --resume {} --restart, or set another trainer.run_name",
                dir.display(),
                names(&damaged),
                dir.display()
            )));
        }
        return Ok(dir);
    }
    let base = format!(
        "{}-{}-s{}",
        task_label(cfg.data.train_files.as_deref()),
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

/// The file names of `dirs`, comma-separated.
pub(super) fn names(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.file_name().unwrap_or(d.as_os_str()).to_string_lossy())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A run directory taken for this process's run.
pub(super) struct Claimed {
    pub dir: PathBuf,
    /// Held for the life of the run.
    pub lock: RunLock,
    /// Whether this process created the directory (removed again when the run fails before
    /// its config is written).
    pub created: bool,
}

/// Takes the directory of a fresh run ([`new_run_dir`]) and locks it before anything is
/// written there: an automatic name is claimed by creating its directory (a name another run
/// creates at the same moment is passed over), an explicit one is checked again under the
/// lock. A directory another process holds is an error naming its pid.
pub(super) fn claim_new_run_dir(cfg: &TrainConfig) -> Result<Claimed, TrainError> {
    let runs = &cfg.trainer.runs_dir;
    std::fs::create_dir_all(runs).map_err(|e| TrainError::io(runs, e))?;
    for _ in 0..1000 {
        let dir = new_run_dir(cfg)?;
        let created = match std::fs::create_dir(&dir) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if cfg.trainer.run_name.is_empty() {
                    continue;
                }
                false
            }
            Err(e) => return Err(TrainError::io(&dir, e)),
        };
        let lock = RunLock::acquire(&dir)?;
        if !created {
            // what the directory holds may have changed before the lock was ours
            new_run_dir(cfg)?;
        }
        return Ok(Claimed { dir, lock, created });
    }
    Err(TrainError::Msg(format!(
        "{}: could not claim a run directory (names keep being taken)",
        runs.display()
    )))
}

/// Writes `<run>/config.toml` through a temporary file and a rename.
pub(super) fn write_config(run_dir: &Path, cfg: &TrainConfig) -> Result<(), TrainError> {
    let path = RunDir::new(run_dir).config();
    let tmp = run_dir.join("config.toml.tmp");
    std::fs::write(&tmp, cfg.to_toml()).map_err(|e| TrainError::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| TrainError::io(&path, e))
}
