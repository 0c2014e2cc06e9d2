//! Hugging Face hub downloads: a small client on `ureq` (rustls) that trusts no server.
//!
//! A hub id that is not in the local cache is fetched into the standard cache layout
//! (`<cache>/models--owner--name/{blobs/<etag>, snapshots/<commit>/<file>, refs/<revision>}`,
//! datasets under `datasets--owner--name`), the same layout `huggingface_hub` writes, so either
//! tool reads what the other fetched. This replaces the `hf-hub` crate, which used the names a
//! server sends (file names, ETags, commit headers) as cache paths unchecked, set no timeouts
//! and cached a short download as complete.
//!
//! Environment, as `huggingface_hub` reads it:
//!
//! | variable | effect |
//! |---|---|
//! | `HF_ENDPOINT` | the hub's base URL (default `https://huggingface.co`) |
//! | `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub` | the cache |
//! | `HF_HUB_OFFLINE=1` | never download: an uncached file is an error that says so |
//! | `HF_TOKEN`, else `HF_HOME/token` | bearer token (gated and private repositories) |
//! | `HF_HUB_DOWNLOAD_TIMEOUT` | seconds a read may wait for the server (default 60) |
//!
//! What a server sends is checked before it is used (see `docs/hub.md`):
//!
//! - every name that becomes a path (file names of the listing, shard names of
//!   `model.safetensors.index.json`, ETags, commit shas, revisions) must be a plain relative
//!   path inside the cache: no `..`, no absolute path, no empty component, no backslash or NUL;
//!   a commit is exactly 40 hex digits, an ETag a short `[A-Za-z0-9._-]` token. Otherwise the
//!   download fails with an error naming the server and the name;
//! - connections and reads time out ([`HubOptions::connect_timeout`],
//!   [`HubOptions::read_timeout`]);
//! - a file is complete only when its byte count equals the announced size (`X-Linked-Size`,
//!   else `Content-Length`) and, for LFS files (whose `X-Linked-Etag` is the SHA-256 of the
//!   content), its SHA-256 matches.
//!
//! Downloads are resumable: a file is written to `blobs/<etag>.part`, synced and renamed when
//! complete; an interrupted download leaves the `.part` file, and the next call asks the
//! server for the remaining bytes only (HTTP `Range`). A progress bar per file is drawn on
//! stderr when `progress` is on.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::io::files::{index_shards, is_pickle_weight, pickle_refused, unsafe_path_reason};

/// The kind of a hub repository; it decides the URL prefix and the cache folder's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepoType {
    /// A model repository (`{endpoint}/{repo}`, cache `models--owner--name`).
    Model,
    /// A dataset repository (`{endpoint}/datasets/{repo}`, cache `datasets--owner--name`).
    Dataset,
    /// A Space (`{endpoint}/spaces/{repo}`, cache `spaces--owner--name`).
    Space,
}

impl RepoType {
    /// `model`, `dataset` or `space`, as errors name the kind.
    fn name(self) -> &'static str {
        match self {
            RepoType::Model => "model",
            RepoType::Dataset => "dataset",
            RepoType::Space => "space",
        }
    }

    /// `models`, `datasets` or `spaces`: the cache folder's and the API path's prefix.
    fn plural(self) -> &'static str {
        match self {
            RepoType::Model => "models",
            RepoType::Dataset => "datasets",
            RepoType::Space => "spaces",
        }
    }
}

/// Where and how to reach the hub. Its `Debug` form hides the token.
#[derive(Clone, PartialEq, Eq)]
pub struct HubOptions {
    /// Base URL, without a trailing `/`.
    pub endpoint: String,
    /// The hub cache directory (the one holding `models--*`).
    pub cache: PathBuf,
    /// Bearer token sent to the endpoint (and to redirects on the same host only).
    pub token: Option<String>,
    /// `HF_HUB_OFFLINE`: never download.
    pub offline: bool,
    /// Draw a progress bar per file on stderr.
    pub progress: bool,
    /// How long to wait for the TCP connection to the server (the TLS handshake then runs
    /// under [`HubOptions::read_timeout`]).
    pub connect_timeout: Duration,
    /// How long one read or write may wait for the server before the request fails (an idle
    /// limit, not a limit on the whole download).
    pub read_timeout: Duration,
}

impl std::fmt::Debug for HubOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubOptions")
            .field("endpoint", &self.endpoint)
            .field("cache", &self.cache)
            .field("token", &self.token.as_ref().map(|_| "<hidden>"))
            .field("offline", &self.offline)
            .field("progress", &self.progress)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .finish()
    }
}

/// Default [`HubOptions::connect_timeout`].
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`HubOptions::read_timeout`].
pub const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// True for `1`, `true`, `yes`, `on` (any case), as `huggingface_hub` parses its flags.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

impl HubOptions {
    /// Options for `endpoint` and `cache` with no token, online, no progress bar and the
    /// default timeouts.
    pub fn new(endpoint: &str, cache: &Path) -> Self {
        Self {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            cache: cache.to_path_buf(),
            token: None,
            offline: false,
            progress: false,
            connect_timeout: CONNECT_TIMEOUT,
            read_timeout: READ_TIMEOUT,
        }
    }

    /// From `HF_ENDPOINT`, `HF_HUB_CACHE`/`HF_HOME`, `HF_TOKEN`, `HF_HUB_OFFLINE` and
    /// `HF_HUB_DOWNLOAD_TIMEOUT`; the progress bar is on when stderr is a terminal.
    pub fn from_env() -> Self {
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| "https://huggingface.co".to_string());
        let cache = hub_cache_dir();
        let token = std::env::var("HF_TOKEN")
            .or_else(|_| std::env::var("HUGGING_FACE_HUB_TOKEN"))
            .ok()
            .or_else(|| {
                let home = std::env::var_os("HF_HOME")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| cache.parent().unwrap_or(Path::new(".")).to_path_buf());
                std::fs::read_to_string(home.join("token")).ok()
            })
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        let read_timeout = std::env::var("HF_HUB_DOWNLOAD_TIMEOUT")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .unwrap_or(READ_TIMEOUT);
        Self {
            endpoint: endpoint.trim().trim_end_matches('/').to_string(),
            cache,
            token,
            offline: env_flag("HF_HUB_OFFLINE"),
            progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            connect_timeout: CONNECT_TIMEOUT,
            read_timeout,
        }
    }

    /// An HTTP agent with the timeouts; `redirects` is how many redirects it follows by
    /// itself (0: the caller sees them). The token goes to redirects on the same host only.
    fn agent(&self, redirects: u32) -> ureq::Agent {
        ureq::AgentBuilder::new()
            .timeout_connect(self.connect_timeout)
            .timeout_read(self.read_timeout)
            .timeout_write(self.read_timeout)
            .redirects(redirects)
            .redirect_auth_headers(ureq::RedirectAuthHeaders::SameHost)
            .try_proxy_from_env(true)
            .user_agent(concat!("rlvr/", env!("CARGO_PKG_VERSION")))
            .build()
    }

    /// A request with the token and without content encoding (sizes are the file's bytes).
    fn request(&self, agent: &ureq::Agent, method: &str, url: &str) -> ureq::Request {
        let req = agent
            .request(method, url)
            .set("Accept-Encoding", "identity");
        match &self.token {
            Some(t) => req.set("Authorization", &format!("Bearer {t}")),
            None => req,
        }
    }

    fn offline_error(&self, what: &str) -> Error {
        Error::Hub(format!(
            "{what} is not in the local Hugging Face cache ({}) and HF_HUB_OFFLINE is set, so \
             nothing is downloaded: unset HF_HUB_OFFLINE to fetch it from {}, or fetch it \
             elsewhere with `hf download` and copy the cache",
            self.cache.display(),
            self.endpoint
        ))
    }
}

/// The Hugging Face hub cache directory: `HF_HUB_CACHE`, else `HF_HOME/hub`, else
/// `~/.cache/huggingface/hub`.
pub fn hub_cache_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("HF_HUB_CACHE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("HF_HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(p).join("hub");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("huggingface").join("hub")
}

// ---------------------------------------------------------------------------------------------
// Validation of names that become paths (see also `files.rs`)

/// True for a commit sha: exactly 40 hex digits.
pub(crate) fn is_commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Why `etag` is not a safe blob file name, or `None`: 1 to 128 characters of
/// `[A-Za-z0-9._-]`, not starting with `.`, not ending like the client's own `.part`/`.lock`.
fn unsafe_etag_reason(etag: &str) -> Option<&'static str> {
    if etag.is_empty() {
        return Some("it is empty");
    }
    if etag.len() > 128 {
        return Some("it is longer than 128 characters");
    }
    if !etag
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Some("it has characters other than letters, digits, `.`, `_` and `-`");
    }
    if etag.starts_with('.') {
        return Some("it starts with `.`");
    }
    if etag.ends_with(".part") || etag.ends_with(".lock") {
        return Some("it ends in .part or .lock");
    }
    None
}

/// Why `repo` is not a repository id (`name` or `owner/name`, each part of
/// `[A-Za-z0-9._-]`, not starting with `.`), or `None`.
fn unsafe_repo_reason(repo: &str) -> Option<&'static str> {
    let parts: Vec<&str> = repo.split('/').collect();
    if parts.is_empty() || parts.len() > 2 {
        return Some("it is not `name` or `owner/name`");
    }
    if parts.iter().any(|p| {
        p.is_empty()
            || p.len() > 96
            || p.starts_with('.')
            || !p
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    }) {
        return Some(
            "each part must be 1 to 96 letters, digits, `.`, `_` or `-`, not starting with `.`",
        );
    }
    None
}

/// Why `rev` is not a usable revision (a branch, tag or commit; it becomes `refs/<rev>`),
/// or `None`: a safe relative path of `[A-Za-z0-9._-]` components, at most 256 bytes.
fn unsafe_revision_reason(rev: &str) -> Option<&'static str> {
    if let Some(why) = unsafe_path_reason(rev) {
        return Some(why);
    }
    if rev.len() > 256 {
        return Some("it is longer than 256 bytes");
    }
    if !rev
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/'))
    {
        return Some("it has characters other than letters, digits, `.`, `_`, `-` and `/`");
    }
    None
}

/// A name as it appears in an error: quoted and escaped, cut at 200 characters.
fn shown(name: &str) -> String {
    let mut s: String = name.chars().take(200).collect();
    if s.len() < name.len() {
        s.push('…');
    }
    format!("{s:?}")
}

/// Percent-encodes `s` for a URL path, keeping `/` and the unreserved characters.
fn url_path(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// One repository at one revision

/// A repository on the hub at a revision, with the options used to reach it.
struct Remote<'a> {
    opts: &'a HubOptions,
    kind: RepoType,
    repo: &'a str,
    revision: &'a str,
}

impl<'a> Remote<'a> {
    /// Checks the repository id and the revision (both become cache paths).
    fn new(opts: &'a HubOptions, kind: RepoType, repo: &'a str, revision: &'a str) -> Result<Self> {
        if let Some(why) = unsafe_repo_reason(repo) {
            return Err(Error::Hub(format!(
                "hub {} id {}: not a repository id: {why}",
                kind.name(),
                shown(repo)
            )));
        }
        if let Some(why) = unsafe_revision_reason(revision) {
            return Err(Error::Hub(format!(
                "hub {} {repo}: revision {} is not a branch, tag or commit name: {why}",
                kind.name(),
                shown(revision)
            )));
        }
        Ok(Self {
            opts,
            kind,
            repo,
            revision,
        })
    }

    /// `hub model owner/name`, as errors start.
    fn what(&self) -> String {
        format!("hub {} {}", self.kind.name(), self.repo)
    }

    /// An error about something the server sent.
    fn server_error(&self, msg: String) -> Error {
        Error::Hub(format!(
            "{}: the server {} {msg}",
            self.what(),
            self.opts.endpoint
        ))
    }

    /// Refuses a name from the server that is not a plain relative path; `source` says where
    /// the name came from.
    fn check_name(&self, name: &str, source: &str) -> Result<()> {
        match unsafe_path_reason(name) {
            None => Ok(()),
            Some(why) => Err(self.server_error(format!(
                "sent the unsafe file name {} in {source} ({why}); refusing to use it as a path",
                shown(name)
            ))),
        }
    }

    /// `<cache>/models--owner--name`.
    fn dir(&self) -> PathBuf {
        self.opts.cache.join(format!(
            "{}--{}",
            self.kind.plural(),
            self.repo.replace('/', "--")
        ))
    }

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
    fn cached(&self, file: &str) -> Option<PathBuf> {
        let commit = self.cached_commit()?;
        let p = self.dir().join("snapshots").join(commit).join(file);
        p.is_file().then_some(p)
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
                        "no answer in time (connect timeout {:?}, read timeout {:?}): {t}",
                        self.opts.connect_timeout, self.opts.read_timeout
                    )
                } else {
                    t.to_string()
                }
            }
        };
        Error::Hub(format!(
            "{}: cannot {what} from {}: {why}",
            self.what(),
            self.opts.endpoint
        ))
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
        let agent = self.opts.agent(0);
        let mut url = self.file_url(file);
        let mut hops = 0;
        let resp = loop {
            let resp = self
                .opts
                .request(&agent, "HEAD", &url)
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
        let sha256 =
            (linked.is_some() && etag.len() == 64 && etag.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| etag.to_ascii_lowercase());
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
            sha256,
        })
    }

    /// Downloads `file` into `blobs/<etag>` (resuming `blobs/<etag>.part`) and returns the
    /// blob's path. The blob is renamed into place only when its size, and its SHA-256 where
    /// the server gave one, match.
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
        let mut hasher = meta.sha256.as_ref().map(|_| Sha256::new());
        if start < meta.size {
            let url = self.file_url(file);
            let resp = self
                .opts
                .request(&self.opts.agent(5), "GET", &url)
                .set("Range", &format!("bytes={start}-"))
                .call()
                .map_err(|e| self.http_error(&format!("download {file}"), e))?;
            match resp.status() {
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
                }
                200 => {}
                code => {
                    return Err(self
                        .server_error(format!("answered the download of {file} with HTTP {code}")))
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
            let mut body = resp.into_reader().take(meta.size - start + 1);
            let mut got = start;
            let mut buf = vec![0u8; 1 << 16];
            let read_error = loop {
                let n = match body.read(&mut buf) {
                    Ok(0) => break None,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => break Some(e),
                };
                out.write_all(&buf[..n]).map_err(|e| Error::io(&part, e))?;
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
            out.sync_all().map_err(|e| Error::io(&part, e))?;
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
                    Some(e) => format!("the transfer broke off ({e})"),
                    None => "the server's answer ended early".to_string(),
                };
                return Err(Error::Hub(format!(
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
        if let (Some(h), Some(want)) = (hasher, &meta.sha256) {
            let got: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
            if &got != want {
                let _ = std::fs::remove_file(&part);
                return Err(self.server_error(format!(
                    "sent {file} with SHA-256 {got}, but announced {want} (X-Linked-Etag); the \
                     download was removed"
                )));
            }
        }
        std::fs::rename(&part, &blob).map_err(|e| Error::io(&blob, e))?;
        sync_dir(&blobs);
        Ok(blob)
    }

    /// Points `snapshots/<commit>/<file>` at `blob` (a relative link, as `huggingface_hub`
    /// makes; a copy where links are not available).
    fn link_snapshot(&self, commit: &str, file: &str, blob: &Path) -> Result<PathBuf> {
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
    fn write_ref(&self, commit: &str) -> Result<()> {
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

    /// Downloads `file` (checked as a path) and links it into the snapshot of the commit the
    /// server names; records `refs/<revision>`.
    fn download(&self, file: &str) -> Result<PathBuf> {
        let meta = self.metadata(file)?;
        let blob = self.download_blob(file, &meta)?;
        let pointer = self.link_snapshot(&meta.commit, file, &blob)?;
        self.write_ref(&meta.commit)?;
        Ok(pointer)
    }

    /// The repository's commit and file names at the revision
    /// (`{endpoint}/api/{models|datasets}/{repo}/revision/{revision}`); every name is checked.
    fn list(&self) -> Result<(String, Vec<String>)> {
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
        let resp = self
            .opts
            .request(&self.opts.agent(5), "GET", &url)
            .call()
            .map_err(|e| self.http_error("list its files", e))?;
        let mut body = Vec::new();
        resp.into_reader()
            .take(64 << 20)
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

/// What the server announced for one file.
#[derive(Debug)]
struct Metadata {
    /// The commit the revision resolved to (40 hex, lower case).
    commit: String,
    /// The blob name: `X-Linked-Etag`, else `ETag`, without quotes (checked).
    etag: String,
    /// The file's size in bytes.
    size: u64,
    /// The content's SHA-256 (lower-case hex) for LFS files.
    sha256: Option<String>,
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
fn hash_prefix(h: &mut Sha256, path: &Path, len: u64) -> Result<()> {
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

/// Best effort: makes a rename in `dir` durable.
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// An exclusive lock on `path` (created), so two processes do not write one `.part` file;
/// waits up to 10 s for another holder.
fn lock(path: &Path) -> Result<std::fs::File> {
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
    Err(Error::Hub(format!(
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
        return Err(Error::Hub(format!(
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

/// The files of a model repository rlvr reads, from the repository's file list: config,
/// tokenizer, generation config, chat template and safetensors weights (single, or the index
/// whose shards are fetched after it). A repository with only pickle weights is refused
/// before anything is downloaded.
fn model_files(repo: &str, listed: &[String]) -> Result<Vec<String>> {
    let has = |f: &str| listed.iter().any(|l| l == f);
    for f in ["config.json", "tokenizer.json"] {
        if !has(f) {
            return Err(Error::Hub(format!(
                "hub model {repo} has no {f}: not a transformers causal-LM repository rlvr can load"
            )));
        }
    }
    let mut files: Vec<String> = [
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "generation_config.json",
        "chat_template.jinja",
    ]
    .iter()
    .filter(|f| has(f))
    .map(|f| f.to_string())
    .collect();
    if has("model.safetensors") {
        files.push("model.safetensors".into());
    } else if has("model.safetensors.index.json") {
        files.push("model.safetensors.index.json".into());
    } else {
        let pickles: Vec<String> = listed
            .iter()
            .filter(|n| is_pickle_weight(n))
            .cloned()
            .collect();
        if !pickles.is_empty() {
            return Err(pickle_refused(&format!("hub model {repo}"), &pickles));
        }
        return Err(Error::Hub(format!(
            "hub model {repo} has no model.safetensors or model.safetensors.index.json"
        )));
    }
    Ok(files)
}

/// Downloads the files of model `repo` (branch `main`) that rlvr reads (see [`model_files`];
/// with a sharded checkpoint, the shards `model.safetensors.index.json` names) into the cache
/// and returns the snapshot directory. All files come from the one commit the listing names;
/// files already cached are not fetched again.
pub fn download_model(opts: &HubOptions, repo: &str) -> Result<PathBuf> {
    let main = Remote::new(opts, RepoType::Model, repo, "main")?;
    if opts.offline {
        return Err(opts.offline_error(&format!("model {repo}")));
    }
    let (commit, listed) = main.list().map_err(|e| match e {
        Error::Hub(m) => Error::Hub(format!("{m} (and no local directory {repo} exists)")),
        e => e,
    })?;
    let at = Remote::new(opts, RepoType::Model, repo, &commit)?;
    let fetch = |f: &str| -> Result<PathBuf> {
        match at.cached(f) {
            Some(p) => Ok(p),
            None => at.download(f),
        }
    };
    let mut dir = None;
    for f in model_files(repo, &listed)? {
        let path = fetch(&f)?;
        if f == "config.json" {
            dir = path.parent().map(Path::to_path_buf);
        }
        if f == "model.safetensors.index.json" {
            let shards = index_shards(&path).map_err(|e| match e {
                Error::BadFile { reason, .. } => at.server_error(format!(
                    "sent a model.safetensors.index.json that rlvr refuses: {reason}"
                )),
                e => e,
            })?;
            for s in shards {
                fetch(&s)?;
            }
        }
    }
    main.write_ref(&commit)?;
    dir.ok_or_else(|| Error::Hub(format!("hub model {repo}: no config.json downloaded")))
}
