//! What the processes of a run do between the fork and the exec, with system calls only: the
//! set-up steps and their names ([`step_name`]), descriptors, raw forks, the status pipe and
//! the supervisor's wall-clock wait ([`supervise`]).

use super::root::{RootPlan, SANDBOX_DIR};
use super::steps::{
    STEP_CGROUP, STEP_CHDIR, STEP_CREDENTIALS, STEP_FDS, STEP_FORK, STEP_ID_MAPS, STEP_IPC_LIMITS,
    STEP_LIMITS, STEP_PIVOT, STEP_PRCTL, STEP_PRIVATE, STEP_ROOT_RO, STEP_SECCOMP, STEP_SETSID,
    STEP_UNSHARE,
};

pub(super) fn step_name(step: u8, plan: Option<&RootPlan>) -> String {
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
        STEP_CGROUP => "join the run's memory cgroup".into(),
        i => plan
            .and_then(|p| p.names.get(i as usize).cloned())
            .unwrap_or_else(|| format!("step {i}")),
    }
}

/// Reports a failed set-up step on the step pipe, then the error for std to report.
pub(super) unsafe fn fail(step_fd: libc::c_int, step: u8) -> std::io::Error {
    let e = std::io::Error::last_os_error();
    libc::write(step_fd, &step as *const u8 as *const libc::c_void, 1);
    e
}

/// Marks every descriptor from 3 up close-on-exec (so the program starts with only its
/// stdin, stdout and stderr, while std's exec-error pipe still works until the exec).
#[allow(clippy::unnecessary_cast)] // `rlim_t` is not u64 on every target
pub(super) unsafe fn cloexec_from_3() -> bool {
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
pub(super) unsafe fn close_all_but(keep: libc::c_int) {
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
pub(super) unsafe fn raw_fork() -> libc::pid_t {
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
pub(super) unsafe fn now_ms() -> i64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t);
    t.tv_sec as i64 * 1000 + t.tv_nsec as i64 / 1_000_000
}

/// A record on the status pipe: `S` + the program's wait status (from the namespace's
/// init), or `T` (the wall-clock limit passed; from the supervisor).
pub(super) unsafe fn record(fd: libc::c_int, tag: u8, value: i32) {
    let mut b = [0u8; 5];
    b[0] = tag;
    b[1..].copy_from_slice(&value.to_ne_bytes());
    libc::write(fd, b.as_ptr() as *const libc::c_void, 5);
}

/// Waits for `pid` (a child) until `deadline_ms` (`CLOCK_MONOTONIC`); past it, records `T`,
/// kills it and reaps it. System calls only.
pub(super) unsafe fn supervise(pid: libc::pid_t, deadline_ms: i64, status_fd: libc::c_int) {
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
