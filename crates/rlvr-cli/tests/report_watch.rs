//! `rlvr report --watch` beside a real `rlvr train`: started before the run exists, it waits,
//! renders again as the run's metrics grow (a page that reloads itself), and ends by itself
//! with a static report of the finished run once the run's lock is released.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{log, rlvr, TINY_TESTBED};

#[test]
fn watch_follows_a_run_from_before_its_start_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("runs/watched");
    let out = dir.path().join("report");
    let watcher = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(["report", "--watch", "--interval", "0.1", "--out"])
        .arg(&out)
        .arg(&run)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));

    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/testbed.toml");
    let cache = format!("testbed.cache_dir={}", dir.path().join("cache").display());
    let runs = format!("trainer.runs_dir={}", dir.path().join("runs").display());
    let mut args = vec!["train", "--config", config.to_str().unwrap()];
    for kv in TINY_TESTBED.into_iter().chain([
        "testbed.warm_start_steps=20",
        "trainer.run_name=watched",
        "trainer.total_training_steps=12",
        "eval.test_freq=4",
        "eval.n_problems=8",
        "eval.k=2",
        "logging.progress=false",
        cache.as_str(),
        runs.as_str(),
    ]) {
        args.extend(["--set", kv]);
    }
    let trained = rlvr(&args, dir.path());
    assert!(trained.status.success(), "{}", log(&trained));

    // the watcher ends by itself, two looks after the lock is released
    let mut watcher = watcher;
    let t = Instant::now();
    while watcher.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(120) {
            let _ = watcher.kill();
            panic!("rlvr report --watch did not end after the run");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = watcher.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("waiting: "),
        "a run not begun is waited for:\n{stderr}"
    );
    assert_eq!(
        stderr.matches("waiting: ").count(),
        stderr
            .lines()
            .filter(|l| l.starts_with("waiting: "))
            .count(),
    );
    let updates: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("updated "))
        .collect();
    assert!(!updates.is_empty(), "{stdout}");
    let last = stdout
        .lines()
        .find(|l| l.starts_with("no run is being written; final report"))
        .unwrap_or_else(|| panic!("no final report line:\n{stdout}"));
    assert!(last.contains("watched step 12"), "{last}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        !html.contains("http-equiv=\"refresh\""),
        "the final page is static"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("balanced"), "{md}");
    // and it rendered the metrics of the end of the run, as a plain report does
    let plain = rlvr(
        &[
            "report",
            "--out",
            dir.path().join("plain").to_str().unwrap(),
            run.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(plain.status.success(), "{}", log(&plain));
    let plain_md = std::fs::read_to_string(dir.path().join("plain/report.md")).unwrap();
    assert_eq!(md, plain_md);
}

#[test]
fn interval_needs_watch_and_a_positive_number() {
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (vec!["report", "--interval", "2", "x"], "--watch"),
        (
            vec!["report", "--watch", "--interval", "0", "x"],
            "more than 0",
        ),
        (
            vec!["report", "--watch", "--interval", "nan", "x"],
            "more than 0",
        ),
    ] {
        let o = rlvr(&args, dir.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", log(&o));
        assert!(log(&o).contains(needle), "{args:?}: {}", log(&o));
    }
}
