//! rlvr-report: compares aggregation rules across runs and seeds, from the runs' own
//! `metrics.jsonl` files, as `report.md`, an offline `report.html` (plots embedded) and PNG plots.
//!
//! Input: run directories as `rlvr train` / `rlvr sweep` write them: `metrics.jsonl` (the line
//! format of `rlvr_train::metrics`) and `config.toml` (the run's resolved config, from which the
//! rule `algorithm.loss_agg_mode`, the seed `trainer.seed` and the condition (`data.train_files`,
//! else the testbed's `testbed.regime`) are read; a run without `config.toml` is labelled by its directory name).
//!
//! Runs are grouped by condition (the regime, and the learning rate `optim.lr` and the warm-start
//! length `testbed.warm_start_steps` when the runs differ in them), then by rule; curves are the mean over seeds with a min-max band. The
//! per-rule table gives peak accuracy (the best evaluation of a run), last-step accuracy, the
//! drop between them and the mean of the last five evaluations, each as the mean over seeds with
//! its min-max spread; the paired table gives each rule's seed-by-seed difference against
//! `balanced` with a 95% confidence interval ([`paired_differences`]); the live length
//! statistics (relative pos-neg gap, length CV) are given over the first, middle and last ten
//! steps; and the regime map plots every paired difference against the condition's live gap
//! and length CV. The machines section lists the machine of every run (`host.jsonl`) and flags
//! a seed whose runs of a condition ran on more than one ([`machine_notes`]).
//!
//! What it leaves out: it neither trains nor re-evaluates anything; every number comes from the
//! metrics files, so a report is only as honest as the runs behind it.

mod machines;
mod paired;
mod plot;
mod render;
mod runs;
mod stats;

use std::path::{Path, PathBuf};

pub use machines::{machine_notes, MachineNotes};
pub use paired::{paired_differences, t_975, Interval, PairedRow, RunScores};
pub use render::{write_report, write_report_with, ReportOptions};
pub use runs::{load_run, Run};
pub use stats::{rule_summaries, RuleSummary, Spread};

/// What can go wrong, with the file it concerns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A file could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line of a metrics file or a config that does not parse.
    #[error("{}:{line}: {reason}", .path.display())]
    BadLine {
        /// The file.
        path: PathBuf,
        /// 1-based line number (0 for a whole-file problem).
        line: usize,
        /// Why.
        reason: String,
    },
    /// Nothing to report on.
    #[error("no runs to report on: {0}")]
    Empty(String),
    /// Plotting failed.
    #[error("plot {}: {reason}", .path.display())]
    Plot {
        /// The PNG being drawn.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}
