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
mod export;
mod generate;
mod output;
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
    /// Carry a run to verl (launch script) or TRL (script), or a dataset to verl's parquet.
    Export(export::Args),
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

/// A closed output pipe (`rlvr ... | head`) ends the process quietly, as it ends `cat`; any
/// other failed write to stdout or stderr ends it with a message on the other stream and exit
/// code 1, never a panic's backtrace.
///
/// SIGPIPE stays ignored, as Rust sets it, for the whole run: a write to any other closed
/// pipe (a sandboxed program's stdin, a child's) fails with `EPIPE` instead of killing the
/// process. Only a write to stdout that fails because stdout is a closed pipe ends the
/// process, through [`die_of_closed_stdout`]: a `println!` that panics on it (this hook; an
/// `eprintln!` on a closed stderr, as in `rlvr ... 2>&1 | head`, too), or an error returned
/// from a subcommand (see `main`). Commands write through [`output`]'s fallible macros; a
/// `println!` or `eprintln!` left in a library that fails otherwise (`> /dev/full`) ends the
/// process with one line on the other stream ([`die_of_failed_write`]). Any other panic goes
/// to the default hook.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload_as_str().unwrap_or("");
        if (payload.starts_with("failed printing to stdout") && is_closed(libc::STDOUT_FILENO))
            || (payload.starts_with("failed printing to stderr") && is_closed(libc::STDERR_FILENO))
        {
            die_of_closed_stdout();
        }
        if let Some(stream) = ["stdout", "stderr"]
            .into_iter()
            .find(|s| payload.starts_with(&format!("failed printing to {s}")))
        {
            die_of_failed_write(stream, payload);
        }
        default(info);
    }));
}

/// Ends the process with exit code 1 after a write to `stream` failed: the message goes to the
/// other stream ([`say_error`]).
fn die_of_failed_write(stream: &str, message: &str) -> ! {
    say_error(&format!("error: {message}\n"), stream == "stderr");
    std::process::exit(1)
}

/// Writes an error line on stderr, or first on stdout with `stdout_first`; when that stream
/// cannot take it, on the other (when neither can, nowhere).
fn say_error(line: &str, stdout_first: bool) {
    use std::io::Write;
    let to_stdout = || {
        let mut out = std::io::stdout();
        out.write_all(line.as_bytes()).and_then(|()| out.flush())
    };
    let to_stderr = || std::io::stderr().write_all(line.as_bytes());
    let written = if stdout_first {
        to_stdout().or_else(|_| to_stderr())
    } else {
        to_stderr().or_else(|_| to_stdout())
    };
    let _ = written;
}

/// Whether stdout is a pipe (or socket) whose reading end is closed.
fn stdout_is_closed() -> bool {
    is_closed(libc::STDOUT_FILENO)
}

/// Whether `fd` is a pipe (or socket) whose reading end is closed: `poll` reports `POLLERR`
/// (`POLLHUP` for a socket) on it.
fn is_closed(fd: libc::c_int) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one pollfd, no timeout.
    unsafe { libc::poll(&mut p, 1, 0) == 1 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0 }
}

/// Ends the process as SIGPIPE's default action would (status "killed by SIGPIPE", exit 141
/// in a shell), without a message: the reader of stdout is gone, so nothing is lost.
fn die_of_closed_stdout() -> ! {
    // SAFETY: restoring a default disposition and raising the signal in the calling thread
    // (which does not block SIGPIPE); the process is ending either way.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + libc::SIGPIPE)
}

/// Whether `err` comes from a write to stdout after its reader went away.
fn is_closed_stdout(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    }) && stdout_is_closed()
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
        Command::Export(args) => export::run(args),
    };
    // what print! left in stdout's buffer: a failure here is a failed command too
    let result = result.and_then(|()| {
        std::io::Write::flush(&mut std::io::stdout()).map_err(|e| output::StdoutError(e).into())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_closed_stdout(&err) => die_of_closed_stdout(),
        Err(err) if err.chain().any(|e| e.is::<output::StdoutError>()) => {
            die_of_failed_write("stdout", &format!("{err:#}"))
        }
        Err(err) => {
            say_error(&format!("error: {err:#}\n"), false);
            let bad_input = err.chain().any(|e| e.is::<BadInput>());
            ExitCode::from(if bad_input { 2 } else { 1 })
        }
    }
}
