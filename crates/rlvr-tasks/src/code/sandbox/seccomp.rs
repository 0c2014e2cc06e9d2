//! The system call filter of a sandboxed program: a classic-BPF seccomp program, built before
//! the fork and installed in the program's process right before its exec (after
//! `no_new_privs`).
//!
//! It checks the audit architecture first (a system call of another ABI, such as i386's
//! `int 0x80` on x86_64, kills the process; x32 calls fail with `ENOSYS`), then refuses:
//! - the kernel keyrings (`add_key`, `request_key`, `keyctl`): no access to the caller's
//!   session keyring, to the uid's user keyring, or to any keyring left by an earlier run;
//! - tracing and other processes' memory (`ptrace`, `process_vm_readv`/`writev`, `kcmp`,
//!   `pidfd_getfd`), `perf_event_open`, `bpf`, `userfaultfd`, `io_uring_*`;
//! - memory files (`memfd_create`, `memfd_secret`), whose pages count against no limit;
//! - namespaces (`unshare`, `setns`, `clone` with a `CLONE_NEW*` flag; `clone3`, whose flags
//!   a filter cannot read, fails with `ENOSYS`, so the C library falls back to `clone`);
//! - mounts (`mount`, `umount2`, `pivot_root`, `chroot`, the new mount API: `open_tree`,
//!   `move_mount`, `fsopen`, `fsconfig`, `fsmount`, `fspick`, `mount_setattr`);
//! - administration (`kexec_*`, modules, `reboot`, `swapon`/`swapoff`, `acct`, `quotactl*`,
//!   `syslog`, `vhangup`, `fanotify_init`, `lookup_dcookie`, file handles
//!   `name_to_handle_at`/`open_by_handle_at`, and on x86_64 `iopl`, `ioperm`, `uselib`);
//! - when asked ([`Filter::new`]'s `block_sysv_ipc`), SysV IPC (`shm*`, `msg*`, `sem*`), for
//!   runs whose IPC namespace's limits cannot be set.
//!
//! Refused calls fail with `EPERM` (`ENOSYS` where noted); every other call is allowed.

/// `AUDIT_ARCH_X86_64` (`EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE`).
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
/// `AUDIT_ARCH_AARCH64` (`EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE`).
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;

/// x86_64's x32 ABI marks its system call numbers with this bit.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// `offsetof(struct seccomp_data, nr)`.
const OFF_NR: u32 = 0;
/// `offsetof(struct seccomp_data, arch)`.
const OFF_ARCH: u32 = 4;
/// `offsetof(struct seccomp_data, args[0])`, its low 32 bits (both architectures are
/// little-endian).
const OFF_ARG0_LO: u32 = 16;

/// The `CLONE_NEW*` flags `clone` may not carry.
const CLONE_NS_FLAGS: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;

/// System calls refused with `EPERM` on every architecture.
const REFUSED: &[(libc::c_long, &str)] = &[
    (libc::SYS_add_key, "add_key"),
    (libc::SYS_request_key, "request_key"),
    (libc::SYS_keyctl, "keyctl"),
    (libc::SYS_ptrace, "ptrace"),
    (libc::SYS_process_vm_readv, "process_vm_readv"),
    (libc::SYS_process_vm_writev, "process_vm_writev"),
    (libc::SYS_kcmp, "kcmp"),
    (libc::SYS_pidfd_getfd, "pidfd_getfd"),
    (libc::SYS_perf_event_open, "perf_event_open"),
    (libc::SYS_bpf, "bpf"),
    (libc::SYS_userfaultfd, "userfaultfd"),
    // memory files: pages written into them with write() are neither mapped (RLIMIT_AS) nor
    // on a bounded tmpfs, so they could take host memory past every limit
    (libc::SYS_memfd_create, "memfd_create"),
    #[cfg(target_arch = "x86_64")]
    (libc::SYS_memfd_secret, "memfd_secret"),
    (libc::SYS_io_uring_setup, "io_uring_setup"),
    (libc::SYS_io_uring_enter, "io_uring_enter"),
    (libc::SYS_io_uring_register, "io_uring_register"),
    (libc::SYS_unshare, "unshare"),
    (libc::SYS_setns, "setns"),
    (libc::SYS_mount, "mount"),
    (libc::SYS_umount2, "umount2"),
    (libc::SYS_pivot_root, "pivot_root"),
    (libc::SYS_chroot, "chroot"),
    (libc::SYS_open_tree, "open_tree"),
    (libc::SYS_move_mount, "move_mount"),
    (libc::SYS_fsopen, "fsopen"),
    (libc::SYS_fsconfig, "fsconfig"),
    (libc::SYS_fsmount, "fsmount"),
    (libc::SYS_fspick, "fspick"),
    (libc::SYS_mount_setattr, "mount_setattr"),
    (libc::SYS_kexec_load, "kexec_load"),
    (libc::SYS_kexec_file_load, "kexec_file_load"),
    (libc::SYS_init_module, "init_module"),
    (libc::SYS_finit_module, "finit_module"),
    (libc::SYS_delete_module, "delete_module"),
    (libc::SYS_reboot, "reboot"),
    (libc::SYS_swapon, "swapon"),
    (libc::SYS_swapoff, "swapoff"),
    (libc::SYS_acct, "acct"),
    (libc::SYS_quotactl, "quotactl"),
    (libc::SYS_quotactl_fd, "quotactl_fd"),
    (libc::SYS_syslog, "syslog"),
    (libc::SYS_vhangup, "vhangup"),
    (libc::SYS_fanotify_init, "fanotify_init"),
    (libc::SYS_lookup_dcookie, "lookup_dcookie"),
    (libc::SYS_name_to_handle_at, "name_to_handle_at"),
    (libc::SYS_open_by_handle_at, "open_by_handle_at"),
    #[cfg(target_arch = "x86_64")]
    (libc::SYS_iopl, "iopl"),
    #[cfg(target_arch = "x86_64")]
    (libc::SYS_ioperm, "ioperm"),
    #[cfg(target_arch = "x86_64")]
    (libc::SYS_uselib, "uselib"),
];

/// SysV IPC calls, refused with `ENOSYS` when [`Filter::new`] is asked to.
const SYSV_IPC: &[libc::c_long] = &[
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmdt,
    libc::SYS_shmctl,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
];

/// A seccomp filter program, ready to install (see the module docs).
pub(super) struct Filter {
    prog: Vec<libc::sock_filter>,
}

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

const LD_ABS: u32 = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
const JEQ: u32 = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
const JSET: u32 = libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K;
const RET: u32 = libc::BPF_RET | libc::BPF_K;

fn errno(e: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA)
}

impl Filter {
    /// The filter of the module docs; `block_sysv_ipc` adds SysV IPC. `Err` on an
    /// architecture the filter does not know (it knows x86_64 and aarch64).
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    pub(super) fn new(block_sysv_ipc: bool) -> Result<Self, String> {
        let mut prog = vec![
            stmt(LD_ABS, OFF_ARCH),
            jump(JEQ, AUDIT_ARCH, 1, 0),
            stmt(RET, libc::SECCOMP_RET_KILL_PROCESS),
            stmt(LD_ABS, OFF_NR),
        ];
        #[cfg(target_arch = "x86_64")]
        {
            prog.push(jump(JSET, X32_SYSCALL_BIT, 0, 1));
            prog.push(stmt(RET, errno(libc::ENOSYS)));
        }
        let mut refuse = |nr: libc::c_long, ret: u32| {
            prog.push(jump(JEQ, nr as u32, 0, 1));
            prog.push(stmt(RET, ret));
        };
        for &(nr, _) in REFUSED {
            refuse(nr, errno(libc::EPERM));
        }
        refuse(libc::SYS_clone3, errno(libc::ENOSYS));
        if block_sysv_ipc {
            for &nr in SYSV_IPC {
                refuse(nr, errno(libc::ENOSYS));
            }
        }
        // clone: refused when its flags (the first argument) ask for a new namespace
        prog.push(jump(JEQ, libc::SYS_clone as u32, 0, 3));
        prog.push(stmt(LD_ABS, OFF_ARG0_LO));
        prog.push(jump(JSET, CLONE_NS_FLAGS, 0, 1));
        prog.push(stmt(RET, errno(libc::EPERM)));
        prog.push(stmt(RET, libc::SECCOMP_RET_ALLOW));
        Ok(Filter { prog })
    }

    /// See the other definition: this architecture has no filter, so no sandbox.
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) fn new(_block_sysv_ipc: bool) -> Result<Self, String> {
        Err(format!(
            "the sandbox's system call filter knows x86_64 and aarch64, not {}",
            std::env::consts::ARCH
        ))
    }

    /// Installs the filter on the calling thread (in the forked child, after
    /// `PR_SET_NO_NEW_PRIVS`): system calls only, no allocation. False when the kernel
    /// refuses it.
    pub(super) unsafe fn install(&self) -> bool {
        let prog = libc::sock_fprog {
            len: self.prog.len() as libc::c_ushort,
            filter: self.prog.as_ptr() as *mut libc::sock_filter,
        };
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &prog as *const libc::sock_fprog,
        ) == 0
    }
}
