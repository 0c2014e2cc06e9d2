//! Hub downloads against a loopback server (tests/common/hub_server.rs) that serves the hub's
//! URL layout from a temporary directory: a fresh cache fills, a second call makes no request,
//! an interrupted download resumes from its `.part` file, HF_HUB_OFFLINE and 404s give errors
//! that name the repository and file. Nothing but 127.0.0.1 is reached.

mod common;
#[path = "common/hub_server.rs"]
mod hub_server;

use std::path::Path;

use candle_core::{DType, Device};
use common::{fixture, temp_dir};
use hub_server::{HubServer, COMMIT};
use rlvr_model::hub::{fetch_file, HubOptions, RepoType};
use rlvr_model::{load_model, resolve_model_dir_with};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A hub root with the tiny qwen2 model as `tiny-org/qwen2-tiny` and a dataset
/// `tiny-org/sums` holding `data/test.jsonl`.
fn hub_root(name: &str) -> std::path::PathBuf {
    let root = temp_dir(name);
    copy_dir(
        &fixture("qwen2-tiny"),
        &root.join("models/tiny-org/qwen2-tiny"),
    );
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
    HubOptions {
        endpoint: server.endpoint.clone(),
        cache: cache.to_path_buf(),
        token: None,
        offline: false,
        progress: false,
    }
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

    let dir = resolve_model_dir_with("tiny-org/qwen2-tiny", &opts).unwrap();
    assert_eq!(
        dir,
        cache.join(format!("models--tiny-org--qwen2-tiny/snapshots/{COMMIT}"))
    );
    assert_eq!(
        std::fs::read_to_string(cache.join("models--tiny-org--qwen2-tiny/refs/main")).unwrap(),
        COMMIT
    );
    // the files rlvr reads, byte for byte, and not the others (reference.json)
    for f in [
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "generation_config.json",
        "chat_template.jinja",
        "model.safetensors",
    ] {
        assert_eq!(
            std::fs::read(dir.join(f)).unwrap(),
            std::fs::read(fixture("qwen2-tiny").join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(!dir.join("reference.json").exists());
    let log = server.take_log();
    assert!(log[0].starts_with("GET /api/models/tiny-org/qwen2-tiny/revision/main"));
    assert!(
        log.iter().all(|l| l.ends_with("auth=Bearer hf_loopback")),
        "{log:?}"
    );
    // the downloaded model loads like the fixture
    let a = load_model(&dir.to_string_lossy(), DType::F32, &Device::Cpu).unwrap();
    assert_eq!(a.config.hidden_size, 32);

    // second call: served from the cache, no request at all
    assert_eq!(
        resolve_model_dir_with("tiny-org/qwen2-tiny", &opts).unwrap(),
        dir
    );
    assert!(server.take_log().is_empty());

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
    let err = resolve_model_dir_with("tiny-org/qwen2-tiny", &opts)
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
    let size = std::fs::metadata(fixture("qwen2-tiny").join("model.safetensors"))
        .unwrap()
        .len();
    let half = part[0].metadata().unwrap().len();
    assert_eq!(half, size / 2, "the part file holds what was received");
    server.take_log();

    let dir = resolve_model_dir_with("tiny-org/qwen2-tiny", &opts).unwrap();
    assert_eq!(
        std::fs::read(dir.join("model.safetensors")).unwrap(),
        std::fs::read(fixture("qwen2-tiny").join("model.safetensors")).unwrap()
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
    let err = resolve_model_dir_with("tiny-org/qwen2-tiny", &opts)
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
    let err = resolve_model_dir_with("nobody/missing", &opts)
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
    copy_dir(&fixture("qwen2-tiny"), &repo);
    std::fs::remove_file(repo.join("model.safetensors")).unwrap();
    std::fs::write(
        repo.join("pytorch_model.bin"),
        b"cos\nsystem\n(S'true'\ntR.",
    )
    .unwrap();
    server.take_log();
    let err = resolve_model_dir_with("tiny-org/pickled", &opts)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("pytorch_model.bin") && err.contains("safe_serialization"),
        "{err}"
    );
    assert!(downloads(&server.take_log()).is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}
