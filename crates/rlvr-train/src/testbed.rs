//! The CPU testbed run (stub until rlvr-tasks' testbed lands).

use std::io::Write;
use std::path::Path;

use candle_core::{DType, Device};

use crate::config::TrainConfig;
use crate::run::{Setup, Ui};
use crate::TrainError;

pub fn setup(
    _cfg: &TrainConfig,
    _initial: Option<&Path>,
    _dev: &Device,
    _dt: DType,
    _ui: &Ui,
) -> Result<Setup, TrainError> {
    Err(TrainError::Msg("testbed: not available yet".into()))
}

pub fn dry_run(_cfg: &TrainConfig, _out: &mut dyn Write) -> Result<(), TrainError> {
    Err(TrainError::Msg("testbed: not available yet".into()))
}
