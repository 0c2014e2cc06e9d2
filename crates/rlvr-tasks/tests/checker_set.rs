//! The answer-checker fixture (tests/fixtures/checker_set.jsonl, built by
//! scripts/tasks/build_checker_set.py from math-verify's test suite, benchmark golds with
//! rewritten and near-miss answers, and constructed cases of issue 10): rlvr is right on at
//! least 97% of the pairs, accepts no pair labelled wrong, and is right at least as often as
//! math-verify (whose verdicts the fixture records).

use rlvr_tasks::math;

#[derive(serde::Deserialize)]
struct Pair {
    id: usize,
    gold: String,
    response: String,
    label: bool,
    kind: String,
    source: String,
    math_verify: Option<bool>,
}

#[test]
fn rlvr_is_right_on_97_percent_with_no_false_positive() {
    let text = include_str!("fixtures/checker_set.jsonl");
    let pairs: Vec<Pair> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("fixture line parses"))
        .collect();
    assert!(pairs.len() >= 500, "only {} pairs", pairs.len());
    let (mut right, mut false_pos, mut mv_right, mut mv_fp, mut mv_known) = (0, 0, 0, 0, 0);
    for p in &pairs {
        let s = math::verify(&p.gold, &p.response);
        let ok = s.correct == p.label;
        right += usize::from(ok);
        if s.correct && !p.label {
            false_pos += 1;
        }
        if !ok {
            eprintln!(
                "RLVR WRONG #{} [{} / {}] gold {:?} extracted {:?} label {} ({})",
                p.id, p.source, p.kind, p.gold, s.extracted, p.label, s.reason
            );
        }
        if let Some(mv) = p.math_verify {
            if mv != s.correct {
                eprintln!(
                    "DISAGREE #{} [{} / {}] gold {:?} extracted {:?} label {} rlvr {} math-verify {}",
                    p.id, p.source, p.kind, p.gold, s.extracted, p.label, s.correct, mv
                );
            }
            mv_known += 1;
            mv_right += usize::from(mv == p.label);
            mv_fp += usize::from(mv && !p.label);
        }
    }
    let acc = right as f64 / pairs.len() as f64;
    eprintln!(
        "rlvr: {right}/{} = {acc:.4}, false positives {false_pos}",
        pairs.len()
    );
    if mv_known > 0 {
        eprintln!(
            "math-verify: {mv_right}/{mv_known} = {:.4}, false positives {mv_fp}",
            mv_right as f64 / mv_known as f64
        );
        assert!(right >= mv_right, "rlvr {right} < math-verify {mv_right}");
    }
    assert_eq!(false_pos, 0, "rlvr accepted {false_pos} wrong answers");
    assert!(acc >= 0.97, "rlvr accuracy {acc:.4} < 0.97");
}
