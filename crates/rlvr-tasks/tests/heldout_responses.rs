//! A held-out measurement of the checker against math-verify: 1,046 real model responses from
//! four public evaluation outputs that no other fixture uses (tests/fixtures/heldout_responses.jsonl,
//! rebuilt from its sources by scripts/tasks/build_heldout_responses.py: GPT-4 on Chinese gaokao
//! problems, recent open models on the 2026 gaokao, GPT-3/3.5/4 and Codex on
//! GSM8K/SVAMP/MultiArith/ASDiv/AQuA, and text-davinci-003/gpt-3.5-turbo/gpt-4o-mini on
//! GSM8K/SVAMP). Each line records math-verify 0.9.0's verdict.
//!
//! Graded by hand (tests/fixtures/heldout_responses_labels.jsonl, under the policy of
//! real_responses_labels.jsonl). The **first look** (2026-12-07, before any rule was written from
//! this set) graded every response where rlvr and math-verify disagreed (stratum `disagree`,
//! 111) and a seeded random sample of 200 where they agreed (104 of the 488 `both-right`, 96 of
//! the 447 `both-wrong`). Those strata are fixed: each label names the stratum it was graded in,
//! whatever a later checker says. The rules that look prompted moved many responses; the ones on
//! which the checker with those rules and math-verify newly disagree were graded afterwards
//! (stratum `regraded-after-fix`, not a random sample).
//!
//! Two tests, each asserting its figures exactly:
//! - `first_look_figures_of_record`: the measurement of record, from the labels, the fixed
//!   strata and math-verify's verdicts alone (rlvr's first-look verdict is its stratum's), so no
//!   checker change moves it: rlvr right on 64 of the 111 disagreements, whole set 87.5%
//!   [80.9%, 90.6%];
//! - `the_current_checker_on_the_held_out_set`: today's checker, on the same fixed strata:
//!   its right answers and false positives on the 111 first-look disagreements; the stratified
//!   whole-set estimate, by the same method (the 111 counted, the two agreement strata
//!   extrapolated from their random samples, a Wilson interval for each at 97.5%, z = 2.2414,
//!   combined by the strata's weights: Bonferroni over the two, so at least 95% jointly);
//!   false positives over the 311 first-look cases and over every graded case; and its right
//!   answers on every response where it and math-verify disagree now. That last figure needs
//!   every current disagreement graded: a checker change that makes an ungraded one fails the
//!   test (it names the ids) until it is graded by hand and added to the labels with its own
//!   stratum name. A change that moves a figure fails it too: update docs/checker.md ("A
//!   held-out set") with the new figures.
//!
//! `cargo test -p rlvr-tasks --test heldout_responses -- --nocapture` prints the figures.
//! The code it shares with the second held-out set (tests/heldout2_responses.rs) is in
//! tests/common/heldout.rs.

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{Counts, CurrentFigures, MathVerify, RecordFigures, Sample, Set, REGRADED};

/// The set; the strata are as they were when it was graded (the labels file's header says how
/// the samples were drawn).
const SET: Set = Set {
    name: "first held-out set",
    graded_on: "2026-12-07",
    responses: (
        "heldout_responses.jsonl",
        include_str!("fixtures/heldout_responses.jsonl"),
    ),
    labels: (
        "heldout_responses_labels.jsonl",
        include_str!("fixtures/heldout_responses_labels.jsonl"),
    ),
    total: 1046,
    sources: &["faithful-cot", "gaokao-2026", "gaokao-bench", "rereading"],
    disagree: 111,
    both_right: Sample {
        size: 488,
        sampled: 104,
    },
    both_wrong: Sample {
        size: 447,
        sampled: 96,
    },
    shape: |_| {},
};

/// The first look, the measurement of record (docs/checker.md, "A held-out set"): rlvr's
/// verdict then is its stratum's (right on `both-right`, wrong on `both-wrong`, math-verify's
/// opposite on `disagree`), so these figures hold for every later checker.
#[test]
fn first_look_figures_of_record() {
    heldout::check_record(
        &SET,
        &RecordFigures {
            graded: 311,
            disagree: Counts {
                right: 64,
                false_pos: 0,
                false_neg: 47,
            },
            math_verify: Counts {
                right: 47,
                false_pos: 0,
                false_neg: 64,
            },
            both_right: 104,
            both_wrong: 78,
            false_positives: (0, 0),
            accuracy: ["87.5%", "80.9%", "90.6%"],
            math_verify_accuracy: ["85.9%", "79.3%", "89.0%"],
            fp_per_200: "4.3",
            // the first look's bar does not hold
            bar: false,
        },
    );
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_held_out_set() {
    // The figures, as measured on 2026-12-07 after the rules the first look prompted
    // (docs/checker.md, "A held-out set"). A checker change that moves one fails here: update
    // the docs and these figures.
    let (_, labels, cur) = heldout::check_current(
        &SET,
        &CurrentFigures {
            graded: 374,
            disagree: Counts {
                right: 111,
                false_pos: 0,
                false_neg: 0,
            },
            both_right: 104,
            both_wrong: 94,
            accuracy: ["99.1%", "94.2%", "99.8%"],
            false_positives: 0,
            fp_per_200: "4.3",
            current: Counts {
                right: 143,
                false_pos: 0,
                false_neg: 0,
            },
            current_math_verify: MathVerify::Right(0),
            // by source (the set states no figures by source: they are printed)
            key: |r| heldout::source_fields(r, &[0]),
            groups: None,
            // but the set is no longer held out for the formats it prompted
            bar: true,
        },
    );
    // and none among the 311 first-look graded (the re-graded left out)
    let first_look_fp = labels
        .values()
        .filter(|l| l.stratum != REGRADED && cur.verdicts[l.id] && !l.label)
        .count();
    eprintln!("  false positives over the first look's graded: {first_look_fp}");
    assert_eq!(
        first_look_fp, 0,
        "first held-out set, current checker: false positives among the first-look graded"
    );
}
