//! The memory cgroup of a run ([`MemoryGroup`]): as root, where the machine has a memory
//! controller this process may use, the processes of each run live in a cgroup of their own
//! whose limit bounds every kind of page they take from the host, together: anonymous memory,
//! files in the sandbox's tmpfs mounts (`/sandbox`, `/tmp`, `/dev/shm`), SysV shared memory
//! and message queues, kernel memory (page tables, pipe and socket buffers). `RLIMIT_AS` alone
//! leaves the rest open: it is per process (N processes hold N times it) and counts only what
//! is mapped.
//!
//! Where the groups live ([`memory_cgroup`]):
//! - cgroup v1 with the `memory` controller: `rlvr-sandbox/` below this process's own memory
//!   cgroup (v1 lets a group with processes have child groups), a group per run below it;
//! - cgroup v2 offering `memory`: `rlvr-sandbox/` below the hierarchy's root as mounted here,
//!   with `memory` in the root's and its own `cgroup.subtree_control` (v2 gives controllers
//!   only to the children of groups without processes of their own, so this process's own
//!   group is usually no parent: the root is exempt from that rule);
//! - not root, a read-only or absent hierarchy, or a root group that cannot give `memory` to
//!   its children (a container whose cgroup namespace root has processes): no group, and the
//!   per-process limits, the bounded file systems and the refused memory files remain
//!   (docs/sandbox.md).
//!
//! The group of a run is `run-<uid>` (the run's locked sandbox uid, unique on the machine).
//! The program joins it right before its exec, so the group holds the program and all it
//! starts; the run's supervisor and the namespace's init stay outside. They allocate nothing,
//! but as forks of the caller they share its pages and so look as big as it to the OOM
//! killer, which would take them first; and lowering their `oom_score_adj` needs
//! `CAP_SYS_RESOURCE`, which root lacks on some machines. When the group is removed, whatever
//! is left in it is killed.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::SandboxError;

/// The directory below which each run's group is made.
const GROUP_PARENT: &str = "rlvr-sandbox";

/// The cgroup interface a hierarchy speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    /// cgroup v1, a hierarchy with the `memory` controller.
    V1,
    /// cgroup v2, the unified hierarchy.
    V2,
}

impl Version {
    fn limit_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        }
    }
    /// The swap limit's file and the value that allows no more than the memory limit.
    fn swap_file(self, limit: u64) -> (&'static str, String) {
        match self {
            // memory plus swap
            Version::V1 => ("memory.memsw.limit_in_bytes", limit.to_string()),
            // swap alone
            Version::V2 => ("memory.swap.max", "0".into()),
        }
    }
    fn peak_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.max_usage_in_bytes",
            Version::V2 => "memory.peak",
        }
    }
    /// The file whose `oom_kill N` line counts the group's OOM kills.
    fn oom_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        }
    }
}

/// One line of `/proc/self/mountinfo` that mounts a cgroup hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CgroupMount {
    /// The hierarchy's directory that is mounted (`/` unless a namespace or bind mount shows a
    /// part of it).
    root: String,
    mount_point: PathBuf,
    version: Version,
}

/// The cgroup mounts in a `/proc/self/mountinfo` text that can limit memory: v1 hierarchies
/// with the `memory` controller and v2 ones. A line is `id parent major:minor root
/// mount-point options [optional fields] - fstype source super-options`; paths escape space,
/// tab, newline and backslash as octal (`\040`).
fn cgroup_mounts(mountinfo: &str) -> Vec<CgroupMount> {
    let mut out = Vec::new();
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        if sep < 5 || fields.len() < sep + 4 {
            continue;
        }
        let version = match fields[sep + 1] {
            "cgroup2" => Version::V2,
            "cgroup" if fields[sep + 3].split(',').any(|o| o == "memory") => Version::V1,
            _ => continue,
        };
        out.push(CgroupMount {
            root: unescape(fields[3]),
            mount_point: PathBuf::from(unescape(fields[4])),
            version,
        });
    }
    out
}

/// Undoes mountinfo's octal escapes (`\040` is a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..=i + 3].iter().all(|c| (b'0'..=b'7').contains(c));
        if octal {
            let v = b[i + 1..=i + 3]
                .iter()
                .fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's group in a `/proc/self/cgroup` text: for v1 the path on the line whose
/// controllers include `memory` (`4:memory:/a/b`), for v2 the path on the `0::/a/b` line.
fn own_group(proc_cgroup: &str, version: Version) -> Option<String> {
    proc_cgroup.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let hit = match version {
            Version::V1 => controllers.split(',').any(|c| c == "memory"),
            Version::V2 => id == "0" && controllers.is_empty(),
        };
        hit.then(|| path.to_string())
    })
}

/// The directory of group `group` in a hierarchy mounted as `mount`: None when the group lies
/// outside the part of the hierarchy mounted here.
fn group_dir(mount: &CgroupMount, group: &str) -> Option<PathBuf> {
    let root = mount.root.trim_end_matches('/');
    let rest = group.strip_prefix(root)?;
    if !(rest.is_empty() || rest.starts_with('/')) || rest.split('/').any(|c| c == "..") {
        return None;
    }
    Some(mount.mount_point.join(rest.trim_start_matches('/')))
}

/// Where the runs' groups are made, found once per process.
#[derive(Debug)]
struct Parent {
    dir: PathBuf,
    version: Version,
}

fn parent() -> Result<&'static Parent, &'static str> {
    static PARENT: OnceLock<Result<Parent, String>> = OnceLock::new();
    PARENT
        .get_or_init(find_parent)
        .as_ref()
        .map_err(String::as_str)
}

fn find_parent() -> Result<Parent, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root (a memory cgroup is made only as root)".into());
    }
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("reading {p}: {e}"));
    let mounts = cgroup_mounts(&read("/proc/self/mountinfo")?);
    let proc_cgroup = read("/proc/self/cgroup")?;
    // v1's memory controller first: where it is mounted, v2 cannot have it
    if let Some(m) = mounts.iter().find(|m| m.version == Version::V1) {
        let group = own_group(&proc_cgroup, Version::V1)
            .ok_or("/proc/self/cgroup names no memory cgroup of this process")?;
        let own = group_dir(m, &group).ok_or_else(|| {
            format!(
                "this process's memory cgroup {group} lies outside its mount at {}",
                m.mount_point.display()
            )
        })?;
        let dir = own.join(GROUP_PARENT);
        make_dir(&dir)?;
        return Ok(Parent {
            dir,
            version: Version::V1,
        });
    }
    let m = mounts
        .iter()
        .find(|m| m.version == Version::V2)
        .ok_or("no cgroup hierarchy with a memory controller is mounted")?;
    let root = &m.mount_point;
    let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
    if !has_word(&controllers, "memory") {
        return Err(format!(
            "the cgroup v2 hierarchy at {} offers no memory controller",
            root.display()
        ));
    }
    enable_memory(root)?;
    let dir = root.join(GROUP_PARENT);
    make_dir(&dir)?;
    enable_memory(&dir)?;
    Ok(Parent {
        dir,
        version: Version::V2,
    })
}

fn has_word(text: &str, word: &str) -> bool {
    text.split_whitespace().any(|w| w == word)
}

/// Offers the memory controller to `dir`'s child groups (v2).
fn enable_memory(dir: &Path) -> Result<(), String> {
    let control = dir.join("cgroup.subtree_control");
    if has_word(
        &std::fs::read_to_string(&control).unwrap_or_default(),
        "memory",
    ) {
        return Ok(());
    }
    std::fs::write(&control, "+memory").map_err(|e| {
        format!(
            "cannot give the memory controller to the child groups of {} ({e}; a group \
             with processes of its own cannot)",
            dir.display()
        )
    })
}

fn make_dir(dir: &Path) -> Result<(), String> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("cannot make the cgroup {}: {e}", dir.display())),
    }
}

/// Where this process puts each sandboxed run in a memory cgroup of its own: the parent
/// directory of the runs' groups, or why there is none here (not root, no memory controller
/// this process can use; see the module docs). Found once per process (it makes the parent
/// directory).
pub fn memory_cgroup() -> Result<PathBuf, String> {
    parent().map(|p| p.dir.clone()).map_err(|e| e.to_string())
}

/// One run's memory cgroup: made with its limit before the run's first fork, joined by the
/// program before its exec (writing `0` to [`MemoryGroup::procs_fd`]), removed when dropped.
pub(super) struct MemoryGroup {
    dir: PathBuf,
    version: Version,
    procs: File,
}

impl MemoryGroup {
    /// The group `run-<uid>` with `limit` bytes of memory (and no swap beyond it), or None
    /// where this process has no memory cgroup ([`memory_cgroup`]). A group of that name left
    /// by a process that died is emptied and reused.
    pub(super) fn create(uid: u32, limit: u64) -> Result<Option<Self>, SandboxError> {
        let Ok(parent) = parent() else {
            return Ok(None);
        };
        let version = parent.version;
        let dir = parent.dir.join(format!("run-{uid}"));
        let setup = |what: &str, e: std::io::Error| {
            SandboxError::Setup(format!("memory cgroup {}: {what}: {e}", dir.display()))
        };
        let make = || match std::fs::create_dir(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(setup("make", e)),
            r => Ok(r.is_ok()),
        };
        if !make()? {
            // left by a process that died: emptied and removed, else reused
            kill_members(&dir, version);
            make()?;
        }
        if version == Version::V1 {
            // v1 refuses a memory limit above the memory+swap one (a reused group's): lift
            // that first (where there is no swap accounting the file does not exist)
            let _ = std::fs::write(dir.join(version.swap_file(limit).0), "-1");
        }
        std::fs::write(dir.join(version.limit_file()), limit.to_string())
            .map_err(|e| setup(version.limit_file(), e))?;
        let (swap, value) = version.swap_file(limit);
        match std::fs::write(dir.join(swap), value) {
            // no swap accounting on this kernel: nothing to bound there
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            r => r.map_err(|e| setup(swap, e))?,
        }
        let procs = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(dir.join("cgroup.procs"))
            .map_err(|e| setup("cgroup.procs", e))?;
        Ok(Some(MemoryGroup {
            dir,
            version,
            procs,
        }))
    }

    /// The group's `cgroup.procs`, open for writing: a process that writes `0` to it joins.
    pub(super) fn procs_fd(&self) -> libc::c_int {
        self.procs.as_raw_fd()
    }

    /// Whether the group's OOM killer killed a process (its `oom_kill` count).
    pub(super) fn out_of_memory(&self) -> bool {
        let text =
            std::fs::read_to_string(self.dir.join(self.version.oom_file())).unwrap_or_default();
        text.lines()
            .filter_map(|l| l.strip_prefix("oom_kill "))
            .any(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
    }

    /// The most memory the group held at once, in bytes (None where the kernel does not say:
    /// v2 before Linux 5.19).
    pub(super) fn peak_bytes(&self) -> Option<u64> {
        std::fs::read_to_string(self.dir.join(self.version.peak_file()))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

impl Drop for MemoryGroup {
    fn drop(&mut self) {
        kill_members(&self.dir, self.version);
    }
}

/// Kills every process left in the group at `dir` and removes it (waits up to two seconds for
/// the processes to go; a group still busy then stays, to be emptied when it is made again).
fn kill_members(dir: &Path, version: Version) {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let killed = version == Version::V2 && std::fs::write(dir.join("cgroup.kill"), "1").is_ok();
        if !killed {
            let text = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in text.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                if pid > 0 {
                    // SAFETY: a plain system call.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of a real cgroup v1 machine (the memory controller in a hierarchy of its own, a
    /// v2 hierarchy without it beside) and of a systemd machine with v2 only.
    const MOUNTINFO: &str = "\
25 30 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw
29 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:13 - cgroup cgroup rw,cpu,cpuacct
31 25 0:29 /docker/abc /sys/fs/cgroup/memory rw,relatime shared:15 - cgroup cgroup rw,memory
40 30 0:35 / /mnt/with\\040space rw - cgroup cgroup rw,pids
";

    #[test]
    fn mounts_that_can_limit_memory_are_found_with_their_roots() {
        let m = cgroup_mounts(MOUNTINFO);
        assert_eq!(
            m,
            vec![
                CgroupMount {
                    root: "/".into(),
                    mount_point: "/sys/fs/cgroup/unified".into(),
                    version: Version::V2
                },
                CgroupMount {
                    root: "/docker/abc".into(),
                    mount_point: "/sys/fs/cgroup/memory".into(),
                    version: Version::V1
                },
            ]
        );
        let v2 = "30 1 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            cgroup_mounts(v2)[0].mount_point,
            Path::new("/sys/fs/cgroup")
        );
        // truncated or foreign lines are skipped
        assert!(cgroup_mounts("1 2 3\n- cgroup2\n31 25 0:29 / /x rw - cgroup cgroup\n").is_empty());
    }

    #[test]
    fn octal_escapes_are_undone() {
        assert_eq!(unescape(r"/mnt/with\040space"), "/mnt/with space");
        assert_eq!(unescape(r"a\134b\011c"), "a\\b\tc");
        // not an escape: kept as it is
        assert_eq!(unescape(r"a\09"), r"a\09");
        assert_eq!(unescape(r"end\04"), r"end\04");
    }

    #[test]
    fn own_group_is_read_per_version() {
        let text =
            "9:name=systemd:/\n4:memory:/process_api/391a\n2:cpu,cpuacct:/\n0::/user.slice/x\n";
        assert_eq!(
            own_group(text, Version::V1).as_deref(),
            Some("/process_api/391a")
        );
        assert_eq!(
            own_group(text, Version::V2).as_deref(),
            Some("/user.slice/x")
        );
        assert_eq!(own_group("0::/\n", Version::V1), None);
        // a path holding a colon stays whole
        assert_eq!(own_group("0::/a:b\n", Version::V2).as_deref(), Some("/a:b"));
    }

    /// As root with a memory controller: a group left by a process that died (here: never
    /// dropped) is taken over by the next run of its uid, with that run's limit, also a larger
    /// one; dropping a group removes it.
    #[test]
    fn a_group_left_behind_is_reused_with_the_new_limit() {
        let Ok(parent) = parent() else {
            eprintln!("skipping: {}", parent().unwrap_err());
            return;
        };
        let uid = SANDBOX_TEST_UID;
        let limit = |g: &MemoryGroup| {
            std::fs::read_to_string(g.dir.join(g.version.limit_file()))
                .unwrap()
                .trim()
                .to_string()
        };
        let first = MemoryGroup::create(uid, 64 << 20).unwrap().unwrap();
        assert_eq!(limit(&first), (64u64 << 20).to_string());
        std::mem::forget(first);
        let second = MemoryGroup::create(uid, 128 << 20).unwrap().unwrap();
        assert_eq!(limit(&second), (128u64 << 20).to_string());
        assert!(!second.out_of_memory());
        let dir = parent.dir.join(format!("run-{uid}"));
        assert!(dir.is_dir());
        drop(second);
        assert!(!dir.exists(), "{} left behind", dir.display());
    }

    /// A uid no run takes in these tests (the last sandbox uid).
    const SANDBOX_TEST_UID: u32 = super::super::SANDBOX_UID_BASE + super::super::SANDBOX_UIDS - 1;

    #[test]
    fn group_dirs_lie_below_the_mounted_root_or_nowhere() {
        let m = |root: &str| CgroupMount {
            root: root.into(),
            mount_point: "/sys/fs/cgroup/memory".into(),
            version: Version::V1,
        };
        assert_eq!(
            group_dir(&m("/"), "/process_api/1"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/process_api/1"))
        );
        assert_eq!(
            group_dir(&m("/"), "/"),
            Some(PathBuf::from("/sys/fs/cgroup/memory"))
        );
        assert_eq!(
            group_dir(&m("/docker/abc"), "/docker/abc/x"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/x"))
        );
        assert_eq!(group_dir(&m("/docker/abc"), "/docker/abcd"), None);
        assert_eq!(group_dir(&m("/docker/abc"), "/other"), None);
        assert_eq!(group_dir(&m("/"), "/../etc"), None);
    }
}
