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

fn results() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results")
}

/// `rlvr report` on the runs under `results/<part>/runs` gives the committed tables.
fn check_part(part: &str, min_runs: usize) {
    check_report(
        part,
        &[part],
        min_runs,
        rlvr_report::ReportOptions::default(),
    );
}

/// `rlvr report` on the runs under `results/<source>/runs` of every source gives the committed
/// tables of `results/<part>/report.md`.
fn check_report(
    part: &str,
    sources: &[&str],
    min_runs: usize,
    options: rlvr_report::ReportOptions,
) {
    let root = results().join(part);
    let runs: Vec<PathBuf> = sources
        .iter()
        .flat_map(|s| run_dirs(&results().join(s).join("runs")))
        .collect();
    assert!(
        runs.len() >= min_runs,
        "{} runs under {sources:?}",
        runs.len(),
    );
    let tmp = tempfile::tempdir().unwrap();
    rlvr_report::write_report_with(&runs, tmp.path(), options).unwrap();
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
    check_part("regime-grid", 48);
    // the verified regimes, 3 rules x 8 seeds
    check_part("regime-verified", 48);
    // the stress learning rates on verified-retry (1e-4: 2 seeds; 2e-4 and 4e-4: 8 seeds)
    check_part("regime-stress", 54);
    // the study's summary over every regime that holds its band: tables and the regime map
    check_report(
        "regime-study",
        &["regime-grid", "regime-verified"],
        96,
        rlvr_report::ReportOptions {
            curves: false,
            ..Default::default()
        },
    );
}

/// A watched report's page reloads itself at the watch interval; a plain one does not; both
/// are written whole (no temporary file is left beside them) and hold the same tables.
#[test]
fn a_watched_page_reloads_itself() {
    let runs: Vec<PathBuf> = run_dirs(&results().join("regime-pilots/runs"))
        .into_iter()
        .take(2)
        .collect();
    let page = |refresh_s| {
        let tmp = tempfile::tempdir().unwrap();
        let options = rlvr_report::ReportOptions {
            curves: false,
            refresh_s,
        };
        rlvr_report::write_report_with(&runs, tmp.path(), options).unwrap();
        let names: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
        let read = |f: &str| std::fs::read_to_string(tmp.path().join(f)).unwrap();
        (read("report.html"), read("report.md"))
    };
    let (watched, watched_md) = page(Some(7));
    let (plain, plain_md) = page(None);
    assert!(watched.contains("<meta http-equiv=\"refresh\" content=\"7\">"));
    assert!(!plain.contains("http-equiv"));
    assert_eq!(
        watched.replace("<meta http-equiv=\"refresh\" content=\"7\">", ""),
        plain
    );
    assert_eq!(watched_md, plain_md);
}
