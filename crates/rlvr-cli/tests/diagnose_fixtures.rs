//! `rlvr diagnose` on files written by verl and TRL themselves (tests/fixtures/diagnose, made
//! once by scripts/diagnose/make_verl_fixture.py with verl 0.9.1's `_balance_batch` and
//! `_log_rollout_data`, and scripts/diagnose/make_trl_fixture.py with a 2-step TRL 1.16
//! `GRPOTrainer` run logging completions to parquet): the same numbers as the same rollouts in
//! rlvr's `{group, reward, length[, advantage]}` layout (written by those scripts from the
//! frameworks' own batch), and for verl, rlvr's GRPO advantages equal verl's.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diagnose")
}

fn tokenizer() -> String {
    rlvr_test_support::models::qwen2_tiny_dir()
        .display()
        .to_string()
}

fn diagnose_json(path: &Path, extra: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(["diagnose", path.to_str().unwrap(), "--json"])
        .args(extra)
        .output()
        .expect("run rlvr");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The report without group labels (they differ between layouts) and the note on where the
/// lengths came from.
fn numbers(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("lengths");
    for key in ["sequences", "groups"] {
        for s in v[key].as_array_mut().unwrap() {
            s.as_object_mut().unwrap().remove("group");
        }
    }
    v
}

/// Equal JSON, numbers to 1e-12 relative: serde_json (without its `float_roundtrip` feature)
/// may parse a decimal one ulp away from Python's float, e.g. TRL's advantage
/// -1.2244449853897095 in rlvr.jsonl reads as -1.2244449853897097, while the parquet holds the
/// exact double.
fn assert_close(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
                "{at}: {x} vs {y}"
            );
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                assert_close(u, v, &format!("{at}[{i}]"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(
                x.keys().collect::<Vec<_>>(),
                y.keys().collect::<Vec<_>>(),
                "{at}"
            );
            for (k, u) in x {
                assert_close(u, &y[k], &format!("{at}.{k}"));
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

#[test]
fn verl_dump_made_by_verl_gives_the_numbers_of_the_rlvr_layout() {
    let dir = fixtures().join("verl");
    let tok = tokenizer();
    let verl = diagnose_json(&dir.join("rollouts"), &["--tokenizer", &tok]);
    let reference = diagnose_json(&dir.join("rlvr.jsonl"), &[]);
    // verl reordered the batch (balance_batch): groups are not consecutive lines
    let labels: Vec<&str> = verl["sequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["group"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 24);
    assert!(
        labels[..12].windows(2).filter(|w| w[0] != w[1]).count() > 2,
        "{labels:?}"
    );
    assert_eq!(reference["batch"]["groups"], 6);
    assert_eq!(numbers(verl.clone()), numbers(reference));
    // rlvr's GRPO estimator (unbiased std, eps 1e-6) reproduces verl's advantages (float32)
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("verl_advantages.json")).unwrap())
            .unwrap();
    let want = want["grpo"].as_array().unwrap();
    for (s, w) in verl["sequences"].as_array().unwrap().iter().zip(want) {
        let (a, w) = (s["advantage"].as_f64().unwrap(), w.as_f64().unwrap());
        assert!((a - w).abs() < 1e-5 * (1.0 + w.abs()), "{a} vs verl {w}");
    }
}

#[test]
fn trl_completion_logs_made_by_trl_give_the_numbers_of_the_rlvr_layout() {
    let dir = fixtures().join("trl");
    let tok = tokenizer();
    let trl = diagnose_json(&dir.join("completions"), &["--tokenizer", &tok]);
    let reference = diagnose_json(&dir.join("rlvr.jsonl"), &[]);
    assert_eq!(reference["batch"]["sequences"], 24);
    assert_eq!(reference["batch"]["groups"], 6);
    assert_close(&numbers(trl.clone()), &numbers(reference), "");
    // TRL's own advantages are kept, not recomputed: (r - mean) / (std + 1e-4)
    let first = &trl["sequences"][1];
    assert_eq!(first["advantage"].as_f64().unwrap(), 1.4997999668121338);
    // TRL logs text only: every length was re-counted, and the report says by which tokenizer;
    // the re-counts are not the lengths TRL trained on (its completion_mask sums)
    assert_eq!(trl["lengths"]["re_counted"], 24, "{}", trl["lengths"]);
    assert_eq!(trl["lengths"]["tokenizer"], tok.as_str());
    let trained: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("trl_lengths.json")).unwrap())
            .unwrap();
    let trained: Vec<u64> = trained["completion_mask_sums_per_generation_batch"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()))
        .collect();
    let recounted: Vec<u64> = trl["sequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["length"].as_u64().unwrap())
        .collect();
    assert_eq!(trained.len(), recounted.len());
    assert_ne!(
        trained, recounted,
        "re-counting TRL's text gave the trained lengths"
    );
}
