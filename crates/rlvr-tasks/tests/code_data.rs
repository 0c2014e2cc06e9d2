//! The code presets on the real data directory: tests parse, and LeetCode's reference
//! solutions pass their functional tests in the sandbox. Skips (with a reason) without a data
//! directory or python3; fails under `CI=true`.

use rlvr_tasks::code::{parse_tests, CodeVerifier, SandboxConfig, Tests};
use rlvr_tasks::{load_preset, Verifier};

fn data_dir() -> Option<std::path::PathBuf> {
    rlvr_test_support::or_skip(rlvr_tasks::resolve_data_dir(None), "no data directory")
}

#[test]
fn codeforces_tests_parse() {
    let Some(dir) = data_dir() else { return };
    let ds = load_preset("codeforces", &dir).unwrap();
    assert_eq!(ds.len(), 408);
    let mut n_tests = 0;
    for p in &ds.problems {
        match parse_tests(&p.answer).unwrap_or_else(|e| panic!("{}: {e}", p.id)) {
            Tests::Io(t) => {
                assert!(!t.is_empty(), "{}", p.id);
                n_tests += t.len();
            }
            Tests::Functional(_) => panic!("{}: expected stdin/stdout tests", p.id),
        }
    }
    eprintln!(
        "codeforces: {} problems, {n_tests} stdin/stdout tests",
        ds.len()
    );
}

/// The first 12 LeetCode problems (all 200 with RLVR_CODE_ALL=1): reference solutions pass.
#[test]
fn leetcode_reference_solutions_pass_in_the_sandbox() {
    let Some(dir) = data_dir() else { return };
    if rlvr_test_support::python(&SandboxConfig::default().python).is_none() {
        return;
    }
    let ds = load_preset("leetcode", &dir).unwrap();
    assert_eq!(ds.len(), 200);
    let n = if std::env::var_os("RLVR_CODE_ALL").is_some() {
        ds.len()
    } else {
        12
    };
    let v = CodeVerifier::default();
    let mut failed = Vec::new();
    for p in ds.problems.iter().take(n) {
        assert!(
            matches!(parse_tests(&p.answer), Ok(Tests::Functional(_))),
            "{}",
            p.id
        );
        let sol = p.solution.as_deref().unwrap();
        let s = v.score(&format!("```python\n{sol}\n```"), p);
        if !s.correct {
            failed.push(format!("{}: {}", p.id, s.reason));
        }
        // a wrong program fails the same tests
        if p.id.ends_with("-0") {
            let bad = v.score("```python\nclass Solution:\n    pass\n```", p);
            assert!(!bad.correct && bad.reward == 0.0, "{bad:?}");
        }
    }
    eprintln!(
        "leetcode: {}/{n} reference solutions pass; failed: {failed:?}",
        n - failed.len()
    );
    assert!(failed.len() * 20 <= n, "{failed:?}");
}
