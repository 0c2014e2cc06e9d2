//! Code problems: stdin/stdout tests (Codeforces layout) or functional `check(candidate)` tests
//! (LeetCode layout), a sandboxed Python runner, and [`CodeVerifier`].
//!
//! A code [`Problem`]'s `answer` is its tests as JSON: a list of `{"input", "output"}` objects,
//! or an object `{"functional": "<python that calls check(...)>"}` (the `codeforces` and
//! `leetcode` presets load them that way), or the APPS/TACO layout that verl's `prime_code`
//! reads, `{"inputs": [stdin, ...], "outputs": [stdout, ...]}` (string elements; call-based
//! tests with `fn_name` are rejected).
//!
//! # What the sandbox enforces (Linux)
//! Each run gets a fresh temporary directory holding `main.py`, its working directory, and:
//! - **time**: a wall-clock limit (the parent kills the process group when it passes) and a CPU
//!   limit (`RLIMIT_CPU`: `SIGXCPU`, then `SIGKILL` one second later);
//! - **memory**: `RLIMIT_AS` (address space; Python raises `MemoryError` or the process dies);
//! - **processes**: the program runs as a fresh unprivileged uid/gid (`60000 + n`, no
//!   supplementary groups, `no_new_privs`) with `RLIMIT_NPROC`, so a fork bomb hits the limit;
//!   each run holds one of [`MAX_CONCURRENT_SANDBOXES`] uid slots of its process while it runs
//!   (a run waits for a free slot), so concurrent runs of one process never share a uid and at
//!   most that many sandboxes of a process run at once;
//! - **files**: `RLIMIT_FSIZE` caps any file written, `RLIMIT_NOFILE` caps open files, no core
//!   dumps;
//! - **isolation** (when the kernel lets the caller create namespaces, e.g. as root): a new
//!   network namespace (only a loopback interface that is down: every connection, including
//!   to 127.0.0.1 of the host, fails) and a new private mount namespace in which the temporary
//!   directory is bind-mounted writable, `/` is remounted read-only, and fresh private tmpfs
//!   are mounted on `/tmp`, `/var/tmp` and `/dev/shm` (writes there vanish with the run and
//!   are invisible to the host). Being unprivileged, the program cannot undo these mounts.
//! - **cleanup**: when the program exits or a limit passes, its process group is killed, then
//!   every process of its uid (`kill(-1, SIGKILL)` from a helper running as that uid), then the
//!   directory is removed.
//!
//! Without namespace support ([`isolation_available`] false) runs still get the limits, the
//! uid (when the caller is root) and the cleanup, but neither network isolation nor the
//! read-only file system: [`RunOutcome::isolated`] says which applied, and
//! [`SandboxConfig::require_isolation`] turns that case into an error.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::{Problem, Score, Verifier};

/// One stdin/stdout test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoTest {
    pub input: String,
    pub output: String,
}

/// A problem's tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tests {
    /// Run the program on each input; compare its stdout to the output.
    Io(Vec<IoTest>),
    /// Append this code (which calls `check(...)`) to the program; pass when it exits 0.
    Functional(String),
}

/// Parses a code problem's `answer` (see the module docs).
pub fn parse_tests(answer: &str) -> Result<Tests, String> {
    let v: serde_json::Value =
        serde_json::from_str(answer).map_err(|e| format!("tests are not JSON: {e}"))?;
    match v {
        serde_json::Value::Array(_) => serde_json::from_value(v)
            .map(Tests::Io)
            .map_err(|e| format!("expected a list of {{input, output}}: {e}")),
        serde_json::Value::Object(m) => {
            if let Some(f) = m.get("functional") {
                return match f {
                    serde_json::Value::String(s) => Ok(Tests::Functional(s.clone())),
                    _ => Err("field `functional` must be a string of Python".into()),
                };
            }
            if m.get("fn_name").is_some_and(|v| !v.is_null()) {
                return Err("call-based tests (`fn_name`) are not supported: give \
                            stdin/stdout `inputs`/`outputs` or a `functional` check"
                    .into());
            }
            match (m.get("inputs"), m.get("outputs")) {
                (Some(serde_json::Value::Array(i)), Some(serde_json::Value::Array(o))) => {
                    if i.len() != o.len() {
                        return Err(format!(
                            "`inputs` has {} elements but `outputs` has {}",
                            i.len(),
                            o.len()
                        ));
                    }
                    i.iter()
                        .zip(o)
                        .enumerate()
                        .map(|(k, (i, o))| match (i.as_str(), o.as_str()) {
                            (Some(i), Some(o)) => Ok(IoTest {
                                input: i.to_string(),
                                output: o.to_string(),
                            }),
                            _ => Err(format!("test {k}: `inputs`/`outputs` must be strings")),
                        })
                        .collect::<Result<_, _>>()
                        .map(Tests::Io)
                }
                _ => Err(
                    "expected an object with `functional` (a string) or `inputs` and \
                          `outputs` (lists)"
                        .into(),
                ),
            }
        }
        _ => Err("expected a list of tests or {\"functional\": ...}".into()),
    }
}

/// The program in a response: the last fenced block tagged `python`/`py`/`python3`, else the
/// last fenced block, else None.
pub fn extract_code(response: &str) -> Option<String> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut rest = response;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let Some(nl) = after.find('\n') else { break };
        let tag = after[..nl].trim().to_ascii_lowercase();
        let body = &after[nl + 1..];
        let Some(end) = body.find("```") else { break };
        blocks.push((tag, body[..end].to_string()));
        rest = &body[end + 3..];
    }
    let is_py = |t: &str| matches!(t, "python" | "py" | "python3");
    blocks
        .iter()
        .rev()
        .find(|(t, _)| is_py(t))
        .or(blocks.last())
        .map(|(_, b)| b.clone())
}

/// Whether a program's output matches the expected output: the same whitespace-separated
/// tokens (trailing spaces and newlines, `\r\n` and blank lines do not matter).
pub fn outputs_match(expected: &str, got: &str) -> bool {
    expected.split_whitespace().eq(got.split_whitespace())
}

/// Resource limits of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub wall: Duration,
    /// `RLIMIT_CPU`, seconds.
    pub cpu_secs: u64,
    /// `RLIMIT_AS`, bytes.
    pub memory_bytes: u64,
    /// `RLIMIT_NPROC` for the run's uid.
    pub max_processes: u64,
    /// `RLIMIT_FSIZE`, bytes.
    pub max_file_bytes: u64,
    /// stdout and stderr beyond this many bytes are dropped (and [`RunOutcome::truncated`]).
    pub max_output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            wall: Duration::from_secs(10),
            cpu_secs: 5,
            memory_bytes: 512 << 20,
            max_processes: 16,
            max_file_bytes: 16 << 20,
            max_output_bytes: 1 << 20,
        }
    }
}

/// How to run Python.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxConfig {
    /// The interpreter; it and its library must be readable by an unprivileged user.
    /// Default: `RLVR_PYTHON`, else `/usr/bin/python3`.
    pub python: PathBuf,
    pub limits: Limits,
    /// Fail instead of running without network and file-system isolation.
    pub require_isolation: bool,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            python: std::env::var_os("RLVR_PYTHON")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/usr/bin/python3")),
            limits: Limits::default(),
            require_isolation: false,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Termination {
    Exited(i32),
    /// Killed by a signal (`SIGXCPU` = 24 or `SIGKILL` = 9 after the CPU limit, ...).
    Signaled(i32),
    /// The wall-clock limit passed; the process group was killed.
    WallTimeout,
}

/// The result of one sandboxed run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunOutcome {
    pub termination: Termination,
    pub stdout: String,
    pub stderr: String,
    pub wall: Duration,
    /// Output beyond [`Limits::max_output_bytes`] was dropped.
    pub truncated: bool,
    /// Network and mount namespaces applied (see the module docs).
    pub isolated: bool,
    /// The uid the program ran as (None when the caller is not root and keeps its own).
    pub uid: Option<u32>,
}

impl RunOutcome {
    pub fn success(&self) -> bool {
        self.termination == Termination::Exited(0)
    }

    /// A short reason for a failed run: `wall-clock limit`, `CPU time limit`,
    /// `memory limit`, `exit code N: <last stderr line>`, `signal N`.
    pub fn reason(&self) -> String {
        match self.termination {
            Termination::WallTimeout => "wall-clock limit".into(),
            Termination::Signaled(libc::SIGXCPU) => "CPU time limit".into(),
            Termination::Signaled(s) => format!("signal {s}"),
            Termination::Exited(_) if self.stderr.contains("MemoryError") => "memory limit".into(),
            Termination::Exited(c) => {
                let last: String = self
                    .stderr
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .chars()
                    .take(200)
                    .collect();
                if last.is_empty() {
                    format!("exit code {c}")
                } else {
                    format!("exit code {c}: {last}")
                }
            }
        }
    }
}

/// Errors of the sandbox itself (not of the program it runs).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    #[error("sandbox: {0}")]
    Io(#[from] std::io::Error),
    #[error("sandbox: network/mount namespaces are not available here and isolation is required")]
    NoIsolation,
    #[error("sandbox: {0}")]
    Setup(String),
}

/// Whether this process may create network and mount namespaces (probed once).
pub fn isolation_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        // SAFETY: the child only calls async-signal-safe functions (unshare, _exit).
        unsafe {
            let pid = libc::fork();
            if pid == 0 {
                let ok = libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWNS) == 0;
                libc::_exit(if ok { 0 } else { 1 });
            }
            if pid < 0 {
                return false;
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0) == pid
                && libc::WIFEXITED(status)
                && libc::WEXITSTATUS(status) == 0
        }
    })
}

/// Most sandboxes one process runs at once; a run beyond that waits for a free slot.
pub const MAX_CONCURRENT_SANDBOXES: usize = 64;

/// A uid slot held for the duration of one run: slot `s` of this process runs as uid
/// `60000 + (pid % 64) * 64 + s`, so concurrent runs never share a uid (nor an NPROC count).
struct UidSlot(usize);

fn slots() -> &'static (Mutex<u64>, Condvar) {
    static SLOTS: OnceLock<(Mutex<u64>, Condvar)> = OnceLock::new();
    SLOTS.get_or_init(|| (Mutex::new(0), Condvar::new()))
}

impl UidSlot {
    /// Takes the lowest free slot, waiting while all [`MAX_CONCURRENT_SANDBOXES`] are taken.
    fn acquire() -> Self {
        let (lock, cv) = slots();
        let mut used = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if *used != u64::MAX {
                let s = (!*used).trailing_zeros() as usize;
                *used |= 1 << s;
                return UidSlot(s);
            }
            used = cv.wait(used).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn uid(&self) -> u32 {
        60_000 + (std::process::id() % 64) * 64 + self.0 as u32
    }
}

impl Drop for UidSlot {
    fn drop(&mut self) {
        let (lock, cv) = slots();
        *lock.lock().unwrap_or_else(|e| e.into_inner()) &= !(1u64 << self.0);
        cv.notify_one();
    }
}

fn cstr(s: &str) -> Result<std::ffi::CString, SandboxError> {
    std::ffi::CString::new(s).map_err(|_| SandboxError::Setup(format!("path {s:?} has a NUL")))
}

/// Runs `code` (a Python program) with `stdin` in the sandbox (see the module docs).
pub fn run_python(
    code: &str,
    stdin: &str,
    cfg: &SandboxConfig,
) -> Result<RunOutcome, SandboxError> {
    let isolate = isolation_available();
    if cfg.require_isolation && !isolate {
        return Err(SandboxError::NoIsolation);
    }
    let root = unsafe { libc::geteuid() } == 0;
    // held until this function returns, i.e. after every process of the uid is killed
    let slot = UidSlot::acquire();
    let uid = slot.uid();
    let dir = tempfile::Builder::new().prefix("rlvr-sandbox-").tempdir()?;
    let script = dir.path().join("main.py");
    std::fs::write(&script, code)?;
    let dir_str = dir
        .path()
        .to_str()
        .ok_or_else(|| SandboxError::Setup("temporary directory path is not UTF-8".into()))?
        .to_string();
    if root {
        for p in [dir.path(), script.as_path()] {
            let c = cstr(p.to_str().unwrap_or_default())?;
            // SAFETY: a valid C string; chown has no memory-safety preconditions.
            if unsafe { libc::chown(c.as_ptr(), uid, uid) } != 0 {
                return Err(std::io::Error::last_os_error().into());
            }
        }
    }

    // Everything the child needs, prepared before fork (no allocation after it).
    let c_dir = cstr(&dir_str)?;
    let c_dot = cstr(".")?;
    let c_root = cstr("/")?;
    let c_tmpfs = cstr("tmpfs")?;
    let c_tmpfs_opts = cstr("size=16m,mode=1777")?;
    let tmp_targets: Vec<std::ffi::CString> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .filter(|p| std::path::Path::new(p).is_dir())
        .map(|p| cstr(p))
        .collect::<Result<_, _>>()?;
    let lim = cfg.limits.clone();

    let mut cmd = Command::new(&cfg.python);
    cmd.arg("-I")
        .arg("-B")
        .arg("main.py")
        .current_dir(dir.path())
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &dir_str)
        .env("LANG", "C.UTF-8")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the closure runs in the forked child before exec and only makes raw system calls
    // on data prepared above (no allocation, no locks).
    unsafe {
        cmd.pre_exec(move || {
            let err = || Err(std::io::Error::last_os_error());
            if libc::setsid() < 0 {
                return err();
            }
            if isolate {
                if libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWNS) != 0 {
                    return err();
                }
                let null: *const libc::c_char = std::ptr::null();
                let nodata: *const libc::c_void = std::ptr::null();
                if libc::mount(
                    null,
                    c_root.as_ptr(),
                    null,
                    libc::MS_REC | libc::MS_PRIVATE,
                    nodata,
                ) != 0
                {
                    return err();
                }
                for t in &tmp_targets {
                    if libc::mount(
                        c_tmpfs.as_ptr(),
                        t.as_ptr(),
                        c_tmpfs.as_ptr(),
                        libc::MS_NOSUID | libc::MS_NODEV,
                        c_tmpfs_opts.as_ptr() as *const libc::c_void,
                    ) != 0
                    {
                        return err();
                    }
                }
                // the work directory (maybe hidden by the new /tmp) comes back at its path as
                // a writable bind mount of its own, reached through the cwd (still the old
                // directory: `current_dir` ran before this closure)
                if libc::mkdir(c_dir.as_ptr(), 0o700) != 0
                    && *libc::__errno_location() != libc::EEXIST
                {
                    return err();
                }
                if libc::mount(c_dot.as_ptr(), c_dir.as_ptr(), null, libc::MS_BIND, nodata) != 0
                    || libc::chdir(c_dir.as_ptr()) != 0
                {
                    return err();
                }
                let ro = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY;
                if libc::mount(null, c_root.as_ptr(), null, ro, nodata) != 0 {
                    return err();
                }
            }
            let set = |res, v: u64| {
                let r = libc::rlimit {
                    rlim_cur: v as libc::rlim_t,
                    rlim_max: v as libc::rlim_t,
                };
                libc::setrlimit(res, &r)
            };
            let cpu = libc::rlimit {
                rlim_cur: lim.cpu_secs as libc::rlim_t,
                rlim_max: (lim.cpu_secs + 1) as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_CPU, &cpu) != 0
                || set(libc::RLIMIT_AS, lim.memory_bytes) != 0
                || set(libc::RLIMIT_FSIZE, lim.max_file_bytes) != 0
                || set(libc::RLIMIT_NOFILE, 64) != 0
                || set(libc::RLIMIT_CORE, 0) != 0
            {
                return err();
            }
            if root {
                if set(libc::RLIMIT_NPROC, lim.max_processes) != 0
                    || libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setresgid(uid, uid, uid) != 0
                    || libc::setresuid(uid, uid, uid) != 0
                {
                    return err();
                }
            } else if set(libc::RLIMIT_NPROC, lim.max_processes) != 0 {
                return err();
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0
            {
                return err();
            }
            Ok(())
        });
    }

    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pgid = child.id() as libc::pid_t;
    let mut stdin_pipe = child.stdin.take();
    let input = stdin.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(p) = stdin_pipe.as_mut() {
            let _ = p.write_all(&input); // a program that does not read its input is fine
        }
    });
    let cap = lim_output(cfg);
    let out_reader = spawn_reader(child.stdout.take(), cap);
    let err_reader = spawn_reader(child.stderr.take(), cap);

    let deadline = start + cfg.limits.wall;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if Instant::now() >= deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let wall = start.elapsed();
    // the whole process group, then anything else the uid still runs
    // SAFETY: plain system calls.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
    if root {
        kill_uid(uid);
    }
    let status = match status {
        Some(s) => Some(s),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    };
    let _ = writer.join();
    let (stdout, t1) = out_reader.join().unwrap_or_default();
    let (stderr, t2) = err_reader.join().unwrap_or_default();
    let termination = match status {
        None => Termination::WallTimeout,
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => Termination::Exited(c),
            (None, Some(sig)) => Termination::Signaled(sig),
            (None, None) => Termination::Signaled(0),
        },
    };
    drop(dir);
    Ok(RunOutcome {
        termination,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        wall,
        truncated: t1 || t2,
        isolated: isolate,
        uid: root.then_some(uid),
    })
}

fn lim_output(cfg: &SandboxConfig) -> usize {
    cfg.limits.max_output_bytes
}

fn spawn_reader<R: Read + Send + 'static>(
    pipe: Option<R>,
    cap: usize,
) -> std::thread::JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let Some(mut p) = pipe else {
            return (Vec::new(), false);
        };
        let mut kept = Vec::new();
        let mut truncated = false;
        let mut buf = [0u8; 8192];
        loop {
            match p.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    truncated |= n > room;
                }
            }
        }
        (kept, truncated)
    })
}

/// Kills every process running as `uid` (from a helper that takes that uid: `kill(-1)`
/// reaches exactly the processes a user may signal, i.e. its own).
fn kill_uid(uid: u32) {
    // SAFETY: the child only calls async-signal-safe functions before _exit.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            if libc::setresgid(uid, uid, uid) == 0 && libc::setresuid(uid, uid, uid) == 0 {
                libc::kill(-1, libc::SIGKILL);
            }
            libc::_exit(0);
        }
        if pid > 0 {
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
        }
    }
}

/// How passed tests become a reward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RewardMode {
    /// Passed tests / all tests.
    #[default]
    Fraction,
    /// 1 when every test passes, else 0 (`prime_code` with `continuous=False`; rllm).
    AllOrNothing,
}

/// Scores a response's Python program against the problem's tests in the sandbox.
#[derive(Debug, Clone, Default)]
pub struct CodeVerifier {
    pub mode: RewardMode,
    pub sandbox: SandboxConfig,
    /// Run at most this many tests (None: all).
    pub max_tests: Option<usize>,
}

/// Put before functional (LeetCode) tests: the imports their reference solutions assume.
pub const FUNCTIONAL_PRELUDE: &str = "from typing import *\nimport collections, heapq, math, itertools, bisect, functools, string, re\nfrom collections import *\nfrom functools import *\nfrom itertools import *\nfrom heapq import *\nfrom bisect import *\nfrom math import *\nfrom string import *\n";

impl CodeVerifier {
    /// Runs `program` on `tests`: (passed, total, first failure reason). A sandbox that fails
    /// to run counts as a failed test here; [`CodeVerifier::try_run_tests`] returns it instead.
    pub fn run_tests(&self, program: &str, tests: &Tests) -> (usize, usize, Option<String>) {
        let n = match tests {
            Tests::Io(list) => self.max_tests.map_or(list.len(), |m| m.min(list.len())),
            Tests::Functional(_) => 1,
        };
        self.try_run_tests(program, tests)
            .unwrap_or_else(|e| (0, n, Some(e.to_string())))
    }

    /// Like [`CodeVerifier::run_tests`], but an error of the sandbox itself (the interpreter
    /// cannot be started, a temporary directory cannot be made) is an `Err`, never a failed
    /// test: the program's own failures (wrong output, exceptions, limits) are `Ok`.
    pub fn try_run_tests(
        &self,
        program: &str,
        tests: &Tests,
    ) -> Result<(usize, usize, Option<String>), SandboxError> {
        match tests {
            Tests::Io(list) => {
                let n = self.max_tests.map_or(list.len(), |m| m.min(list.len()));
                let mut passed = 0;
                let mut first_fail = None;
                for (i, t) in list.iter().take(n).enumerate() {
                    let o = run_python(program, &t.input, &self.sandbox)?;
                    if o.success() && outputs_match(&t.output, &o.stdout) {
                        passed += 1;
                        continue;
                    }
                    let why = if o.success() {
                        "wrong output".into()
                    } else {
                        o.reason()
                    };
                    first_fail.get_or_insert(format!("test {i}: {why}"));
                    if self.mode == RewardMode::AllOrNothing {
                        break;
                    }
                }
                Ok((passed, n, first_fail))
            }
            Tests::Functional(check) => {
                let full = format!("{FUNCTIONAL_PRELUDE}\n{program}\n\n{check}\n");
                let o = run_python(&full, "", &self.sandbox)?;
                Ok(if o.success() {
                    (1, 1, None)
                } else {
                    (0, 1, Some(o.reason()))
                })
            }
        }
    }

    /// The score of `response` on `tests`; `Err` only when the sandbox itself failed (see
    /// [`CodeVerifier::try_run_tests`]). No code block scores 0 with reason
    /// `no code block found`.
    pub fn try_score_tests(&self, response: &str, tests: &Tests) -> Result<Score, SandboxError> {
        let Some(program) = extract_code(response) else {
            return Ok(Score::binary(false, None, "no code block found"));
        };
        let (passed, total, fail) = self.try_run_tests(&program, tests)?;
        let all = total > 0 && passed == total;
        let reward = match self.mode {
            RewardMode::AllOrNothing => f64::from(u8::from(all)),
            RewardMode::Fraction if total > 0 => passed as f64 / total as f64,
            RewardMode::Fraction => 0.0,
        };
        Ok(Score {
            reward,
            correct: all,
            extracted: Some(program),
            reason: match fail {
                None => format!("{passed}/{total} tests passed"),
                Some(f) => format!("{passed}/{total} tests passed; {f}"),
            },
        })
    }
}

impl Verifier for CodeVerifier {
    fn score(&self, response: &str, problem: &Problem) -> Score {
        let tests = match parse_tests(&problem.answer) {
            Ok(t) => t,
            Err(e) => return Score::binary(false, None, format!("bad tests: {e}")),
        };
        self.try_score_tests(response, &tests)
            .unwrap_or_else(|e| Score::binary(false, None, e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_extraction_and_output_comparison() {
        let r = "text\n```\nprint(0)\n```\nmore\n```python\nprint(1)\n```\n```text\nout\n```";
        assert_eq!(extract_code(r).as_deref(), Some("print(1)\n"));
        assert_eq!(extract_code("```\nx=1\n```").as_deref(), Some("x=1\n"));
        assert_eq!(extract_code("no code"), None);
        assert_eq!(extract_code("```python\nunterminated"), None);
        assert!(outputs_match("1 2\n3\n", "1 2 \r\n3"));
        assert!(!outputs_match("1 2", "1 3"));
    }

    #[test]
    fn tests_parse() {
        assert_eq!(
            parse_tests(r#"[{"input": "1", "output": "2"}]"#).unwrap(),
            Tests::Io(vec![IoTest {
                input: "1".into(),
                output: "2".into()
            }])
        );
        assert!(matches!(
            parse_tests(r#"{"functional": "check(f)"}"#).unwrap(),
            Tests::Functional(_)
        ));
        assert!(parse_tests("[1]").is_err());
        assert!(parse_tests("nope").is_err());
    }
}
