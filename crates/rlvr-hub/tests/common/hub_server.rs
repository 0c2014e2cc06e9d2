//! A loopback stand-in for the Hugging Face hub: serves files from a directory with the hub's
//! URL layout and the headers a hub client reads. Binds 127.0.0.1 only; nothing else is reached.
//!
//! - `GET /api/{models|datasets}/{owner}/{name}/revision/{rev}`: `{"sha", "siblings"}`
//! - `GET` or `HEAD /{owner}/{name}/resolve/{rev}/{file}` and
//!   `/datasets/{owner}/{name}/resolve/...`: the file, honouring `Range: bytes=a-` /
//!   `bytes=a-b` (206 with `Content-Range`), with `ETag` and `X-Repo-Commit`.
//!
//! The commit it names (`X-Repo-Commit`, the listing's `sha`) is the revision asked for when
//! that is 40 hex digits (a pinned commit), else [`COMMIT`] ([`commit_of`]).
//!
//! Files live in `root/models/{owner}/{name}/` and `root/datasets/{owner}/{name}/`. Every
//! request is logged as `<METHOD> <path> range=<Range> auth=<Authorization>`.
//!
//! [`Hostile`] turns it into a hostile or broken hub: unsafe names and headers, wrong sizes and
//! hashes, answers dripped a byte at a time, redirects elsewhere, or no answer at all.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The commit answered for a branch or tag name (`main`).
pub const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// The commit the server names for revision `rev`.
pub fn commit_of(rev: &str) -> &str {
    if rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit()) {
        rev
    } else {
        COMMIT
    }
}

pub struct HubServer {
    pub endpoint: String,
    pub log: Arc<Mutex<Vec<String>>>,
    /// The next full download (`Range: bytes=0-`) of a file with this name sends only half
    /// of the body, then closes the connection (an interrupted download).
    pub truncate_once: Arc<Mutex<Option<String>>>,
    /// Misbehaviour, for every request from now on (default: none).
    pub hostile: Arc<Mutex<Hostile>>,
}

/// How the server misbehaves. The default is an honest hub.
#[derive(Debug, Clone, Default)]
pub struct Hostile {
    /// The raw bytes of every `X-Repo-Commit` header (and the listing's `sha` when they are
    /// UTF-8), instead of [`COMMIT`].
    pub commit: Option<Vec<u8>>,
    /// Every `ETag` header's value (sent as is), instead of the content's hash in quotes.
    pub etag: Option<String>,
    /// An `X-Linked-Etag` header (the hub's SHA-256 of an LFS file) on every file.
    pub linked_etag: Option<String>,
    /// Sends `X-Linked-Size` = the file's size plus this (the body stays the real file).
    pub announce_extra: Option<u64>,
    /// Every ranged GET of a file sends only the first half of the requested bytes, with a
    /// `Content-Length` that matches them (a consistent but short answer; `Content-Range`
    /// still claims the whole range).
    pub short_body: bool,
    /// More names in the file listing.
    pub extra_siblings: Vec<String>,
    /// Accept connections, read nothing, answer nothing (for 30 s).
    pub silent: bool,
    /// Sends `X-Linked-Size` = this, and this as the total of `Content-Range` (the body stays
    /// the real file): a consistent lie about the size.
    pub announce: Option<u64>,
    /// Downloads and the listing (GET) send their headers at once, then the body one byte per
    /// interval.
    pub drip_body: Option<std::time::Duration>,
    /// Every answer, its status line and headers included, goes out one byte per interval.
    pub drip_all: Option<std::time::Duration>,
    /// File downloads (GET) are answered with `302 Found` to this base URL and the same path.
    pub redirect_to: Option<String>,
    /// Downloads and the listing (GET) are sent without `Content-Length`; the body ends when
    /// the connection closes.
    pub no_length: bool,
}

impl HubServer {
    pub fn start(root: &Path) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let truncate_once = Arc::new(Mutex::new(None));
        let hostile = Arc::new(Mutex::new(Hostile::default()));
        let (root, l, t, h) = (
            root.to_path_buf(),
            log.clone(),
            truncate_once.clone(),
            hostile.clone(),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, l, t) = (root.clone(), l.clone(), t.clone());
                let hostile = h.lock().unwrap().clone();
                std::thread::spawn(move || {
                    if hostile.silent {
                        std::thread::sleep(std::time::Duration::from_secs(30));
                        drop(stream);
                        return;
                    }
                    let _ = serve(stream, &root, &l, &t, &hostile);
                });
            }
        });
        Self {
            endpoint,
            log,
            truncate_once,
            hostile,
        }
    }

    /// The requests so far (and clears the log).
    pub fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

/// FNV-1a of the content, as the blob's etag.
fn etag(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

fn list(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = format!("{prefix}{}", e.file_name().to_string_lossy());
        if e.path().is_dir() {
            list(&e.path(), &format!("{name}/"), out);
        } else {
            out.push(name);
        }
    }
}

/// The status line and headers (values as raw bytes), with `Content-Length: len`.
fn head(status: &str, headers: &[(String, Vec<u8>)], len: usize) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {len}\r\n").into_bytes();
    for (k, v) in headers {
        head.extend_from_slice(format!("{k}: ").as_bytes());
        head.extend_from_slice(v);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    head
}

/// Writes `bytes` one at a time, `interval` apart; stops when the client hangs up.
fn drip(s: &mut TcpStream, bytes: &[u8], interval: std::time::Duration) {
    for b in bytes {
        if s.write_all(std::slice::from_ref(b)).is_err() || s.flush().is_err() {
            return;
        }
        std::thread::sleep(interval);
    }
}

/// Sends a whole response; a `HEAD` gets the headers only.
fn respond(
    s: &mut TcpStream,
    method: &str,
    status: &str,
    headers: &[(String, Vec<u8>)],
    body: &[u8],
) {
    let _ = s.write_all(&head(status, headers, body.len()));
    if method != "HEAD" {
        let _ = s.write_all(body);
    }
}

/// [`respond`] as `hostile` asks: dripped, or without `Content-Length` (GET only).
fn respond_as(
    s: &mut TcpStream,
    method: &str,
    status: &str,
    headers: &[(String, Vec<u8>)],
    body: &[u8],
    hostile: &Hostile,
) {
    let mut top = head(status, headers, body.len());
    let body = if method == "HEAD" { &[][..] } else { body };
    if hostile.no_length && method == "GET" {
        let text = String::from_utf8_lossy(&top).to_string();
        let cut: String = text
            .split_inclusive("\r\n")
            .filter(|l| !l.starts_with("Content-Length:"))
            .collect();
        top = cut.into_bytes();
    }
    if let Some(every) = hostile.drip_all {
        drip(s, &top, every);
        drip(s, body, every);
        return;
    }
    let _ = s.write_all(&top);
    match hostile.drip_body {
        Some(every) if method == "GET" => drip(s, body, every),
        _ => {
            let _ = s.write_all(body);
        }
    }
}

fn header(k: &str, v: impl Into<Vec<u8>>) -> (String, Vec<u8>) {
    (k.to_string(), v.into())
}

fn serve(
    mut s: TcpStream,
    root: &Path,
    log: &Mutex<Vec<String>>,
    truncate: &Mutex<Option<String>>,
    hostile: &Hostile,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(s.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, path) = (
        parts.next().unwrap_or("").to_string(),
        parts.next().unwrap_or("").to_string(),
    );
    let (mut range, mut auth) = (String::new(), String::new());
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            match k.trim().to_ascii_lowercase().as_str() {
                "range" => range = v.trim().to_string(),
                "authorization" => auth = v.trim().to_string(),
                _ => {}
            }
        }
    }
    log.lock()
        .unwrap()
        .push(format!("{method} {path} range={range} auth={auth}"));
    let not_found = |s: &mut TcpStream, what: &str| {
        let h = vec![header("X-Error-Code", "EntryNotFound")];
        respond(s, &method, "404 Not Found", &h, what.as_bytes());
    };
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    // the revision asked for: `api/{kind}/{owner}/{name}/revision/{rev}` or
    // `[datasets/]{owner}/{name}/resolve/{rev}/...`
    let rev = if segs.first() == Some(&"api") {
        segs.get(5)
    } else {
        let at = usize::from(segs.first() == Some(&"datasets"));
        segs.get(at + 3)
    };
    let commit = hostile
        .commit
        .clone()
        .unwrap_or_else(|| commit_of(rev.copied().unwrap_or("")).as_bytes().to_vec());
    // the listing API
    if segs.len() >= 6 && segs[0] == "api" && segs[4] == "revision" {
        let dir = root.join(segs[1]).join(segs[2]).join(segs[3]);
        if !dir.is_dir() {
            not_found(&mut s, "repository not found");
            return Ok(());
        }
        let mut files = Vec::new();
        list(&dir, "", &mut files);
        files.sort();
        files.extend(hostile.extra_siblings.iter().cloned());
        let siblings: Vec<serde_json::Value> = files
            .iter()
            .map(|f| serde_json::json!({ "rfilename": f }))
            .collect();
        let sha = String::from_utf8_lossy(&commit);
        let body = serde_json::json!({ "sha": sha, "siblings": siblings }).to_string();
        let h = vec![header("Content-Type", "application/json")];
        respond_as(&mut s, &method, "200 OK", &h, body.as_bytes(), hostile);
        return Ok(());
    }
    // file downloads
    let (kind, rest) = if segs.first() == Some(&"datasets") {
        ("datasets", &segs[1..])
    } else {
        ("models", &segs[..])
    };
    if rest.len() < 5 || rest[2] != "resolve" {
        not_found(&mut s, "no such route");
        return Ok(());
    }
    let file: PathBuf = rest[4..].iter().collect();
    let full = root.join(kind).join(rest[0]).join(rest[1]).join(&file);
    let Ok(bytes) = std::fs::read(&full) else {
        not_found(&mut s, "entry not found");
        return Ok(());
    };
    if let (Some(to), "GET") = (&hostile.redirect_to, method.as_str()) {
        let h = vec![header("Location", format!("{to}{path}"))];
        respond(&mut s, &method, "302 Found", &h, b"");
        return Ok(());
    }
    let size = bytes.len();
    let tag = (hostile.etag.clone()).unwrap_or_else(|| format!("\"{}\"", etag(&bytes)));
    let mut headers = vec![header("ETag", tag), header("X-Repo-Commit", commit)];
    if let Some(linked) = &hostile.linked_etag {
        headers.push(header("X-Linked-Etag", format!("\"{linked}\"")));
    }
    if let Some(extra) = hostile.announce_extra {
        headers.push(header("X-Linked-Size", (size as u64 + extra).to_string()));
    }
    if let Some(n) = hostile.announce {
        headers.push(header("X-Linked-Size", n.to_string()));
    }
    let Some(spec) = range.strip_prefix("bytes=") else {
        respond_as(&mut s, &method, "200 OK", &headers, &bytes, hostile);
        return Ok(());
    };
    let (a, b) = spec.split_once('-').unwrap_or((spec, ""));
    let a: usize = a.parse().unwrap_or(0);
    if a >= size {
        respond(&mut s, &method, "416 Range Not Satisfiable", &headers, b"");
        return Ok(());
    }
    let b: usize = b.parse().unwrap_or(size - 1).min(size - 1);
    // a lie about the size is kept up in the total of Content-Range
    let total = hostile.announce.map_or(size as u64, |n| n);
    headers.push(header("Content-Range", format!("bytes {a}-{b}/{total}")));
    let body = &bytes[a..=b];
    if hostile.short_body && method == "GET" {
        let half = &body[..body.len() / 2];
        respond(&mut s, &method, "206 Partial Content", &headers, half);
        return Ok(());
    }
    let name = file.to_string_lossy().to_string();
    let cut = spec == "0-" && truncate.lock().unwrap().as_deref() == Some(name.as_str());
    if cut {
        *truncate.lock().unwrap() = None;
        s.write_all(&head("206 Partial Content", &headers, body.len()))?;
        s.write_all(&body[..body.len() / 2])?;
        s.flush()?;
        return s.shutdown(std::net::Shutdown::Both);
    }
    respond_as(
        &mut s,
        &method,
        "206 Partial Content",
        &headers,
        body,
        hostile,
    );
    Ok(())
}
