//! `rlvr sweep`: the aggregation-rule comparison grid (conditions x rules x seeds), one
//! `rlvr train` run per cell, each in its own directory, resumable.
//!
//! Conditions are the product of the `--grid key=v1,v2` axes (for example the testbed regime and
//! the learning rate); without `--grid` there is one. Layout: `<out>/<condition>/<rule>-s<seed>/`
//! (`<out>/<rule>-s<seed>/` without `--grid`), where `<condition>` joins `<key>-<value>` of
//! each axis with `_` (`regime-wrong-long_lr-0.0002`). Each is an ordinary run
//! directory (`metrics.jsonl`, `config.toml`, `checkpoint/`) plus `train.log` (the child's
//! output) and `sweep.done` once the run finished. Running the same sweep again skips finished runs, resumes half-finished
//! ones from their last checkpoint (`rlvr train --resume`), and restarts runs that never reached
//! a checkpoint. At the end it writes the report of every finished run to `<out>/report/`.
//! `--drop-checkpoints` removes each run's checkpoints as it finishes (a real model's are
//! gigabytes each; the report reads only the run's files).
//!
//! The grid is pinned: the first invocation copies the config file and the `--set` overrides
//! to `<out>/sweep-config.toml` and `<out>/sweep-overrides.txt`, and every cell, now or on a
//! later resume, trains from that copy, so editing the config file mid-sweep cannot make the
//! cells differ. A later invocation whose config sets different values (comments and layout may
//! differ) or whose overrides differ is refused. The grid axes and `--seeds` may change between
//! invocations: each condition's directory name holds its axis values, so a wider grid or more
//! seeds adds cells beside the finished ones (`--grid optim.lr=4e-4 --seeds 8` after
//! `--grid optim.lr=1e-4,2e-4,4e-4 --seeds 2` runs seeds 3-8 at 4e-4 only). The report at the
//! end covers this invocation's cells; `rlvr report <out>/*/*-s*` covers them all.
//!
//! Each cell runs as a child process of this binary, so a crash in one run does not take the
//! sweep down, and `--jobs J` (default: one per core) runs J cells at once with the CPU threads
//! split between them. Cells are ordered by blocks of `J` seeds, then condition, then rule, so
//! runs at once have different seeds: each seed's warm start is built by one run while the
//! others build theirs, and later rules of that seed load it from the cache. A partial sweep
//! holds whole blocks of `J` seeds for every condition and rule, so its report still compares
//! like with like. Every finished run prints its wall-clock cost.

use rlvr_core::run_dir::RunDir;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result};
use rlvr_core::AggRule;

use crate::output::outln;
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
    /// Runs at once (the CPU threads are split between them); 0 = one per core.
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// A grid axis `section.key=v1,v2,...` (repeatable): every combination of the axes is one
    /// condition, run for every rule and seed (e.g. `--grid testbed.regime=wrong-long,control
    /// --grid optim.lr=5e-5,2e-4`).
    #[arg(long = "grid", value_name = "KEY=V1,V2")]
    pub grid: Vec<String>,
    /// Sweep directory (default: `runs/sweep-<config file stem>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Extra `section.key=value` overrides for every run (e.g. a regime or a learning rate).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Data directory, passed on to every run.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Remove a run's checkpoints as soon as it finishes (its metrics, config, samples and log
    /// stay, and the report needs nothing else): a real model's are gigabytes each, and a
    /// sweep's finished runs would otherwise fill the disk. Runs finished before are left.
    #[arg(long)]
    pub drop_checkpoints: bool,
}

/// One cell of the grid.
#[derive(Debug, Clone)]
struct Cell {
    /// The condition's `key=value` overrides (one per grid axis).
    condition: Vec<String>,
    rule: AggRule,
    seed: u64,
    dir: PathBuf,
}

impl Cell {
    fn label(&self) -> String {
        let mut parts = self.condition.clone();
        parts.push(self.rule.to_string());
        parts.push(format!("seed {}", self.seed));
        parts.join(" ")
    }
}

/// The grid's axes from `--grid key=v1,v2` arguments: (key, values).
fn parse_grid(grid: &[String]) -> Result<Vec<(String, Vec<String>)>, BadInput> {
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    for g in grid {
        let (key, values) = g
            .split_once('=')
            .ok_or_else(|| BadInput(format!("--grid {g:?}: expected section.key=v1,v2,...")))?;
        let key = key.trim();
        let safe = |c: char| c.is_ascii_alphanumeric() || "._+-".contains(c);
        if !key.contains('.') || !key.chars().all(safe) {
            return Err(BadInput(format!(
                "--grid {g:?}: the key must be section.key (letters, digits, '_', '.')"
            )));
        }
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(|v| v.is_empty() || !v.chars().all(safe)) {
            return Err(BadInput(format!(
                "--grid {g:?}: values must be non-empty and use only letters, digits and '._+-'"
            )));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = values.iter().find(|v| !seen.insert(*v)) {
            return Err(BadInput(format!("--grid {g:?}: value {dup:?} given twice")));
        }
        if axes.iter().any(|(k, _)| k == key) {
            return Err(BadInput(format!("--grid: axis {key} given twice")));
        }
        axes.push((key.to_string(), values));
    }
    Ok(axes)
}

/// Every combination of the axes' values, as `key=value` lists (one empty list without axes).
fn conditions(axes: &[(String, Vec<String>)]) -> Vec<Vec<String>> {
    axes.iter().fold(vec![Vec::new()], |acc, (key, values)| {
        acc.iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(format!("{key}={v}"));
                    c
                })
            })
            .collect()
    })
}

/// The directory name of a condition: `<last key segment>-<value>` joined by `_`.
fn condition_dir(condition: &[String]) -> String {
    condition
        .iter()
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            format!("{}-{v}", k.rsplit('.').next().unwrap_or(k))
        })
        .collect::<Vec<_>>()
        .join("_")
}

/// The cells of a sweep in run order: blocks of `jobs` seeds; within a block, each condition,
/// each rule, and every seed of the block. Runs started together have different seeds (hence
/// different warm starts), and a sweep stopped part-way holds whole seed blocks of every
/// condition and rule, so its partial report compares like with like.
fn cells(
    out: &Path,
    conds: &[Vec<String>],
    rules: &[AggRule],
    seeds: u64,
    jobs: usize,
) -> Vec<Cell> {
    let all: Vec<u64> = (1..=seeds).collect();
    let mut cells = Vec::new();
    for block in all.chunks(jobs.max(1)) {
        for cond in conds {
            let base = if cond.is_empty() {
                out.to_path_buf()
            } else {
                out.join(condition_dir(cond))
            };
            for &rule in rules {
                for &seed in block {
                    cells.push(Cell {
                        condition: cond.clone(),
                        rule,
                        seed,
                        dir: base.join(format!("{rule}-s{seed}")),
                    });
                }
            }
        }
    }
    cells
}

/// What to do with a cell, from what its directory holds.
#[derive(Debug, PartialEq)]
enum CellState {
    Finished,
    Resume,
    Fresh,
}

/// A cell with any checkpoint, or with checkpoints set aside as damaged, is resumed: `rlvr
/// train --resume` falls back to the newest intact one, or refuses a run with none (it is
/// restarted only by hand, `--resume <dir> --restart`), never starting it over here.
fn state(dir: &Path) -> CellState {
    use rlvr_train::checkpoint;
    if dir.join("sweep.done").exists() {
        CellState::Finished
    } else if !checkpoint::candidates(dir).is_empty() || !checkpoint::damaged(dir).is_empty() {
        CellState::Resume
    } else {
        CellState::Fresh
    }
}

pub fn run(args: Args) -> Result<()> {
    if !args.config.is_file() {
        return Err(BadInput(format!("{}: no such config file", args.config.display())).into());
    }
    if args.seeds == 0 {
        return Err(BadInput("--seeds must be at least 1".into()).into());
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = if args.jobs == 0 { threads } else { args.jobs };
    let axes = parse_grid(&args.grid)?;
    if let Some((key, _)) = axes.iter().find(|(key, _)| {
        args.overrides
            .iter()
            .any(|o| o.split_once('=').is_some_and(|(k, _)| k.trim() == key))
    }) {
        return Err(BadInput(format!("{key} is both a --grid axis and a --set override")).into());
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
    let cells = cells(&out, &conditions(&axes), &rules, args.seeds, jobs);
    let threads_per_job = (threads / jobs).max(1);
    let exe = std::env::current_exe().context("cannot find the rlvr binary")?;
    // the machine this sweep's runs record (host.jsonl), to warn before a seed is split
    // across machines; a config that does not load fails in the run itself, with its message
    let here = rlvr_train::TrainConfig::load(Some(&pinned), &args.overrides)
        .ok()
        .map(|cfg| rlvr_train::run::local_machine(&cfg.model.device.to_string(), threads_per_job));
    let started = std::time::Instant::now();

    let mut queue: std::collections::VecDeque<Cell> = cells.iter().cloned().collect();
    let mut running: Vec<(Cell, Child, std::time::Instant)> = Vec::new();
    let mut failed = Vec::new();
    loop {
        while running.len() < jobs {
            let Some(cell) = queue.pop_front() else { break };
            match state(&cell.dir) {
                CellState::Finished => outln!("[sweep] {}: finished, skipped", cell.label())?,
                s => {
                    if let Some(here) = &here {
                        let others = other_machines(&cells, &cell, here);
                        if !others.is_empty() {
                            outln!(
                                "[sweep] {}: WARNING: this seed's finished runs ran on another machine ({}); this one is {here}. \
                                 Its paired differences will include the machines' rounding (docs/determinism.md)",
                                cell.label(),
                                others.join("; ")
                            )?;
                        }
                    }
                    let child = spawn(
                        &exe,
                        &args,
                        &pinned,
                        &cell,
                        &out,
                        s == CellState::Resume,
                        threads_per_job,
                    )?;
                    outln!(
                        "[sweep] {}: {} (log: {})",
                        cell.label(),
                        if s == CellState::Resume {
                            "resuming"
                        } else {
                            "starting"
                        },
                        RunDir::new(&cell.dir).train_log().display()
                    )?;
                    running.push((cell, child, std::time::Instant::now()));
                }
            }
        }
        if running.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        let mut still = Vec::new();
        for (cell, mut child, t0) in running {
            match child.try_wait()? {
                None => still.push((cell, child, t0)),
                Some(status) if status.success() => {
                    let cost = t0.elapsed().as_secs_f64();
                    let done = cell.dir.join("sweep.done");
                    std::fs::write(
                        &done,
                        format!("{{\"wall_s\": {cost:.1}, \"threads\": {threads_per_job}}}\n"),
                    )
                    .with_context(|| done.display().to_string())?;
                    outln!(
                        "[sweep] {}: done in {cost:.0} s on {threads_per_job} thread(s) ({:.0} s into the sweep)",
                        cell.label(),
                        started.elapsed().as_secs_f64()
                    )?;
                    if args.drop_checkpoints {
                        rlvr_train::checkpoint::discard_all(&cell.dir)?;
                    }
                }
                Some(status) => {
                    outln!(
                        "[sweep] {}: FAILED ({status}); see {}",
                        cell.label(),
                        RunDir::new(&cell.dir).train_log().display()
                    )?;
                    failed.push(cell);
                }
            }
        }
        running = still;
    }
    outln!(
        "[sweep] {} runs in {:.0} s",
        cells.len(),
        started.elapsed().as_secs_f64()
    )?;

    let finished: Vec<PathBuf> = cells
        .iter()
        .filter(|c| state(&c.dir) == CellState::Finished)
        .map(|c| c.dir.clone())
        .collect();
    if !finished.is_empty() {
        let written = rlvr_report::write_report(&finished, &out.join("report"))?;
        outln!(
            "[sweep] report: {}",
            written
                .iter()
                .find(|p| p.ends_with("report.md"))
                .unwrap_or(&out)
                .display()
        )?;
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

/// The machines that the finished runs of `cell`'s condition and seed recorded in their
/// `host.jsonl`, other than `here` (lines that do not parse are left to `rlvr report`, which
/// names them).
fn other_machines(cells: &[Cell], cell: &Cell, here: &str) -> Vec<String> {
    let mut others: Vec<String> = Vec::new();
    for c in cells.iter().filter(|c| {
        c.condition == cell.condition && c.seed == cell.seed && state(&c.dir) == CellState::Finished
    }) {
        let text =
            std::fs::read_to_string(c.dir.join(rlvr_train::run::HOST_FILE)).unwrap_or_default();
        for line in text.lines() {
            let machine = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v["machine"].as_str().map(String::from));
            if let Some(m) = machine.filter(|m| m != here && !others.contains(m)) {
                others.push(m);
            }
        }
    }
    others
}

/// Two config texts set the same values (they may differ in comments and layout).
fn same_settings(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (a.parse::<toml::Table>(), b.parse::<toml::Table>()),
            (Ok(x), Ok(y)) if x == y
        )
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
        // earlier versions pinned the grid axes too, as `grid key=...` lines: the axes may change
        let old_ovr = old_ovr
            .lines()
            .filter(|l| !l.starts_with("grid "))
            .collect::<Vec<_>>()
            .join("\n");
        if !same_settings(&old_cfg, &text) || old_ovr != overrides {
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

/// Makes the child get SIGTERM when this process ends, however it ends (killed, SIGTERM'd,
/// crashed): a stopped sweep leaves no training run going, and `rlvr sweep` again resumes them
/// from their checkpoints (Linux `PR_SET_PDEATHSIG`; elsewhere nothing changes).
fn stop_with_this_process(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: the hook runs in the forked child before exec and calls only
        // async-signal-safe functions (getpid, prctl, getppid, kill).
        let parent = unsafe { libc::getpid() };
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // the sweep ended between fork and prctl: nothing would send the signal
                if libc::getppid() != parent {
                    libc::kill(libc::getpid(), libc::SIGTERM);
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
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
    let log_path = RunDir::new(&cell.dir).train_log();
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
        // a run that never reached a checkpoint is started over by `rlvr train` itself, under
        // the lock of its directory (files are not removed here, where another sweep's run
        // could be writing them)
        cmd.arg("--config").arg(config);
        for o in args.overrides.iter().chain(&cell.condition) {
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
        let runs_dir = cell.dir.parent().unwrap_or(out);
        cmd.args(["--set", &format!("trainer.runs_dir={}", runs_dir.display())]);
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
    stop_with_this_process(&mut cmd);
    cmd.spawn()
        .with_context(|| format!("cannot start {}", exe.display()))
}
