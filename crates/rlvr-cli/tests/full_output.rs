//! A stdout or stderr that cannot be written (`> /dev/full`: "No space left on device") ends a
//! command with a message on the other stream and exit code 1, never a panic; a training run
//! whose log cannot be written goes on and keeps its metrics and checkpoints; a TensorBoard
//! directory that cannot be made is an error naming `TENSORBOARD_DIR`, before the run writes
//! anything.

#[allow(dead_code)] // rlvr() and log() are for the other CLI tests
mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::TINY_TESTBED;

fn dev_full() -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .ok()
}

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn a_full_stdout_is_an_error_not_a_panic() {
    let Some(_) = dev_full() else {
        eprintln!("skipping: no /dev/full");
        return;
    };
    let recipe = root().join("configs/dapo17k-qwen3-1.7b.toml");
    let recipe = recipe.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let pairs = tmp.path().join("pairs.jsonl");
    std::fs::write(&pairs, "{\"gold\": \"1\", \"response\": \"1\"}\n").unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["verify", "--gold", "1", "--response", "1"],
        vec!["verify", "--jsonl", pairs.to_str().unwrap()],
        vec!["export", "verl", recipe],
        vec!["export", "verl", recipe, "--overrides-only"],
        vec!["export", "trl", recipe],
    ];
    for args in cases {
        let o = Command::new(env!("CARGO_BIN_EXE_rlvr"))
            .args(&args)
            .stdout(Stdio::from(dev_full().unwrap()))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("writing to stdout") || err.contains("failed printing to stdout"),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains("panicked") && !err.contains("backtrace"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_full_stderr_puts_the_error_on_stdout() {
    let Some(_) = dev_full() else {
        eprintln!("skipping: no /dev/full");
        return;
    };
    let o = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(["export", "verl", "/nonexistent/config.toml"])
        .stdout(Stdio::piped())
        .stderr(Stdio::from(dev_full().unwrap()))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("error:") && out.contains("/nonexistent/config.toml"),
        "{out}"
    );
}

#[test]
fn training_goes_on_when_its_log_cannot_be_written() {
    let Some(_) = dev_full() else {
        eprintln!("skipping: no /dev/full");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rlvr"));
    cmd.arg("train");
    let runs = format!("trainer.runs_dir={}", tmp.path().join("runs").display());
    let cache = format!("testbed.cache_dir={}", tmp.path().join("cache").display());
    for s in TINY_TESTBED.iter().copied().chain([
        "testbed.warm_start_steps=5",
        "eval.n_problems=4",
        "eval.k=1",
        "trainer.run_name=full-log",
        "logging.progress=true",
        "logging.progress_interval_s=0",
        runs.as_str(),
        cache.as_str(),
    ]) {
        cmd.args(["--set", s]);
    }
    let o = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::from(dev_full().unwrap()))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{:?}: {out}", o.status);
    let run = tmp.path().join("runs/full-log");
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let steps = metrics
        .lines()
        .filter(|l| l.contains("\"kind\":\"train\"") || l.contains("\"kind\": \"train\""))
        .count();
    assert_eq!(steps, 2, "{metrics}");
    assert!(run.join("checkpoint").exists(), "{out}");
}

#[test]
fn an_unusable_tensorboard_dir_is_refused_naming_the_variable() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let runs = tmp.path().join("runs");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rlvr"));
    cmd.arg("train");
    let runs_set = format!("trainer.runs_dir={}", runs.display());
    let cache = format!("testbed.cache_dir={}", tmp.path().join("cache").display());
    for s in TINY_TESTBED.iter().copied().chain([
        "testbed.warm_start_steps=5",
        "trainer.run_name=tb",
        "trainer.logger=[\"console\", \"tensorboard\"]",
        runs_set.as_str(),
        cache.as_str(),
    ]) {
        cmd.args(["--set", s]);
    }
    // a directory inside a regular file cannot be made, as root too
    let o = cmd.env("TENSORBOARD_DIR", &file).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("TENSORBOARD_DIR") && err.contains("a-file"),
        "{err}"
    );
    assert!(!runs.join("tb").exists(), "a run directory was left: {err}");
}
