//! Code problems: stdin/stdout tests (Codeforces layout) or functional `check(candidate)` tests
//! (LeetCode layout), a sandboxed Python runner, and [`CodeVerifier`].
//!
//! A code [`Problem`](crate::Problem)'s `answer` is its tests as JSON: a list of `{"input",
//! "output"}` objects, or an object `{"functional": "<python that calls check(...)>"}` (the
//! `codeforces` and `leetcode` presets load them that way), or the APPS/TACO layout that verl's
//! `prime_code` reads, `{"inputs": [stdin, ...], "outputs": [stdout, ...]}` (string elements;
//! call-based tests with `fn_name` are rejected).
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
//!   plus the bounded file systems and IPC above ([`SandboxConfig`] has the total); as root,
//!   where the machine offers a memory controller ([`memory_cgroup`]), a cgroup of the run's
//!   own whose limit bounds every page of all its processes together (anonymous, tmpfs,
//!   shared, kernel: [`Limits::run_memory_bytes`]; the program is the OOM killer's victim);
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
//! instructions written with `libc`, built before the fork (`code/sandbox/seccomp.rs`).

mod sandbox;
mod test_cases;
mod verify;

pub use sandbox::{
    isolation_available, memory_cgroup, run_python, Limits, RunOutcome, SandboxConfig,
    SandboxError, Termination, MAX_CONCURRENT_SANDBOXES, SANDBOX_DIR, SANDBOX_DIR_INODES,
    SANDBOX_UIDS, SANDBOX_UID_BASE, SYSV_MSG_BYTES, SYSV_SHM_BYTES, SYSV_SHM_SEGMENTS, TMPFS_BYTES,
};
pub use test_cases::{parse_tests, IoTest, Tests};
pub use verify::{extract_code, outputs_match, CodeVerifier, RewardMode, FUNCTIONAL_PRELUDE};
