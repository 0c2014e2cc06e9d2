//! `rlvr diagnose` end to end: JSON contract, hand-computed weights, table, bad input.

#[allow(dead_code)] // TINY_TESTBED and the model builders are for the other CLI tests
mod common;
use common::rlvr_here as rlvr;

use std::io::Write;

fn file_with(lines: &str) -> tempfile_path::TempPath {
    tempfile_path::TempPath::new(lines)
}

/// A minimal temporary file (no extra dependency): removed on drop.
mod tempfile_path {
    pub struct TempPath(pub std::path::PathBuf);
    impl TempPath {
        pub fn new(contents: &str) -> Self {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = std::env::temp_dir().join(format!(
                "rlvr-diagnose-{}-{}.jsonl",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            ));
            let mut f = std::fs::File::create(&p).unwrap();
            super::Write::write_all(&mut f, contents.as_bytes()).unwrap();
            TempPath(p)
        }
        pub fn as_str(&self) -> &str {
            self.0.to_str().unwrap()
        }
    }
    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

const RULES: [&str; 7] = [
    "token-mean",
    "seq-mean-token-mean",
    "seq-mean-token-sum",
    "seq-mean-token-sum-norm",
    "group-token-mean",
    "balanced",
    "balanced-mass",
];

/// One group "a" with k = 1 of G = 4 (the correct answer is long) and a second group 7 of two.
const ROLLOUTS: &str = r#"{"group": "a", "reward": 1, "length": 40, "text": "ignored"}
{"group": "a", "reward": 0, "length": 10}

{"group": "a", "reward": 0, "length": 10}
{"group": 7, "reward": 1.0, "length": 5, "advantage": 2.0}
{"group": "a", "reward": 0, "length": 10}
{"group": 7, "reward": 0.0, "length": 15, "advantage": -2.0}
"#;

#[test]
fn json_has_every_rule_for_every_sequence_in_input_order() {
    let f = file_with(ROLLOUTS);
    let out = rlvr(&["diagnose", f.as_str(), "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let seqs = v["sequences"].as_array().unwrap();
    assert_eq!(seqs.len(), 6);
    for s in seqs {
        for r in RULES {
            assert!(s["weights"][r].is_f64(), "missing weight {r} in {s}");
        }
    }
    for r in RULES {
        assert!(
            v["rules"][r]["positive_share"].is_f64(),
            "missing rules.{r}"
        );
    }
    // Group "a": rewards 1,0,0,0 -> unbiased std 0.5, A = 0.75/(0.5+1e-6), -0.25/(0.5+1e-6).
    let a0 = seqs[0]["advantage"].as_f64().unwrap();
    assert!((a0 - 0.75 / (0.5 + 1e-6)).abs() < 1e-12, "{a0}");
    // The "advantage" field overrides the estimator.
    assert_eq!(seqs[3]["advantage"].as_f64(), Some(2.0));
    // balanced, by hand: B = 2; group a: S+ 1/4 over 40 tokens, S- 3/4 over 30;
    // group 7: S+ 1/2 over 5, S- 1/2 over 15.
    let w = |i: usize| seqs[i]["weights"]["balanced"].as_f64().unwrap();
    let expect = [
        0.5 * 0.25 / 40.0,
        0.5 * 0.75 / 30.0,
        0.5 * 0.75 / 30.0,
        0.5 * 0.5 / 5.0,
        0.5 * 0.75 / 30.0,
        0.5 * 0.5 / 15.0,
    ];
    for (i, e) in expect.iter().enumerate() {
        assert!(
            (w(i) - e).abs() < 1e-15,
            "balanced w[{i}] = {} want {e}",
            w(i)
        );
    }
    // token-mean: N = 90.
    assert!((seqs[5]["weights"]["token-mean"].as_f64().unwrap() - 1.0 / 90.0).abs() < 1e-15);
    // seq-mean-token-sum-norm: L defaults to the largest length (40), n = 6.
    assert!(
        (seqs[0]["weights"]["seq-mean-token-sum-norm"]
            .as_f64()
            .unwrap()
            - 1.0 / 240.0)
            .abs()
            < 1e-15
    );
    // Balanced Aggregation balances signs: positive share 0.5.
    assert!((v["rules"]["balanced"]["positive_share"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert!(v["verdict"]
        .as_str()
        .unwrap()
        .contains("sign-length coupling"));
}

#[test]
fn max_len_and_estimator_flags() {
    let f = file_with(ROLLOUTS);
    let out = rlvr(&[
        "diagnose",
        f.as_str(),
        "--json",
        "--max-len",
        "100",
        "--adv",
        "dr-grpo",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s0 = &v["sequences"][0];
    assert!(
        (s0["weights"]["seq-mean-token-sum-norm"].as_f64().unwrap() - 1.0 / 600.0).abs() < 1e-15
    );
    assert_eq!(s0["advantage"].as_f64(), Some(0.75));
}

#[test]
fn table_names_every_rule_and_a_verdict() {
    let f = file_with(ROLLOUTS);
    let out = rlvr(&["diagnose", f.as_str()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for r in RULES {
        assert!(text.contains(r), "table lacks {r}:\n{text}");
    }
    for needle in [
        "CV",
        "L+ - L-",
        "sqrt(k(G-k))/G",
        "longest-quartile share",
        "verdict:",
    ] {
        assert!(text.contains(needle), "table lacks {needle}:\n{text}");
    }
}

#[test]
fn malformed_line_names_its_line_and_exits_2() {
    for (body, line, needle) in [
        (
            "{\"group\": 1, \"reward\": 1, \"length\": 3}\n{\"group\": 1, \"reward\": 1}\n",
            2,
            "missing field \"length\"",
        ),
        (
            "{\"group\": 1, \"reward\": 1, \"length\": 3}\n\nnot json\n",
            3,
            "not valid JSON",
        ),
        (
            "{\"group\": [1], \"reward\": 1, \"length\": 3}\n",
            1,
            "\"group\" must be",
        ),
        (
            "{\"group\": 1, \"reward\": \"x\", \"length\": 3}\n",
            1,
            "\"reward\" must be a number",
        ),
        (
            "{\"group\": 1, \"reward\": 1, \"length\": -3}\n",
            1,
            "non-negative integer",
        ),
    ] {
        let f = file_with(body);
        let out = rlvr(&["diagnose", f.as_str()]);
        assert_eq!(out.status.code(), Some(2), "{body}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(&format!("{}:{line}:", f.as_str())), "{err}");
        assert!(err.contains(needle), "{err}");
    }
}

#[test]
fn missing_and_empty_files_are_input_errors() {
    let out = rlvr(&["diagnose", "/nonexistent/rollouts.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/rollouts.jsonl"));
    let f = file_with("\n\n");
    let out = rlvr(&["diagnose", f.as_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no rollouts"));
}
