//! The hub cache on disk, in the layout `huggingface_hub` writes:
//! `<cache>/models--owner--name/{blobs/<etag>, snapshots/<commit>/<file>, refs/<revision>}`
//! (datasets under `datasets--owner--name`), so either tool reads what the other fetched.
//! Lookups ([`cached_file`]) never touch the network; links, refs and locks are written here
//! for the downloads of `client.rs`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::files::unsafe_path_reason;
use crate::names::is_commit;
use crate::options::HubOptions;
use crate::repo::{Remote, RepoType};

impl Remote<'_> {
    /// `<cache>/models--owner--name`.
    pub(crate) fn dir(&self) -> PathBuf {
        self.opts.cache.join(format!(
            "{}--{}",
            self.kind.plural(),
            self.repo.replace('/', "--")
        ))
    }

    /// The commit `refs/<revision>` names in the cache, or the revision itself when it is a
    /// commit. A ref file whose content is not a commit counts as absent.
    fn cached_commit(&self) -> Option<String> {
        if is_commit(self.revision) {
            return Some(self.revision.to_ascii_lowercase());
        }
        let text = std::fs::read_to_string(self.dir().join("refs").join(self.revision)).ok()?;
        let commit = text.trim();
        is_commit(commit).then(|| commit.to_string())
    }

    /// `snapshots/<commit>/<file>` when it exists (following its link to the blob).
    pub(crate) fn cached(&self, file: &str) -> Option<PathBuf> {
        let commit = self.cached_commit()?;
        let p = self.dir().join("snapshots").join(commit).join(file);
        p.is_file().then_some(p)
    }

    /// Points `snapshots/<commit>/<file>` at `blob` (a relative link, as `huggingface_hub`
    /// makes; a copy where links are not available).
    pub(crate) fn link_snapshot(&self, commit: &str, file: &str, blob: &Path) -> Result<PathBuf> {
        let pointer = self.dir().join("snapshots").join(commit).join(file);
        let parent = pointer.parent().unwrap_or(&pointer);
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        if pointer.is_file() {
            return Ok(pointer);
        }
        // a dangling link left behind (its blob was removed)
        let _ = std::fs::remove_file(&pointer);
        #[cfg(unix)]
        {
            let ups = file.split('/').count() + 1;
            let mut target = PathBuf::new();
            for _ in 0..ups {
                target.push("..");
            }
            target.push("blobs");
            target.push(blob.file_name().unwrap_or_default());
            std::os::unix::fs::symlink(&target, &pointer).map_err(|e| Error::io(&pointer, e))?;
        }
        #[cfg(not(unix))]
        std::fs::copy(blob, &pointer).map_err(|e| Error::io(&pointer, e))?;
        Ok(pointer)
    }

    /// Writes `refs/<revision>` = `commit` (atomically), unless the revision is the commit.
    pub(crate) fn write_ref(&self, commit: &str) -> Result<()> {
        if is_commit(self.revision) {
            return Ok(());
        }
        let path = self.dir().join("refs").join(self.revision);
        let parent = path.parent().unwrap_or(&path);
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        let tmp = parent.join(format!(".ref-{}.tmp", std::process::id()));
        std::fs::write(&tmp, commit).map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
    }
}

/// Best effort: makes a rename in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// An exclusive lock on `path` (created), so two processes do not write one `.part` file;
/// waits up to 10 s for another holder.
pub(crate) fn lock(path: &Path) -> Result<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    for _ in 0..100 {
        match f.try_lock() {
            Ok(()) => return Ok(f),
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path, e)),
        }
    }
    Err(Error::Download(format!(
        "{}: another process holds this lock (downloading the same file); try again when it is \
         done",
        path.display()
    )))
}

/// The cached copy of one file of a hub repository at `revision`, if there is one: reads
/// `refs/<revision>` (or takes the revision itself when it is a 40-hex commit) and looks for
/// `snapshots/<commit>/<file>`. Never touches the network.
pub fn cached_file(
    opts: &HubOptions,
    kind: RepoType,
    repo: &str,
    revision: &str,
    file: &str,
) -> Option<PathBuf> {
    let remote = Remote::new(opts, kind, repo, revision).ok()?;
    unsafe_path_reason(file).is_none().then_some(())?;
    remote.cached(file)
}
