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
    pub(crate) fn agent(&self, redirects: u32) -> ureq::Agent {
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
    pub(crate) fn request(&self, agent: &ureq::Agent, method: &str, url: &str) -> ureq::Request {
        let req = agent
            .request(method, url)
            .set("Accept-Encoding", "identity");
        match &self.token {
            Some(t) => req.set("Authorization", &format!("Bearer {t}")),
            None => req,
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
