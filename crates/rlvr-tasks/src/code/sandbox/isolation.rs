//! What isolation this process gets ([`isolation_available`], probed once), the run slots of
//! a process ([`MAX_CONCURRENT_SANDBOXES`]) and the sandbox uids a run holds as root
//! ([`UidLock`]).

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::steps::write_file;
use super::SandboxError;

/// How a run is isolated (probed once per process, see [`isolation_available`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Isolation {
    /// Root: new namespaces without a user namespace; the program runs as a locked uid slot.
    Root,
    /// Not root: a new user namespace maps the caller's own uid and gid, and owns the others.
    UserNs,
    /// The kernel refuses namespaces: only
    /// [`SandboxConfig::allow_unsandboxed`](super::SandboxConfig::allow_unsandboxed) runs code.
    None,
}

/// The namespaces of an isolated run (a user namespace is added when not root).
pub(super) const NAMESPACES: libc::c_int = libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWUTS;

/// `/proc/self/{setgroups,uid_map,gid_map}` contents that map the caller's own ids in a new
/// user namespace, prepared before a fork.
pub(super) struct IdMaps {
    setgroups: CString,
    uid_map: CString,
    gid_map: CString,
    deny: CString,
    uid_line: CString,
    gid_line: CString,
}

impl IdMaps {
    pub(super) fn new() -> Self {
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
    pub(super) unsafe fn write(&self) -> bool {
        write_file(&self.setgroups, &self.deny)
            && write_file(&self.uid_map, &self.uid_line)
            && write_file(&self.gid_map, &self.gid_line)
    }
}

pub(super) fn isolation() -> Isolation {
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
/// When false, [`run_python`](super::run_python) refuses to run unless
/// [`SandboxConfig::allow_unsandboxed`](super::SandboxConfig::allow_unsandboxed).
pub fn isolation_available() -> bool {
    isolation() != Isolation::None
}

/// Most sandboxes one process runs at once; a run beyond that waits for a free slot.
pub const MAX_CONCURRENT_SANDBOXES: usize = 64;

/// One of [`MAX_CONCURRENT_SANDBOXES`] run slots of this process, held for one run.
pub(super) struct RunSlot(usize);

fn run_slots() -> &'static (Mutex<u64>, Condvar) {
    static SLOTS: OnceLock<(Mutex<u64>, Condvar)> = OnceLock::new();
    SLOTS.get_or_init(|| (Mutex::new(0), Condvar::new()))
}

impl RunSlot {
    /// Takes the lowest free slot, waiting while all [`MAX_CONCURRENT_SANDBOXES`] are taken.
    pub(super) fn acquire() -> Self {
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
pub(super) struct UidLock {
    pub(super) uid: u32,
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
    pub(super) fn acquire() -> Result<Self, SandboxError> {
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
