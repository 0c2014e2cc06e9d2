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

/// GiB on the plan line that starts with `label` (`  peak: training (checkpointing off)   6.77 GiB`).
fn plan_gib(text: &str, label: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` line:\n{text}"));
    let mut words = line.split_whitespace().rev();
    assert_eq!(words.next(), Some("GiB"), "{line}");
    words.next().unwrap().parse().unwrap()
}

#[test]
fn real_model_configs_pass_dry_run() {
    let Some(model) = rlvr_test_support::real_model_dir() else {
        return;
    };
    // (file, train data line, eval data line, a prompt's question, most GiB a training
    // micro-batch may plan with checkpointing off: the laptop configs bound their micro-batches;
    // the sweep's is pinned as it started)
    let cases = [
        (
            "configs/smollm2-arith.toml",
            "train data: arith:ops=+*,digits=1-2,terms=2,n=3000: 3000 problems",
            "eval data: arith:ops=+*,digits=1-2,terms=2,split=test,n=100: 100 problems",
            "What is ",
            7.0,
        ),
        (
            "configs/smollm2-arith-rules.toml",
            "train data: arith:ops=+*,digits=1-2,terms=2,n=3000: 3000 problems",
            "eval data: arith:ops=+*,digits=1-2,terms=2,split=test,n=100: 100 problems",
            "What is ",
            f64::INFINITY,
        ),
        (
            // the distinct stories of one-digit amounts outside the held-out tenth
            "configs/smollm2-arith-words.toml",
            "train data: arith:ops=+-,digits=1,terms=2-3,words=true,n=3000: 1271 problems",
            "eval data: arith:ops=+-,digits=1,terms=2-3,words=true,split=test,n=100: 100 problems",
            " now?<|im_end|>",
            7.0,
        ),
    ];
    for (file, train, eval, question, most_gib) in cases {
        let mut out = Vec::new();
        let opts = TrainOptions {
            config: Some(repo(file)),
            overrides: vec![format!("model.path={}", model.display())],
            ..TrainOptions::default()
        };
        dry_run(&opts, &mut out).unwrap_or_else(|e| panic!("{file}: {e}"));
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("30 layers, hidden 576, vocab 49152"),
            "{file}:\n{text}"
        );
        assert!(text.contains(train), "{file}: {train}\n{text}");
        assert!(text.contains(eval), "{file}: {eval}\n{text}");
        // the question in the model's own chat template, its system prompt included
        assert!(
            text.contains("<|im_start|>system\nYou are a helpful AI assistant named SmolLM"),
            "{file}:\n{text}"
        );
        assert!(text.contains("<|im_start|>user\n"), "{file}:\n{text}");
        assert!(text.contains(question), "{file}: {question}\n{text}");
        assert!(text.contains("<|im_start|>assistant\n"), "{file}:\n{text}");
        let peak = plan_gib(&text, "peak: training (checkpointing off)");
        assert!(peak <= most_gib, "{file}: plans {peak} GiB\n{text}");
        assert!(text.trim_end().ends_with("dry run: ok"), "{file}:\n{text}");
    }
}

#[test]
fn every_shipped_config_is_listed_in_the_configs_readme() {
    let readme = std::fs::read_to_string(repo("configs/README.md")).unwrap();
    let mut n = 0;
    for entry in std::fs::read_dir(repo("configs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".toml") {
            n += 1;
            assert!(
                readme.contains(&format!("| `{name}` |")),
                "configs/{name} is not in configs/README.md's table"
            );
        }
    }
    assert!(n >= 6, "{n} configs");
}
