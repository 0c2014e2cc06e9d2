//! The labelled verifier test set (tests/fixtures/verifier_set.jsonl, built by
//! scripts/tasks/build_verifier_set.py): rlvr must be right on at least 99% of the pairs and at
//! least as often right as math-verify (whose verdicts the fixture records).

use rlvr_tasks::math;

#[derive(serde::Deserialize)]
struct Pair {
    id: usize,
    gold: String,
    response: String,
    label: bool,
    kind: String,
    math_verify: Option<bool>,
}

#[test]
fn rlvr_is_right_on_99_percent_and_at_least_as_often_as_math_verify() {
    let text = include_str!("fixtures/verifier_set.jsonl");
    let pairs: Vec<Pair> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("fixture line parses"))
        .collect();
    assert!(pairs.len() >= 300, "only {} pairs", pairs.len());
    let (mut rlvr_right, mut mv_right, mut mv_known) = (0usize, 0usize, 0usize);
    for p in &pairs {
        let s = math::verify(&p.gold, &p.response);
        let ok = s.correct == p.label;
        rlvr_right += usize::from(ok);
        if !ok {
            eprintln!(
                "RLVR WRONG #{} [{}] gold {:?} extracted {:?} label {} ({})",
                p.id, p.kind, p.gold, s.extracted, p.label, s.reason
            );
        }
        if let Some(mv) = p.math_verify {
            mv_known += 1;
            mv_right += usize::from(mv == p.label);
            if mv != s.correct {
                eprintln!(
                    "DISAGREE #{} [{}] gold {:?} extracted {:?} label {} rlvr {} math-verify {}",
                    p.id, p.kind, p.gold, s.extracted, p.label, s.correct, mv
                );
            }
        }
    }
    let n = pairs.len() as f64;
    let acc = rlvr_right as f64 / n;
    eprintln!("rlvr: {rlvr_right}/{} = {acc:.4}", pairs.len());
    if mv_known > 0 {
        eprintln!(
            "math-verify: {mv_right}/{mv_known} = {:.4}",
            mv_right as f64 / mv_known as f64
        );
        assert_eq!(
            mv_known,
            pairs.len(),
            "math-verify verdicts missing for some pairs"
        );
        assert!(
            rlvr_right >= mv_right,
            "rlvr {rlvr_right} < math-verify {mv_right}"
        );
    }
    assert!(acc >= 0.99, "rlvr accuracy {acc:.4} < 0.99");
}
