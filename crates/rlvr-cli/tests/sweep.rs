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
            "trainer.warm_start_steps=5",
            "trainer.save_freq=1",
            "eval.n_problems=8",
            "eval.k=2",
            "eval.test_freq=1",
        ])
        .collect();
    let cache = format!("trainer.cache_dir={}", tmp.path().join("cache").display());
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
    assert_eq!(pngs, 7);

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
