//! One writer per run directory: [`RunLock`], an exclusive `flock` on `<run>/run.lock`, taken
//! before anything in the directory is written (a fresh run and `--resume` alike) and held
//! until the run ends. The file holds the holder's pid, so a second writer is refused with an
//! error naming it. The kernel releases the lock when the holder exits, however it ends
//! (SIGKILL included), so a stale file never blocks a later run.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::TrainError;

/// The lock file's name inside a run directory.
pub const LOCK_FILE: &str = "run.lock";

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
        let path = run_dir.join(LOCK_FILE);
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

/// The pid written in a lock file, if it holds one.
fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(64).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}
