//! The answer-checker fixture (tests/fixtures/checker_set.jsonl, built by
//! scripts/tasks/build_checker_set.py from math-verify's test suite, benchmark golds with
//! rewritten and near-miss answers, and constructed cases): rlvr is right on at
//! least 97% of the pairs, accepts no pair labelled wrong, and is right at least as often as
//! math-verify (whose verdicts the fixture records).

mod common;
use common::labelled::{read_pairs, score};

#[test]
fn rlvr_is_right_on_97_percent_with_no_false_positive() {
    let pairs = read_pairs(
        "checker_set.jsonl",
        include_str!("fixtures/checker_set.jsonl"),
    );
    assert!(pairs.len() >= 500, "only {} pairs", pairs.len());
    let t = score(&pairs);
    if t.mv_known > 0 {
        assert!(
            t.right >= t.mv_right,
            "rlvr {} < math-verify {}",
            t.right,
            t.mv_right
        );
    }
    assert_eq!(
        t.false_pos, 0,
        "rlvr accepted {} wrong answers",
        t.false_pos
    );
    assert!(
        t.accuracy() >= 0.97,
        "rlvr accuracy {:.4} < 0.97",
        t.accuracy()
    );
}
