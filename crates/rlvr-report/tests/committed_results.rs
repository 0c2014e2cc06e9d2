//! The committed regime-study report (results/regimes/) is what `rlvr report` computes from the
//! committed runs' own metrics files: every table, figure for figure.

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

#[test]
fn committed_regime_report_is_recomputed_from_its_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results/regimes");
    let runs = run_dirs(&root.join("runs"));
    assert!(
        runs.len() >= 30,
        "{} runs under {}",
        runs.len(),
        root.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    rlvr_report::write_report(&runs, tmp.path()).unwrap();
    let fresh = std::fs::read_to_string(tmp.path().join("report.md")).unwrap();
    let committed = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert_eq!(tables(&fresh), tables(&committed));
    assert!(fresh.contains("| rule minus balanced |"), "{fresh}");
}
