//! A fourth held-out measurement of the checker against math-verify: 667 real model responses
//! from two public evaluation outputs that no other fixture uses
//! (tests/fixtures/heldout4_responses.jsonl, rebuilt from its sources by
//! scripts/tasks/build_heldout4_responses.py: text-davinci-003 under AGIEval's few-shot prompts on
//! Chinese gaokao fill-in-the-blank and multiple-choice mathematics and on SAT mathematics, and
//! MR-GSM8K's step-by-step GSM8K solutions ending `The answer is: X`). Each line records
//! math-verify 0.9.0's verdict. Nothing in `crates/rlvr-tasks/src` was changed for this set: it
//! measures, it does not tune.
//!
//! Graded by hand (tests/fixtures/heldout4_responses_labels.jsonl, under the policy of
//! real_responses_labels.jsonl) on 2026-12-07, against the checker as it stood after the third held-out set's rules: every
//! response where rlvr and math-verify disagreed (stratum `disagree`, 145) and a seeded random
//! sample of 200 where they agreed (7 of the 19 `both-right`, 193 of the 503 `both-wrong`). The
//! strata are fixed: each label names the stratum it was graded in, whatever a later checker says.
//!
//! Two tests, each asserting its figures exactly, as tests/heldout3_responses.rs does for the
//! third held-out set (the code they share is tests/common/heldout.rs):
//! - `figures_of_record`: the measurement of record, from the labels, the fixed strata and
//!   math-verify's verdicts alone (rlvr's verdict then is its stratum's), so no checker change
//!   moves it: rlvr right on 144 of the 145 disagreements (99.3%, one false positive), whole set
//!   99.9% [96.7%, 99.9%]; math-verify 1 of 145 (30 false positives), 78.4% [75.3%, 78.4%];
//! - `the_current_checker_on_the_fourth_held_out_set`: today's checker on the same strata, and on
//!   every response where it and math-verify disagree now. That needs every current disagreement
//!   graded: a checker change that makes an ungraded one fails the test (it names the ids) until it
//!   is graded by hand and added to the labels with its own stratum name. A change that moves a
//!   figure fails it too: update docs/checker.md ("A fourth held-out set") with the new figures.
//!
//! `cargo test -p rlvr-tasks --test heldout4_responses -- --nocapture` prints the figures.

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{Counts, CurrentFigures, MathVerify, RecordFigures, Sample, Set};

/// The set; the strata are as they were when it was graded (the labels file's header says how
/// the samples were drawn).
const SET: Set = Set {
    name: "fourth held-out set",
    graded_on: "2026-12-07",
    responses: (
        "heldout4_responses.jsonl",
        include_str!("fixtures/heldout4_responses.jsonl"),
    ),
    labels: (
        "heldout4_responses_labels.jsonl",
        include_str!("fixtures/heldout4_responses_labels.jsonl"),
    ),
    total: 667,
    sources: &["agieval", "mr-gsm8k"],
    disagree: 145,
    both_right: Sample {
        size: 19,
        sampled: 7,
    },
    both_wrong: Sample {
        size: 503,
        sampled: 193,
    },
    shape: |_| {},
};

/// The measurement of record (docs/checker.md, "A fourth held-out set"): rlvr's verdict then is
/// its stratum's (right on `both-right`, wrong on `both-wrong`, math-verify's opposite on
/// `disagree`), so these figures hold for every later checker.
#[test]
fn figures_of_record() {
    heldout::check_record(
        &SET,
        &RecordFigures {
            graded: 345,
            disagree: Counts {
                right: 144,
                false_pos: 1,
                false_neg: 0,
            },
            math_verify: Counts {
                right: 1,
                false_pos: 30,
                false_neg: 114,
            },
            both_right: 7,
            both_wrong: 193,
            false_positives: (1, 30),
            accuracy: ["99.9%", "96.7%", "99.9%"],
            math_verify_accuracy: ["78.4%", "75.3%", "78.4%"],
            fp_per_200: "2.7",
            bar: true,
        },
    );
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_fourth_held_out_set() {
    // The figures, as measured on 2026-12-07 with the checker after the third held-out set's rules (docs/checker.md, "A
    // fourth held-out set"). A checker change that moves one fails here: update the docs and
    // these figures.
    heldout::check_current(
        &SET,
        &CurrentFigures {
            graded: 345,
            disagree: Counts {
                right: 144,
                false_pos: 1,
                false_neg: 0,
            },
            both_right: 7,
            both_wrong: 193,
            accuracy: ["99.9%", "96.7%", "99.9%"],
            false_positives: 1,
            fp_per_200: "2.7",
            current: Counts {
                right: 144,
                false_pos: 1,
                false_neg: 0,
            },
            current_math_verify: MathVerify::Right(1),
            // by source and task (the source's first two fields)
            key: |r| heldout::source_fields(r, &[0, 1]),
            // no disagreement on the mr-gsm8k responses
            groups: Some(&[
                ("agieval:gaokao/mathcloze", (0, 1)),
                ("agieval:gaokao/mathqa", (25, 25)),
                ("agieval:sat/math", (119, 119)),
            ]),
            bar: true,
        },
    );
}
