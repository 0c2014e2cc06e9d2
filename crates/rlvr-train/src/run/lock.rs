//! One writer per run directory: [`RunLock`], an exclusive `flock` on `<run>/run.lock`, taken
//! before anything in the directory is written (a fresh run and `--resume` alike) and held
//! until the run ends. The file holds the holder's pid, so a second writer is refused with an
//! error naming it. The kernel releases the lock when the holder exits, however it ends
//! (SIGKILL included), so a stale file never blocks a later run.

use rlvr_core::run_dir::RunDir;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::TrainError;

/// The lock file's name inside a run directory.
pub const LOCK_FILE: &str = rlvr_core::run_dir::LOCK_FILE;

/// The exclusive lock of one run directory, held while this value lives (the lock is on the
/// open file: dropping it, or the process ending, releases it). The lock file itself is left
/// in place: removing it could let two processes lock two different files of one name.
#[derive(Debug)]
pub struct RunLock {
    /// Held open, never read: the lock lives as long as this open file.
    _file: File,
    path: PathBuf,
}

impl RunLock {
    /// Locks the existing directory `run_dir` for this process, writing its pid into the
    /// lock file. Another holder (another process, or another [`RunLock`] of this one) is an
    /// error ([`TrainError::Resume`], user input) naming the directory and the holder's pid;
    /// nothing in the directory is changed then.
    pub fn acquire(run_dir: &Path) -> Result<Self, TrainError> {
        let path = RunDir::new(run_dir).lock();
        // a lock file replaced between our open and our lock (by someone removing it by
        // hand) is not the one others open: lock again on the file the name now holds
        for _ in 0..8 {
            let mut file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| TrainError::io(&path, e))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = read_pid(&mut file)
                        .map_or("pid unknown".to_string(), |pid| format!("pid {pid}"));
                    return Err(TrainError::Resume(format!(
                        "{} is in use by another rlvr process ({holder}, lock file {}): one \
                         run directory takes one writer; wait for that run to end, or stop it",
                        run_dir.display(),
                        path.display()
                    )));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(TrainError::io(&path, e)),
            }
            let same = match (file.metadata(), std::fs::metadata(&path)) {
                (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                _ => false,
            };
            if !same {
                continue;
            }
            let pid = std::process::id().to_string();
            file.set_len(0)
                .and_then(|_| file.seek(SeekFrom::Start(0)))
                .and_then(|_| file.write_all(pid.as_bytes()))
                .and_then(|_| file.flush())
                .map_err(|e| TrainError::io(&path, e))?;
            return Ok(Self { _file: file, path });
        }
        Err(TrainError::Msg(format!(
            "{}: the lock file keeps being replaced; is another program removing it?",
            path.display()
        )))
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether a process holds the lock of `run_dir` now (a run is being written there), seen
/// without touching the lock: a watcher that took it, even for an instant, could make a
/// starting `rlvr train --resume` fail. On Linux the kernel's table of held locks
/// (`/proc/locks`, `FLOCK ... WRITE <pid> <major>:<minor>:<inode>`) is searched for the lock
/// file's device and inode; elsewhere, the pid in the lock file is alive (`kill -0`). False
/// when there is no lock file.
pub fn lock_is_held(run_dir: &Path) -> bool {
    let path = RunDir::new(run_dir).lock();
    let Ok(meta) = std::fs::metadata(&path) else {
        return false;
    };
    match std::fs::read_to_string("/proc/locks") {
        Ok(table) => table_holds(&table, meta.dev(), meta.ino()),
        Err(_) => File::open(&path)
            .ok()
            .and_then(|mut f| read_pid(&mut f))
            .is_some_and(pid_alive),
    }
}

/// Whether `/proc/locks` text lists a `flock` lock on the file (`dev`, `ino`). Its lines read
/// `1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF`, the device as hexadecimal major and
/// minor numbers; a blocked waiter's line starts `1: -> FLOCK` and holds nothing.
fn table_holds(table: &str, dev: u64, ino: u64) -> bool {
    // the Linux encoding of dev_t (glibc's gnu_dev_major / gnu_dev_minor)
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    table.lines().any(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(1) != Some(&"FLOCK") {
            return false;
        }
        let Some(id) = f.get(5) else { return false };
        let mut parts = id.split(':');
        let (Some(ma), Some(mi), Some(i)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        u64::from_str_radix(ma, 16) == Ok(major)
            && u64::from_str_radix(mi, 16) == Ok(minor)
            && i.parse::<u64>() == Ok(ino)
    })
}

/// Whether a process of this pid exists (`kill(pid, 0)` succeeds or is refused for
/// permission, not "no such process").
fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 checks for the process and sends nothing
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The pid written in a lock file, if it holds one.
fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(64).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_seen_without_taking_it() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!lock_is_held(dir.path()), "no lock file");
        let lock = RunLock::acquire(dir.path()).unwrap();
        assert!(lock_is_held(dir.path()));
        // seeing it did not take it: the holder still holds it, a second writer is refused
        assert!(RunLock::acquire(dir.path()).is_err());
        drop(lock);
        assert!(!lock_is_held(dir.path()), "released with its holder");
        let again = RunLock::acquire(dir.path()).unwrap();
        assert!(lock_is_held(dir.path()));
        drop(again);
    }

    #[test]
    fn proc_locks_lines_are_matched_by_device_and_inode() {
        // dev 0xfd01 = major 0xfd, minor 0x01 (a device-mapper disk)
        let table = "1: POSIX  ADVISORY  WRITE 77 fd:01:99 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 4343 fd:01:7654321 0 EOF\n";
        assert!(table_holds(table, 0xfd01, 1_234_567));
        assert!(!table_holds(table, 0xfd02, 1_234_567), "other device");
        assert!(
            !table_holds(table, 0xfd01, 99),
            "a POSIX lock is not the run lock"
        );
        assert!(
            !table_holds(table, 0xfd01, 7_654_321),
            "a waiter holds nothing"
        );
        assert!(!table_holds("garbage\n1: FLOCK\n", 0xfd01, 1));
        // a minor number above 255 (dev_t's split encoding)
        let dev = (0x103u64 << 12 & !0xfffff) | (0x3 << 8) | (0x103 & 0xff);
        assert!(table_holds(
            "1: FLOCK ADVISORY WRITE 1 03:103:5 0 EOF",
            dev,
            5
        ));
    }

    #[test]
    fn pids_alive_and_gone() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(0));
        assert!(!pid_alive(u32::MAX));
        assert!(!pid_alive(i32::MAX as u32), "beyond any pid_max");
    }
}
