//! Inputs without bound through the `rlvr` binary: `rlvr verify --jsonl /dev/zero` (an endless
//! line), a response that pads a wrong final answer with 64 KiB before a right number, `rlvr
//! diagnose` on a FIFO (run as a child and killed if it blocks) and on an oversized `.json`,
//! and `rlvr eval` on prompts longer than the model's positions. Each exits 2 with a message
//! naming the file (and line or problem), or scores the response wrong, quickly.

#[allow(dead_code)] // TINY_TESTBED is for the other CLI tests
mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{log, rlvr, save_one_layer_model};

/// Runs `rlvr args` as a child, killing it after `limit`; its exit code (None: killed) and
/// stderr.
fn rlvr_with_timeout(args: &[&str], cwd: &Path, limit: Duration) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rlvr");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code(), err);
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            return (None, String::new());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path and a mode
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn verify_jsonl_from_dev_zero_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = rlvr_with_timeout(
        &["verify", "--jsonl", "/dev/zero"],
        dir.path(),
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("/dev/zero:1: the line is longer than 67108864 bytes"),
        "{err}"
    );
}

#[test]
fn verify_scores_a_wrong_answer_padded_before_a_right_number_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let response = format!(
        "The answer is \\boxed{{41}}.{}Note: 42",
        " ".repeat(64 * 1024 + 10)
    );
    let o = rlvr(
        &["verify", "--gold", "42", "--response", &response],
        dir.path(),
    );
    assert!(o.status.success(), "{}", log(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("correct: false") && out.contains("extracted: 41"),
        "{out}"
    );
    // the same through --jsonl
    let p = dir.path().join("r.jsonl");
    let line = serde_json::json!({"gold": "42", "response": response});
    std::fs::write(&p, format!("{line}\n")).unwrap();
    let o = rlvr(&["verify", "--jsonl", p.to_str().unwrap()], dir.path());
    assert!(o.status.success(), "{}", log(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["correct"], false);
}

#[test]
fn diagnose_refuses_a_fifo_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["rollouts.jsonl", "rollouts.json", "rollouts.parquet"] {
        let p = dir.path().join(name);
        mkfifo(&p);
        let (code, err) = rlvr_with_timeout(
            &["diagnose", p.to_str().unwrap()],
            dir.path(),
            Duration::from_secs(20),
        );
        assert_eq!(code, Some(2), "{name}: blocked or failed: {err}");
        assert!(
            err.contains(name) && err.contains("not a regular file"),
            "{name}: {err}"
        );
        std::fs::remove_file(&p).unwrap();
    }
    // a FIFO among a directory's files
    let sub = dir.path().join("steps");
    std::fs::create_dir(&sub).unwrap();
    mkfifo(&sub.join("1.jsonl"));
    let (code, err) = rlvr_with_timeout(
        &["diagnose", sub.to_str().unwrap()],
        dir.path(),
        Duration::from_secs(20),
    );
    assert_eq!(code, Some(2), "blocked or failed: {err}");
    assert!(
        err.contains("1.jsonl") && err.contains("not a regular file"),
        "{err}"
    );
}

#[test]
fn diagnose_refuses_an_oversized_json_and_amplifying_lines() {
    let dir = tempfile::tempdir().unwrap();
    // a sparse file past the limit: refused from its size, before a byte is read
    let p = dir.path().join("big.json");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(rlvr_tasks::data::MAX_JSON_FILE_BYTES + 1)
        .unwrap();
    let t = Instant::now();
    let o = rlvr(&["diagnose", p.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("big.json: larger than"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(10));
    // a line of 3 MB of `[],`: refused with its line before it is parsed
    let p = dir.path().join("amp.jsonl");
    let line = format!("[{}[]]", "[],".repeat(1 << 20));
    std::fs::write(&p, format!("\n{line}\n")).unwrap();
    let o = rlvr(&["diagnose", p.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("amp.jsonl:2: more than"), "{err}");
}

/// A byte-level model with a context of 64 positions.
fn save_short_context_model(dir: &Path) {
    let tok = rlvr_model::ChatTokenizer::byte_level().unwrap();
    save_one_layer_model(dir, &tok, 257, 256, 64, 5);
}

#[test]
fn eval_refuses_prompts_longer_than_the_models_positions() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    save_short_context_model(&model);
    let model_s = model.to_str().unwrap();
    // 100 bytes of prompt: 100 byte-level tokens, beyond 64 positions
    let data = dir.path().join("long.jsonl");
    let long = "7".repeat(100);
    std::fs::write(
        &data,
        format!(
            "{}\n{}\n",
            serde_json::json!({"id": "short", "problem": "1+1?", "answer": "2"}),
            serde_json::json!({"id": "long", "problem": long, "answer": "2"})
        ),
    )
    .unwrap();
    let o = rlvr(
        &[
            "eval",
            "--model",
            model_s,
            "--data",
            data.to_str().unwrap(),
            "--max-tokens",
            "4",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("long.jsonl")
            && err.contains("problem long (number 1)")
            && err.contains("64 positions"),
        "{err}"
    );
    // a 3 MB prompt: refused from its size, before it is tokenized (quickly)
    let data = dir.path().join("huge.jsonl");
    std::fs::write(
        &data,
        format!(
            "{}\n",
            serde_json::json!({"id": "huge", "problem": "word ".repeat(600_000), "answer": "2"})
        ),
    )
    .unwrap();
    let t = Instant::now();
    let o = rlvr(
        &[
            "eval",
            "--model",
            model_s,
            "--data",
            data.to_str().unwrap(),
            "--max-tokens",
            "4",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("huge.jsonl") && err.contains("problem huge") && err.contains("not tokenized"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    // prompts that fit evaluate
    let data = dir.path().join("ok.jsonl");
    std::fs::write(
        &data,
        format!(
            "{}\n",
            serde_json::json!({"id": "short", "problem": "1+1?", "answer": "2"})
        ),
    )
    .unwrap();
    let o = rlvr(
        &[
            "eval",
            "--model",
            model_s,
            "--data",
            data.to_str().unwrap(),
            "--max-tokens",
            "4",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", log(&o));
}

/// `rlvr score` and `rlvr generate` refuse more tokens than the model has positions, naming its
/// config.json, before any forward pass (a 60,000-token `score` aborted on a 28.8 GB
/// allocation; a 50,000-token `generate` ran for 33.8 s on a 4,096-position model).
#[test]
fn score_and_generate_refuse_more_tokens_than_the_models_positions() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    std::fs::create_dir(&model).unwrap();
    save_short_context_model(&model);
    let model_s = model.to_str().unwrap();
    let long = "7".repeat(100);
    for args in [
        vec![
            "score",
            "--model",
            model_s,
            "--prompt",
            "1+1=",
            "--response",
            &long,
        ],
        vec![
            "score",
            "--model",
            model_s,
            "--prompt",
            &long,
            "--response",
            "2",
        ],
        vec![
            "generate",
            "--model",
            model_s,
            "--prompt",
            &long,
            "--max-tokens",
            "4",
        ],
        vec![
            "generate",
            "--model",
            model_s,
            "--prompt",
            "1+1=",
            "--max-tokens",
            "100",
        ],
    ] {
        let o = rlvr(&args, dir.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", log(&o));
        assert!(
            err.contains("max_position_embeddings = 64") && err.contains("config.json"),
            "{args:?}: {err}"
        );
    }
    // within the positions both run
    let o = rlvr(
        &[
            "generate",
            "--model",
            model_s,
            "--prompt",
            "1+1=",
            "--max-tokens",
            "8",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", log(&o));
}
