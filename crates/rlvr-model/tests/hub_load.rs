//! Hub ids through the checkpoint loader, against a loopback hub (rlvr-hub's
//! tests/common/hub_server.rs): an uncached model downloads and loads, then comes from the
//! cache without a request; offline or missing, the error names the id (offline without a
//! request). The loader follows the file-name rules it shares with the hub client: a local
//! index naming a shard outside its directory is refused. Nothing but 127.0.0.1 is reached.

mod common;
#[path = "../../rlvr-hub/tests/common/hub_server.rs"]
mod hub_server;

use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use common::{fixture, temp_dir};
use hub_server::{HubServer, COMMIT};
use rlvr_hub::resolve_model_dir_with;
use rlvr_hub::HubOptions;
use rlvr_model::load_model;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// A loopback hub serving the tiny qwen2 model as `tiny-org/qwen2-tiny` from a fresh root,
/// and options that reach it with the cache `root/cache`.
fn start_hub(name: &str) -> (PathBuf, HubServer, HubOptions) {
    let root = temp_dir(name);
    copy_dir(
        &fixture("qwen2-tiny"),
        &root.join("models/tiny-org/qwen2-tiny"),
    );
    let server = HubServer::start(&root);
    let opts = HubOptions::new(&server.endpoint, &root.join("cache"));
    (root, server, opts)
}

#[test]
fn an_uncached_hub_id_downloads_loads_and_then_comes_from_the_cache() {
    let (root, server, opts) = start_hub("hub-load");
    let dir = resolve_model_dir_with("tiny-org/qwen2-tiny", &opts).unwrap();
    assert_eq!(
        dir,
        opts.cache
            .join(format!("models--tiny-org--qwen2-tiny/snapshots/{COMMIT}"))
    );
    assert!(!server.take_log().is_empty());
    // the downloaded model loads like the fixture
    let a = load_model(&dir.to_string_lossy(), DType::F32, &Device::Cpu).unwrap();
    assert_eq!(a.config.hidden_size, 32);
    // second call: served from the cache, no request at all
    assert_eq!(
        resolve_model_dir_with("tiny-org/qwen2-tiny", &opts).unwrap(),
        dir
    );
    assert!(server.take_log().is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_local_index_naming_a_shard_outside_its_directory_is_refused() {
    let root = temp_dir("local-index-traversal");
    let dir = root.join("model");
    copy_dir(&fixture("qwen2-tiny"), &dir);
    // a valid checkpoint outside the model directory, which the index points at
    std::fs::rename(
        dir.join("model.safetensors"),
        root.join("outside.safetensors"),
    )
    .unwrap();
    let index = serde_json::json!({ "weight_map": { "model.embed_tokens.weight": "../outside.safetensors" } });
    std::fs::write(dir.join("model.safetensors.index.json"), index.to_string()).unwrap();
    let err = load_model(&dir.to_string_lossy(), DType::F32, &Device::Cpu)
        .err()
        .expect("an index naming ../outside.safetensors is refused")
        .to_string();
    assert!(
        err.contains("../outside.safetensors") && err.contains("model.safetensors.index.json"),
        "{err}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn offline_and_missing_hub_ids_give_errors_naming_them() {
    let (root, server, mut opts) = start_hub("hub-load-errors");
    opts.offline = true;
    let err =
        rlvr_model::Error::from(resolve_model_dir_with("tiny-org/qwen2-tiny", &opts).unwrap_err());
    assert!(err.is_user_input());
    let err = err.to_string();
    assert!(
        err.contains("HF_HUB_OFFLINE") && err.contains("tiny-org/qwen2-tiny"),
        "{err}"
    );
    assert!(server.take_log().is_empty(), "offline: no request");

    opts.offline = false;
    let err = rlvr_model::Error::from(resolve_model_dir_with("nobody/missing", &opts).unwrap_err());
    assert!(err.is_user_input());
    let err = err.to_string();
    assert!(
        err.contains("nobody/missing")
            && err.contains("404")
            && err.contains("no local directory nobody/missing exists"),
        "{err}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}
