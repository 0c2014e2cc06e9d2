//! The labelled verifier test set (tests/fixtures/verifier_set.jsonl, built by
//! scripts/tasks/build_verifier_set.py): rlvr must be right on at least 99% of the pairs and at
//! least as often right as math-verify (whose verdicts the fixture records).

mod common;
use common::labelled::{read_pairs, score};

#[test]
fn rlvr_is_right_on_99_percent_and_at_least_as_often_as_math_verify() {
    let pairs = read_pairs(
        "verifier_set.jsonl",
        include_str!("fixtures/verifier_set.jsonl"),
    );
    assert!(pairs.len() >= 300, "only {} pairs", pairs.len());
    let t = score(&pairs);
    assert_eq!(
        t.mv_known, t.pairs,
        "math-verify verdicts missing for some pairs"
    );
    assert!(
        t.right >= t.mv_right,
        "rlvr {} < math-verify {}",
        t.right,
        t.mv_right
    );
    assert!(
        t.accuracy() >= 0.99,
        "rlvr accuracy {:.4} < 0.99",
        t.accuracy()
    );
}
