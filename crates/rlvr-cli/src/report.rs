//! `rlvr report RUN_DIR...`: compare aggregation rules across runs and seeds; with `--watch`,
//! re-render while the runs are being trained.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Result;

use crate::output::{noteln, outln};
use crate::BadInput;

/// Arguments of `rlvr report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run directories (each with metrics.jsonl and config.toml), e.g. those of one `rlvr sweep`.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// Where report.md, report.html and the PNG plots go.
    #[arg(long, default_value = "report")]
    pub out: PathBuf,
    /// Tables and the regime map only, without the per-condition curves (a summary over runs
    /// whose parts were reported with their curves already).
    #[arg(long)]
    pub no_curves: bool,
    /// Keep the report current while the runs train: look at them every `--interval`
    /// seconds, render again when a metrics.jsonl has changed (report.html then reloads
    /// itself in a browser at that interval), and end with a final, static render once no
    /// run has been written by an `rlvr train` for two looks in a row (the gap between the
    /// runs of a sweep is shorter). A run that has not begun yet is waited for.
    #[arg(long)]
    pub watch: bool,
    /// With `--watch`: seconds between looks.
    #[arg(long, default_value_t = 10.0, value_parser = interval_s, requires = "watch")]
    pub interval: f64,
}

fn interval_s(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{s:?}: {e}"))?;
    if !(v > 0.0 && v <= 86_400.0) {
        return Err(format!(
            "{v}: must be more than 0 and at most 86400 seconds"
        ));
    }
    Ok(v)
}

pub fn run(args: Args) -> Result<()> {
    if args.watch {
        return watch(&args);
    }
    let written = render(&args, None)?;
    for p in &written {
        outln!("wrote {}", p.display())?;
    }
    Ok(())
}

/// One rendering of the report; `refresh_s`: the page reloads itself.
fn render(args: &Args, refresh_s: Option<u64>) -> Result<Vec<PathBuf>> {
    let options = rlvr_report::ReportOptions {
        curves: !args.no_curves,
        refresh_s,
    };
    rlvr_report::write_report_with(&args.runs, &args.out, options).map_err(|e| match e {
        rlvr_report::ReportError::Plot { .. } => anyhow::Error::new(e),
        other => BadInput(other.to_string()).into(),
    })
}

/// What a run's files look like from outside: (length, modification time) of metrics.jsonl
/// and config.toml, `None` for a file not there.
type Fingerprint = Vec<Option<(u64, SystemTime)>>;

fn fingerprint(runs: &[PathBuf]) -> Fingerprint {
    runs.iter()
        .flat_map(|r| {
            let r = rlvr_core::run_dir::RunDir::new(r);
            [r.metrics(), r.config()]
        })
        .map(|f| {
            let m = std::fs::metadata(f).ok()?;
            Some((m.len(), m.modified().ok()?))
        })
        .collect()
}

/// The last training step each run has logged, for the progress line.
fn last_steps(runs: &[PathBuf]) -> String {
    runs.iter()
        .map(|r| {
            let step = rlvr_report::load_run(r)
                .ok()
                .and_then(|run| run.train.last().map(|t| t.step));
            let name = r
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            match step {
                Some(s) => format!("{name} step {s}"),
                None => format!("{name} not begun"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn being_written(runs: &[PathBuf]) -> bool {
    runs.iter()
        .any(|r| rlvr_train::run::lock_is_held(Path::new(r)))
}

/// `rlvr report --watch`.
fn watch(args: &Args) -> Result<()> {
    let every = Duration::from_secs_f64(args.interval);
    let refresh = Some(args.interval.ceil() as u64);
    let html = args.out.join("report.html");
    let mut seen: Option<Fingerprint> = None;
    let mut last_error: Option<String> = None;
    let mut idle_looks = 0;
    loop {
        // look at the lock before the files: a run that ends between the two looks is then
        // rendered with its last lines before the watch can end
        let live = being_written(&args.runs);
        let now = fingerprint(&args.runs);
        // a run without metrics.jsonl has not begun: wait for it
        let all_begun = now.iter().step_by(2).all(Option::is_some);
        idle_looks = if live || !all_begun {
            0
        } else {
            idle_looks + 1
        };
        if idle_looks >= 2 {
            break;
        }
        if seen.as_ref() != Some(&now) {
            match render(args, refresh) {
                Ok(_) => {
                    outln!("updated {} ({})", html.display(), last_steps(&args.runs))?;
                    last_error = None;
                }
                Err(e) => {
                    let e = e.to_string();
                    if last_error.as_ref() != Some(&e) {
                        noteln!("waiting: {e}");
                    }
                    last_error = Some(e);
                }
            }
            seen = Some(now);
        }
        std::thread::sleep(every);
    }
    // the final, static report (an error now is the command's error)
    let written = render(args, None)?;
    outln!(
        "no run is being written; final report ({})",
        last_steps(&args.runs)
    )?;
    for p in &written {
        outln!("wrote {}", p.display())?;
    }
    Ok(())
}
