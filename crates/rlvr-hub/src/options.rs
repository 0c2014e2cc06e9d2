//! Where and how to reach the hub ([`HubOptions`]), read from the environment as
//! `huggingface_hub` reads it:
//!
//! | variable | effect |
//! |---|---|
//! | `HF_ENDPOINT` | the hub's base URL (default `https://huggingface.co`) |
//! | `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub` | the cache |
//! | `HF_HUB_OFFLINE=1` | never download: an uncached file is an error that says so |
//! | `HF_TOKEN`, else `HF_HOME/token` | bearer token (gated and private repositories) |
//! | `HF_HUB_DOWNLOAD_TIMEOUT` | seconds a read may wait for the server (default 60) |
//! | `RLVR_HUB_MIN_RATE` | bytes per second a download must average over each window (default 1024; `0` turns the limit off) |
//! | `RLVR_HUB_RATE_WINDOW` | seconds of that window (default 60) |
//!
//! A value of these three that is not a positive number (a non-negative integer for
//! `RLVR_HUB_MIN_RATE`) is ignored: the default holds, as `huggingface_hub` treats its own.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::Error;

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
    /// limit, not a limit on the whole download: see [`HubOptions::min_rate`]).
    pub read_timeout: Duration,
    /// The slowest transfer accepted, in bytes per second (0: no limit). A body (a file, the
    /// file listing) of which fewer than `min_rate` × [`HubOptions::rate_window`] bytes arrive
    /// in any window is ended (a file's `.part` is kept and resumed by the next call). A
    /// server that drips one byte per second never times out a read, and is stopped by this;
    /// the status line and headers of every answer must arrive within
    /// [`HubOptions::header_limit`].
    pub min_rate: u64,
    /// The window [`HubOptions::min_rate`] is averaged over.
    pub rate_window: Duration,
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
            .field("min_rate", &self.min_rate)
            .field("rate_window", &self.rate_window)
            .finish()
    }
}

/// Default [`HubOptions::connect_timeout`].
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`HubOptions::read_timeout`].
pub const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Default [`HubOptions::min_rate`]: 1 KiB/s.
pub const MIN_RATE: u64 = 1024;
/// Default [`HubOptions::rate_window`].
pub const RATE_WINDOW: Duration = Duration::from_secs(60);

/// The positive, finite number of seconds in variable `name`, if it holds one.
fn env_seconds(name: &str) -> Option<Duration> {
    std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map(Duration::from_secs_f64)
}

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
    /// default timeouts and minimum rate.
    pub fn new(endpoint: &str, cache: &Path) -> Self {
        Self {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            cache: cache.to_path_buf(),
            token: None,
            offline: false,
            progress: false,
            connect_timeout: CONNECT_TIMEOUT,
            read_timeout: READ_TIMEOUT,
            min_rate: MIN_RATE,
            rate_window: RATE_WINDOW,
        }
    }

    /// From `HF_ENDPOINT`, `HF_HUB_CACHE`/`HF_HOME`, `HF_TOKEN`, `HF_HUB_OFFLINE`,
    /// `HF_HUB_DOWNLOAD_TIMEOUT`, `RLVR_HUB_MIN_RATE` and `RLVR_HUB_RATE_WINDOW`; the progress
    /// bar is on when stderr is a terminal.
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
        let read_timeout = env_seconds("HF_HUB_DOWNLOAD_TIMEOUT").unwrap_or(READ_TIMEOUT);
        let min_rate = std::env::var("RLVR_HUB_MIN_RATE")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(MIN_RATE);
        let rate_window = env_seconds("RLVR_HUB_RATE_WINDOW").unwrap_or(RATE_WINDOW);
        Self {
            endpoint: endpoint.trim().trim_end_matches('/').to_string(),
            cache,
            token,
            offline: env_flag("HF_HUB_OFFLINE"),
            progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            connect_timeout: CONNECT_TIMEOUT,
            read_timeout,
            min_rate,
            rate_window,
        }
    }

    /// An HTTP agent with the timeouts that follows no redirect by itself: the caller sees
    /// each one and decides where the token goes ([`HubOptions::request`]).
    pub(crate) fn agent(&self) -> ureq::Agent {
        ureq::AgentBuilder::new()
            .timeout_connect(self.connect_timeout)
            .timeout_read(self.read_timeout)
            .timeout_write(self.read_timeout)
            .redirects(0)
            .redirect_auth_headers(ureq::RedirectAuthHeaders::Never)
            .try_proxy_from_env(true)
            .user_agent(concat!("rlvr/", env!("CARGO_PKG_VERSION")))
            .build()
    }

    /// How long the status line and headers of an answer may take in all, from the start of
    /// the request: [`HubOptions::connect_timeout`] plus [`HubOptions::read_timeout`] (each
    /// read within the read timeout is not enough: a server may drip them).
    pub fn header_limit(&self) -> Duration {
        self.connect_timeout.saturating_add(self.read_timeout)
    }

    /// A request without content encoding (sizes are the file's bytes), that must be
    /// answered in full within `deadline` when one is given, with the token only when `url` has the
    /// endpoint's own scheme, host and port ([`same_origin`]), as `huggingface_hub` sends it
    /// to the hub alone: a redirect to another port of the same host, or to a storage host,
    /// gets no token.
    pub(crate) fn request(
        &self,
        agent: &ureq::Agent,
        method: &str,
        url: &str,
        deadline: Option<Duration>,
    ) -> ureq::Request {
        let mut req = agent
            .request(method, url)
            .set("Accept-Encoding", "identity");
        if let Some(d) = deadline {
            req = req.timeout(d);
        }
        match &self.token {
            Some(t) if same_origin(&self.endpoint, url) => {
                req.set("Authorization", &format!("Bearer {t}"))
            }
            _ => req,
        }
    }

    /// The error for `what`, not in the cache while [`HubOptions::offline`] forbids a download.
    pub(crate) fn offline_error(&self, what: &str) -> Error {
        Error::Download(format!(
            "{what} is not in the local Hugging Face cache ({}) and HF_HUB_OFFLINE is set, so \
             nothing is downloaded: unset HF_HUB_OFFLINE to fetch it from {}, or fetch it \
             elsewhere with `hf download` and copy the cache",
            self.cache.display(),
            self.endpoint
        ))
    }
}

/// True when `url` has the scheme, host and port of `endpoint` (the default port of the
/// scheme when none is written; host names compared without case). Anything that does not
/// parse as an http(s) URL is not the same origin.
pub(crate) fn same_origin(endpoint: &str, url: &str) -> bool {
    match (origin_of(endpoint), origin_of(url)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// `(scheme, host, port)` of an `http`/`https` URL, lower case, the port made explicit; `None`
/// for anything else (userinfo in the authority included, so `https://hub@evil` is refused).
fn origin_of(url: &str) -> Option<(String, String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    // `[v6]:port`, or `host:port`
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (h, after) = v6.split_once(']')?;
            (format!("[{h}]"), after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        },
    };
    let port = match port {
        None | Some("") => default,
        Some(p) => p.parse::<u16>().ok()?,
    };
    Some((scheme, host.to_ascii_lowercase(), port))
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

#[cfg(test)]
mod tests {
    use super::same_origin;

    /// The token's rule: scheme, host and port of the endpoint, default ports made explicit.
    #[test]
    fn same_origin_compares_scheme_host_and_port() {
        let hub = "https://huggingface.co";
        for same in [
            "https://huggingface.co/a/b",
            "https://HuggingFace.co:443/x",
            "https://huggingface.co?x",
        ] {
            assert!(same_origin(hub, same), "{same}");
        }
        for other in [
            "http://huggingface.co/a",
            "https://huggingface.co:8443/a",
            "https://cdn-lfs.huggingface.co/a",
            "https://huggingface.co.evil.com/a",
            "https://huggingface.co@evil.com/a",
            "ftp://huggingface.co/a",
            "/relative",
            "https://huggingface.co:99999/a",
        ] {
            assert!(!same_origin(hub, other), "{other}");
        }
        assert!(same_origin(
            "http://127.0.0.1:8000",
            "http://127.0.0.1:8000/x"
        ));
        assert!(!same_origin(
            "http://127.0.0.1:8000",
            "http://127.0.0.1:8001/x"
        ));
        assert!(same_origin("http://[::1]:80", "http://[::1]/x"));
    }
}
