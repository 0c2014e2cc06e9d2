//! The reward router ([`rlvr_tasks::RewardFn`]) on real data: the `leetcode` preset's
//! reference solutions score 1 and a wrong program 0 in the sandbox, `codeforces` programs
//! built from the tests score 1 and wrong ones 0, math problems go to the math checker, and a
//! mixed batch scores the same with 1 and 4 workers. Skips (with a reason) without a data
//! directory or python3; fails under `CI=true`.

use rlvr_tasks::code::{parse_tests, SandboxConfig, Tests};
use rlvr_tasks::{load_preset, Problem, RewardConfig, RewardFn, RewardKind};
use rlvr_tasks::{Score, Verifier};

fn data_dir() -> Option<std::path::PathBuf> {
    rlvr_test_support::or_skip(rlvr_tasks::resolve_data_dir(None), "no data directory")
}

fn have_python() -> bool {
    rlvr_test_support::python(&SandboxConfig::default().python).is_some()
}

fn router(workers: usize) -> RewardFn {
    RewardFn::new(&RewardConfig {
        num_workers: workers,
        ..RewardConfig::default()
    })
    .unwrap()
}

fn block(code: &str) -> String {
    format!("Here is my solution.\n```python\n{code}\n```\n")
}

/// A stdin/stdout program that is right on exactly `tests` (it looks its input up).
fn lookup_program(tests: &[rlvr_tasks::code::IoTest]) -> String {
    let table: Vec<(String, String)> = tests
        .iter()
        .map(|t| (t.input.clone(), t.output.clone()))
        .collect();
    // a JSON string literal is a Python string literal too (ASCII escapes only)
    let json = serde_json::to_string(&table).unwrap();
    let literal = serde_json::to_string(&json).unwrap();
    format!(
        "import sys, json\nt = dict(json.loads({literal}))\ns = sys.stdin.read()\nprint(t.get(s, 'no'), end='')\n"
    )
}

#[test]
fn leetcode_reference_solutions_score_one_and_wrong_programs_zero() {
    let Some(dir) = data_dir() else { return };
    if !have_python() {
        return;
    }
    let ds = load_preset("leetcode", &dir).unwrap();
    let probs: Vec<&Problem> = ds.problems.iter().take(8).collect();
    let f = router(0);
    let counts = f.check(&ds.problems).unwrap();
    assert_eq!((counts.code, counts.math), (ds.len(), 0), "{counts}");
    let right: Vec<String> = probs
        .iter()
        .map(|p| block(p.solution.as_deref().unwrap()))
        .collect();
    let wrong = block("class Solution:\n    pass");
    let mut items: Vec<(&str, &Problem)> = Vec::new();
    for (p, r) in probs.iter().zip(&right) {
        assert_eq!(f.route(p), RewardKind::Code, "{}", p.id);
        items.push((r.as_str(), p));
        items.push((wrong.as_str(), p));
    }
    let t = std::time::Instant::now();
    let scores = f.score_batch(&items).unwrap();
    eprintln!(
        "leetcode: {} responses scored in {:.2}s with {} workers",
        items.len(),
        t.elapsed().as_secs_f64(),
        f.workers()
    );
    for (i, s) in scores.iter().enumerate() {
        let id = &items[i].1.id;
        if i % 2 == 0 {
            assert!(s.correct && s.reward == 1.0, "{id} reference: {s:?}");
            assert_eq!(s.reason, "1/1 tests passed", "{id}");
        } else {
            assert!(!s.correct && s.reward == 0.0, "{id} wrong: {s:?}");
        }
    }
}

#[test]
fn codeforces_programs_run_on_their_tests() {
    let Some(dir) = data_dir() else { return };
    if !have_python() {
        return;
    }
    let ds = load_preset("codeforces", &dir).unwrap();
    let f = router(0);
    let probs: Vec<&Problem> = ds.problems.iter().take(4).collect();
    let mut right = Vec::new();
    for p in &probs {
        assert_eq!(f.route(p), RewardKind::Code, "{}", p.id);
        let Ok(Tests::Io(tests)) = parse_tests(&p.answer) else {
            panic!("{}: not stdin/stdout tests", p.id)
        };
        right.push(block(&lookup_program(&tests)));
    }
    let wrong = block("print('no')");
    let mut items: Vec<(&str, &Problem)> = Vec::new();
    for (p, r) in probs.iter().zip(&right) {
        items.push((r.as_str(), p));
        items.push((wrong.as_str(), p));
    }
    let scores = f.score_batch(&items).unwrap();
    for (i, s) in scores.iter().enumerate() {
        let want = i % 2 == 0;
        assert_eq!(s.correct, want, "{}: {s:?}", items[i].1.id);
        assert_eq!(s.reward, f64::from(u8::from(want)), "{}", items[i].1.id);
    }
}

/// Math and code problems in one batch: routed per problem, and the scores do not depend on
/// the number of workers (input order, each score from its own pair).
#[test]
fn a_mixed_batch_scores_the_same_with_any_worker_count() {
    let Some(dir) = data_dir() else { return };
    if !have_python() {
        return;
    }
    let lc = load_preset("leetcode", &dir).unwrap();
    let m5 = load_preset("math500", &dir).unwrap();
    let mut owned: Vec<(String, &Problem)> = Vec::new();
    for (i, p) in m5.problems.iter().take(6).enumerate() {
        // right, then wrong, answers for the math checker
        let ans = if i % 2 == 0 {
            p.answer.as_str()
        } else {
            "12345.678"
        };
        owned.push((format!("So the answer is $\\boxed{{{ans}}}$."), p));
    }
    for (i, p) in lc.problems.iter().take(4).enumerate() {
        let code = if i % 2 == 0 {
            p.solution.clone().unwrap()
        } else {
            "class Solution:\n    pass".into()
        };
        owned.push((block(&code), p));
    }
    let items: Vec<(&str, &Problem)> = owned.iter().map(|(r, p)| (r.as_str(), *p)).collect();
    let one: Vec<Score> = router(1).score_batch(&items).unwrap();
    let four: Vec<Score> = router(4).score_batch(&items).unwrap();
    assert_eq!(one, four);
    let f = router(1);
    let kinds: Vec<RewardKind> = items.iter().map(|(_, p)| f.route(p)).collect();
    assert_eq!(&kinds[..6], &[RewardKind::Math; 6]);
    assert_eq!(&kinds[6..], &[RewardKind::Code; 4]);
    let correct: Vec<bool> = one.iter().map(|s| s.correct).collect();
    assert_eq!(
        correct,
        [true, false, true, false, true, false, true, false, true, false]
    );
}
