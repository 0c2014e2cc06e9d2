//! The set-up steps of a run as the step pipe reports them (an op index of the private root
//! below [`STEP_FIXED`], else one of these codes; [`super::child::step_name`] names them), and
//! the raw file write the forked processes use. Shared by the private root ([`super::root`])
//! and what runs between the fork and the exec ([`super::child`]).

use std::ffi::CString;

/// Writes `data` to the file at `path` (async-signal-safe).
pub(super) unsafe fn write_file(path: &CString, data: &CString) -> bool {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    let bytes = data.as_bytes();
    let n = libc::write(fd, bytes.as_ptr() as *const libc::c_void, bytes.len());
    libc::close(fd);
    n == bytes.len() as isize
}

// Set-up steps outside the private root's ops (reported through the step pipe).
pub(super) const STEP_FIXED: u8 = 200;
pub(super) const STEP_SETSID: u8 = 200;
pub(super) const STEP_UNSHARE: u8 = 201;
pub(super) const STEP_ID_MAPS: u8 = 202;
pub(super) const STEP_FORK: u8 = 203;
pub(super) const STEP_PRIVATE: u8 = 204;
pub(super) const STEP_PIVOT: u8 = 205;
pub(super) const STEP_ROOT_RO: u8 = 206;
pub(super) const STEP_CHDIR: u8 = 207;
pub(super) const STEP_LIMITS: u8 = 208;
pub(super) const STEP_CREDENTIALS: u8 = 209;
pub(super) const STEP_PRCTL: u8 = 210;
pub(super) const STEP_FDS: u8 = 211;
pub(super) const STEP_SECCOMP: u8 = 212;
pub(super) const STEP_IPC_LIMITS: u8 = 213;
pub(super) const STEP_CGROUP: u8 = 214;
