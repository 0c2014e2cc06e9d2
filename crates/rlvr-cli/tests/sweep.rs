//! Smoke test of the comparison pipeline: a 2-rule x 1-seed sweep of a few GRPO steps on a
//! tiny testbed model, resumed (finished runs are skipped), then reported on.

mod common;

use std::path::Path;

use common::{log, rlvr, TINY_TESTBED};

#[test]
fn two_rule_sweep_runs_resumes_and_reports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let config = root.join("configs/testbed.toml");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let out_s = out.to_str().unwrap();
    let config_s = config.to_str().unwrap();
    let tiny: Vec<&str> = TINY_TESTBED
        .into_iter()
        .chain([
            "testbed.warm_start_steps=5",
            "trainer.save_freq=1",
            "eval.n_problems=8",
            "eval.k=2",
            "eval.test_freq=1",
        ])
        .collect();
    let cache = format!("testbed.cache_dir={}", tmp.path().join("cache").display());
    let mut args = vec![
        "sweep",
        "--config",
        config_s,
        "--rules",
        "token-mean,balanced",
        "--seeds",
        "1",
        "--out",
        out_s,
    ];
    for t in tiny.iter().copied().chain(std::iter::once(cache.as_str())) {
        args.extend(["--set", t]);
    }
    let first = rlvr(&args, tmp.path());
    assert!(first.status.success(), "sweep failed:\n{}", log(&first));
    for cell in ["token-mean-s1", "balanced-s1"] {
        let dir = out.join(cell);
        assert!(
            dir.join("sweep.done").exists(),
            "{cell} not finished:\n{}",
            log(&first)
        );
        let metrics = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
        assert!(
            metrics.lines().any(|l| l.contains("\"kind\":\"train\"")),
            "{metrics}"
        );
        assert!(
            metrics.lines().any(|l| l.contains("\"kind\":\"eval\"")),
            "{metrics}"
        );
        let cfg = std::fs::read_to_string(dir.join("config.toml")).unwrap();
        assert!(
            cfg.contains(&cell[..cell.len() - 3]),
            "config.toml does not name the rule:\n{cfg}"
        );
    }
    // The report has a row per rule and its plots.
    let md = std::fs::read_to_string(out.join("report/report.md")).unwrap();
    assert!(
        md.contains("| `token-mean` | 1 |") && md.contains("| `balanced` | 1 |"),
        "{md}"
    );
    assert!(out.join("report/report.html").exists());
    let pngs = std::fs::read_dir(out.join("report"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "png")
        })
        .count();
    assert_eq!(pngs, 9);

    // Running the same sweep again skips both finished runs.
    let again = rlvr(&args, tmp.path());
    assert!(again.status.success(), "{}", log(&again));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout)
            .matches("finished, skipped")
            .count(),
        2,
        "{}",
        log(&again)
    );

    // Each run recorded its machine once (one process, from step 0); the report lists it.
    for cell in ["token-mean-s1", "balanced-s1"] {
        let host = std::fs::read_to_string(out.join(cell).join("host.jsonl")).unwrap();
        assert_eq!(host.lines().count(), 1, "{host}");
        assert!(host.starts_with("{\"step\":0,"), "{host}");
    }
    let machines = md.split("## Machines").nth(1).expect("a machines section");
    assert!(
        machines.contains("| M1 |") && !machines.contains("| M2 |"),
        "{md}"
    );
    assert!(
        machines.contains("ran all its rules of a condition on one machine"),
        "{md}"
    );

    // A seed whose finished run came from another machine: the sweep warns before it runs
    // the seed's other rules here, and the report flags the seed.
    std::fs::write(
        out.join("token-mean-s1/host.jsonl"),
        "{\"step\":0,\"machine\":\"another machine\"}\n",
    )
    .unwrap();
    std::fs::remove_dir_all(out.join("balanced-s1")).unwrap();
    // ... and runs it again dropping its checkpoints once it finishes
    assert!(out.join("token-mean-s1/checkpoint/state.json").exists());
    let mut dropping = args.clone();
    dropping.push("--drop-checkpoints");
    let split = rlvr(&dropping, tmp.path());
    assert!(split.status.success(), "{}", log(&split));
    let stdout = String::from_utf8_lossy(&split.stdout);
    assert!(
        stdout.contains("balanced seed 1: WARNING: this seed's finished runs ran on another machine (another machine)"),
        "{}",
        log(&split)
    );
    let md = std::fs::read_to_string(out.join("report/report.md")).unwrap();
    assert!(
        md.contains("seed 1 (M1, M2)") || md.contains("seed 1 (M2, M1)"),
        "{md}"
    );
    // the run finished here has its files and no checkpoint; the one finished before is left
    let b = out.join("balanced-s1");
    assert!(b.join("sweep.done").exists() && b.join("metrics.jsonl").exists());
    let left: Vec<String> = std::fs::read_dir(&b)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("checkpoint"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(out.join("token-mean-s1/checkpoint/state.json").exists());

    // The grid is pinned: other overrides on the same sweep directory are refused.
    let mut changed = args.clone();
    changed.extend(["--set", "optim.lr=1e-3"]);
    let refused = rlvr(&changed, tmp.path());
    assert_eq!(refused.status.code(), Some(2), "{}", log(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("different config"),
        "{}",
        log(&refused)
    );

    // A copy of the config that differs only in comments and layout resumes the same sweep.
    let edited = tmp.path().join("edited.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&edited, format!("# edited\n{}", text.replace(" = ", "="))).unwrap();
    let mut same = args.clone();
    let pos = same.iter().position(|a| *a == config_s).unwrap();
    let edited_s = edited.to_str().unwrap();
    same[pos] = edited_s;
    let resumed = rlvr(&same, tmp.path());
    assert!(resumed.status.success(), "{}", log(&resumed));
    // One that sets a different value is refused.
    std::fs::write(&edited, text.replace("lr = 5e-5", "lr = 6e-5")).unwrap();
    let refused = rlvr(&same, tmp.path());
    assert_eq!(refused.status.code(), Some(2), "{}", log(&refused));

    // `rlvr report` on the run directories directly.
    let rep = tmp.path().join("rep");
    let r = rlvr(
        &[
            "report",
            out.join("token-mean-s1").to_str().unwrap(),
            out.join("balanced-s1").to_str().unwrap(),
            "--out",
            rep.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert!(r.status.success(), "{}", log(&r));
    assert!(rep.join("report.md").exists());
}

#[test]
fn unknown_rule_is_an_input_error() {
    let tmp = tempfile::tempdir().unwrap();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/testbed.toml");
    let o = rlvr(
        &[
            "sweep",
            "--config",
            config.to_str().unwrap(),
            "--rules",
            "token-mean,tokenmean",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("tokenmean"));
}

/// A grid sweep (2 regimes x 2 rules x 2 seeds, two jobs at once) names its conditions, reports
/// each with the paired table and the length statistics by phase, and a run resumed from an
/// earlier checkpoint after a simulated crash gives the same report. (This model is too small
/// to solve anything, so no batch has a live gap and the regime map has no point; the map is
/// tested in rlvr-report.)
#[test]
fn grid_sweep_reports_conditions_and_resumes_to_the_same_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let config = root.join("configs/regimes.toml");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("grid");
    let cache = format!("testbed.cache_dir={}", tmp.path().join("cache").display());
    let mut args: Vec<String> = [
        "sweep",
        "--config",
        config.to_str().unwrap(),
        "--rules",
        "token-mean,balanced",
        "--seeds",
        "2",
        "--jobs",
        "2",
        "--grid",
        "testbed.regime=wrong-long,control",
        "--out",
        out.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    for t in TINY_TESTBED.into_iter().chain([
        "testbed.warm_start_steps=5",
        "trainer.save_freq=1",
        "eval.n_problems=8",
        "eval.k=2",
        "eval.test_freq=1",
        cache.as_str(),
    ]) {
        args.extend(["--set".to_string(), t.to_string()]);
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let first = rlvr(&argv, tmp.path());
    assert!(first.status.success(), "sweep failed:\n{}", log(&first));
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert_eq!(stdout.matches(": done in ").count(), 8, "{}", log(&first));
    for regime in ["wrong-long", "control"] {
        for cell in [
            "token-mean-s1",
            "token-mean-s2",
            "balanced-s1",
            "balanced-s2",
        ] {
            let dir = out.join(format!("regime-{regime}")).join(cell);
            assert!(dir.join("sweep.done").exists(), "{}", dir.display());
            let cfg = std::fs::read_to_string(dir.join("config.toml")).unwrap();
            assert!(cfg.contains(&format!("regime = \"{regime}\"")), "{cfg}");
        }
    }
    let report = out.join("report/report.md");
    let md = std::fs::read_to_string(&report).unwrap();
    for needle in [
        "## Condition `wrong-long`",
        "## Condition `control`",
        "| rule minus balanced |",
        "| 1-2 | ",
    ] {
        assert!(md.contains(needle), "{needle} missing:\n{md}");
    }
    assert_eq!(md.matches("| `token-mean` | 2 | ").count(), 4, "{md}");

    // Crash simulation: one run loses its last checkpoint and its done mark; the sweep resumes
    // it from the step-1 checkpoint, and the report is the same.
    let cell = out.join("regime-wrong-long/token-mean-s2");
    std::fs::remove_file(cell.join("sweep.done")).unwrap();
    std::fs::remove_dir_all(cell.join("checkpoint")).unwrap();
    std::fs::rename(cell.join("checkpoint-step000001"), cell.join("checkpoint")).unwrap();
    let again = rlvr(&argv, tmp.path());
    assert!(again.status.success(), "{}", log(&again));
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(
        stdout.contains("token-mean seed 2: resuming"),
        "{}",
        log(&again)
    );
    assert_eq!(
        stdout.matches("finished, skipped").count(),
        7,
        "{}",
        log(&again)
    );
    assert_eq!(
        std::fs::read_to_string(&report).unwrap(),
        md,
        "resumed report differs"
    );

    // The grid axes are not pinned (each condition's directory names its values): a narrower
    // grid on the same directory skips its finished runs and starts none, also where the
    // overrides file was written when the axes were pinned too (`grid ...` lines).
    let ovr = out.join("sweep-overrides.txt");
    let pinned = std::fs::read_to_string(&ovr).unwrap();
    assert!(
        pinned.contains("eval.n_problems=8") && !pinned.contains("grid "),
        "{pinned}"
    );
    std::fs::write(
        &ovr,
        format!("{pinned}\ngrid testbed.regime=wrong-long,control"),
    )
    .unwrap();
    let mut narrow = args.clone();
    let axis = narrow
        .iter()
        .position(|a| a == "testbed.regime=wrong-long,control")
        .unwrap();
    narrow[axis] = "testbed.regime=control".into();
    let argv: Vec<&str> = narrow.iter().map(String::as_str).collect();
    let narrowed = rlvr(&argv, tmp.path());
    assert!(narrowed.status.success(), "{}", log(&narrowed));
    let stdout = String::from_utf8_lossy(&narrowed.stdout);
    assert_eq!(
        stdout.matches("finished, skipped").count(),
        4,
        "{}",
        log(&narrowed)
    );
    assert!(!stdout.contains("starting"), "{}", log(&narrowed));
}

#[test]
fn bad_grid_axes_are_input_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/testbed.toml");
    for (grid, needle) in [
        ("optim.lr", "expected section.key=v1,v2"),
        ("lr=1e-4", "section.key"),
        ("optim.lr=1e-4,,2e-4", "non-empty"),
        ("optim.lr=1e-4,1e-4", "given twice"),
        ("testbed.regime=../x", "letters, digits"),
        ("trainer.seed=1,2", "both a --grid axis"),
    ] {
        let o = rlvr(
            &[
                "sweep",
                "--config",
                config.to_str().unwrap(),
                "--grid",
                grid,
                "--set",
                "trainer.seed=3",
            ],
            tmp.path(),
        );
        assert_eq!(o.status.code(), Some(2), "{grid}: {}", log(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{grid}: {}",
            log(&o)
        );
    }
}

/// The pids of `pid`'s children (from /proc).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so split after its ')'
        let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
        let ppid = after.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    // a zombie has ended; its parent (the killed sweep) is gone, so init reaps it
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s[s.rfind(')').unwrap_or(0) + 1..]
            .trim_start()
            .starts_with('Z')
    })
}

/// A sweep killed with SIGKILL (no chance to clean up) leaves no training run going: each child
/// gets SIGTERM when its parent dies.
#[test]
fn a_killed_sweep_stops_its_training_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let config = root.join("configs/testbed.toml");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let cache = format!("testbed.cache_dir={}", tmp.path().join("cache").display());
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rlvr"));
    cmd.args(["sweep", "--config"])
        .arg(&config)
        .args([
            "--rules",
            "token-mean,balanced",
            "--seeds",
            "1",
            "--jobs",
            "2",
        ])
        .arg("--out")
        .arg(&out);
    // long enough that the runs are still going when the sweep is killed
    for t in TINY_TESTBED
        .iter()
        .copied()
        .chain(["trainer.total_training_steps=10000"])
        .chain([cache.as_str()])
    {
        cmd.args(["--set", t]);
    }
    let mut sweep = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let runs = loop {
        let c = children(sweep.id());
        if c.len() == 2 || start.elapsed().as_secs() > 60 {
            break c;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(runs.len(), 2, "the sweep started {runs:?}");
    sweep.kill().unwrap();
    sweep.wait().unwrap();
    let start = std::time::Instant::now();
    while runs.iter().any(|&p| alive(p)) && start.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let left: Vec<u32> = runs.into_iter().filter(|&p| alive(p)).collect();
    for &p in &left {
        // SAFETY: plain kill of a test's own leftover process
        unsafe { libc::kill(p as i32, libc::SIGKILL) };
    }
    assert!(
        left.is_empty(),
        "runs still going 30 s after the sweep was killed: {left:?}"
    );
}
