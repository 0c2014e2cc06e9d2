//! Hub downloads against a loopback server (tests/common/hub_server.rs) that serves the hub's
//! URL layout from a temporary directory: a fresh cache fills, a second call downloads nothing,
//! an interrupted download resumes from its `.part` file, HF_HUB_OFFLINE and 404s give errors
//! that name the repository and file, a pinned commit is fetched and read offline. The same
//! server turned hostile (unsafe names in the listing, the index, the ETag or the commit
//! header; short bodies; wrong hashes; no answer) gets an error naming the server and the
//! name, and nothing is written outside the cache. Nothing but 127.0.0.1 is reached.

#[path = "common/hub_server.rs"]
mod hub_server;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hub_server::{HubServer, COMMIT};
use rlvr_hub::{cached_file, download_model, fetch_file, HubOptions, RepoType};

/// A fresh, empty directory under the system temp dir, unique to this process and `name`.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rlvr-hub-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The files of a model repository rlvr reads.
const MODEL_FILES: [&str; 6] = [
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "generation_config.json",
    "chat_template.jinja",
    "model.safetensors",
];

/// The content of `file` in the test's model repository (the client never parses it): 4 KiB
/// of varying bytes for the weights, a line of JSON naming the file for the others.
fn model_bytes(file: &str) -> Vec<u8> {
    if file == "model.safetensors" {
        (0..4096u32).map(|i| (i * 7 % 251) as u8).collect()
    } else {
        format!("{{\"file\": {file:?}}}\n").into_bytes()
    }
}

/// A model repository in `dir`: [`MODEL_FILES`], and `reference.json`, which rlvr does not read.
fn write_model(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for f in MODEL_FILES.iter().chain(&["reference.json"]) {
        std::fs::write(dir.join(f), model_bytes(f)).unwrap();
    }
}

/// A hub root with a model `tiny-org/qwen2-tiny` ([`write_model`]) and a dataset
/// `tiny-org/sums` holding `data/test.jsonl`.
fn hub_root(name: &str) -> PathBuf {
    let root = temp_dir(name);
    write_model(&root.join("models/tiny-org/qwen2-tiny"));
    let ds = root.join("datasets/tiny-org/sums/data");
    std::fs::create_dir_all(&ds).unwrap();
    std::fs::write(
        ds.join("test.jsonl"),
        "{\"problem\": \"1+1\", \"answer\": \"2\"}\n{\"problem\": \"2+2\", \"answer\": \"4\"}\n",
    )
    .unwrap();
    root
}

fn options(server: &HubServer, cache: &Path) -> HubOptions {
    let mut opts = HubOptions::new(&server.endpoint, cache);
    opts.connect_timeout = Duration::from_secs(2);
    opts.read_timeout = Duration::from_secs(1);
    opts
}

fn downloads(log: &[String]) -> Vec<&String> {
    log.iter().filter(|l| l.contains("/resolve/")).collect()
}

#[test]
fn a_model_and_a_dataset_download_into_a_fresh_cache_then_come_from_it() {
    let root = hub_root("hub-fresh");
    let server = HubServer::start(&root);
    let cache = root.join("cache");
    let mut opts = options(&server, &cache);
    opts.token = Some("hf_loopback".into());

    let dir = download_model(&opts, "tiny-org/qwen2-tiny").unwrap();
    assert_eq!(
        dir,
        cache.join(format!("models--tiny-org--qwen2-tiny/snapshots/{COMMIT}"))
    );
    assert_eq!(
        std::fs::read_to_string(cache.join("models--tiny-org--qwen2-tiny/refs/main")).unwrap(),
        COMMIT
    );
    // the files rlvr reads, byte for byte, and not the others (reference.json)
    for f in MODEL_FILES {
        assert_eq!(std::fs::read(dir.join(f)).unwrap(), model_bytes(f), "{f}");
    }
    assert!(!dir.join("reference.json").exists());
    let log = server.take_log();
    assert!(log[0].starts_with("GET /api/models/tiny-org/qwen2-tiny/revision/main"));
    assert!(
        log.iter().all(|l| l.ends_with("auth=Bearer hf_loopback")),
        "{log:?}"
    );

    // second call: the listing names the same commit, every file comes from the cache
    assert_eq!(download_model(&opts, "tiny-org/qwen2-tiny").unwrap(), dir);
    let log = server.take_log();
    assert!(downloads(&log).is_empty(), "{log:?}");

    // a dataset file
    let kind = RepoType::Dataset;
    let p = fetch_file(&opts, kind, "tiny-org/sums", "main", "data/test.jsonl").unwrap();
    assert_eq!(
        p,
        cache.join(format!(
            "datasets--tiny-org--sums/snapshots/{COMMIT}/data/test.jsonl"
        ))
    );
    assert!(std::fs::read_to_string(&p).unwrap().contains("2+2"));
    let log = server.take_log();
    assert!(
        log.iter()
            .any(|l| l.starts_with("GET /datasets/tiny-org/sums/resolve/main/data/test.jsonl")),
        "{log:?}"
    );
    let again = fetch_file(&opts, kind, "tiny-org/sums", "main", "data/test.jsonl").unwrap();
    assert_eq!(again, p);
    assert!(server.take_log().is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_interrupted_download_resumes_from_its_part_file() {
    let root = hub_root("hub-resume");
    let server = HubServer::start(&root);
    let cache = root.join("cache");
    let opts = options(&server, &cache);
    *server.truncate_once.lock().unwrap() = Some("model.safetensors".into());
    let err = download_model(&opts, "tiny-org/qwen2-tiny")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tiny-org/qwen2-tiny") && err.contains("model.safetensors"),
        "{err}"
    );
    let blobs = cache.join("models--tiny-org--qwen2-tiny/blobs");
    let part: Vec<_> = std::fs::read_dir(&blobs)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "part"))
        .collect();
    assert_eq!(part.len(), 1, "one partial blob");
    // not cached as complete: no snapshot entry for the weights, no refs/main
    assert!(!cache
        .join(format!(
            "models--tiny-org--qwen2-tiny/snapshots/{COMMIT}/model.safetensors"
        ))
        .exists());
    assert!(!cache
        .join("models--tiny-org--qwen2-tiny/refs/main")
        .exists());
    let size = model_bytes("model.safetensors").len() as u64;
    let half = part[0].metadata().unwrap().len();
    assert_eq!(half, size / 2, "the part file holds what was received");
    server.take_log();

    let dir = download_model(&opts, "tiny-org/qwen2-tiny").unwrap();
    assert_eq!(
        std::fs::read(dir.join("model.safetensors")).unwrap(),
        model_bytes("model.safetensors")
    );
    let log = server.take_log();
    let weights: Vec<_> = downloads(&log)
        .into_iter()
        .filter(|l| l.contains("model.safetensors"))
        .collect();
    // metadata (bytes=0-0), then only the missing bytes
    assert!(
        weights
            .iter()
            .any(|l| l.contains(&format!("range=bytes={half}-"))),
        "{weights:?}"
    );
    assert!(
        !weights.iter().any(|l| l.contains("range=bytes=0- ")),
        "{weights:?}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn offline_and_missing_files_give_errors_naming_repository_and_file() {
    let root = hub_root("hub-errors");
    let server = HubServer::start(&root);
    let cache = root.join("cache");
    let mut opts = options(&server, &cache);
    opts.offline = true;
    let err = download_model(&opts, "tiny-org/qwen2-tiny")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("HF_HUB_OFFLINE") && err.contains("tiny-org/qwen2-tiny"),
        "{err}"
    );
    let err = fetch_file(
        &opts,
        RepoType::Dataset,
        "tiny-org/sums",
        "main",
        "data/test.jsonl",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("HF_HUB_OFFLINE") && err.contains("data/test.jsonl"),
        "{err}"
    );
    assert!(server.take_log().is_empty(), "offline: no request");

    opts.offline = false;
    let err = download_model(&opts, "nobody/missing")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("nobody/missing") && err.contains("404"),
        "{err}"
    );
    let err = fetch_file(
        &opts,
        RepoType::Dataset,
        "tiny-org/sums",
        "main",
        "data/train.jsonl",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("tiny-org/sums") && err.contains("data/train.jsonl") && err.contains("404"),
        "{err}"
    );
    // a repository with only pickle weights: refused before any weight is fetched
    let repo = root.join("models/tiny-org/pickled");
    write_model(&repo);
    std::fs::remove_file(repo.join("model.safetensors")).unwrap();
    std::fs::write(
        repo.join("pytorch_model.bin"),
        b"cos\nsystem\n(S'true'\ntR.",
    )
    .unwrap();
    server.take_log();
    let err = download_model(&opts, "tiny-org/pickled")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("pytorch_model.bin") && err.contains("safe_serialization"),
        "{err}"
    );
    assert!(downloads(&server.take_log()).is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}

/// Every file under `dir`, recursively (links not followed), relative to `dir`.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                todo.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    out.sort();
    out
}

/// What is under `root` outside `root/cache`, and whether anything under `root` or next to it
/// is named like the hostile server's target (`pwned`).
fn outside_cache(root: &Path) -> Vec<PathBuf> {
    let parent = root.parent().unwrap();
    let beside: Vec<_> = std::fs::read_dir(parent)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("pwned"))
        .collect();
    assert!(
        beside.is_empty(),
        "written next to the test root: {beside:?}"
    );
    let all = tree(root);
    let pwned: Vec<_> = all
        .iter()
        .filter(|p| p.to_string_lossy().contains("pwned"))
        .collect();
    assert!(pwned.is_empty(), "hostile name written: {pwned:?}");
    all.into_iter()
        .filter(|p| !p.starts_with("cache"))
        .collect()
}

fn assert_names(err: &str, server: &HubServer, name: &str) {
    assert!(
        err.contains(&server.endpoint) && err.contains(name),
        "the error should name the server {} and {name:?}: {err}",
        server.endpoint
    );
}

/// `tiny-org/qwen2-tiny` as a sharded checkpoint: `model.safetensors.index.json` mapping two
/// tensors to `model-00001-of-00001.safetensors`, plus `extra` more entries.
fn shard_the_model(root: &Path, extra: &[(&str, &str)]) {
    let repo = root.join("models/tiny-org/qwen2-tiny");
    let shard = "model-00001-of-00001.safetensors";
    std::fs::rename(repo.join("model.safetensors"), repo.join(shard)).unwrap();
    let mut map = serde_json::Map::new();
    for n in ["model.embed_tokens.weight", "lm_head.weight"] {
        map.insert(n.into(), shard.into());
    }
    for (k, v) in extra {
        map.insert(k.to_string(), (*v).into());
    }
    let index = serde_json::json!({ "metadata": {}, "weight_map": map });
    std::fs::write(repo.join("model.safetensors.index.json"), index.to_string()).unwrap();
}

#[test]
fn a_sharded_model_downloads_the_shards_its_index_names() {
    let root = hub_root("hub-sharded");
    shard_the_model(&root, &[]);
    let server = HubServer::start(&root);
    let opts = options(&server, &root.join("cache"));
    let dir = download_model(&opts, "tiny-org/qwen2-tiny").unwrap();
    assert!(dir.join("model-00001-of-00001.safetensors").is_file());
    assert!(dir.join("model.safetensors.index.json").is_file());
    assert!(!dir.join("model.safetensors").exists());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_shard_name_leaving_the_cache_in_the_index_is_refused() {
    let root = hub_root("hub-index-traversal");
    let evil = "model-/../../../../pwned.safetensors";
    shard_the_model(&root, &[("lm_head.extra", evil)]);
    let server = HubServer::start(&root);
    let opts = options(&server, &root.join("cache"));
    let before = outside_cache(&root);
    let err = download_model(&opts, "tiny-org/qwen2-tiny")
        .unwrap_err()
        .to_string();
    assert_names(&err, &server, evil);
    assert_eq!(outside_cache(&root), before);
    // no shard was requested at all once the index was refused
    let log = server.take_log();
    assert!(!log.iter().any(|l| l.contains("model-0")), "{log:?}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_unsafe_name_in_the_file_listing_is_refused_before_any_download() {
    for evil in [
        "model-/../../../../pwned.safetensors",
        "/tmp/pwned.json",
        "a//pwned.json",
        "a\\..\\pwned.json",
        "pwned\u{0}.json",
    ] {
        let root = hub_root("hub-listing-traversal");
        let server = HubServer::start(&root);
        server.hostile.lock().unwrap().extra_siblings = vec![evil.to_string()];
        let opts = options(&server, &root.join("cache"));
        let before = outside_cache(&root);
        let err = download_model(&opts, "tiny-org/qwen2-tiny")
            .unwrap_err()
            .to_string();
        assert_names(&err, &server, &format!("{evil:?}"));
        assert!(downloads(&server.take_log()).is_empty(), "{evil:?}");
        assert_eq!(outside_cache(&root), before);
        std::fs::remove_dir_all(&root).unwrap();
    }
}

#[test]
fn a_hostile_etag_is_refused() {
    for evil in [
        "../../../pwned",
        "\"../../../pwned\"",
        "pwned/x",
        ".pwned",
        "",
    ] {
        let root = hub_root("hub-etag");
        let server = HubServer::start(&root);
        server.hostile.lock().unwrap().etag = Some(evil.to_string());
        let opts = options(&server, &root.join("cache"));
        let before = outside_cache(&root);
        let err = fetch_file(
            &opts,
            RepoType::Dataset,
            "tiny-org/sums",
            "main",
            "data/test.jsonl",
        )
        .unwrap_err()
        .to_string();
        assert_names(&err, &server, "ETag");
        assert!(err.contains(&format!("{evil:?}")), "{err}");
        assert_eq!(outside_cache(&root), before);
        assert!(!root.join("cache/datasets--tiny-org--sums/blobs").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }
}

#[test]
fn a_hostile_commit_header_is_refused_without_panic() {
    let long = "a".repeat(5000);
    let cases: Vec<(Vec<u8>, String)> = vec![
        (b"../pwned".to_vec(), "\"../pwned\"".into()),
        (
            b"../../../../pwned".to_vec(),
            "\"../../../../pwned\"".into(),
        ),
        (
            b"not-hex-not-hex-not-hex-not-hex-not-hex!".to_vec(),
            "not-hex".into(),
        ),
        (
            COMMIT.as_bytes()[..39].to_vec(),
            format!("{:?}", &COMMIT[..39]),
        ),
        (long.clone().into_bytes(), "aaaaaaaa".into()),
        (b"\xff\xfe../pwned\xc0".to_vec(), "X-Repo-Commit".into()),
        (Vec::new(), "X-Repo-Commit".into()),
    ];
    for (commit, name) in cases {
        let root = hub_root("hub-commit");
        let server = HubServer::start(&root);
        server.hostile.lock().unwrap().commit = Some(commit.clone());
        let opts = options(&server, &root.join("cache"));
        let before = outside_cache(&root);
        let err = fetch_file(
            &opts,
            RepoType::Dataset,
            "tiny-org/sums",
            "main",
            "data/test.jsonl",
        )
        .unwrap_err()
        .to_string();
        assert_names(&err, &server, &name);
        assert!(err.len() < 2000, "the error is cut to a readable length");
        assert_eq!(outside_cache(&root), before);
        let repo = root.join("cache/datasets--tiny-org--sums");
        assert!(!repo.join("snapshots").exists() && !repo.join("refs").exists());
        // and the listing's sha, for a model
        let err = download_model(&opts, "tiny-org/qwen2-tiny")
            .unwrap_err()
            .to_string();
        assert!(err.contains(&server.endpoint), "{err}");
        assert_eq!(outside_cache(&root), before);
        std::fs::remove_dir_all(&root).unwrap();
    }
}

#[test]
fn a_server_that_never_answers_times_out_with_an_error_naming_it() {
    let root = hub_root("hub-silent");
    let server = HubServer::start(&root);
    server.hostile.lock().unwrap().silent = true;
    let opts = options(&server, &root.join("cache"));
    let t = Instant::now();
    let err = fetch_file(
        &opts,
        RepoType::Dataset,
        "tiny-org/sums",
        "main",
        "data/test.jsonl",
    )
    .unwrap_err()
    .to_string();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(
        err.contains(&server.endpoint) && err.contains("timeout"),
        "{err}"
    );
    let t = Instant::now();
    let err = download_model(&opts, "tiny-org/qwen2-tiny")
        .unwrap_err()
        .to_string();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(err.contains(&server.endpoint), "{err}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_body_shorter_than_the_announced_size_is_not_cached_as_complete() {
    let root = hub_root("hub-short");
    let server = HubServer::start(&root);
    // X-Linked-Size announces 10 bytes more than the file the server then sends
    server.hostile.lock().unwrap().announce_extra = Some(10);
    let cache = root.join("cache");
    let opts = options(&server, &cache);
    let (kind, repo, file) = (RepoType::Dataset, "tiny-org/sums", "data/test.jsonl");
    let content = std::fs::read(root.join("datasets").join(repo).join(file)).unwrap();
    let announced = content.len() + 10;
    for _ in 0..2 {
        let err = fetch_file(&opts, kind, repo, "main", file)
            .unwrap_err()
            .to_string();
        assert_names(&err, &server, file);
        assert!(err.contains(&format!("{announced} bytes")), "{err}");
        assert!(cached_file(&opts, kind, repo, "main", file).is_none());
        let blobs = tree(&cache.join("datasets--tiny-org--sums/blobs"));
        assert!(
            blobs
                .iter()
                .all(|b| b.extension().is_some_and(|x| x == "part")),
            "no complete blob: {blobs:?}"
        );
    }
    // the server mended: the file arrives whole
    server.hostile.lock().unwrap().announce_extra = None;
    let p = fetch_file(&opts, kind, repo, "main", file).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), content);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_consistent_but_short_answer_is_kept_as_part_and_resumed() {
    let root = hub_root("hub-short-answer");
    let server = HubServer::start(&root);
    server.hostile.lock().unwrap().short_body = true;
    let cache = root.join("cache");
    let opts = options(&server, &cache);
    let (kind, repo, file) = (RepoType::Dataset, "tiny-org/sums", "data/test.jsonl");
    let content = std::fs::read(root.join("datasets").join(repo).join(file)).unwrap();
    let half = content.len() / 2;
    let err = fetch_file(&opts, kind, repo, "main", file)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(file) && err.contains(&format!("{half} of {} bytes", content.len())),
        "{err}"
    );
    assert!(cached_file(&opts, kind, repo, "main", file).is_none());
    server.take_log();
    // the server mended: the next call asks for the missing bytes only
    server.hostile.lock().unwrap().short_body = false;
    let p = fetch_file(&opts, kind, repo, "main", file).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), content);
    let log = server.take_log();
    let gets: Vec<_> = log.iter().filter(|l| l.starts_with("GET")).collect();
    assert_eq!(gets.len(), 1, "{log:?}");
    assert!(gets[0].contains(&format!("range=bytes={half}-")), "{log:?}");
    std::fs::remove_dir_all(&root).unwrap();
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn an_lfs_file_whose_sha256_differs_from_the_announced_one_is_refused() {
    let root = hub_root("hub-sha");
    let server = HubServer::start(&root);
    let cache = root.join("cache");
    let opts = options(&server, &cache);
    let file = "data/test.jsonl";
    let content = std::fs::read(root.join("datasets/tiny-org/sums").join(file)).unwrap();
    let mut wrong = sha256_hex(&content);
    wrong.replace_range(..1, if wrong.starts_with('0') { "1" } else { "0" });
    server.hostile.lock().unwrap().linked_etag = Some(wrong.clone());
    let err = fetch_file(&opts, RepoType::Dataset, "tiny-org/sums", "main", file)
        .unwrap_err()
        .to_string();
    assert_names(&err, &server, file);
    assert!(err.contains("SHA-256") && err.contains(&wrong), "{err}");
    let blobs = cache.join("datasets--tiny-org--sums/blobs");
    assert!(tree(&blobs).is_empty(), "{:?}", tree(&blobs));
    assert!(cached_file(&opts, RepoType::Dataset, "tiny-org/sums", "main", file).is_none());
    // the right hash is accepted, also over a resumed download (the kept half is hashed
    // too), and names the blob as huggingface_hub does
    let right = sha256_hex(&content);
    server.hostile.lock().unwrap().linked_etag = Some(right.clone());
    *server.truncate_once.lock().unwrap() = Some(file.into());
    fetch_file(&opts, RepoType::Dataset, "tiny-org/sums", "main", file).unwrap_err();
    server.take_log();
    let p = fetch_file(&opts, RepoType::Dataset, "tiny-org/sums", "main", file).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), content);
    assert!(blobs.join(&right).is_file());
    let half = content.len() / 2;
    let log = server.take_log();
    assert!(
        log.iter()
            .any(|l| l.starts_with("GET") && l.contains(&format!("range=bytes={half}-"))),
        "{log:?}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// Git's blob hash, SHA-1 of `blob <size>\0` + content: the hub's `ETag` of a non-LFS file.
fn git_blob_sha1(bytes: &[u8]) -> String {
    use sha1::Digest;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_small_file_whose_git_hash_differs_from_its_etag_is_refused() {
    let root = hub_root("hub-sha1");
    let server = HubServer::start(&root);
    let cache = root.join("cache");
    let opts = options(&server, &cache);
    let file = "data/test.jsonl";
    let content = std::fs::read(root.join("datasets/tiny-org/sums").join(file)).unwrap();
    let right = git_blob_sha1(&content);
    let mut wrong = right.clone();
    wrong.replace_range(..1, if wrong.starts_with('0') { "1" } else { "0" });
    server.hostile.lock().unwrap().etag = Some(format!("\"{wrong}\""));
    let err = fetch_file(&opts, RepoType::Dataset, "tiny-org/sums", "main", file)
        .unwrap_err()
        .to_string();
    assert_names(&err, &server, file);
    assert!(
        err.contains("git blob SHA-1") && err.contains(&wrong) && err.contains(&right),
        "{err}"
    );
    let blobs = cache.join("datasets--tiny-org--sums/blobs");
    assert!(tree(&blobs).is_empty(), "{:?}", tree(&blobs));
    assert!(cached_file(&opts, RepoType::Dataset, "tiny-org/sums", "main", file).is_none());
    // a weak ETag (`W/"..."`) promises no byte identity, so it names the blob but is not
    // checked
    server.hostile.lock().unwrap().etag = Some(format!("W/\"{wrong}\""));
    let p = fetch_file(&opts, RepoType::Dataset, "tiny-org/sums", "main", file).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), content);
    std::fs::remove_dir_all(&cache).unwrap();
    // the right hash is accepted, also over a resumed download, and names the blob
    server.hostile.lock().unwrap().etag = Some(format!("\"{right}\""));
    *server.truncate_once.lock().unwrap() = Some(file.into());
    fetch_file(&opts, RepoType::Dataset, "tiny-org/sums", "main", file).unwrap_err();
    let p = fetch_file(&opts, RepoType::Dataset, "tiny-org/sums", "main", file).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), content);
    assert!(blobs.join(&right).is_file());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_pinned_commit_downloads_and_is_read_offline() {
    let root = hub_root("hub-pinned");
    let server = HubServer::start(&root);
    let cache = root.join("cache");
    let mut opts = options(&server, &cache);
    let (kind, repo, file) = (RepoType::Dataset, "tiny-org/sums", "data/test.jsonl");
    let p = fetch_file(&opts, kind, repo, COMMIT, file).unwrap();
    assert_eq!(
        p,
        cache.join(format!(
            "datasets--tiny-org--sums/snapshots/{COMMIT}/{file}"
        ))
    );
    let log = server.take_log();
    assert!(
        log.iter()
            .any(|l| l.starts_with(&format!("GET /datasets/{repo}/resolve/{COMMIT}/{file}"))),
        "{log:?}"
    );
    // a commit is no ref: nothing is written under refs/
    assert!(!cache.join("datasets--tiny-org--sums/refs").exists());
    // a tag is recorded under refs/
    fetch_file(&opts, kind, repo, "v1.0", file).unwrap();
    assert_eq!(
        std::fs::read_to_string(cache.join("datasets--tiny-org--sums/refs/v1.0")).unwrap(),
        COMMIT
    );
    server.take_log();

    opts.offline = true;
    assert_eq!(fetch_file(&opts, kind, repo, COMMIT, file).unwrap(), p);
    assert_eq!(fetch_file(&opts, kind, repo, "v1.0", file).unwrap(), p);
    let err = fetch_file(&opts, kind, repo, "main", file)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("HF_HUB_OFFLINE") && err.contains("main"),
        "{err}"
    );
    assert!(server.take_log().is_empty(), "offline: no request");

    // a server answering another commit than the one asked for is refused
    opts.offline = false;
    server.hostile.lock().unwrap().commit = Some(COMMIT.as_bytes().to_vec());
    let other = "f".repeat(40);
    let err = fetch_file(&opts, kind, repo, &other, file)
        .unwrap_err()
        .to_string();
    assert_names(&err, &server, &other);
    // and a revision that is no ref name is refused before any request
    let err = fetch_file(&opts, kind, repo, "../main", file)
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"../main\""), "{err}");
    let log = server.take_log();
    assert!(!log.iter().any(|l| l.contains("../main")), "{log:?}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// The `.part` files under `blobs`.
fn parts(blobs: &Path) -> Vec<PathBuf> {
    tree(blobs)
        .into_iter()
        .filter(|b| b.extension().is_some_and(|x| x == "part"))
        .collect()
}

#[test]
fn a_server_that_drips_bytes_is_stopped_by_the_minimum_rate() {
    let root = hub_root("hub-drip");
    let server = HubServer::start(&root);
    let cache = root.join("cache");
    let mut opts = options(&server, &cache);
    // a byte every 200 ms never trips the 1 s read timeout; 100 B/s over 1 s windows does
    opts.min_rate = 100;
    opts.rate_window = Duration::from_secs(1);
    let every = Duration::from_millis(200);
    let (kind, repo, file) = (RepoType::Model, "tiny-org/qwen2-tiny", "model.safetensors");

    // the body dripped (4096 bytes: 14 minutes at this pace)
    server.hostile.lock().unwrap().drip_body = Some(every);
    let t = Instant::now();
    let err = fetch_file(&opts, kind, repo, "main", file)
        .unwrap_err()
        .to_string();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_names(&err, &server, file);
    assert!(
        err.contains("too slow") && err.contains("RLVR_HUB_MIN_RATE"),
        "{err}"
    );
    // what arrived is kept as a prefix and resumed once the server is fast again
    let blobs = cache.join("models--tiny-org--qwen2-tiny/blobs");
    let kept = parts(&blobs);
    assert_eq!(kept.len(), 1, "{:?}", tree(&blobs));
    let got = std::fs::read(blobs.join(&kept[0])).unwrap();
    assert!(!got.is_empty() && got.len() < 100, "{}", got.len());
    assert_eq!(got[..], model_bytes(file)[..got.len()]);
    server.hostile.lock().unwrap().drip_body = None;
    server.take_log();
    let p = fetch_file(&opts, kind, repo, "main", file).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), model_bytes(file));
    let log = server.take_log();
    assert!(
        log.iter()
            .any(|l| l.starts_with("GET") && l.contains(&format!("range=bytes={}-", got.len()))),
        "{log:?}"
    );

    // the status line and headers dripped: every answer's headers must come within the
    // connect and read timeouts (3 s here), the HEAD's ...
    server.hostile.lock().unwrap().drip_all = Some(every);
    let t = Instant::now();
    let err = fetch_file(
        &opts,
        RepoType::Dataset,
        "tiny-org/sums",
        "main",
        "data/test.jsonl",
    )
    .unwrap_err()
    .to_string();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(
        err.contains(&server.endpoint) && err.contains("no answer in time"),
        "{err}"
    );
    // ... and the file listing's
    let t = Instant::now();
    let err = download_model(&opts, "tiny-org/qwen2-tiny")
        .unwrap_err()
        .to_string();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(
        err.contains(&server.endpoint)
            && err.contains("list its files")
            && err.contains("no answer in time"),
        "{err}"
    );
    // the listing's body dripped: the minimum rate ends it
    {
        let mut h = server.hostile.lock().unwrap();
        h.drip_all = None;
        h.drip_body = Some(every);
    }
    let t = Instant::now();
    let err = download_model(&opts, "tiny-org/qwen2-tiny")
        .unwrap_err()
        .to_string();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(
        err.contains(&server.endpoint) && err.contains("file listing"),
        "{err}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_size_beyond_the_free_space_is_refused_before_anything_is_written() {
    let root = hub_root("hub-no-space");
    let server = HubServer::start(&root);
    let cache = root.join("cache");
    let opts = options(&server, &cache);
    // 1 EiB: more than any test machine's free space
    server.hostile.lock().unwrap().announce = Some(1 << 60);
    let (kind, repo, file) = (RepoType::Dataset, "tiny-org/sums", "data/test.jsonl");
    let err = fetch_file(&opts, kind, repo, "main", file)
        .unwrap_err()
        .to_string();
    assert_names(&err, &server, file);
    assert!(
        err.contains(&format!("announced {} bytes", 1u64 << 60))
            && err.contains("free on the file system")
            && err.contains(&cache.display().to_string()),
        "{err}"
    );
    let blobs = cache.join("datasets--tiny-org--sums/blobs");
    assert!(tree(&blobs).is_empty(), "{:?}", tree(&blobs));
    let log = server.take_log();
    assert!(!log.iter().any(|l| l.starts_with("GET")), "{log:?}");
    assert!(cached_file(&opts, kind, repo, "main", file).is_none());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_body_longer_or_shorter_than_announced_leaves_no_part_file() {
    let root = hub_root("hub-lying-size");
    let server = HubServer::start(&root);
    let cache = root.join("cache");
    let opts = options(&server, &cache);
    let (kind, repo, file) = (RepoType::Dataset, "tiny-org/sums", "data/test.jsonl");
    let content = std::fs::read(root.join("datasets").join(repo).join(file)).unwrap();
    let blobs = cache.join("datasets--tiny-org--sums/blobs");
    let less = content.len() as u64 - 5;

    // announces 5 bytes less; the answer's Content-Length says more: refused before writing
    server.hostile.lock().unwrap().announce = Some(less);
    let err = fetch_file(&opts, kind, repo, "main", file)
        .unwrap_err()
        .to_string();
    assert_names(&err, &server, file);
    assert!(
        err.contains("Content-Length") && err.contains(&format!("{less} bytes")),
        "{err}"
    );
    assert!(tree(&blobs).is_empty(), "{:?}", tree(&blobs));

    // the same without a Content-Length (the body ends with the connection): read up to one
    // byte past the announced size, then refused and removed
    server.hostile.lock().unwrap().no_length = true;
    let err = fetch_file(&opts, kind, repo, "main", file)
        .unwrap_err()
        .to_string();
    assert_names(&err, &server, file);
    assert!(
        err.contains(&format!("sent more than the {less} bytes")),
        "{err}"
    );
    assert!(tree(&blobs).is_empty(), "{:?}", tree(&blobs));

    // announces 10 bytes more than it has: the short body is kept to resume, and the resume
    // the server cannot satisfy (416) removes it
    {
        let mut h = server.hostile.lock().unwrap();
        h.no_length = false;
        h.announce = Some(content.len() as u64 + 10);
    }
    let err = fetch_file(&opts, kind, repo, "main", file)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("incomplete")
            && err.contains(&format!(
                "{} of {} bytes",
                content.len(),
                content.len() + 10
            )),
        "{err}"
    );
    assert_eq!(parts(&blobs).len(), 1, "{:?}", tree(&blobs));
    let err = fetch_file(&opts, kind, repo, "main", file)
        .unwrap_err()
        .to_string();
    assert_names(&err, &server, file);
    assert!(
        err.contains("416") && err.contains("partial file was removed"),
        "{err}"
    );
    assert!(tree(&blobs).is_empty(), "{:?}", tree(&blobs));
    assert!(cached_file(&opts, kind, repo, "main", file).is_none());

    // honest again: the file arrives whole
    server.hostile.lock().unwrap().announce = None;
    let p = fetch_file(&opts, kind, repo, "main", file).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), content);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_empty_file_downloads_and_is_read_from_the_cache() {
    let root = hub_root("hub-empty");
    std::fs::write(root.join("datasets/tiny-org/sums/data/empty.jsonl"), b"").unwrap();
    let server = HubServer::start(&root);
    let cache = root.join("cache");
    let mut opts = options(&server, &cache);
    let (kind, repo, file) = (RepoType::Dataset, "tiny-org/sums", "data/empty.jsonl");
    let p = fetch_file(&opts, kind, repo, "main", file).unwrap();
    assert_eq!(
        p,
        cache.join(format!(
            "datasets--tiny-org--sums/snapshots/{COMMIT}/{file}"
        ))
    );
    assert_eq!(std::fs::read(&p).unwrap(), b"");
    server.take_log();
    opts.offline = true;
    assert_eq!(fetch_file(&opts, kind, repo, "main", file).unwrap(), p);
    opts.offline = false;
    std::fs::remove_dir_all(&cache).unwrap();

    // with git's hash of the empty blob as its ETag, as the hub sends it: checked, accepted
    let empty = git_blob_sha1(b"");
    assert_eq!(empty, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    server.hostile.lock().unwrap().etag = Some(format!("\"{empty}\""));
    let p = fetch_file(&opts, kind, repo, "main", file).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"");
    let blobs = cache.join("datasets--tiny-org--sums/blobs");
    assert!(blobs.join(&empty).is_file());
    // and another hash is refused, naming the file
    std::fs::remove_dir_all(&cache).unwrap();
    let wrong = git_blob_sha1(b"x");
    server.hostile.lock().unwrap().etag = Some(format!("\"{wrong}\""));
    let err = fetch_file(&opts, kind, repo, "main", file)
        .unwrap_err()
        .to_string();
    assert_names(&err, &server, file);
    assert!(err.contains(&wrong) && err.contains(&empty), "{err}");
    assert!(tree(&blobs).is_empty(), "{:?}", tree(&blobs));
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn the_token_goes_to_the_endpoint_and_not_to_a_redirect_to_another_port() {
    let root = hub_root("hub-redirect");
    let hub = HubServer::start(&root);
    // the same files on another loopback port: the same host, another origin
    let other = HubServer::start(&root);
    hub.hostile.lock().unwrap().redirect_to = Some(other.endpoint.clone());
    let cache = root.join("cache");
    let mut opts = options(&hub, &cache);
    opts.token = Some("hf_secret".into());
    let (kind, repo, file) = (RepoType::Dataset, "tiny-org/sums", "data/test.jsonl");
    let p = fetch_file(&opts, kind, repo, "main", file).unwrap();
    assert!(std::fs::read_to_string(&p).unwrap().contains("2+2"));
    let log = hub.take_log();
    assert!(
        !log.is_empty() && log.iter().all(|l| l.ends_with("auth=Bearer hf_secret")),
        "the endpoint gets the token: {log:?}"
    );
    let log = other.take_log();
    assert!(
        log.iter().any(|l| l.starts_with("GET")),
        "the download was redirected: {log:?}"
    );
    assert!(
        log.iter().all(|l| l.ends_with("auth=")),
        "another port gets no token: {log:?}"
    );

    // a redirect back to the endpoint itself keeps the token, and a loop ends after 5 hops
    std::fs::remove_dir_all(&cache).unwrap();
    hub.hostile.lock().unwrap().redirect_to = Some(hub.endpoint.clone());
    let err = fetch_file(&opts, kind, repo, "main", file)
        .unwrap_err()
        .to_string();
    assert_names(&err, &hub, "more than 5 times");
    let log = hub.take_log();
    let gets: Vec<_> = log.iter().filter(|l| l.starts_with("GET")).collect();
    assert_eq!(gets.len(), 6, "{log:?}");
    assert!(
        gets.iter().all(|l| l.ends_with("auth=Bearer hf_secret")),
        "{log:?}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
