//! The run's terminal output: progress bars and printed lines, or nothing when quiet.

use indicatif::{ProgressBar, ProgressStyle};

/// Progress bars and printed lines, or nothing (quiet).
pub struct Ui {
    pub quiet: bool,
    pub bars: bool,
}

impl Ui {
    pub fn new(quiet: bool, bars: bool) -> Self {
        Self {
            quiet,
            bars: bars && !quiet,
        }
    }

    /// A progress bar of `len` steps (hidden when quiet or bars are off).
    pub fn bar(&self, len: usize, prefix: &str) -> ProgressBar {
        if !self.bars {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len as u64);
        pb.set_style(
            ProgressStyle::with_template(
                "{prefix:>11} [{bar:30}] {pos}/{len} {elapsed_precise} eta {eta} {msg}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        pb.set_prefix(prefix.to_string());
        pb
    }

    /// Prints a line to stderr (above any progress bar).
    pub fn println(&self, line: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}", line.as_ref());
        }
    }
}
