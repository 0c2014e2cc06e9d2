//! `rlvr train --dry-run` of the shipped GPU configs against the real data directory, on a
//! machine without their weights (or with them in the local Hugging Face cache).

use std::path::{Path, PathBuf};

use rlvr_train::run::{dry_run, TrainOptions};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn data_dir() -> Option<PathBuf> {
    rlvr_test_support::or_skip(rlvr_tasks::resolve_data_dir(None), "no data directory")
}

#[test]
fn gpu_configs_pass_dry_run() {
    let Some(dir) = data_dir() else { return };
    for file in [
        "configs/dapo17k-qwen2.5-math-7b.toml",
        "configs/dapo17k-qwen3-1.7b.toml",
    ] {
        let mut out = Vec::new();
        let opts = TrainOptions {
            config: Some(repo(file)),
            data_dir: Some(dir.clone()),
            ..TrainOptions::default()
        };
        dry_run(&opts, &mut out).unwrap_or_else(|e| panic!("{file}: {e}"));
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("train data: dapo_math_17k: 17200 problems (717 repeated rows dropped)"),
            "{file}:\n{text}"
        );
        assert!(text.contains("--- prompt 3 of 3"), "{file}:\n{text}");
        assert!(
            text.contains("Solve the following math problem"),
            "{file}: DAPO template\n{text}"
        );
        assert!(text.contains("eval data: aime24"), "{file}:\n{text}");
        assert!(text.trim_end().ends_with("dry run: ok"), "{file}:\n{text}");
        // without the weights it says so and goes on; with them it reads config.json
        assert!(
            text.contains("is not available locally") || text.contains("layers, hidden"),
            "{file}:\n{text}"
        );
        // the memory plan (published shapes without the weights): both recipes fit one 141
        // GB GPU (docs/memory.md), the 7B one since gradients go into the f32 accumulator
        // piece by piece and AdamW steps in place
        assert!(text.contains("memory plan per device"), "{file}:\n{text}");
        assert!(text.contains("master weights (f32)"), "{file}:\n{text}");
        assert!(
            text.contains("fits model.device_memory_gib = 139") && !text.contains("does NOT fit"),
            "{file}:\n{text}"
        );
        // 16 optimizer steps per rollout: the rollback copy is planned on the host
        assert!(
            text.contains("host memory: rollback copy"),
            "{file}:\n{text}"
        );
    }
}

#[test]
fn testbed_dry_run_prints_prompts() {
    let mut out = Vec::new();
    dry_run(&TrainOptions::default(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("--- prompt 3 of 3"), "{text}");
    assert!(text.contains("Add: "), "{text}");
    assert!(text.trim_end().ends_with("dry run: ok"), "{text}");
}

#[test]
fn bad_config_key_is_named_in_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "[rollout]\nnum_generation = 16\n").unwrap();
    let err = dry_run(
        &TrainOptions {
            config: Some(path.clone()),
            ..TrainOptions::default()
        },
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(err.is_user_input());
    let msg = err.to_string();
    assert!(
        msg.contains("rollout.num_generation") && msg.contains("bad.toml"),
        "{msg}"
    );
}
