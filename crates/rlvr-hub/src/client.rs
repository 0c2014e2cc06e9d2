//! Downloads from the hub over HTTP ([`fetch_file`]), on `ureq` (rustls), trusting no server.
//!
//! What a server sends is checked before it is used (see `docs/hub.md`):
//!
//! - every name that becomes a path (file names of the listing, shard names of
//!   `model.safetensors.index.json`, ETags, commit shas, revisions) must be a plain relative
//!   path inside the cache: no `..`, no absolute path, no empty component, no backslash or NUL;
//!   a commit is exactly 40 hex digits, an ETag a short `[A-Za-z0-9._-]` token. Otherwise the
//!   download fails with an error naming the server and the name;
//! - connections and reads time out ([`HubOptions::connect_timeout`],
//!   [`HubOptions::read_timeout`]); the status line and headers of every answer must arrive
//!   within [`HubOptions::header_limit`], and a body slower than [`HubOptions::min_rate`] over
//!   a [`HubOptions::rate_window`] is ended, so a server that drips bytes cannot hold a
//!   download forever;
//! - the announced size is checked against the free space of the cache's file system before
//!   anything is written, and a body longer than announced is refused;
//! - the bearer token goes to the endpoint's own scheme, host and port only: every redirect
//!   is followed here, and a hop elsewhere (a storage host, another port) gets no token;
//! - a file is complete only when its byte count equals the announced size (`X-Linked-Size`,
//!   else `Content-Length`) and its content hash matches the announced one: for LFS files the
//!   SHA-256 (`X-Linked-Etag`, 64 hex digits), for other files git's blob hash (a strong `ETag`
//!   of 40 hex digits: SHA-1 of `blob <size>\0` followed by the content, as `git hash-object`
//!   computes it).
//!
//! Downloads are resumable: a file is written to `blobs/<etag>.part`, synced and renamed when
//! complete; an interrupted download leaves the `.part` file, and the next call asks the
//! server for the remaining bytes only (HTTP `Range`). A progress bar per file is drawn on
//! stderr when `progress` is on.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha1::Sha1;
use sha2::{Digest, Sha256};

use crate::cache::{lock, sync_dir};
use crate::error::{Error, Result};
use crate::files::unsafe_path_reason;
use crate::names::{is_commit, shown, unsafe_etag_reason, url_path};
use crate::options::HubOptions;
use crate::repo::{Remote, RepoType};

impl Remote<'_> {
    /// The path prefix of the repository's files: `owner/name` or `datasets/owner/name`.
    fn url_repo(&self) -> String {
        match self.kind {
            RepoType::Model => self.repo.to_string(),
            _ => format!("{}/{}", self.kind.plural(), self.repo),
        }
    }

    /// `{endpoint}/{repo}/resolve/{revision}/{file}`.
    fn file_url(&self, file: &str) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            self.opts.endpoint,
            self.url_repo(),
            self.revision.replace('/', "%2F"),
            url_path(file)
        )
    }

    /// Describes a failed request: the server, and what the status or the transport says.
    fn http_error(&self, what: &str, e: ureq::Error) -> Error {
        let why = match &e {
            ureq::Error::Status(404, _) => {
                "not found (404): check the repository id, the revision and the file name; a \
                 gated or private repository needs HF_TOKEN"
                    .to_string()
            }
            ureq::Error::Status(code @ (401 | 403), _) => {
                format!("access denied ({code}): the repository is gated or private; set HF_TOKEN")
            }
            ureq::Error::Status(code, r) => format!("HTTP {code} {}", r.status_text()),
            ureq::Error::Transport(t) => {
                let timed_out = std::error::Error::source(t)
                    .and_then(|s| s.downcast_ref::<std::io::Error>())
                    .is_some_and(|io| {
                        matches!(
                            io.kind(),
                            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                        )
                    });
                if timed_out {
                    format!(
                        "no answer in time (connect timeout {:?}, read timeout {:?}, headers \
                         within {:?}): {t}",
                        self.opts.connect_timeout,
                        self.opts.read_timeout,
                        self.opts.header_limit(),
                    )
                } else {
                    t.to_string()
                }
            }
        };
        Error::Download(format!(
            "{}: cannot {what} from {}: {why}",
            self.what(),
            self.opts.endpoint
        ))
    }

    /// `, at least N bytes/s`, the minimum rate as errors state it (nothing when it is off).
    fn rate_text(&self) -> String {
        match self.opts.min_rate {
            0 => String::new(),
            r => format!(
                ", at least {r} bytes/s over each {:?} (RLVR_HUB_MIN_RATE, RLVR_HUB_RATE_WINDOW)",
                self.opts.rate_window
            ),
        }
    }

    /// GET `url`, following up to 5 redirects here (not in the agent), so that each hop gets
    /// the token only when it goes to the endpoint's own origin; `range` is sent on every hop.
    /// The status lines and headers of the whole chain must arrive within
    /// [`HubOptions::header_limit`] ([`Remote::call_within`]); the body is the caller's to
    /// read. An error status is an error naming it, except 416 (a range the server cannot
    /// satisfy), which the caller gets as an answer.
    fn get(&self, url: &str, range: Option<&str>, what: &str) -> Result<ureq::Response> {
        let agent = self.opts.agent();
        let start = Instant::now();
        let mut url = url.to_string();
        for _ in 0..=5 {
            let mut req = self.opts.request(&agent, "GET", &url, None);
            if let Some(r) = range {
                req = req.set("Range", r);
            }
            let base = req.request_url().map_err(|e| self.http_error(what, e))?;
            let left = self.opts.header_limit().saturating_sub(start.elapsed());
            let resp = match self.call_within(req, left, what)? {
                Ok(r) | Err(ureq::Error::Status(416, r)) => r,
                Err(e) => return Err(self.http_error(what, e)),
            };
            if !matches!(resp.status(), 301 | 302 | 303 | 307 | 308) {
                return Ok(resp);
            }
            let loc = self.header(&resp, "Location", what)?.ok_or_else(|| {
                self.server_error(format!(
                    "answered {what} with a redirect ({}) without a Location",
                    resp.status()
                ))
            })?;
            let next = base.as_url().join(loc.trim()).map_err(|e| {
                self.server_error(format!(
                    "redirected {what} to {}, which is not a URL ({e})",
                    shown(loc)
                ))
            })?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(self.server_error(format!(
                    "redirected {what} to {}, which is not an http(s) URL",
                    shown(loc)
                )));
            }
            url = next.as_str().to_string();
        }
        Err(self.server_error(format!("redirected {what} more than 5 times")))
    }

    /// Sends `req` and waits at most `limit` for its status line and headers. The call runs
    /// on a thread of its own: ureq's only total limit on an answer (a deadline) would replace
    /// the read timeout for the body too, and each read of a dripping server is in time. When
    /// the limit passes, the connection is abandoned to that thread, which ends when the
    /// server stops sending (or the process exits).
    fn call_within(
        &self,
        req: ureq::Request,
        limit: Duration,
        what: &str,
    ) -> Result<std::result::Result<ureq::Response, ureq::Error>> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("rlvr-hub-request".into())
            .spawn(move || {
                let _ = tx.send(req.call());
            })
            .map_err(|e| Error::Download(format!("cannot start a thread to {what}: {e}")))?;
        match rx.recv_timeout(limit) {
            Ok(answer) => Ok(answer),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(self.server_error(format!(
                "did not send the status line and headers to {what} within {:?} (connect \
                 timeout {:?} + read timeout {:?}): no answer in time, connection abandoned",
                self.opts.header_limit(),
                self.opts.connect_timeout,
                self.opts.read_timeout
            ))),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(Error::Download(format!(
                "{}: the request to {what} ended without an answer",
                self.what()
            ))),
        }
    }

    /// The value of header `name`: `Ok(None)` when absent, an error when it is not text.
    fn header<'r>(
        &self,
        resp: &'r ureq::Response,
        name: &str,
        file: &str,
    ) -> Result<Option<&'r str>> {
        match resp.header(name) {
            Some(v) => Ok(Some(v)),
            None if resp
                .headers_names()
                .iter()
                .any(|h| h.eq_ignore_ascii_case(name)) =>
            {
                Err(self.server_error(format!(
                    "sent the {name} header for {file} as bytes that are not printable ASCII text"
                )))
            }
            None => Ok(None),
        }
    }

    /// What the server says about `file`: HEAD of its resolve URL, following relative
    /// redirects only (a renamed repository), as `huggingface_hub` does; an absolute redirect
    /// (to the LFS storage) carries the `X-Linked-*` headers.
    fn metadata(&self, file: &str) -> Result<Metadata> {
        let agent = self.opts.agent();
        let mut url = self.file_url(file);
        let mut hops = 0;
        let resp = loop {
            let resp = self
                .opts
                .request(&agent, "HEAD", &url, Some(self.opts.header_limit()))
                .call()
                .map_err(|e| self.http_error(&format!("get the metadata of {file}"), e))?;
            let relative = (300..400)
                .contains(&resp.status())
                .then(|| resp.header("Location"))
                .flatten()
                .filter(|l| l.starts_with('/') && !l.starts_with("//"));
            match relative {
                Some(loc) if hops < 5 => {
                    hops += 1;
                    url = format!("{}{loc}", origin(&self.opts.endpoint));
                }
                Some(_) => {
                    return Err(self.server_error(format!("redirected {file} more than 5 times")))
                }
                None => break resp,
            }
        };
        let commit = self
            .header(&resp, "X-Repo-Commit", file)?
            .ok_or_else(|| {
                self.server_error(format!(
                    "sent no X-Repo-Commit header for {file}: not a Hugging Face hub endpoint?"
                ))
            })?
            .trim();
        if !is_commit(commit) {
            return Err(self.server_error(format!(
                "sent X-Repo-Commit {} for {file}, which is not a commit (40 hex digits); \
                 refusing to use it as a path",
                shown(commit)
            )));
        }
        let commit = commit.to_ascii_lowercase();
        if is_commit(self.revision) && !commit.eq_ignore_ascii_case(self.revision) {
            return Err(self.server_error(format!(
                "answered commit {commit} for {file} when asked for commit {}",
                self.revision
            )));
        }
        let linked = self.header(&resp, "X-Linked-Etag", file)?;
        let raw = match linked {
            Some(e) => e,
            None => self.header(&resp, "ETag", file)?.ok_or_else(|| {
                self.server_error(format!("sent no ETag or X-Linked-Etag header for {file}"))
            })?,
        };
        let etag = raw.trim().trim_start_matches("W/").trim_matches('"');
        if let Some(why) = unsafe_etag_reason(etag) {
            return Err(self.server_error(format!(
                "sent the ETag {} for {file} ({why}); refusing to use it as a blob name",
                shown(raw)
            )));
        }
        let hex = |n: usize| etag.len() == n && etag.bytes().all(|b| b.is_ascii_hexdigit());
        let weak = raw.trim().starts_with("W/");
        let hash = if linked.is_some() && hex(64) {
            Some(ContentHash::Sha256(etag.to_ascii_lowercase()))
        } else if linked.is_none() && !weak && hex(40) {
            Some(ContentHash::GitSha1(etag.to_ascii_lowercase()))
        } else {
            None
        };
        let size_header = match self.header(&resp, "X-Linked-Size", file)? {
            Some(s) => Some(("X-Linked-Size", s)),
            None => self
                .header(&resp, "Content-Length", file)?
                .map(|s| ("Content-Length", s)),
        };
        let (name, value) = size_header.ok_or_else(|| {
            self.server_error(format!(
                "announced no size for {file} (no X-Linked-Size or Content-Length header), so a \
                 complete download cannot be told from a truncated one"
            ))
        })?;
        let size = value.trim().parse::<u64>().map_err(|_| {
            self.server_error(format!(
                "sent {name} {} for {file}, which is not a byte count",
                shown(value)
            ))
        })?;
        Ok(Metadata {
            commit,
            etag: etag.to_string(),
            size,
            hash,
        })
    }

    /// Downloads `file` into `blobs/<etag>` (resuming `blobs/<etag>.part`) and returns the
    /// blob's path. The blob is renamed into place only when its size, and its content hash
    /// where the server gave one, match.
    fn download_blob(&self, file: &str, meta: &Metadata) -> Result<PathBuf> {
        let blobs = self.dir().join("blobs");
        std::fs::create_dir_all(&blobs).map_err(|e| Error::io(&blobs, e))?;
        let blob = blobs.join(&meta.etag);
        // where `huggingface_hub` keeps its locks, so the two tools exclude each other too
        let locks = self
            .opts
            .cache
            .join(".locks")
            .join(self.dir().file_name().unwrap_or_default());
        std::fs::create_dir_all(&locks).map_err(|e| Error::io(&locks, e))?;
        let _lock = lock(&locks.join(format!("{}.lock", meta.etag)))?;
        if std::fs::metadata(&blob).is_ok_and(|m| m.is_file() && m.len() == meta.size) {
            return Ok(blob);
        }
        let part = blobs.join(format!("{}.part", meta.etag));
        let mut start = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        if start > meta.size {
            // longer than announced: not a prefix of this file
            std::fs::remove_file(&part).map_err(|e| Error::io(&part, e))?;
            start = 0;
        }
        let mut hasher = meta.hash.as_ref().map(|want| Hasher::new(want, meta.size));
        if start < meta.size {
            self.check_free_space(file, meta.size, start, &blobs)?;
            let url = self.file_url(file);
            let range = format!("bytes={start}-");
            let what = format!("download {file}");
            let resp = self.get(&url, Some(&range), &what)?;
            match resp.status() {
                416 => {
                    // the kept bytes are no prefix of the file the server has (it is shorter)
                    let _ = std::fs::remove_file(&part);
                    return Err(self.server_error(format!(
                        "refused the range bytes={start}- of {file}, of which it announced {} \
                         bytes (HTTP 416): it serves less than it announced{}",
                        meta.size,
                        if start > 0 {
                            "; the partial file was removed"
                        } else {
                            ""
                        }
                    )));
                }
                206 => {
                    let range = self.header(&resp, "Content-Range", file)?.unwrap_or("");
                    let expect = format!("bytes {start}-");
                    let total = range.rsplit('/').next().and_then(|t| t.parse::<u64>().ok());
                    if !range.starts_with(&expect) || total.is_some_and(|t| t != meta.size) {
                        return Err(self.server_error(format!(
                            "answered the request for bytes {start}- of {file} ({} bytes) with \
                             Content-Range {}: the file changed, or the server is broken",
                            meta.size,
                            shown(range)
                        )));
                    }
                }
                200 if start > 0 => {
                    // the server ignored the range: start over
                    std::fs::remove_file(&part).map_err(|e| Error::io(&part, e))?;
                    start = 0;
                    self.check_free_space(file, meta.size, start, &blobs)?;
                }
                200 => {}
                code => {
                    return Err(self
                        .server_error(format!("answered the download of {file} with HTTP {code}")))
                }
            }
            // an answer that says up front it is longer than the rest of the announced file
            let length = self.header(&resp, "Content-Length", file)?;
            if let Some(n) = length.and_then(|l| l.trim().parse::<u64>().ok()) {
                if n > meta.size - start {
                    let _ = std::fs::remove_file(&part);
                    return Err(self.server_error(format!(
                        "answered the download of bytes {start}- of {file} with a \
                         Content-Length of {n}, more than the {} bytes it announced for the \
                         file; nothing was written",
                        meta.size
                    )));
                }
            }
            if let Some(h) = hasher.as_mut() {
                hash_prefix(h, &part, start)?;
            }
            let mut out = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&part)
                .map_err(|e| Error::io(&part, e))?;
            let progress = self.opts.progress.then(|| {
                let bar = indicatif::ProgressBar::new(meta.size);
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                bar.set_message(file.to_string());
                bar.set_position(start);
                bar
            });
            // one byte more than announced is read, to notice a server that sends too much
            let mut body =
                RateGuard::new(resp.into_reader(), self.opts).take(meta.size - start + 1);
            let mut got = start;
            let mut buf = vec![0u8; 1 << 16];
            let read_error = loop {
                let n = match body.read(&mut buf) {
                    Ok(0) => break None,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => break Some(e),
                };
                if let Err(e) = out.write_all(&buf[..n]) {
                    // a full disk, most likely: what was written is no use to anyone
                    drop(out);
                    let _ = std::fs::remove_file(&part);
                    return Err(Error::Download(format!(
                        "{}: cannot write {file} into the cache: {}: {e}; the partial file \
                         was removed",
                        self.what(),
                        part.display()
                    )));
                }
                if let Some(h) = hasher.as_mut() {
                    h.update(&buf[..n]);
                }
                got += n as u64;
                if let Some(bar) = &progress {
                    bar.set_position(got);
                }
            };
            if let Some(bar) = progress {
                bar.finish_and_clear();
            }
            if let Err(e) = out.sync_all() {
                drop(out);
                let _ = std::fs::remove_file(&part);
                return Err(Error::io(&part, e));
            }
            drop(out);
            if got > meta.size {
                let _ = std::fs::remove_file(&part);
                return Err(self.server_error(format!(
                    "sent more than the {} bytes it announced for {file}; the partial file was \
                     removed",
                    meta.size
                )));
            }
            if got < meta.size {
                let why = match read_error {
                    Some(e) if e.kind() == std::io::ErrorKind::TimedOut => format!(
                        "the transfer was too slow ({e}; read timeout {:?}{})",
                        self.opts.read_timeout,
                        self.rate_text()
                    ),
                    Some(e) => format!("the transfer broke off ({e})"),
                    None => "the server's answer ended early".to_string(),
                };
                return Err(Error::Download(format!(
                    "{}: download of {file} from {} is incomplete: {got} of {} bytes received, \
                     {why}; the partial file {} is kept and the next call resumes it",
                    self.what(),
                    self.opts.endpoint,
                    meta.size,
                    part.display()
                )));
            }
        } else if let Some(h) = hasher.as_mut() {
            hash_prefix(h, &part, start)?;
        }
        if meta.size == 0 {
            // nothing to fetch: an empty file is complete as it is (its hash still checked)
            std::fs::File::create(&part).map_err(|e| Error::io(&part, e))?;
        }
        if let (Some(h), Some(want)) = (hasher, &meta.hash) {
            let got = h.hex();
            if got != want.hex() {
                let _ = std::fs::remove_file(&part);
                return Err(self.server_error(format!(
                    "sent {file} with {} {got}, but announced {} ({}); the download was removed",
                    want.name(),
                    want.hex(),
                    want.header()
                )));
            }
        }
        std::fs::rename(&part, &blob).map_err(|e| {
            Error::Download(format!(
                "{}: cannot move the download of {file} into place ({} to {}): {e}",
                self.what(),
                part.display(),
                blob.display()
            ))
        })?;
        sync_dir(&blobs);
        Ok(blob)
    }

    /// Refuses a download of the `size - start` bytes still missing from `file` when the file
    /// system holding `blobs` has less free space than that (a lying or huge size fills no
    /// disk); nothing is written.
    fn check_free_space(&self, file: &str, size: u64, start: u64, blobs: &Path) -> Result<()> {
        let need = size - start;
        match free_space(blobs) {
            Some(free) if free < need => Err(self.server_error(format!(
                "announced {size} bytes for {file} ({need} still to fetch), more than the {free} \
                 bytes free on the file system of the cache {}; nothing was downloaded (free \
                 space, or set HF_HUB_CACHE to a larger disk)",
                self.opts.cache.display()
            ))),
            _ => Ok(()),
        }
    }

    /// Downloads `file` (checked as a path) and links it into the snapshot of the commit the
    /// server names; records `refs/<revision>`.
    pub(crate) fn download(&self, file: &str) -> Result<PathBuf> {
        let meta = self.metadata(file)?;
        let blob = self.download_blob(file, &meta)?;
        let pointer = self.link_snapshot(&meta.commit, file, &blob)?;
        self.write_ref(&meta.commit)?;
        Ok(pointer)
    }

    /// The repository's commit and file names at the revision
    /// (`{endpoint}/api/{models|datasets}/{repo}/revision/{revision}`); every name is checked.
    pub(crate) fn list(&self) -> Result<(String, Vec<String>)> {
        #[derive(serde::Deserialize)]
        struct Sibling {
            rfilename: String,
        }
        #[derive(serde::Deserialize)]
        struct Info {
            sha: Option<String>,
            #[serde(default)]
            siblings: Vec<Sibling>,
        }
        let url = format!(
            "{}/api/{}/{}/revision/{}",
            self.opts.endpoint,
            self.kind.plural(),
            self.repo,
            self.revision.replace('/', "%2F")
        );
        let resp = self.get(&url, None, "list its files")?;
        if resp.status() != 200 {
            return Err(self.server_error(format!(
                "answered the file listing with HTTP {}",
                resp.status()
            )));
        }
        let mut body = Vec::new();
        RateGuard::new(resp.into_reader(), self.opts)
            .take(LISTING_CAP)
            .read_to_end(&mut body)
            .map_err(|e| self.server_error(format!("broke off the file listing: {e}")))?;
        let info: Info = serde_json::from_slice(&body).map_err(|e| {
            self.server_error(format!(
                "sent a file listing that is not the hub's JSON: {e}"
            ))
        })?;
        let sha = info.sha.unwrap_or_default();
        if !is_commit(&sha) {
            return Err(self.server_error(format!(
                "sent the commit {} in the file listing, which is not 40 hex digits",
                shown(&sha)
            )));
        }
        let names: Vec<String> = info.siblings.into_iter().map(|s| s.rfilename).collect();
        for n in &names {
            self.check_name(n, "the file listing")?;
        }
        Ok((sha.to_ascii_lowercase(), names))
    }
}

/// The most bytes of a file listing read.
const LISTING_CAP: u64 = 64 << 20;

/// Bytes free to an unprivileged writer on the file system holding `dir`; `None` where that
/// cannot be told (then no check is made).
#[allow(clippy::unnecessary_cast)] // the field types of `statvfs` differ between platforms
fn free_space(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: `path` is NUL-terminated and `st` a properly sized, writable statvfs
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
            return None;
        }
        Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// A response body that fails (`TimedOut`) when fewer than [`HubOptions::min_rate`] ×
/// [`HubOptions::rate_window`] bytes arrive in a window: each read is bounded by the read
/// timeout, but a server that sends a byte now and then never trips it. The bytes of the read
/// that fails are dropped (never written), so a kept `.part` file stays a prefix.
struct RateGuard<R> {
    inner: R,
    /// Bytes per window required (0: no check).
    want: u64,
    window: Duration,
    since: Instant,
    got: u64,
}

impl<R: Read> RateGuard<R> {
    fn new(inner: R, opts: &HubOptions) -> Self {
        let want = (opts.min_rate as f64 * opts.rate_window.as_secs_f64()).ceil() as u64;
        Self {
            inner,
            want,
            window: opts.rate_window,
            since: Instant::now(),
            got: 0,
        }
    }
}

impl<R: Read> Read for RateGuard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.want == 0 || n == 0 {
            return Ok(n);
        }
        self.got += n as u64;
        let elapsed = self.since.elapsed();
        if elapsed >= self.window {
            if self.got < self.want {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "{} bytes arrived in {:.1} s, fewer than the {} a window of {:?} \
                         requires",
                        self.got,
                        elapsed.as_secs_f64(),
                        self.want,
                        self.window
                    ),
                ));
            }
            self.since = Instant::now();
            self.got = 0;
        }
        Ok(n)
    }
}

/// What the server announced for one file.
#[derive(Debug)]
struct Metadata {
    /// The commit the revision resolved to (40 hex, lower case).
    commit: String,
    /// The blob name: `X-Linked-Etag`, else `ETag`, without quotes (checked).
    etag: String,
    /// The file's size in bytes.
    size: u64,
    /// The hash the content must have, where the server announced one.
    hash: Option<ContentHash>,
}

/// A content hash a server announces for a file (lower-case hex).
#[derive(Debug, Clone, PartialEq)]
enum ContentHash {
    /// LFS files: `X-Linked-Etag` is SHA-256(content).
    Sha256(String),
    /// Other files: a strong `ETag` of 40 hex digits is git's blob hash,
    /// SHA-1(`"blob " + decimal(size) + "\0" + content`).
    GitSha1(String),
}

impl ContentHash {
    fn hex(&self) -> &str {
        match self {
            Self::Sha256(h) | Self::GitSha1(h) => h,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Sha256(_) => "SHA-256",
            Self::GitSha1(_) => "git blob SHA-1",
        }
    }

    /// The header that announced it.
    fn header(&self) -> &'static str {
        match self {
            Self::Sha256(_) => "X-Linked-Etag",
            Self::GitSha1(_) => "ETag",
        }
    }
}

/// The running hash of a download, of the kind its [`ContentHash`] names.
enum Hasher {
    Sha256(Sha256),
    GitSha1(Sha1),
}

impl Hasher {
    /// A hasher for a file of `size` bytes (git's blob hash starts with a header naming it).
    fn new(want: &ContentHash, size: u64) -> Self {
        match want {
            ContentHash::Sha256(_) => Self::Sha256(Sha256::new()),
            ContentHash::GitSha1(_) => {
                let mut h = Sha1::new();
                h.update(format!("blob {size}\0").as_bytes());
                Self::GitSha1(h)
            }
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Self::Sha256(h) => h.update(bytes),
            Self::GitSha1(h) => h.update(bytes),
        }
    }

    fn hex(self) -> String {
        let digest: Vec<u8> = match self {
            Self::Sha256(h) => h.finalize().to_vec(),
            Self::GitSha1(h) => h.finalize().to_vec(),
        };
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// `scheme://host[:port]` of a URL.
fn origin(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    match url[after..].find('/') {
        Some(i) => &url[..after + i],
        None => url,
    }
}

/// Feeds the first `len` bytes of `path` to `h`.
fn hash_prefix(h: &mut Hasher, path: &Path, len: u64) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut r = std::io::BufReader::new(f).take(len);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match r.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
}

/// One file of a hub repository at `revision` (a branch, a tag or a 40-hex commit): from the
/// cache when there, else downloaded (resuming a `.part` file left by an interrupted
/// download). Returns its path in the snapshot. The file name, the revision and everything the
/// server sends are checked before they become paths.
pub fn fetch_file(
    opts: &HubOptions,
    kind: RepoType,
    repo: &str,
    revision: &str,
    file: &str,
) -> Result<PathBuf> {
    let remote = Remote::new(opts, kind, repo, revision)?;
    if let Some(why) = unsafe_path_reason(file) {
        return Err(Error::Download(format!(
            "{}: file name {} is not a plain relative path: {why}",
            remote.what(),
            shown(file)
        )));
    }
    if let Some(p) = remote.cached(file) {
        return Ok(p);
    }
    if opts.offline {
        return Err(opts.offline_error(&format!(
            "{} file {file} at revision {revision}",
            remote.what()
        )));
    }
    remote.download(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_blob_sha1(bytes: &[u8]) -> String {
        let want = ContentHash::GitSha1(String::new());
        let mut h = Hasher::new(&want, bytes.len() as u64);
        h.update(bytes);
        h.hex()
    }

    /// Git's blob hash, against values git and huggingface_hub publish: the empty blob every
    /// git repository knows, and the example of `huggingface_hub.utils.sha.git_hash`.
    #[test]
    fn git_blob_hash_matches_git() {
        assert_eq!(
            git_blob_sha1(b""),
            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
        assert_eq!(
            git_blob_sha1(b"Hello, World!"),
            "b45ef6fec89518d314f546fd6c3025367b721684"
        );
        // fed in pieces, as a resumed download is
        let want = ContentHash::GitSha1(String::new());
        let mut h = Hasher::new(&want, 13);
        h.update(b"Hello, ");
        h.update(b"World!");
        assert_eq!(h.hex(), "b45ef6fec89518d314f546fd6c3025367b721684");
    }
}
