//! `rlvr sweep`: the aggregation-rule comparison grid (rules x seeds), one `rlvr train` run per
//! cell, each in its own directory, resumable.
//!
//! Layout: `<out>/<rule>-s<seed>/` is an ordinary run directory (`metrics.jsonl`,
//! `config.toml`, `checkpoint/`) plus `train.log` (the child's output) and `sweep.done` once
//! the run finished. Running the same sweep again skips finished runs, resumes half-finished
//! ones from their last checkpoint (`rlvr train --resume`), and restarts runs that never reached
//! a checkpoint. At the end it writes the report of every finished run to `<out>/report/`.
//!
//! The grid is pinned: the first invocation copies the config file and the `--set` overrides
//! to `<out>/sweep-config.toml` and `<out>/sweep-overrides.txt`, and every cell, now or on a
//! later resume, trains from that copy, so editing the config file mid-sweep cannot make the
//! cells differ. A later invocation with a different config or different overrides is refused.
//!
//! Each cell runs as a child process of this binary, so a crash in one run does not take the
//! sweep down, and `--jobs J` runs J cells at once with the CPU threads split between them.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result};
use rlvr_core::AggRule;

use crate::BadInput;

/// Arguments of `rlvr sweep`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run config every cell starts from (e.g. configs/testbed.toml).
    #[arg(long)]
    pub config: PathBuf,
    /// Comma-separated aggregation rules (loss_agg_mode names).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "token-mean,seq-mean-token-mean,balanced"
    )]
    pub rules: Vec<String>,
    /// Seeds per rule: seeds 1..=N.
    #[arg(long, default_value_t = 3)]
    pub seeds: u64,
    /// Runs at once (the CPU threads are split between them).
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// Sweep directory (default: runs/sweep-<config file stem>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Extra `section.key=value` overrides for every run (e.g. a regime or a learning rate).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Data directory, passed on to every run.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

/// One cell of the grid.
#[derive(Debug, Clone)]
struct Cell {
    rule: AggRule,
    seed: u64,
    dir: PathBuf,
}

/// What to do with a cell, from what its directory holds.
#[derive(Debug, PartialEq)]
enum CellState {
    Finished,
    Resume,
    Fresh,
}

fn state(dir: &Path) -> CellState {
    if dir.join("sweep.done").exists() {
        CellState::Finished
    } else if dir.join("checkpoint").join("state.json").exists() {
        CellState::Resume
    } else {
        CellState::Fresh
    }
}

pub fn run(args: Args) -> Result<()> {
    if !args.config.is_file() {
        return Err(BadInput(format!("{}: no such config file", args.config.display())).into());
    }
    if args.seeds == 0 || args.jobs == 0 {
        return Err(BadInput("--seeds and --jobs must be at least 1".into()).into());
    }
    let rules: Vec<AggRule> = args
        .rules
        .iter()
        .map(|r| {
            r.parse::<AggRule>()
                .map_err(|e| BadInput(format!("--rules: {e}")))
        })
        .collect::<Result<_, _>>()?;
    let stem = args
        .config
        .file_stem()
        .map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(format!("sweep-{stem}")));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let pinned = pin_config(&args, &out)?;
    // Seed-major order: a sweep stopped part-way holds the same seeds for every rule, so its
    // partial report still compares like with like (and each seed's warm start is built once,
    // by its first rule, then reused from the cache).
    let cells: Vec<Cell> = (1..=args.seeds)
        .flat_map(|seed| rules.iter().map(move |&rule| (rule, seed)))
        .map(|(rule, seed)| Cell {
            rule,
            seed,
            dir: out.join(format!("{rule}-s{seed}")),
        })
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads_per_job = (threads / args.jobs).max(1);
    let exe = std::env::current_exe().context("cannot find the rlvr binary")?;
    let started = std::time::Instant::now();

    let mut queue: std::collections::VecDeque<Cell> = cells.iter().cloned().collect();
    let mut running: Vec<(Cell, Child)> = Vec::new();
    let mut failed = Vec::new();
    loop {
        while running.len() < args.jobs {
            let Some(cell) = queue.pop_front() else { break };
            match state(&cell.dir) {
                CellState::Finished => println!(
                    "[sweep] {} seed {}: finished, skipped",
                    cell.rule, cell.seed
                ),
                s => {
                    let child = spawn(
                        &exe,
                        &args,
                        &pinned,
                        &cell,
                        &out,
                        s == CellState::Resume,
                        threads_per_job,
                    )?;
                    println!(
                        "[sweep] {} seed {}: {} (log: {})",
                        cell.rule,
                        cell.seed,
                        if s == CellState::Resume {
                            "resuming"
                        } else {
                            "starting"
                        },
                        cell.dir.join("train.log").display()
                    );
                    running.push((cell, child));
                }
            }
        }
        if running.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        let mut still = Vec::new();
        for (cell, mut child) in running {
            match child.try_wait()? {
                None => still.push((cell, child)),
                Some(status) if status.success() => {
                    let done = cell.dir.join("sweep.done");
                    std::fs::write(&done, "").with_context(|| done.display().to_string())?;
                    println!(
                        "[sweep] {} seed {}: done ({:.0} s into the sweep)",
                        cell.rule,
                        cell.seed,
                        started.elapsed().as_secs_f64()
                    );
                }
                Some(status) => {
                    println!(
                        "[sweep] {} seed {}: FAILED ({status}); see {}",
                        cell.rule,
                        cell.seed,
                        cell.dir.join("train.log").display()
                    );
                    failed.push(cell);
                }
            }
        }
        running = still;
    }
    println!(
        "[sweep] {} runs in {:.0} s",
        cells.len(),
        started.elapsed().as_secs_f64()
    );

    let finished: Vec<PathBuf> = cells
        .iter()
        .filter(|c| state(&c.dir) == CellState::Finished)
        .map(|c| c.dir.clone())
        .collect();
    if !finished.is_empty() {
        let written = rlvr_report::write_report(&finished, &out.join("report"))?;
        println!(
            "[sweep] report: {}",
            written
                .iter()
                .find(|p| p.ends_with("report.md"))
                .unwrap_or(&out)
                .display()
        );
    }
    if !failed.is_empty() {
        anyhow::bail!(
            "{} of {} runs failed; run the same command again to retry them",
            failed.len(),
            cells.len()
        );
    }
    Ok(())
}

/// Copies the config and overrides into the sweep directory on the first run; on later runs
/// checks that they are unchanged. Returns the pinned config's path.
fn pin_config(args: &Args, out: &Path) -> Result<PathBuf> {
    let text = std::fs::read_to_string(&args.config)
        .map_err(|e| BadInput(format!("{}: {e}", args.config.display())))?;
    let overrides = args.overrides.join("\n");
    let (cfg_path, ovr_path) = (
        out.join("sweep-config.toml"),
        out.join("sweep-overrides.txt"),
    );
    if cfg_path.exists() {
        let old_cfg =
            std::fs::read_to_string(&cfg_path).with_context(|| cfg_path.display().to_string())?;
        let old_ovr = std::fs::read_to_string(&ovr_path).unwrap_or_default();
        if old_cfg != text || old_ovr != overrides {
            return Err(BadInput(format!(
                "{} was started with a different config or --set overrides (pinned in {} and {}); \
                 resume it with the same ones, or give a new --out",
                out.display(),
                cfg_path.display(),
                ovr_path.display()
            ))
            .into());
        }
    } else {
        std::fs::write(&cfg_path, &text).with_context(|| cfg_path.display().to_string())?;
        std::fs::write(&ovr_path, &overrides).with_context(|| ovr_path.display().to_string())?;
    }
    Ok(cfg_path)
}

fn spawn(
    exe: &Path,
    args: &Args,
    config: &Path,
    cell: &Cell,
    out: &Path,
    resume: bool,
    threads: usize,
) -> Result<Child> {
    std::fs::create_dir_all(&cell.dir).with_context(|| cell.dir.display().to_string())?;
    let log_path = cell.dir.join("train.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| log_path.display().to_string())?;
    let mut cmd = Command::new(exe);
    cmd.arg("train");
    if resume {
        cmd.arg("--resume").arg(&cell.dir);
    } else {
        // a run that never reached a checkpoint starts over
        for f in ["config.toml", "metrics.jsonl"] {
            let _ = std::fs::remove_file(cell.dir.join(f));
        }
        cmd.arg("--config").arg(config);
        for o in &args.overrides {
            cmd.arg("--set").arg(o);
        }
        let name = cell
            .dir
            .file_name()
            .expect("cell dirs have a name")
            .to_string_lossy()
            .into_owned();
        cmd.args(["--set", &format!("algorithm.loss_agg_mode={}", cell.rule)]);
        cmd.args(["--set", &format!("trainer.seed={}", cell.seed)]);
        cmd.args(["--set", &format!("trainer.runs_dir={}", out.display())]);
        cmd.args(["--set", &format!("trainer.run_name={name}")]);
        cmd.args(["--set", "logging.progress=false"]);
    }
    if let Some(d) = &args.data_dir {
        cmd.arg("--data-dir").arg(d);
    }
    cmd.env("RAYON_NUM_THREADS", threads.to_string())
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    cmd.spawn()
        .with_context(|| format!("cannot start {}", exe.display()))
}
