//! Where a run's policy and tasks come from, behind one interface: a [`TaskSource`], chosen
//! once from the config by [`task_source`]. Two sources: the generated testbed (`testbed.rs`:
//! its own model, warm start and problems) and a checkpoint with datasets (`datasets.rs`).
//! The loop, the dry run and the summary ask the source; none of them names a task.

use std::io::Write;
use std::path::Path;

use crate::config::{RunTask, TrainConfig};
use crate::setup::{Setup, SetupInputs};
use crate::TrainError;

/// What differs between the task sources of a run.
pub(crate) trait TaskSource {
    /// Builds the policy, the training task and the evaluation tasks.
    fn setup(&self, inputs: &SetupInputs) -> Result<Setup, TrainError>;

    /// `rlvr train --dry-run` after the config line: checks what can be checked without
    /// training and prints it, with three rendered prompts.
    fn dry_run(
        &self,
        cfg: &TrainConfig,
        data_dir: Option<&Path>,
        out: &mut dyn Write,
    ) -> Result<(), TrainError>;

    /// The training task, as the run summary names it.
    fn describe(&self, cfg: &TrainConfig) -> String;
}

/// The generated testbed task with its own tiny model (`model.path` and `data.train_files`
/// unset; `[testbed]`).
pub(crate) struct Testbed;

/// A checkpoint trained on datasets: every other run.
pub(crate) struct Datasets;

/// The task source of a run ([`TrainConfig::task`]).
pub(crate) fn task_source(cfg: &TrainConfig) -> &'static dyn TaskSource {
    match cfg.task() {
        RunTask::Testbed(_) => &Testbed,
        RunTask::Datasets { .. } => &Datasets,
    }
}

impl TaskSource for Testbed {
    fn setup(&self, inputs: &SetupInputs) -> Result<Setup, TrainError> {
        crate::testbed::setup(inputs)
    }

    fn dry_run(
        &self,
        cfg: &TrainConfig,
        _: Option<&Path>,
        out: &mut dyn Write,
    ) -> Result<(), TrainError> {
        crate::testbed::dry_run(cfg, out)
    }

    fn describe(&self, cfg: &TrainConfig) -> String {
        format!(
            "testbed, regime {}, sums of {} to {} terms",
            cfg.testbed.regime.as_str(),
            cfg.testbed.min_terms,
            cfg.testbed.difficulty
        )
    }
}

impl TaskSource for Datasets {
    fn setup(&self, inputs: &SetupInputs) -> Result<Setup, TrainError> {
        crate::datasets::setup(inputs)
    }

    fn dry_run(
        &self,
        cfg: &TrainConfig,
        data_dir: Option<&Path>,
        out: &mut dyn Write,
    ) -> Result<(), TrainError> {
        crate::datasets::dry_run(cfg, data_dir, out)
    }

    fn describe(&self, cfg: &TrainConfig) -> String {
        cfg.data.train_files.clone().unwrap_or_default()
    }
}
