//! A loopback stand-in for the Hugging Face hub for the dataset tests, adapted from rlvr-model's
//! tests/common/hub_server.rs: serves files from a directory with the hub's URL layout and the
//! headers a hub client reads, and answers a request for a pinned commit with that commit (the
//! hub client checks `X-Repo-Commit` against the revision it asked for). Binds 127.0.0.1 only.
//!
//! - `GET` or `HEAD /datasets/{owner}/{name}/resolve/{rev}/{file}` (and the same without
//!   `datasets/` for models): the file, honouring `Range: bytes=a-` / `bytes=a-b` (206 with
//!   `Content-Range`), with `ETag` and `X-Repo-Commit` = `rev` when it is 40 hex digits, else
//!   [`COMMIT`].
//! - `GET /api/{models|datasets}/{owner}/{name}/revision/{rev}`: `{"sha", "siblings"}`.
//!
//! Files live in `root/datasets/{owner}/{name}/` and `root/models/{owner}/{name}/`. Every
//! request is logged as `<METHOD> <path> range=<Range> auth=<Authorization>`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The commit answered for a branch name (`main`).
pub const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

pub struct HubServer {
    pub endpoint: String,
    pub log: Arc<Mutex<Vec<String>>>,
}

impl HubServer {
    pub fn start(root: &Path) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let (root, l) = (root.to_path_buf(), log.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, l) = (root.clone(), l.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, &root, &l);
                });
            }
        });
        Self { endpoint, log }
    }

    /// The requests so far (and clears the log).
    pub fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

/// The commit the server names for revision `rev`.
pub fn commit_of(rev: &str) -> &str {
    if rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit()) {
        rev
    } else {
        COMMIT
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

fn respond(s: &mut TcpStream, method: &str, status: &str, headers: &[(&str, String)], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        head += &format!("{k}: {v}\r\n");
    }
    head += "Connection: close\r\n\r\n";
    let _ = s.write_all(head.as_bytes());
    if method != "HEAD" {
        let _ = s.write_all(body);
    }
}

fn serve(mut s: TcpStream, root: &Path, log: &Mutex<Vec<String>>) -> std::io::Result<()> {
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
        let h = [("X-Error-Code", "EntryNotFound".to_string())];
        respond(s, &method, "404 Not Found", &h, what.as_bytes());
    };
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if segs.len() >= 6 && segs[0] == "api" && segs[4] == "revision" {
        let dir = root.join(segs[1]).join(segs[2]).join(segs[3]);
        if !dir.is_dir() {
            not_found(&mut s, "repository not found");
            return Ok(());
        }
        let mut files = Vec::new();
        list(&dir, "", &mut files);
        files.sort();
        let siblings: Vec<serde_json::Value> = files
            .iter()
            .map(|f| serde_json::json!({ "rfilename": f }))
            .collect();
        let body = serde_json::json!({ "sha": commit_of(segs[5]), "siblings": siblings });
        let h = [("Content-Type", "application/json".to_string())];
        respond(&mut s, &method, "200 OK", &h, body.to_string().as_bytes());
        return Ok(());
    }
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
    let size = bytes.len();
    let mut headers = vec![
        ("ETag", format!("\"{}\"", etag(&bytes))),
        ("X-Repo-Commit", commit_of(rest[3]).to_string()),
    ];
    let Some(spec) = range.strip_prefix("bytes=") else {
        respond(&mut s, &method, "200 OK", &headers, &bytes);
        return Ok(());
    };
    let (a, b) = spec.split_once('-').unwrap_or((spec, ""));
    let a: usize = a.parse().unwrap_or(0);
    let b: usize = b
        .parse()
        .unwrap_or(size.saturating_sub(1))
        .min(size.saturating_sub(1));
    if a >= size {
        respond(&mut s, &method, "416 Range Not Satisfiable", &headers, b"");
        return Ok(());
    }
    headers.push(("Content-Range", format!("bytes {a}-{b}/{size}")));
    respond(
        &mut s,
        &method,
        "206 Partial Content",
        &headers,
        &bytes[a..=b],
    );
    Ok(())
}
