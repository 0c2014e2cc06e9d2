//! The private root of an isolated run ([`RootPlan`]: what the namespace's init mounts before
//! it pivots into it), the limits of the run's IPC namespace ([`IpcLimits`]), and the sizes
//! both set.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use super::steps::{write_file, STEP_CHDIR, STEP_FIXED, STEP_PIVOT, STEP_PRIVATE, STEP_ROOT_RO};
use super::{cstr, SandboxError};

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
/// Most files (inodes) the program's writable directory holds
/// ([`Limits::max_dir_bytes`](super::Limits::max_dir_bytes)).
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
pub(super) struct IpcLimits {
    files: Vec<(CString, CString)>,
}

impl IpcLimits {
    pub(super) fn new() -> Result<Self, SandboxError> {
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
    pub(super) unsafe fn write(&self) -> bool {
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
pub(super) struct RootPlan {
    root: CString,
    ops: Vec<Op>,
    /// A name for each op, for errors.
    pub(super) names: Vec<String>,
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
    pub(super) fn new(
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
    pub(super) unsafe fn enter(
        &self,
        dot: &CString,
        slash: &CString,
        sandbox: &CString,
    ) -> Result<(), u8> {
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
