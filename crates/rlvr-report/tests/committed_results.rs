//! Every committed report of the regime study (`results/<part>/report.md` beside its `runs/`) is
//! what `rlvr report` computes from the committed runs' own metrics files: every table, figure
//! for figure.

use std::path::{Path, PathBuf};

/// Every run directory (one holding `metrics.jsonl`) under `dir`, sorted.
fn run_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.join("metrics.jsonl").is_file() {
            out.push(path);
        } else if path.is_dir() {
            out.extend(run_dirs(&path));
        }
    }
    out.sort();
    out
}

/// The report without its last section (the list of run directories, which names paths).
fn tables(md: &str) -> &str {
    md.split("## Runs").next().unwrap()
}

/// `rlvr report` on the runs under `results/<part>/runs` gives the committed tables.
fn check_part(part: &str, min_runs: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../results")
        .join(part);
    let runs = run_dirs(&root.join("runs"));
    assert!(
        runs.len() >= min_runs,
        "{} runs under {}",
        runs.len(),
        root.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    rlvr_report::write_report(&runs, tmp.path()).unwrap();
    let fresh = std::fs::read_to_string(tmp.path().join("report.md")).unwrap();
    let committed = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert_eq!(tables(&fresh), tables(&committed), "{part}");
    assert!(fresh.contains("| rule minus balanced |"), "{part}: {fresh}");
}

#[test]
fn committed_regime_reports_are_recomputed_from_their_runs() {
    // the wrong-long study at 450 warm-start steps, the pilots, the 8-seed grid's parts,
    check_part("regimes", 30);
    check_part("regime-pilots", 8);
    check_part("regime-grid", 6);
    // the verified regimes' pilot (seed 1)
    check_part("regime-verified", 6);
}
