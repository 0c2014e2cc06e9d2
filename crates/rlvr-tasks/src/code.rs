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
//! Each run gets a directory of its own holding `main.py` (a size-limited tmpfs at
//! [`SANDBOX_DIR`]), and:
//! - **descriptors**: the program starts with its stdin, stdout and stderr (pipes of the
//!   caller) and nothing else: every other descriptor the caller holds, with or without
//!   `O_CLOEXEC`, is closed at the exec (`close_range(3, ~0, CLOSE_RANGE_CLOEXEC)`);
//! - **namespaces**: new mount, PID, IPC, network and UTS namespaces (and, when the caller is
//!   not root, a new user namespace that maps only the caller's own uid and gid). The
//!   network namespace has only a loopback interface that is down: every connection fails,
//!   including to 127.0.0.1 of the host. The IPC namespace takes SysV shared memory,
//!   semaphores and message queues with it when the run ends; as root its init sets the
//!   namespace's limits before the program starts ([`SYSV_SHM_BYTES`], [`SYSV_MSG_BYTES`],
//!   `kernel.sem`), and not root the system call filter refuses SysV IPC (only the owner's
//!   root may set those limits, and the caller's mapped uid is not root). In the PID
//!   namespace the program sees only its own processes (no host process to signal or
//!   `ptrace`), and when
//!   the run ends the namespace's init exits, which kills every process left in it
//!   (daemons included) before the run returns;
//! - **a private root** (a read-only tmpfs, entered with `pivot_root`; the host's root is
//!   detached): read-only bind mounts of `/usr`, `/bin`, `/sbin`, `/lib*` (or the symbolic
//!   links they are), of the interpreter's prefix when it lies elsewhere (see
//!   [`SandboxConfig::python`]), and of a few `/etc` files (the loader's cache, time zone,
//!   `passwd`, `group`, `nsswitch.conf`, `hosts`); a `/dev` with `null`, `zero`, `full`,
//!   `random`, `urandom`; private tmpfs on `/tmp` and `/dev/shm` ([`TMPFS_BYTES`] each);
//!   `/proc` of the new PID namespace, with `/proc/keys` and `/proc/key-users` covered by
//!   `/dev/null`; and the run's directory, writable, at [`SANDBOX_DIR`] (its cwd and `HOME`):
//!   a tmpfs of [`Limits::max_dir_bytes`] plus `main.py` and at most [`SANDBOX_DIR_INODES`]
//!   files, so nothing the program writes reaches the host's disk. Nothing else of the host
//!   is visible: no dataset, run directory, home, checkout or host `/tmp`;
//! - **system calls**: a seccomp filter (classic BPF, installed right before the exec, after
//!   `no_new_privs`; in unsandboxed runs too) refuses the kernel keyrings (`add_key`,
//!   `request_key`, `keyctl`: no access to the caller's session or user keyrings, no state
//!   kept in a uid's keyring between runs), tracing (`ptrace`, `process_vm_*`), `bpf`,
//!   `perf_event_open`, `userfaultfd`, `io_uring`, new namespaces (`unshare`, `setns`,
//!   `clone` with `CLONE_NEW*`, `clone3`), mounts, `kexec`, modules and other administration
//!   calls, and system calls of another ABI (i386, x32); everything else is allowed;
//! - **time**: a wall-clock limit (the run's supervisor kills the namespace when it passes)
//!   and a CPU limit (`RLIMIT_CPU`: `SIGXCPU`, then `SIGKILL` one second later);
//! - **memory**: `RLIMIT_AS` (address space; Python raises `MemoryError` or the process dies),
//!   plus the bounded file systems and IPC above ([`SandboxConfig`] has the total);
//! - **processes**: `RLIMIT_NPROC`, so a fork bomb hits the limit. As root, the program runs
//!   as a sandbox uid (`60000..64096`, no supplementary groups) that the run holds
//!   exclusively: an exclusive `flock` on a lock file per uid under `/run/rlvr-sandbox`, so
//!   concurrent runs of one process or of several processes (`rlvr sweep --jobs 2`) never
//!   share a uid or its process count. Not root, it runs as the caller's uid inside the user
//!   namespace, with no capabilities. Always with `no_new_privs`;
//! - **files**: `RLIMIT_FSIZE` caps any file written, `RLIMIT_NOFILE` caps open files, no core
//!   dumps;
//! - **stdin**: written from a thread that blocks SIGPIPE, so a program that exits without
//!   reading all of its input is judged on its output, whatever the caller's SIGPIPE
//!   disposition (the supervisor and init ignore SIGPIPE; the program gets the default);
//! - **cleanup**: the run returns only after every process of its PID namespace is gone; the
//!   host directory (only the private root's mount point, when isolated) is removed, then the
//!   uid is released. At most [`MAX_CONCURRENT_SANDBOXES`] runs of a process at once (more
//!   wait for a slot).
//!
//! The process tree of a run: the caller forks a supervisor (new session; it creates the
//! namespaces and enforces the wall-clock limit), which forks the PID namespace's init (it
//! builds the private root, then reaps), which forks the program (limits, uid, exec). Between
//! the fork and the exec they only make system calls on data prepared before the fork, as a
//! fork in a multi-threaded process requires. A failed set-up step is an error that names
//! the step.
//!
//! # Where namespaces are refused
//! Root gets the namespaces directly; other users need unprivileged user namespaces. Where
//! the kernel refuses them ([`isolation_available`] false), [`run_python`] refuses to run
//! ([`SandboxError::NoIsolation`]) unless [`SandboxConfig::allow_unsandboxed`] (config
//! `reward.allow_unsandboxed`): then only the limits (not [`Limits::max_dir_bytes`]), the
//! descriptor closing, the system call filter, the uid (as root) and the clean-up of the
//! process group (and of the uid, as root) apply, and
//! [`RunOutcome::isolated`] is false. `docs/sandbox.md` has the table of what is isolated and
//! what is not.
//!
//! # Why not an isolation crate
//! `hakoniwa` (1.8) covers namespaces, mounts, rlimits, landlock and seccomp, and was
//! evaluated for this sandbox. It was not taken: (1) its child runs ordinary allocating Rust
//! (`format!`, `CString`s, hash maps; `/etc/passwd` parsing when a user is named) between
//! the fork and the exec, which
//! is not safe in a multi-threaded caller such as the reward pool (a lock held by another
//! thread at the fork can hang the child); (2) its time limit is `alarm()`, whole seconds,
//! where runs here have millisecond wall limits; (3) it runs the program as the caller's uid, or as
//! a user named in the container's `/etc/passwd` behind a uid map, and has nothing that
//! allocates a host uid per run across processes, which `RLIMIT_NPROC` and the clean-up need;
//! (4) it brings about 15 crates new to this workspace (a second `nix`, `procfs`, `postcard`,
//! `heapless`, `caps`, `close_fds`, ...) for what is a few hundred lines of system calls here.
//! Its seccomp support needs the C `libseccomp`; the filter here is a few dozen classic-BPF
//! instructions written with `libc`, built before the fork (`code/seccomp.rs`).

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::{Problem, Score, Verifier};

mod seccomp;

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
    /// Size of the program's writable directory ([`SANDBOX_DIR`], a tmpfs of its own when
    /// isolated): all files it writes there together hold at most this many bytes beyond
    /// `main.py` (a write past it fails with `ENOSPC`), and at most [`SANDBOX_DIR_INODES`]
    /// files. The directory lives in memory, outside `RLIMIT_AS` (see [`SandboxConfig`]).
    /// Unsandboxed runs (no mount namespace) have no such limit.
    pub max_dir_bytes: u64,
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
            max_dir_bytes: 16 << 20,
            max_output_bytes: 1 << 20,
        }
    }
}

/// How to run Python.
///
/// Memory a run can hold beyond [`Limits::memory_bytes`] (`RLIMIT_AS`), all freed when the run
/// ends: its writable directory ([`Limits::max_dir_bytes`] plus `main.py`), the tmpfs on
/// `/tmp` and on `/dev/shm` (POSIX shared memory; [`TMPFS_BYTES`] each), and as root SysV
/// shared memory ([`SYSV_SHM_BYTES`]) and message queues ([`SYSV_MSG_BYTES`]) in the run's
/// own IPC namespace (not root, SysV IPC is refused instead). With the defaults that is at
/// most 65 MiB plus `main.py`.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxConfig {
    /// The interpreter; it and its library must be readable by an unprivileged user. Its
    /// directory's parent (its prefix) is mounted read-only in the sandbox when it lies
    /// outside the system directories. Default: `RLVR_PYTHON`, else `/usr/bin/python3`.
    pub python: PathBuf,
    pub limits: Limits,
    /// Run programs even where the kernel refuses the sandbox's namespaces (see the module
    /// docs: then nothing but the limits and the clean-up applies, and a program can read
    /// and write what the caller can, and reach the network). Default false: such runs are
    /// [`SandboxError::NoIsolation`].
    pub allow_unsandboxed: bool,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            python: std::env::var_os("RLVR_PYTHON")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/usr/bin/python3")),
            limits: Limits::default(),
            allow_unsandboxed: false,
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
    /// The program ran isolated (namespaces and a private root; see the module docs); false
    /// only under [`SandboxConfig::allow_unsandboxed`].
    pub isolated: bool,
    /// The host uid the program ran as (None when the caller is not root: then it is the
    /// caller's own).
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
    #[error(
        "sandbox: this process cannot create the sandbox's namespaces (it needs root, or \
         unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 and \
         user.max_user_namespaces > 0), so it refuses to run model-written code; set \
         reward.allow_unsandboxed = true to run it without isolation anyway"
    )]
    NoIsolation,
    #[error("sandbox: {0}")]
    Setup(String),
}

/// How a run is isolated (probed once per process, see [`isolation_available`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isolation {
    /// Root: new namespaces without a user namespace; the program runs as a locked uid slot.
    Root,
    /// Not root: a new user namespace maps the caller's own uid and gid, and owns the others.
    UserNs,
    /// The kernel refuses namespaces: only [`SandboxConfig::allow_unsandboxed`] runs code.
    None,
}

/// The namespaces of an isolated run (a user namespace is added when not root).
const NAMESPACES: libc::c_int = libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWUTS;

/// `/proc/self/{setgroups,uid_map,gid_map}` contents that map the caller's own ids in a new
/// user namespace, prepared before a fork.
struct IdMaps {
    setgroups: CString,
    uid_map: CString,
    gid_map: CString,
    deny: CString,
    uid_line: CString,
    gid_line: CString,
}

impl IdMaps {
    fn new() -> Self {
        // SAFETY: getuid/getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let c = |s: String| CString::new(s).unwrap_or_default();
        IdMaps {
            setgroups: c("/proc/self/setgroups".into()),
            uid_map: c("/proc/self/uid_map".into()),
            gid_map: c("/proc/self/gid_map".into()),
            deny: c("deny".into()),
            uid_line: c(format!("{uid} {uid} 1\n")),
            gid_line: c(format!("{gid} {gid} 1\n")),
        }
    }

    /// Writes the maps (in the forked child, after `unshare(CLONE_NEWUSER)`): system calls
    /// only.
    unsafe fn write(&self) -> bool {
        write_file(&self.setgroups, &self.deny)
            && write_file(&self.uid_map, &self.uid_line)
            && write_file(&self.gid_map, &self.gid_line)
    }
}

/// Writes `data` to the file at `path` (async-signal-safe).
unsafe fn write_file(path: &CString, data: &CString) -> bool {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    let bytes = data.as_bytes();
    let n = libc::write(fd, bytes.as_ptr() as *const libc::c_void, bytes.len());
    libc::close(fd);
    n == bytes.len() as isize
}

/// Creates `path` (mode 0644; it must not exist) holding `data`, then gives it to `owner`
/// (uid = gid) when given (async-signal-safe).
unsafe fn write_new_file(path: &CString, data: &[u8], owner: Option<u32>) -> bool {
    let fd = libc::open(
        path.as_ptr(),
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW,
        0o644,
    );
    if fd < 0 {
        return false;
    }
    let mut rest = data;
    let mut ok = true;
    while !rest.is_empty() {
        let n = libc::write(fd, rest.as_ptr() as *const libc::c_void, rest.len());
        if n > 0 {
            rest = rest.get(n as usize..).unwrap_or_default();
        } else if n < 0 && *libc::__errno_location() == libc::EINTR {
            continue;
        } else {
            ok = false;
            break;
        }
    }
    if let Some(id) = owner {
        ok &= libc::fchown(fd, id, id) == 0;
    }
    libc::close(fd) == 0 && ok
}

fn isolation() -> Isolation {
    static MODE: OnceLock<Isolation> = OnceLock::new();
    *MODE.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            if probe(false) {
                return Isolation::Root;
            }
            // root without CAP_SYS_ADMIN: a user namespace would run the program as root in
            // it (with the host's root ownership of files), so no isolation is offered
            return Isolation::None;
        }
        if probe(true) {
            Isolation::UserNs
        } else {
            Isolation::None
        }
    })
}

/// Forks a child that creates the run's namespaces and makes its mounts private: true when
/// every step works.
fn probe(user_ns: bool) -> bool {
    let maps = IdMaps::new();
    let root = CString::new("/").unwrap_or_default();
    // SAFETY: the child only makes system calls on data prepared above, then `_exit`s.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let flags = NAMESPACES | if user_ns { libc::CLONE_NEWUSER } else { 0 };
            let ok = libc::unshare(flags) == 0
                && (!user_ns || maps.write())
                && libc::mount(
                    std::ptr::null(),
                    root.as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) == 0;
            libc::_exit(if ok { 0 } else { 1 });
        }
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 {
            if *libc::__errno_location() != libc::EINTR {
                return false;
            }
        }
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }
}

/// Whether this process can create the sandbox's namespaces (new mount, PID, IPC, network
/// and UTS namespaces; as root directly, otherwise inside a new user namespace): probed once.
/// When false, [`run_python`] refuses to run unless [`SandboxConfig::allow_unsandboxed`].
pub fn isolation_available() -> bool {
    isolation() != Isolation::None
}

/// Most sandboxes one process runs at once; a run beyond that waits for a free slot.
pub const MAX_CONCURRENT_SANDBOXES: usize = 64;

/// One of [`MAX_CONCURRENT_SANDBOXES`] run slots of this process, held for one run.
struct RunSlot(usize);

fn run_slots() -> &'static (Mutex<u64>, Condvar) {
    static SLOTS: OnceLock<(Mutex<u64>, Condvar)> = OnceLock::new();
    SLOTS.get_or_init(|| (Mutex::new(0), Condvar::new()))
}

impl RunSlot {
    /// Takes the lowest free slot, waiting while all [`MAX_CONCURRENT_SANDBOXES`] are taken.
    fn acquire() -> Self {
        let (lock, cv) = run_slots();
        let mut used = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if *used != u64::MAX {
                let s = (!*used).trailing_zeros() as usize;
                *used |= 1 << s;
                return RunSlot(s);
            }
            used = cv.wait(used).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        let (lock, cv) = run_slots();
        *lock.lock().unwrap_or_else(|e| e.into_inner()) &= !(1u64 << self.0);
        cv.notify_one();
    }
}

/// First uid of the sandbox's uids (root only).
pub const SANDBOX_UID_BASE: u32 = 60_000;
/// How many sandbox uids there are: at most this many sandboxes run at once on a machine.
pub const SANDBOX_UIDS: u32 = 4096;

/// A uid this process owns for one run (root only): the holder of an exclusive `flock` on
/// `<lock dir>/uid-<uid>` (see [`uid_lock_dir`]). Concurrent processes (two `rlvr` runs, a
/// sweep's jobs) never hold the same uid, so one's clean-up (which kills every process of
/// its uid) never reaches another's program. The lock is released when the file closes,
/// also when the process dies.
struct UidLock {
    uid: u32,
    _file: std::fs::File,
}

/// The directory of the uid lock files: `/run/rlvr-sandbox` (else `/tmp/rlvr-sandbox` where
/// there is no `/run`): a fixed path, so every process on the machine agrees on it. It must
/// be a directory owned by root that only root may write (else an error).
fn uid_lock_dir() -> Result<&'static Path, SandboxError> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let r = DIR.get_or_init(|| {
        let dir = if Path::new("/run").is_dir() {
            PathBuf::from("/run/rlvr-sandbox")
        } else {
            PathBuf::from("/tmp/rlvr-sandbox")
        };
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
        }
        let m = std::fs::symlink_metadata(&dir)
            .map_err(|e| format!("cannot stat {}: {e}", dir.display()))?;
        if !m.is_dir() || m.uid() != 0 || m.mode() & 0o022 != 0 {
            return Err(format!(
                "{} must be a directory owned by root that only root may write",
                dir.display()
            ));
        }
        Ok(dir)
    });
    r.as_deref()
        .map_err(|e| SandboxError::Setup(format!("uid lock directory: {e}")))
}

impl UidLock {
    /// Locks a free sandbox uid, scanning from a start that depends on the process id (so
    /// processes rarely contend); waits (up to a minute) while all [`SANDBOX_UIDS`] are held.
    fn acquire() -> Result<Self, SandboxError> {
        use std::os::unix::fs::OpenOptionsExt;
        use std::os::unix::io::AsRawFd;
        let dir = uid_lock_dir()?;
        let start = (std::process::id() % 64) * 64;
        let t = Instant::now();
        loop {
            for k in 0..SANDBOX_UIDS {
                let uid = SANDBOX_UID_BASE + (start + k) % SANDBOX_UIDS;
                let path = dir.join(format!("uid-{uid}"));
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(0o600)
                    .open(&path)
                    .map_err(|e| SandboxError::Setup(format!("{}: {e}", path.display())))?;
                // SAFETY: flock on a descriptor this function owns.
                if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                    return Ok(UidLock { uid, _file: file });
                }
            }
            if t.elapsed() > Duration::from_secs(60) {
                return Err(SandboxError::Setup(format!(
                    "all {SANDBOX_UIDS} sandbox uids stayed locked for a minute (lock files in {})",
                    dir.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn cstr(s: impl AsRef<std::ffi::OsStr>) -> Result<CString, SandboxError> {
    use std::os::unix::ffi::OsStrExt;
    let s = s.as_ref();
    CString::new(s.as_bytes())
        .map_err(|_| SandboxError::Setup(format!("path {s:?} contains a NUL byte")))
}

/// Directories of the interpreter's system, bind-mounted read-only (or recreated as the
/// symbolic links they are) in the private root.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// Files of `/etc` the private root gets (read-only): the dynamic loader's cache, the time
/// zone, user and host names; nothing else of `/etc`.
const ETC_FILES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
];
const DEV_NODES: &[&str] = &["null", "zero", "full", "random", "urandom"];
/// Where the program's directory appears in the private root (its cwd and `HOME`).
pub const SANDBOX_DIR: &str = "/sandbox";
/// Most files (inodes) the program's writable directory holds ([`Limits::max_dir_bytes`]).
pub const SANDBOX_DIR_INODES: u64 = 4096;
/// Size of each of the private tmpfs on `/tmp` and `/dev/shm` (POSIX shared memory lives in
/// the latter), bytes; each holds at most [`SANDBOX_DIR_INODES`] files.
pub const TMPFS_BYTES: u64 = 16 << 20;
/// Most SysV shared memory of a run, all segments together (`kernel.shmall`, `shmmax` of its
/// IPC namespace; root only: not root, SysV IPC is refused).
pub const SYSV_SHM_BYTES: u64 = 16 << 20;
/// Most SysV shared memory segments of a run (`kernel.shmmni`).
pub const SYSV_SHM_SEGMENTS: u64 = 64;
/// Most bytes in SysV message queues of a run, all queues together (`kernel.msgmni` queues of
/// `kernel.msgmnb` bytes each).
pub const SYSV_MSG_BYTES: u64 = SYSV_MSG_QUEUES * SYSV_MSG_QUEUE_BYTES;
const SYSV_MSG_QUEUES: u64 = 16;
const SYSV_MSG_QUEUE_BYTES: u64 = 64 << 10;
/// `kernel.sem` of a run: at most 32 semaphores per set, 1024 in all, 32 per `semop`,
/// 32 sets.
const SYSV_SEM: &str = "32 1024 32 32";

/// The limits of a run's own IPC namespace: `/proc/sys/kernel/*` files and the values the
/// namespace's init writes to them before the program starts (prepared before the fork).
struct IpcLimits {
    files: Vec<(CString, CString)>,
}

impl IpcLimits {
    fn new() -> Result<Self, SandboxError> {
        // SAFETY: sysconf has no preconditions.
        let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
            p if p > 0 => p as u64,
            _ => 4096,
        };
        let mut files = Vec::new();
        for (name, value) in [
            ("shmmax", SYSV_SHM_BYTES.to_string()),
            ("shmall", (SYSV_SHM_BYTES / page).to_string()),
            ("shmmni", SYSV_SHM_SEGMENTS.to_string()),
            ("msgmni", SYSV_MSG_QUEUES.to_string()),
            ("msgmnb", SYSV_MSG_QUEUE_BYTES.to_string()),
            ("msgmax", (8u64 << 10).to_string()),
            ("sem", SYSV_SEM.to_string()),
        ] {
            files.push((
                cstr(format!("/proc/sys/kernel/{name}"))?,
                cstr(format!("{value}\n"))?,
            ));
        }
        Ok(IpcLimits { files })
    }

    /// Writes every limit (in the namespace's init: system calls only); false when one fails.
    unsafe fn write(&self) -> bool {
        self.files.iter().all(|(p, v)| write_file(p, v))
    }
}

/// One step of building the private root (run in the forked child: system calls only).
enum Op {
    Mkdir(CString),
    /// An empty file to bind-mount a file on.
    Touch(CString),
    Symlink {
        target: CString,
        link: CString,
    },
    /// Bind-mount `src` on `dst`, then remount it with `flags` (`MS_RDONLY`, `MS_NOSUID`, ...,
    /// and the flags the source mount already has, which an unprivileged user namespace may
    /// not clear).
    Bind {
        src: CString,
        dst: CString,
        flags: libc::c_ulong,
    },
    Tmpfs {
        dst: CString,
        opts: CString,
        flags: libc::c_ulong,
    },
    /// A read-only remount of an existing mount.
    RemountRo(CString),
    /// A procfs of the new PID namespace (skipped where the kernel refuses it).
    Proc(CString),
    /// Creates the file `path` (mode 0644, it must not exist) holding `data`, owned by `owner`
    /// (uid and gid) when given.
    WriteFile {
        path: CString,
        data: Vec<u8>,
        owner: Option<u32>,
    },
    /// Covers the file `dst` with a bind mount of `src` when `dst` exists (hides a `/proc`
    /// file; nothing to hide where procfs was not mounted).
    Mask {
        src: CString,
        dst: CString,
    },
}

/// Files of the run's `/proc` covered with `/dev/null`: the kernel keys the program could
/// otherwise see the descriptions of (those of the caller's session keyring, which it
/// inherits, and, not root, of the caller's uid).
const PROC_MASKED: &[&str] = &["/proc/keys", "/proc/key-users"];

/// The mount flags of the file system holding `path` that a bind remount must keep.
fn locked_flags(path: &Path) -> libc::c_ulong {
    let Ok(c) = cstr(path) else { return 0 };
    // SAFETY: a valid C string and an out-parameter of the right type.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return 0;
    }
    let f = s.f_flag;
    let mut out = 0;
    for (st, ms) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
        (libc::ST_RDONLY, libc::MS_RDONLY),
    ] {
        if f & st != 0 {
            out |= ms;
        }
    }
    out
}

/// The private root of one run: what the forked child mounts under `root` before it pivots
/// into it.
struct RootPlan {
    root: CString,
    ops: Vec<Op>,
    /// A name for each op, for errors.
    names: Vec<String>,
}

impl RootPlan {
    fn push(&mut self, op: Op, name: String) {
        self.ops.push(op);
        self.names.push(name);
    }

    /// `root` (an empty directory) gets: the system directories, the interpreter's prefix
    /// when it lies elsewhere, a few `/etc` files, a minimal `/dev`, private tmpfs on `/tmp`
    /// and `/dev/shm`, `/proc` of the new PID namespace (its key files masked), and at
    /// [`SANDBOX_DIR`] a tmpfs of `dir_bytes` plus the program's size, owned by `owner`
    /// (uid, gid), holding `main.py` with `code`; `chown` says whether `main.py` must be
    /// given to the owner (as root; in a user namespace the creator already is the owner).
    fn new(
        root: &Path,
        python: &Path,
        code: &str,
        dir_bytes: u64,
        owner: (u32, u32),
        chown: bool,
    ) -> Result<Self, SandboxError> {
        use std::os::unix::fs::FileTypeExt;
        let at = |p: &str| root.join(p.trim_start_matches('/'));
        let mut plan = RootPlan {
            root: cstr(root)?,
            ops: Vec::new(),
            names: Vec::new(),
        };
        let ro_base = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
        plan.push(
            Op::Tmpfs {
                dst: cstr(root)?,
                opts: cstr("size=1m,mode=755")?,
                flags: libc::MS_NOSUID | libc::MS_NODEV,
            },
            "mount the private root (tmpfs)".into(),
        );
        let mut bound: Vec<PathBuf> = Vec::new();
        for d in SYSTEM_DIRS {
            let Ok(m) = std::fs::symlink_metadata(d) else {
                continue;
            };
            if m.file_type().is_symlink() {
                let target = std::fs::read_link(d)?;
                plan.push(
                    Op::Symlink {
                        target: cstr(&target)?,
                        link: cstr(at(d))?,
                    },
                    format!("link {d} -> {}", target.display()),
                );
            } else if m.is_dir() {
                plan.push(Op::Mkdir(cstr(at(d))?), format!("mkdir {d}"));
                plan.push(
                    Op::Bind {
                        src: cstr(d)?,
                        dst: cstr(at(d))?,
                        flags: ro_base | locked_flags(Path::new(d)),
                    },
                    format!("bind-mount {d} read-only"),
                );
                bound.push(PathBuf::from(d));
            }
        }
        // the interpreter's prefix (`<prefix>/bin/python3`) when outside the system dirs: of
        // the path as configured (a virtual environment) and of the file it resolves to
        let under_bound = |p: &Path| {
            bound
                .iter()
                .any(|b| p.starts_with(b) || b.canonicalize().is_ok_and(|b| p.starts_with(b)))
        };
        let bins = [
            python.parent().and_then(|d| d.canonicalize().ok()),
            python
                .canonicalize()
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf)),
        ];
        let mut prefixes: Vec<PathBuf> = Vec::new();
        for bin in bins.into_iter().flatten() {
            if under_bound(&bin) {
                continue;
            }
            if let Some(prefix) = bin.parent() {
                if prefix.parent().is_some() && !prefixes.iter().any(|q| prefix.starts_with(q)) {
                    prefixes.push(prefix.to_path_buf());
                }
            }
        }
        for prefix in prefixes {
            let mut dirs: Vec<&Path> = prefix
                .ancestors()
                .filter(|a| a.parent().is_some())
                .collect();
            dirs.reverse();
            for d in dirs {
                plan.push(
                    Op::Mkdir(cstr(at(&d.to_string_lossy()))?),
                    format!("mkdir {}", d.display()),
                );
            }
            plan.push(
                Op::Bind {
                    src: cstr(&prefix)?,
                    dst: cstr(at(&prefix.to_string_lossy()))?,
                    flags: ro_base | locked_flags(&prefix),
                },
                format!(
                    "bind-mount the interpreter's {} read-only",
                    prefix.display()
                ),
            );
        }
        plan.push(Op::Mkdir(cstr(at("/etc"))?), "mkdir /etc".into());
        for f in ETC_FILES {
            let Ok(m) = std::fs::symlink_metadata(f) else {
                continue;
            };
            if m.file_type().is_symlink() {
                let target = std::fs::read_link(f)?;
                plan.push(
                    Op::Symlink {
                        target: cstr(&target)?,
                        link: cstr(at(f))?,
                    },
                    format!("link {f}"),
                );
            } else if m.is_file() {
                plan.push(Op::Touch(cstr(at(f))?), format!("create {f}"));
                plan.push(
                    Op::Bind {
                        src: cstr(f)?,
                        dst: cstr(at(f))?,
                        flags: ro_base | libc::MS_NOEXEC | locked_flags(Path::new(f)),
                    },
                    format!("bind-mount {f} read-only"),
                );
            }
        }
        plan.push(Op::Mkdir(cstr(at("/dev"))?), "mkdir /dev".into());
        plan.push(
            Op::Tmpfs {
                dst: cstr(at("/dev"))?,
                opts: cstr("size=64k,mode=755")?,
                flags: libc::MS_NOSUID | libc::MS_NOEXEC,
            },
            "mount /dev (tmpfs)".into(),
        );
        for n in DEV_NODES {
            let src = Path::new("/dev").join(n);
            if !std::fs::metadata(&src).is_ok_and(|m| m.file_type().is_char_device()) {
                continue;
            }
            let dst = at(&format!("/dev/{n}"));
            plan.push(Op::Touch(cstr(&dst)?), format!("create /dev/{n}"));
            plan.push(
                Op::Bind {
                    src: cstr(&src)?,
                    dst: cstr(&dst)?,
                    flags: libc::MS_NOSUID | libc::MS_NOEXEC | locked_flags(&src),
                },
                format!("bind-mount /dev/{n}"),
            );
        }
        for (target, link) in [
            ("/proc/self/fd", "/dev/fd"),
            ("/proc/self/fd/0", "/dev/stdin"),
            ("/proc/self/fd/1", "/dev/stdout"),
            ("/proc/self/fd/2", "/dev/stderr"),
        ] {
            plan.push(
                Op::Symlink {
                    target: cstr(target)?,
                    link: cstr(at(link))?,
                },
                format!("link {link}"),
            );
        }
        for d in ["/dev/shm", "/tmp"] {
            plan.push(Op::Mkdir(cstr(at(d))?), format!("mkdir {d}"));
            plan.push(
                Op::Tmpfs {
                    dst: cstr(at(d))?,
                    opts: cstr(format!(
                        "size={TMPFS_BYTES},nr_inodes={SANDBOX_DIR_INODES},mode=1777"
                    ))?,
                    flags: libc::MS_NOSUID | libc::MS_NODEV,
                },
                format!("mount {d} (tmpfs)"),
            );
        }
        plan.push(
            Op::RemountRo(cstr(at("/dev"))?),
            "remount /dev read-only".into(),
        );
        plan.push(Op::Mkdir(cstr(at("/proc"))?), "mkdir /proc".into());
        plan.push(Op::Proc(cstr(at("/proc"))?), "mount /proc".into());
        for f in PROC_MASKED {
            plan.push(
                Op::Mask {
                    src: cstr(at("/dev/null"))?,
                    dst: cstr(at(f))?,
                },
                format!("mask {f}"),
            );
        }
        plan.push(
            Op::Mkdir(cstr(at(SANDBOX_DIR))?),
            format!("mkdir {SANDBOX_DIR}"),
        );
        // the program's writable directory: a tmpfs of its own, so what it writes is bounded
        // and never reaches the host's disk
        let page = 4096u64;
        let size = dir_bytes
            .saturating_add(code.len() as u64)
            .saturating_add(2 * page - 1)
            / page
            * page;
        plan.push(
            Op::Tmpfs {
                dst: cstr(at(SANDBOX_DIR))?,
                opts: cstr(format!(
                    "size={size},nr_inodes={SANDBOX_DIR_INODES},mode=700,uid={},gid={}",
                    owner.0, owner.1
                ))?,
                flags: libc::MS_NOSUID | libc::MS_NODEV,
            },
            format!("mount {SANDBOX_DIR} (tmpfs of {size} bytes)"),
        );
        plan.push(
            Op::WriteFile {
                path: cstr(at(&format!("{SANDBOX_DIR}/main.py")))?,
                data: code.as_bytes().to_vec(),
                owner: chown.then_some(owner.0),
            },
            format!("write {SANDBOX_DIR}/main.py"),
        );
        if plan.ops.len() >= STEP_FIXED as usize {
            return Err(SandboxError::Setup(
                "too many mounts in the private root".into(),
            ));
        }
        Ok(plan)
    }

    /// Runs the ops, then pivots into the root, detaches the old one, remounts the new `/`
    /// read-only and enters [`SANDBOX_DIR`]. In the forked child: system calls only.
    /// On failure returns the failed step (an op index or a `STEP_*`).
    unsafe fn enter(&self, dot: &CString, slash: &CString, sandbox: &CString) -> Result<(), u8> {
        let null: *const libc::c_char = std::ptr::null();
        let nodata: *const libc::c_void = std::ptr::null();
        if libc::mount(
            null,
            slash.as_ptr(),
            null,
            libc::MS_REC | libc::MS_PRIVATE,
            nodata,
        ) != 0
        {
            return Err(STEP_PRIVATE);
        }
        for (i, op) in self.ops.iter().enumerate() {
            let ok = match op {
                Op::Mkdir(p) => {
                    libc::mkdir(p.as_ptr(), 0o755) == 0 || *libc::__errno_location() == libc::EEXIST
                }
                Op::Touch(p) => {
                    let fd = libc::open(
                        p.as_ptr(),
                        libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC,
                        0o644,
                    );
                    fd >= 0 && libc::close(fd) == 0
                }
                Op::Symlink { target, link } => libc::symlink(target.as_ptr(), link.as_ptr()) == 0,
                Op::Bind { src, dst, flags } => {
                    libc::mount(
                        src.as_ptr(),
                        dst.as_ptr(),
                        null,
                        libc::MS_BIND | libc::MS_REC,
                        nodata,
                    ) == 0
                        && libc::mount(
                            null,
                            dst.as_ptr(),
                            null,
                            libc::MS_REMOUNT | libc::MS_BIND | flags,
                            nodata,
                        ) == 0
                }
                Op::Tmpfs { dst, opts, flags } => {
                    let t = c"tmpfs".as_ptr();
                    libc::mount(
                        t,
                        dst.as_ptr(),
                        t,
                        *flags,
                        opts.as_ptr() as *const libc::c_void,
                    ) == 0
                }
                Op::RemountRo(p) => {
                    libc::mount(
                        null,
                        p.as_ptr(),
                        null,
                        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID,
                        nodata,
                    ) == 0
                }
                Op::WriteFile { path, data, owner } => write_new_file(path, data, *owner),
                Op::Mask { src, dst } => {
                    let mut st: libc::stat = std::mem::zeroed();
                    libc::stat(dst.as_ptr(), &mut st) != 0
                        || libc::mount(src.as_ptr(), dst.as_ptr(), null, libc::MS_BIND, nodata) == 0
                }
                Op::Proc(p) => {
                    let proc_ = c"proc".as_ptr();
                    // best effort: a kernel that refuses a new procfs (e.g. a container whose
                    // /proc is partly covered) leaves /proc empty, which Python does not need
                    libc::mount(
                        proc_,
                        p.as_ptr(),
                        proc_,
                        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                        nodata,
                    );
                    true
                }
            };
            if !ok {
                return Err(i as u8);
            }
        }
        if libc::chdir(self.root.as_ptr()) != 0
            || libc::syscall(libc::SYS_pivot_root, dot.as_ptr(), dot.as_ptr()) != 0
            || libc::umount2(dot.as_ptr(), libc::MNT_DETACH) != 0
            || libc::chdir(slash.as_ptr()) != 0
        {
            return Err(STEP_PIVOT);
        }
        let ro =
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
        if libc::mount(null, slash.as_ptr(), null, ro, nodata) != 0 {
            return Err(STEP_ROOT_RO);
        }
        if libc::chdir(sandbox.as_ptr()) != 0 {
            return Err(STEP_CHDIR);
        }
        Ok(())
    }
}

// Set-up steps outside the private root's ops (reported through the step pipe).
const STEP_FIXED: u8 = 200;
const STEP_SETSID: u8 = 200;
const STEP_UNSHARE: u8 = 201;
const STEP_ID_MAPS: u8 = 202;
const STEP_FORK: u8 = 203;
const STEP_PRIVATE: u8 = 204;
const STEP_PIVOT: u8 = 205;
const STEP_ROOT_RO: u8 = 206;
const STEP_CHDIR: u8 = 207;
const STEP_LIMITS: u8 = 208;
const STEP_CREDENTIALS: u8 = 209;
const STEP_PRCTL: u8 = 210;
const STEP_FDS: u8 = 211;
const STEP_SECCOMP: u8 = 212;
const STEP_IPC_LIMITS: u8 = 213;

fn step_name(step: u8, plan: Option<&RootPlan>) -> String {
    match step {
        STEP_SETSID => "setsid".into(),
        STEP_UNSHARE => "unshare (new mount, PID, IPC, network, UTS namespaces)".into(),
        STEP_ID_MAPS => "write the user namespace's uid/gid maps".into(),
        STEP_FORK => "fork".into(),
        STEP_PRIVATE => "make the mounts private".into(),
        STEP_PIVOT => "pivot_root into the private root".into(),
        STEP_ROOT_RO => "remount the private root read-only".into(),
        STEP_CHDIR => format!("chdir {SANDBOX_DIR}"),
        STEP_LIMITS => "setrlimit".into(),
        STEP_CREDENTIALS => "switch to the sandbox uid".into(),
        STEP_PRCTL => "prctl (no_new_privs, parent-death signal)".into(),
        STEP_FDS => "close inherited descriptors".into(),
        STEP_SECCOMP => "install the system call filter (seccomp)".into(),
        STEP_IPC_LIMITS => {
            "set the IPC namespace's limits (/proc/sys/kernel/shm*, msg*, sem)".into()
        }
        i => plan
            .and_then(|p| p.names.get(i as usize).cloned())
            .unwrap_or_else(|| format!("step {i}")),
    }
}

/// Reports a failed set-up step on the step pipe, then the error for std to report.
unsafe fn fail(step_fd: libc::c_int, step: u8) -> std::io::Error {
    let e = std::io::Error::last_os_error();
    libc::write(step_fd, &step as *const u8 as *const libc::c_void, 1);
    e
}

/// Marks every descriptor from 3 up close-on-exec (so the program starts with only its
/// stdin, stdout and stderr, while std's exec-error pipe still works until the exec).
#[allow(clippy::unnecessary_cast)] // `rlim_t` is not u64 on every target
unsafe fn cloexec_from_3() -> bool {
    if libc::syscall(
        libc::SYS_close_range,
        3u32,
        u32::MAX,
        libc::CLOSE_RANGE_CLOEXEC,
    ) == 0
    {
        return true;
    }
    // kernels before 5.11: every descriptor up to the limit
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
        return false;
    }
    let top = (lim.rlim_cur as u64).min(1 << 20) as libc::c_int;
    for fd in 3..top {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
    }
    true
}

/// Closes every descriptor except `keep` (a supervisor process that never execs).
unsafe fn close_all_but(keep: libc::c_int) {
    let close = |lo: libc::c_int, hi: libc::c_int| {
        if lo > hi {
            return;
        }
        if libc::syscall(libc::SYS_close_range, lo as u32, hi as u32, 0u32) != 0 {
            for fd in lo..=hi.min(1 << 20) {
                libc::close(fd);
            }
        }
    };
    close(0, keep - 1);
    close(keep + 1, libc::c_int::MAX);
}

/// `fork(2)` as the bare system call, for forks inside the forked child: glibc's `fork()`
/// also runs the `pthread_atfork` handlers that libraries register (BLAS, GPU drivers),
/// which are not async-signal-safe.
unsafe fn raw_fork() -> libc::pid_t {
    libc::syscall(
        libc::SYS_clone,
        libc::SIGCHLD as libc::c_ulong,
        0usize,
        0usize,
        0usize,
        0usize,
    ) as libc::pid_t
}

/// Milliseconds of `CLOCK_MONOTONIC` (async-signal-safe).
#[allow(clippy::unnecessary_cast)] // `time_t` and `c_long` are not i64 on every target
unsafe fn now_ms() -> i64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t);
    t.tv_sec as i64 * 1000 + t.tv_nsec as i64 / 1_000_000
}

/// A record on the status pipe: `S` + the program's wait status (from the namespace's
/// init), or `T` (the wall-clock limit passed; from the supervisor).
unsafe fn record(fd: libc::c_int, tag: u8, value: i32) {
    let mut b = [0u8; 5];
    b[0] = tag;
    b[1..].copy_from_slice(&value.to_ne_bytes());
    libc::write(fd, b.as_ptr() as *const libc::c_void, 5);
}

/// Waits for `pid` (a child) until `deadline_ms` (`CLOCK_MONOTONIC`); past it, records `T`,
/// kills it and reaps it. System calls only.
unsafe fn supervise(pid: libc::pid_t, deadline_ms: i64, status_fd: libc::c_int) {
    let mut st = 0;
    let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as libc::c_int;
    loop {
        let r = libc::waitpid(pid, &mut st, libc::WNOHANG);
        if r == pid || (r < 0 && *libc::__errno_location() != libc::EINTR) {
            break;
        }
        let left = deadline_ms - now_ms();
        if left <= 0 {
            record(status_fd, b'T', 0);
            libc::kill(pid, libc::SIGKILL);
            while libc::waitpid(pid, &mut st, 0) < 0 && *libc::__errno_location() == libc::EINTR {}
            break;
        }
        if pidfd >= 0 {
            let mut p = libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            };
            libc::poll(&mut p, 1, left.min(1000) as libc::c_int);
        } else {
            let t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 2_000_000,
            };
            libc::nanosleep(&t, std::ptr::null_mut());
        }
    }
}

/// A close-on-exec pipe (read end, write end).
fn pipe() -> Result<(std::fs::File, std::fs::File), SandboxError> {
    use std::os::unix::io::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: an out-array of two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: fresh descriptors owned from here on.
    Ok(unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    })
}

/// What is in a non-blocking pipe now.
fn drain(mut f: &std::fs::File) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 256];
    while let Ok(n) = f.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    out
}

/// Runs `code` (a Python program) with `stdin` in the sandbox (see the module docs).
/// `Err` only for failures of the sandbox itself (set-up, a missing interpreter, isolation
/// that is unavailable and not allowed to be skipped), never for the program's own.
pub fn run_python(
    code: &str,
    stdin: &str,
    cfg: &SandboxConfig,
) -> Result<RunOutcome, SandboxError> {
    use std::os::unix::io::AsRawFd;
    let mode = isolation();
    if mode == Isolation::None && !cfg.allow_unsandboxed {
        return Err(SandboxError::NoIsolation);
    }
    let isolated = mode != Isolation::None;
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    // both held until this function returns, i.e. after every process of the run is gone
    let _slot = RunSlot::acquire();
    let uid_lock = if root {
        Some(UidLock::acquire()?)
    } else {
        None
    };
    let uid = uid_lock.as_ref().map(|l| l.uid);

    // Isolated, the host directory holds only the private root's mount point: the program's
    // directory is a tmpfs in its mount namespace. Unsandboxed, the program runs in `work`.
    let dir = tempfile::Builder::new().prefix("rlvr-sandbox-").tempdir()?;
    let work = dir.path().join("work");
    let plan = if isolated {
        let new_root = dir.path().join("root");
        std::fs::create_dir(&new_root)?;
        // SAFETY: getuid/getgid have no preconditions.
        let owner = uid.map_or_else(|| unsafe { (libc::getuid(), libc::getgid()) }, |u| (u, u));
        Some(std::sync::Arc::new(RootPlan::new(
            &new_root,
            &cfg.python,
            code,
            cfg.limits.max_dir_bytes,
            owner,
            uid.is_some(),
        )?))
    } else {
        std::fs::create_dir(&work)?;
        std::fs::write(work.join("main.py"), code)?;
        if let Some(uid) = uid {
            use std::os::unix::fs::PermissionsExt;
            // the program's uid owns its directory; the run directory itself stays root's,
            // but must be traversable when the program runs at its host path
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711))?;
            for p in [work.clone(), work.join("main.py")] {
                std::os::unix::fs::chown(&p, Some(uid), Some(uid))?;
            }
        }
        None
    };
    // The system call filter; not root, SysV IPC is refused with it (the IPC namespace's
    // limits can be written only by its owner's root, which a mapped caller uid is not).
    let filter = seccomp::Filter::new(mode == Isolation::UserNs).map_err(SandboxError::Setup)?;
    let ipc_limits = IpcLimits::new()?;
    let set_ipc_limits = mode == Isolation::Root;
    let home = if isolated {
        PathBuf::from(SANDBOX_DIR)
    } else {
        work.clone()
    };

    // Everything the children need, prepared before the fork (no allocation after it).
    let maps = IdMaps::new();
    let c_dot = cstr(".")?;
    let c_slash = cstr("/")?;
    let c_sandbox = cstr(SANDBOX_DIR)?;
    let (step_r, step_w) = pipe()?;
    let (status_r, status_w) = pipe()?;
    let step_fd = step_w.as_raw_fd();
    let status_fd = status_w.as_raw_fd();
    let lim = cfg.limits.clone();
    let parent_pid = std::process::id() as libc::pid_t;
    // SAFETY: no preconditions.
    let deadline_ms = unsafe { now_ms() } + lim.wall.as_millis().min(i64::MAX as u128 / 2) as i64;
    let unshare_flags = NAMESPACES
        | if mode == Isolation::UserNs {
            libc::CLONE_NEWUSER
        } else {
            0
        };

    let mut cmd = Command::new(&cfg.python);
    cmd.arg("-I")
        .arg("-B")
        .arg("main.py")
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &home)
        .env("LANG", "C.UTF-8")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !isolated {
        cmd.current_dir(&work);
    }
    // The program's own set-up: limits, uid, no new privileges, descriptors.
    let program_setup = move || -> Result<(), std::io::Error> {
        // SAFETY: runs in the forked child before exec (system calls on prepared data).
        unsafe {
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
                || set(libc::RLIMIT_CORE, 0) != 0
                || set(libc::RLIMIT_NPROC, lim.max_processes) != 0
            {
                return Err(fail(step_fd, STEP_LIMITS));
            }
            if let Some(uid) = uid {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setresgid(uid, uid, uid) != 0
                    || libc::setresuid(uid, uid, uid) != 0
                {
                    return Err(fail(step_fd, STEP_CREDENTIALS));
                }
            }
            // (the parent-death signal is cleared by a change of credentials: set it after)
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0
            {
                return Err(fail(step_fd, STEP_PRCTL));
            }
            if !cloexec_from_3() {
                return Err(fail(step_fd, STEP_FDS));
            }
            // the open-file limit late: descriptors above it stay usable until the exec
            if set(libc::RLIMIT_NOFILE, 64) != 0 {
                return Err(fail(step_fd, STEP_LIMITS));
            }
            // the program gets the default SIGPIPE disposition (its supervisor and init
            // ignore it)
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            // the system call filter last, right before the exec
            if !filter.install() {
                return Err(fail(step_fd, STEP_SECCOMP));
            }
            Ok(())
        }
    };
    let plan_child = plan.clone();
    // SAFETY: the closure runs in the forked child before exec and only makes raw system
    // calls on data prepared above (no allocation, no locks). The supervisor and the
    // namespace's init it forks never return from it: they `_exit`.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(fail(step_fd, STEP_SETSID));
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(fail(step_fd, STEP_PRCTL));
            }
            if libc::getppid() != parent_pid {
                libc::_exit(1); // the caller is already gone
            }
            let Some(plan) = plan_child.as_deref() else {
                return program_setup();
            };
            // the supervisor and the namespace's init write to the caller's pipes: a caller
            // gone early must not kill them by SIGPIPE before they clean up
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            // the supervisor: new namespaces, then the namespace's init as its child
            if libc::unshare(unshare_flags) != 0 {
                return Err(fail(step_fd, STEP_UNSHARE));
            }
            if unshare_flags & libc::CLONE_NEWUSER != 0 && !maps.write() {
                return Err(fail(step_fd, STEP_ID_MAPS));
            }
            let init = raw_fork();
            if init < 0 {
                return Err(fail(step_fd, STEP_FORK));
            }
            if init > 0 {
                close_all_but(status_fd);
                supervise(init, deadline_ms, status_fd);
                libc::_exit(0);
            }
            // init (pid 1 of the new PID namespace): builds the private root, forks the
            // program, reports its status; its exit kills whatever the program left
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            libc::sethostname(c"sandbox".as_ptr(), 7); // the host's name stays the host's
                                                       // the IPC namespace's limits, through the host's /proc (else the new one)
            let ipc_set = !set_ipc_limits || ipc_limits.write();
            if let Err(step) = plan.enter(&c_dot, &c_slash, &c_sandbox) {
                return Err(fail(step_fd, step));
            }
            if !ipc_set && !ipc_limits.write() {
                return Err(fail(step_fd, STEP_IPC_LIMITS));
            }
            let program = raw_fork();
            if program < 0 {
                return Err(fail(step_fd, STEP_FORK));
            }
            if program > 0 {
                close_all_but(status_fd);
                let mut st = 0;
                loop {
                    let r = libc::waitpid(-1, &mut st, 0);
                    if r == program {
                        record(status_fd, b'S', st);
                        break;
                    }
                    if r < 0 && *libc::__errno_location() != libc::EINTR {
                        break;
                    }
                }
                libc::_exit(0);
            }
            program_setup()
        });
    }

    let start = Instant::now();
    let spawned = cmd.spawn();
    drop(step_w);
    drop(status_w);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            let step = drain(&step_r);
            return Err(match step.first() {
                Some(&s) => SandboxError::Setup(format!(
                    "set-up step `{}` failed: {e}",
                    step_name(s, plan.as_deref())
                )),
                None if e.kind() == std::io::ErrorKind::NotFound => SandboxError::Setup(format!(
                    "cannot run the interpreter {}: {e}",
                    cfg.python.display()
                )),
                None => SandboxError::Io(e),
            });
        }
    };
    let pgid = child.id() as libc::pid_t;
    let stdin_pipe = child.stdin.take();
    let input = stdin.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(p) = stdin_pipe {
            feed_stdin(p, &input);
        }
    });
    let cap = cfg.limits.max_output_bytes;
    let out_reader = spawn_reader(child.stdout.take(), cap);
    let err_reader = spawn_reader(child.stderr.take(), cap);

    // isolated: the supervisor enforces the wall-clock limit; this deadline only catches a
    // supervisor that does not end
    let grace = if isolated {
        Duration::from_secs(3)
    } else {
        Duration::ZERO
    };
    let deadline = start + cfg.limits.wall + grace;
    let exited = loop {
        if exited_unreaped(pgid) {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let wall = start.elapsed();
    // The whole process group (the child is not reaped yet, so its id is still its group's),
    // and without namespaces anything else the uid still runs (isolated, the supervisor's
    // exit already means every process of the run is gone).
    // SAFETY: plain system calls.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
    // (isolated, after a supervisor that did not end, its namespace dies asynchronously:
    // kill the uid too before it is released)
    if let (Some(uid), true) = (uid, !isolated || !exited) {
        kill_uid(uid);
    }
    if !exited {
        let _ = child.kill();
    }
    let status = child.wait()?;
    let status = exited.then_some(status);
    let _ = writer.join();
    let (stdout, t1) = out_reader.join().unwrap_or_default();
    let (stderr, t2) = err_reader.join().unwrap_or_default();
    let termination = match (status, isolated) {
        (None, _) => Termination::WallTimeout,
        (Some(s), false) => from_exit_status(s),
        (Some(s), true) => {
            let records = drain(&status_r);
            let mut t = None;
            for r in records.chunks_exact(5) {
                let v = i32::from_ne_bytes([r[1], r[2], r[3], r[4]]);
                match r[0] {
                    b'T' => t = Some(Termination::WallTimeout),
                    b'S' if t.is_none() => t = Some(from_wait_status(v)),
                    _ => {}
                }
            }
            t.ok_or_else(|| {
                SandboxError::Setup(format!(
                    "the sandbox's supervisor ended ({s}) without the program's status"
                ))
            })?
        }
    };
    drop(dir);
    drop(uid_lock);
    Ok(RunOutcome {
        termination,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        wall,
        truncated: t1 || t2,
        isolated,
        uid,
    })
}

/// Writes `input` to a program's stdin, safely whatever this process's SIGPIPE disposition
/// is (a caller may have restored `SIG_DFL`): SIGPIPE is blocked in the calling thread, so a
/// write to a pipe the program no longer reads fails with `EPIPE` instead of killing the
/// process, and the SIGPIPE it left pending is consumed before the mask is restored. A
/// program that exits without reading all of its input (`EPIPE`) is judged on its output
/// like any other. Closes the pipe (EOF for the program) when done.
fn feed_stdin(mut pipe: std::process::ChildStdin, input: &[u8]) {
    // SAFETY: sigset and mask calls on local sets of the calling thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        let blocked = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) == 0;
        // EPIPE: the program stopped reading (it exited, or closed its stdin)
        let _ = pipe.write_all(input);
        drop(pipe);
        if blocked {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            while libc::sigtimedwait(&set, std::ptr::null_mut(), &zero) == libc::SIGPIPE {}
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
    }
}

/// Whether child `pid` has exited, leaving it unreaped (`waitid` with `WNOWAIT`).
fn exited_unreaped(pid: libc::pid_t) -> bool {
    // SAFETY: an out-parameter of the right type.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) == 0
            && info.si_pid() != 0
    }
}

fn from_exit_status(s: std::process::ExitStatus) -> Termination {
    match (s.code(), s.signal()) {
        (Some(c), _) => Termination::Exited(c),
        (None, Some(sig)) => Termination::Signaled(sig),
        (None, None) => Termination::Signaled(0),
    }
}

fn from_wait_status(st: i32) -> Termination {
    if libc::WIFEXITED(st) {
        Termination::Exited(libc::WEXITSTATUS(st))
    } else if libc::WIFSIGNALED(st) {
        Termination::Signaled(libc::WTERMSIG(st))
    } else {
        Termination::Signaled(0)
    }
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
/// reaches exactly the processes a user may signal, i.e. its own). Only for a uid this
/// process holds the lock of ([`UidLock`]).
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
