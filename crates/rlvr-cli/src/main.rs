//! `rlvr`: the command-line front of the rlvr workspace.
//!
//! Each subcommand lives in its own module under `src/` and exposes `Args` (clap) and
//! `run(args) -> anyhow::Result<()>`. Errors caused by the user's input (a malformed line, an
//! unknown key, a missing file) are wrapped in [`BadInput`] and exit with code 2; anything else
//! exits with code 1.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod diagnose;
mod eval;
mod generate;
mod render;
mod report;
mod score;
mod sweep;
mod train;
mod verify;

/// rlvr: GRPO-style RLVR with exact loss aggregation (token, sequence, Balanced Aggregation).
#[derive(Debug, Parser)]
#[command(name = "rlvr", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Train a policy with GRPO; no arguments: the CPU testbed run (about 10 minutes).
    Train(train::Args),
    /// Evaluate a checkpoint on a dataset: mean@k and pass@k.
    Eval(eval::Args),
    /// Aggregation-bias diagnostics for rollouts dumped by any framework (verl, TRL, OpenRLHF).
    Diagnose(diagnose::Args),
    /// Compare aggregation rules across runs and seeds: report.md, report.html, PNG plots.
    Report(report::Args),
    /// Run the aggregation-rule comparison grid (rules x seeds), resumable; then report on it.
    Sweep(sweep::Args),
    /// Log-prob of each response token under a model (raw text, no template).
    Score(score::Args),
    /// Sample responses from a model (raw text or --chat template).
    Generate(generate::Args),
    /// Check answers with the math verifier: one --gold/--response pair, or a --jsonl file.
    Verify(verify::Args),
    /// Print the prompt a chat message list renders to with a model's chat template, and its
    /// token ids.
    Render(render::Args),
    /// Throughput: GRPO steps on the TRL reference harness's work, and matmul GFLOP/s.
    Bench(bench::Args),
}

/// Marks an error as caused by the user's input (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// Keeps freed memory in the process for reuse (glibc only).
///
/// By default glibc serves every block above its dynamic mmap threshold (at most 32 MiB) with
/// a fresh `mmap` and unmaps it on free, and trims the heap top above 128 KiB. A training step
/// allocates and frees activations and gradients of tens of MiB per op, so every step paid
/// a page fault and a kernel page clear per 4 KiB of them again: about 13% of the CPU samples of
/// a bench-tiny GRPO step (`perf record`), and twice the minor faults of a run. With mmap off
/// and trimming off (`-1`, mallopt(3)), freed blocks go back to the heap and the next step
/// reuses them; the resident size stays near the run's peak instead of dropping between steps.
/// What is computed does not change. `GLIBC_TUNABLES` with a `glibc.malloc` setting, or
/// `RLVR_MALLOC=default`, keeps glibc's defaults.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_malloc() {
    let user_set = std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc"))
        || std::env::var("RLVR_MALLOC").is_ok_and(|v| v == "default");
    if user_set {
        return;
    }
    // SAFETY: mallopt only changes allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, -1);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_malloc() {}

/// Fixes the thread count of candle's CPU kernels (and rayon's pool) for the whole run.
///
/// candle asks `candle_core::utils::get_num_threads()` on every CPU matmul; with
/// `RAYON_NUM_THREADS` unset that call counts the physical cores again each time, parsing
/// `/proc/cpuinfo` (about 3% of a bench-tiny GRPO step's CPU samples, `perf record`). Setting
/// the variable once, to the count candle itself computes, turns the lookup into an
/// environment read. A value the user set is kept; the thread count does not change either way.
fn pin_thread_count() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let n = rlvr_model::candle_core::utils::get_num_threads();
        // SAFETY: called first thing in `main`, before any other thread exists.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", n.to_string()) };
    }
}

/// A closed output pipe (`rlvr ... | head`) ends the process quietly, as it ends `cat`:
/// Rust ignores SIGPIPE, which turns the closed pipe into a panic in the next `println!`.
fn quiet_on_closed_pipe() {
    // SAFETY: restoring a signal's default disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    tune_malloc();
    pin_thread_count();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Train(args) => train::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Diagnose(args) => diagnose::run(args),
        Command::Report(args) => report::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Score(args) => score::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Render(args) => render::run(args),
        Command::Bench(args) => bench::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            let bad_input = err.chain().any(|e| e.is::<BadInput>());
            ExitCode::from(if bad_input { 2 } else { 1 })
        }
    }
}
