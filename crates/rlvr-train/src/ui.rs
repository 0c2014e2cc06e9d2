//! The run's terminal output: progress bars and printed lines, or nothing when quiet.
//!
//! On a terminal, bars (indicatif) whose message is the step's progress line; off a terminal
//! (stderr to a file or a pipe), no bar and no terminal codes, but that progress line printed
//! as plain text at most once per `logging.progress_interval_s`.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::progress::{ProgressObserver, StepProgress};

/// Progress bars and printed lines, or nothing (quiet).
#[derive(Debug, Clone)]
pub struct Ui {
    pub quiet: bool,
    /// Bars on stderr (a terminal, `logging.progress`, not quiet).
    pub bars: bool,
    /// Plain progress lines at most this often (stderr not a terminal, `logging.progress`,
    /// not quiet).
    pub lines_every: Option<Duration>,
}

impl Ui {
    /// The output for stderr as it is: bars on a terminal, plain lines every
    /// `interval_s` seconds otherwise (when `progress`).
    pub fn new(quiet: bool, progress: bool, interval_s: f64) -> Self {
        Self::for_terminal(quiet, progress, interval_s, std::io::stderr().is_terminal())
    }

    /// [`Ui::new`] with stderr a terminal or not.
    pub fn for_terminal(quiet: bool, progress: bool, interval_s: f64, terminal: bool) -> Self {
        let on = progress && !quiet;
        Self {
            quiet,
            bars: on && terminal,
            lines_every: (on && !terminal).then(|| Duration::from_secs_f64(interval_s.max(0.0))),
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

    /// Prints a line to stderr (above any progress bar), through `log_line` (a failed write
    /// does not stop the run).
    pub fn println(&self, line: impl AsRef<str>) {
        if !self.quiet {
            log_line(line.as_ref());
        }
    }

    /// Where a step's progress goes: the message of `pb` with bars, plain lines (through
    /// `print`) off a terminal, nowhere when progress is off.
    pub fn step_progress(
        &self,
        pb: &ProgressBar,
        print: impl Fn(&str) + Send + Sync + 'static,
    ) -> Option<ProgressObserver> {
        if self.bars {
            let pb = pb.clone();
            return Some(Arc::new(move |p: &StepProgress| {
                pb.set_message(p.to_string())
            }));
        }
        let every = self.lines_every?;
        let lines = Mutex::new(PeriodicLines {
            last: Instant::now(),
            printed_in_phase: false,
        });
        Some(Arc::new(move |p: &StepProgress| {
            let mut l = lines.lock().unwrap_or_else(|e| e.into_inner());
            if l.due(every, p.is_phase_end()) {
                print(&p.to_string());
            }
        }))
    }
}

/// Whether a write to the run log (stderr) has failed in this process.
static LOG_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `line` to the run log (stderr). The log is a copy for a reader: a write that fails (a
/// full disk under a redirected log, `2>/dev/full`, a closed pipe) does not stop the run,
/// whose record is `metrics.jsonl` and its checkpoints; the log then stays quiet for the rest
/// of the process, instead of panicking as `eprintln!` would.
pub fn log_line(line: &str) {
    use std::io::Write;
    if LOG_FAILED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let mut err = std::io::stderr().lock();
    if err
        .write_all(line.as_bytes())
        .and_then(|()| err.write_all(b"\n"))
        .is_err()
    {
        LOG_FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// When a plain progress line is due: `every` after the last one, and at the end of a phase
/// that printed one (so a long rollout's log ends with its totals).
struct PeriodicLines {
    last: Instant,
    printed_in_phase: bool,
}

impl PeriodicLines {
    fn due(&mut self, every: Duration, phase_end: bool) -> bool {
        let due = self.last.elapsed() >= every || (phase_end && self.printed_in_phase);
        if due {
            self.last = Instant::now();
        }
        if phase_end {
            self.printed_in_phase = false;
        } else if due {
            self.printed_in_phase = true;
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_on_a_terminal_lines_off_it_nothing_when_quiet() {
        let t = Ui::for_terminal(false, true, 5.0, true);
        assert!(t.bars && t.lines_every.is_none());
        let f = Ui::for_terminal(false, true, 5.0, false);
        assert!(!f.bars && f.lines_every == Some(Duration::from_secs(5)));
        for ui in [
            Ui::for_terminal(true, true, 5.0, false),
            Ui::for_terminal(false, false, 5.0, false),
            Ui::for_terminal(true, true, 5.0, true),
        ] {
            assert!(!ui.bars && ui.lines_every.is_none());
            assert!(ui.step_progress(&ProgressBar::hidden(), |_| {}).is_none());
        }
    }

    #[test]
    fn lines_come_at_most_once_per_interval_and_close_their_phase() {
        let mut l = PeriodicLines {
            last: Instant::now(),
            printed_in_phase: false,
        };
        let hour = Duration::from_secs(3600);
        // a short phase prints nothing, not even its end
        assert!(!l.due(hour, false));
        assert!(!l.due(hour, true));
        // a long one: its first due line, then nothing until its end, which is printed
        l.last -= hour;
        assert!(l.due(hour, false));
        assert!(!l.due(hour, false));
        assert!(l.due(hour, true));
        // and the next phase starts over
        assert!(!l.due(hour, true));
        // every event with interval 0
        assert!((0..5).all(|i| l.due(Duration::ZERO, i == 4)));
    }
}
