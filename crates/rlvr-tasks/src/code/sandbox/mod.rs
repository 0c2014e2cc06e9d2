//! The sandboxed Python runner, [`run_python`]: its limits, configuration and outcome, and the
//! caller's side of a run (what the sandbox enforces is in the module docs of
//! [`crate::code`]). The parts: the probe of what isolation this process gets, run slots and
//! sandbox uids ([`isolation`](mod@isolation)); the private root ([`root`]); the run's memory
//! cgroup ([`cgroup`]); what the forked processes do between the fork and the exec
//! ([`child`]) and the set-up steps they report ([`steps`]); the system call filter
//! ([`seccomp`]).

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

mod cgroup;
mod child;
mod isolation;
mod root;
mod seccomp;
mod steps;

pub use cgroup::memory_cgroup;
use cgroup::MemoryGroup;
use child::{cloexec_from_3, close_all_but, fail, now_ms, raw_fork, record, step_name, supervise};
use isolation::{isolation, IdMaps, Isolation, RunSlot, UidLock, NAMESPACES};
pub use isolation::{
    isolation_available, MAX_CONCURRENT_SANDBOXES, SANDBOX_UIDS, SANDBOX_UID_BASE,
};
use root::{IpcLimits, RootPlan};
pub use root::{
    SANDBOX_DIR, SANDBOX_DIR_INODES, SYSV_MSG_BYTES, SYSV_SHM_BYTES, SYSV_SHM_SEGMENTS, TMPFS_BYTES,
};
use steps::{
    STEP_CGROUP, STEP_CREDENTIALS, STEP_FDS, STEP_FORK, STEP_ID_MAPS, STEP_IPC_LIMITS, STEP_LIMITS,
    STEP_PRCTL, STEP_SECCOMP, STEP_SETSID, STEP_UNSHARE,
};

/// Resource limits of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub wall: Duration,
    /// `RLIMIT_CPU`, seconds.
    pub cpu_secs: u64,
    /// `RLIMIT_AS` of each process, bytes; with a memory cgroup ([`memory_cgroup`]) also the
    /// run's memory of every kind, all processes together, beyond what its bounded file
    /// systems hold ([`Limits::run_memory_bytes`]).
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

impl Limits {
    /// The memory cgroup's limit for a run of a `code_bytes` program: the host memory of every
    /// kind its processes may hold together, `memory_bytes + max_dir_bytes + code_bytes +
    /// 2 TMPFS_BYTES + SYSV_SHM_BYTES + SYSV_MSG_BYTES` (the address-space limit, the writable
    /// directory with `main.py`, `/tmp` and `/dev/shm`, SysV shared memory and message
    /// queues: [`TMPFS_BYTES`], [`SYSV_SHM_BYTES`], [`SYSV_MSG_BYTES`]). With the defaults
    /// 577 MiB plus the program.
    pub fn run_memory_bytes(&self, code_bytes: usize) -> u64 {
        [
            self.max_dir_bytes,
            code_bytes as u64,
            2 * TMPFS_BYTES,
            SYSV_SHM_BYTES,
            SYSV_MSG_BYTES,
        ]
        .iter()
        .fold(self.memory_bytes, |a, b| a.saturating_add(*b))
    }
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
/// most 65 MiB plus `main.py`. With a memory cgroup ([`memory_cgroup`], root) the whole run,
/// every process and every kind of page together, holds at most
/// [`Limits::run_memory_bytes`]; without one, `RLIMIT_AS` is per process.
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
    /// The limit of the run's memory cgroup, bytes ([`Limits::run_memory_bytes`]; None where
    /// the run had no cgroup, see [`memory_cgroup`]).
    pub memory_bound: Option<u64>,
    /// The most memory the run's cgroup held at once, bytes (None without a cgroup, or where
    /// the kernel does not say).
    pub memory_peak: Option<u64>,
    /// The cgroup's OOM killer killed one of the run's processes.
    pub out_of_memory: bool,
}

impl RunOutcome {
    pub fn success(&self) -> bool {
        self.termination == Termination::Exited(0)
    }

    /// A short reason for a failed run: `wall-clock limit`, `CPU time limit`,
    /// `memory limit`, `exit code N: <last stderr line>`, `signal N`.
    pub fn reason(&self) -> String {
        if self.out_of_memory && self.termination != Termination::WallTimeout {
            return "memory limit".into();
        }
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

fn cstr(s: impl AsRef<std::ffi::OsStr>) -> Result<CString, SandboxError> {
    use std::os::unix::ffi::OsStrExt;
    let s = s.as_ref();
    CString::new(s.as_bytes())
        .map_err(|_| SandboxError::Setup(format!("path {s:?} contains a NUL byte")))
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
    // as root, the run's memory cgroup where this machine offers one (held until every
    // process of the run is gone; dropping it kills what is left and removes it)
    let memory_bound = cfg.limits.run_memory_bytes(code.len());
    let group = match uid {
        Some(uid) => MemoryGroup::create(uid, memory_bound)?,
        None => None,
    };
    // the descriptor the program joins it by (the supervisor and init stay outside)
    let group_procs = group.as_ref().map(MemoryGroup::procs_fd);

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
            // into the run's memory cgroup, with all it will start (as root: before the
            // change of credentials)
            if let Some(procs) = group_procs {
                if libc::write(procs, b"0".as_ptr() as *const libc::c_void, 1) != 1 {
                    return Err(fail(step_fd, STEP_CGROUP));
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
    let out_of_memory = group.as_ref().is_some_and(MemoryGroup::out_of_memory);
    let memory_peak = group.as_ref().and_then(MemoryGroup::peak_bytes);
    let memory_bound = group.is_some().then_some(memory_bound);
    drop(dir);
    drop(group);
    drop(uid_lock);
    Ok(RunOutcome {
        termination,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        wall,
        truncated: t1 || t2,
        isolated,
        uid,
        memory_bound,
        memory_peak,
        out_of_memory,
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
