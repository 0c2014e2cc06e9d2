//! `rlvr render`: a multi-turn message file rendered with the tiny qwen2 fixture's ChatML
//! template, and with Qwen3's real template and `enable_thinking` false, equals transformers'
//! render (rlvr-model's tests/fixtures/chat/renders.json), as text and as JSON with token ids;
//! and a hub id is fetched from `HF_ENDPOINT` (a loopback
//! server) into `HF_HUB_CACHE`, or refused under `HF_HUB_OFFLINE=1`.

#[path = "../../rlvr-hub/tests/common/hub_server.rs"]
mod hub_server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rlvr-model/tests/fixtures")
}

fn rlvr(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rlvr"));
    c.args(args);
    for k in [
        "HF_ENDPOINT",
        "HF_HUB_OFFLINE",
        "HF_TOKEN",
        "HF_HOME",
        "HF_HUB_CACHE",
    ] {
        c.env_remove(k);
    }
    for k in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        c.env_remove(k);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run rlvr")
}

/// The transformers render of the multi-turn list with the ChatML template.
fn expected() -> Value {
    let all: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("chat/renders.json")).unwrap(),
    )
    .unwrap();
    all["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["template"] == "qwen2-chatml"
                && c["kwargs"].as_object().unwrap().is_empty()
                && c["add_generation_prompt"] == true
                && c["messages"].as_array().unwrap().len() == 4
        })
        .unwrap()
        .clone()
}

#[test]
fn render_prints_the_prompt_and_token_ids_of_a_multi_turn_chat() {
    let dir = tempfile::tempdir().unwrap();
    let want = expected();
    let msgs = dir.path().join("chat.json");
    std::fs::write(
        &msgs,
        serde_json::json!({"messages": want["messages"]}).to_string(),
    )
    .unwrap();
    let model = fixtures().join("qwen2-tiny");
    let (m, f) = (model.to_str().unwrap(), msgs.to_str().unwrap());
    let out = rlvr(&["render", "--model", m, "--messages", f, "--json"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["prompt"], want["text"]);
    assert_eq!(got["token_ids"], want["token_ids"]);
    assert_eq!(
        got["num_tokens"].as_u64().unwrap() as usize,
        want["token_ids"].as_array().unwrap().len()
    );
    // the plain form: the prompt, then the count and the ids
    let out = rlvr(&["render", "--model", m, "--messages", f], &[]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(want["text"].as_str().unwrap()), "{text}");
    let n = want["token_ids"].as_array().unwrap().len();
    assert!(text.contains(&format!("--- {n} tokens\n")), "{text}");
    // bad input: exit 2 naming the file
    std::fs::write(&msgs, "{\"messages\": [{\"role\": \"user\"}]}").unwrap();
    let out = rlvr(&["render", "--model", m, "--messages", f], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("chat.json"));
    std::fs::write(&msgs, "[{\"role\": \"user\", \"content\": \"hi\"}]").unwrap();
    let out = rlvr(
        &["render", "--model", m, "--messages", f, "--kwargs", "[1]"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--kwargs"));
}

/// Qwen3's real chat template (a model directory whose chat_template.jinja is
/// rlvr-model's tests/fixtures/chat/qwen3.jinja) with `--kwargs '{"enable_thinking": false}'`:
/// transformers' render, the earlier turn's reasoning dropped and an empty think block opened.
#[test]
fn render_with_qwen3_template_and_enable_thinking_false_equals_transformers() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("qwen3-chat");
    std::fs::create_dir_all(&model).unwrap();
    for e in std::fs::read_dir(fixtures().join("qwen2-tiny")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), model.join(e.file_name())).unwrap();
    }
    std::fs::copy(
        fixtures().join("chat/qwen3.jinja"),
        model.join("chat_template.jinja"),
    )
    .unwrap();
    let all: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("chat/renders.json")).unwrap(),
    )
    .unwrap();
    let want = all["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["template"] == "qwen3"
                && c["conversation"] == "multi-turn"
                && c["kwargs"]["enable_thinking"] == false
                && c["add_generation_prompt"] == true
        })
        .unwrap();
    let msgs = dir.path().join("chat.json");
    std::fs::write(&msgs, want["messages"].to_string()).unwrap();
    let out = rlvr(
        &[
            "render",
            "--model",
            model.to_str().unwrap(),
            "--messages",
            msgs.to_str().unwrap(),
            "--kwargs",
            r#"{"enable_thinking": false}"#,
            "--json",
        ],
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["prompt"], want["text"]);
    assert_eq!(got["token_ids"], want["token_ids"]);
    let text = got["prompt"].as_str().unwrap();
    assert!(!text.contains("2+3=5") && text.ends_with("<think>\n\n</think>\n\n"));
}

#[test]
fn render_fetches_a_hub_id_from_hf_endpoint_and_honours_offline() {
    let dir = tempfile::tempdir().unwrap();
    let hub = dir.path().join("hub");
    let repo = hub.join("models/tiny-org/qwen2-tiny");
    std::fs::create_dir_all(&repo).unwrap();
    for e in std::fs::read_dir(fixtures().join("qwen2-tiny")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), repo.join(e.file_name())).unwrap();
    }
    let server = hub_server::HubServer::start(&hub);
    let msgs = dir.path().join("chat.json");
    std::fs::write(&msgs, "[{\"role\": \"user\", \"content\": \"hi\"}]").unwrap();
    let cache = dir.path().join("cache");
    let endpoint = PathBuf::from(&server.endpoint);
    let args = [
        "render",
        "--model",
        "tiny-org/qwen2-tiny",
        "--messages",
        msgs.to_str().unwrap(),
    ];
    let offline = rlvr(
        &args,
        &[
            ("HF_ENDPOINT", endpoint.as_path()),
            ("HF_HUB_CACHE", cache.as_path()),
            ("HF_HUB_OFFLINE", Path::new("1")),
        ],
    );
    assert_eq!(offline.status.code(), Some(2));
    let err = String::from_utf8_lossy(&offline.stderr);
    assert!(
        err.contains("HF_HUB_OFFLINE") && err.contains("tiny-org/qwen2-tiny"),
        "{err}"
    );
    assert!(server.take_log().is_empty());

    let token = PathBuf::from("hf_from_env");
    let out = rlvr(
        &args,
        &[
            ("HF_ENDPOINT", endpoint.as_path()),
            ("HF_HUB_CACHE", cache.as_path()),
            ("HF_TOKEN", token.as_path()),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("<|im_start|>user\nhi<|im_end|>"));
    let log = server.take_log();
    assert!(
        !log.is_empty() && log.iter().all(|l| l.ends_with("auth=Bearer hf_from_env")),
        "{log:?}"
    );
    assert!(cache
        .join("models--tiny-org--qwen2-tiny/refs/main")
        .is_file());
    // cached now: offline works and makes no request
    let again = rlvr(
        &args,
        &[
            ("HF_ENDPOINT", endpoint.as_path()),
            ("HF_HUB_CACHE", cache.as_path()),
            ("HF_HUB_OFFLINE", Path::new("1")),
        ],
    );
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(server.take_log().is_empty());
}
