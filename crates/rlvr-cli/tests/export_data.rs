//! `rlvr export data` of the arithmetic family: `extra_info.split` follows the set's own side
//! (`split=test` is the held-out tenth) unless `--split` says otherwise, and the questions are
//! the ones training and evaluation ask.

use std::process::Command;

fn export(spec: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d.jsonl");
    let o = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(["export", "data", spec, "--out"])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_split_of_an_arithmetic_set_is_its_own_side() {
    let test = export("arith:ops=+*,digits=1-2,terms=2,split=test,n=5", &[]);
    assert_eq!(test.len(), 5);
    for r in &test {
        assert_eq!(r["extra_info"]["split"], "test", "{r}");
    }
    // the held-out split is fixed by the problem, whatever n: its first problem
    assert_eq!(test[0]["extra_info"]["question"], "What is 76 times 27?");
    assert_eq!(test[0]["reward_model"]["ground_truth"], "2052");
    let train = export("arith:n=3", &[]);
    assert!(train.iter().all(|r| r["extra_info"]["split"] == "train"));
    // --split names it outright
    let named = export("arith:split=test,n=2", &["--split", "train"]);
    assert!(named.iter().all(|r| r["extra_info"]["split"] == "train"));
    let named = export("arith:n=2", &["--split", "test"]);
    assert!(named.iter().all(|r| r["extra_info"]["split"] == "test"));
}

#[test]
fn a_bad_split_is_refused_naming_it() {
    let o = Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args([
            "export", "data", "arith", "--out", "x.jsonl", "--split", "dev",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--split \"dev\": expected train or test"),
        "{err}"
    );
}
