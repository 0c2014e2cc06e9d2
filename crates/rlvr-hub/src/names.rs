//! The checks on names that become cache paths or URLs (commits, ETags, repository ids,
//! revisions), and how errors show a name. File names follow the rules of `files.rs`.

use crate::files::unsafe_path_reason;

/// True for a commit sha: exactly 40 hex digits.
pub fn is_commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Why `etag` is not a safe blob file name, or `None`: 1 to 128 characters of
/// `[A-Za-z0-9._-]`, not starting with `.`, not ending like the client's own `.part`/`.lock`.
pub(crate) fn unsafe_etag_reason(etag: &str) -> Option<&'static str> {
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
pub(crate) fn unsafe_repo_reason(repo: &str) -> Option<&'static str> {
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
pub(crate) fn unsafe_revision_reason(rev: &str) -> Option<&'static str> {
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
pub(crate) fn shown(name: &str) -> String {
    let mut s: String = name.chars().take(200).collect();
    if s.len() < name.len() {
        s.push('…');
    }
    format!("{s:?}")
}

/// Percent-encodes `s` for a URL path, keeping `/` and the unreserved characters.
pub(crate) fn url_path(s: &str) -> String {
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
