//! A fifth held-out measurement of the checker against math-verify, on free-form answers only: 700
//! real model responses from one public project that no other fixture uses
//! (tests/fixtures/heldout5_responses.jsonl, rebuilt from its source by
//! scripts/tasks/build_heldout5_responses.py: the reasoning chains committed with LLM Reasoners'
//! AutoRace evaluation, DBRX's chain-of-thought answers to GSM8K questions ending `The answer is
//! 18.`, AutoRace's human-labelled GSM8K chains in numbered steps with GSM8K's `<<16-7=9>>`
//! calculator annotations, and its BIG-Bench Hard integer-arithmetic chains ending `So the answer
//! is -2280`). Each line records math-verify 0.9.0's verdict. Nothing in `crates/rlvr-tasks/src`
//! was changed for this set: it measures, it does not tune.
//!
//! Graded by hand (tests/fixtures/heldout5_responses_labels.jsonl, under the policy of
//! real_responses_labels.jsonl) on 2026-12-07, against the checker as it stood after the peer suites' open forms (boxes per root, Greek letters, approximations). rlvr and
//! math-verify disagree on none of the 700 responses, so there is no `disagree` stratum to grade;
//! a seeded random sample of 200 where they agree was graded (109 of the 380 `both-right`, 91 of
//! the 320 `both-wrong`). The strata are fixed: each label names the stratum it was graded in,
//! whatever a later checker says.
//!
//! Two tests, each asserting its figures exactly, as tests/heldout4_responses.rs does for the
//! fourth held-out set (the code they share is tests/common/heldout.rs):
//! - `figures_of_record`: the measurement of record, from the labels, the fixed strata and
//!   math-verify's verdicts alone (rlvr's verdict then is its stratum's), so no checker change
//!   moves it: no disagreements; every sampled agreement graded as both checkers called it; whole
//!   set 100.0% [95.2%, 100.0%] for each; no false positive in the 200 graded (whole-set false
//!   positives of rlvr at most 4.8 per 200 at 95%);
//! - `the_current_checker_on_the_fifth_held_out_set`: today's checker on the same strata, and on
//!   every response where it and math-verify disagree now. That needs every current disagreement
//!   graded: a checker change that makes an ungraded one fails the test (it names the ids) until it
//!   is graded by hand and added to the labels with its own stratum name. A change that moves a
//!   figure fails it too: update docs/checker.md ("A fifth held-out set") with the new figures.
//!
//! `cargo test -p rlvr-tasks --test heldout5_responses -- --nocapture` prints the figures.

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{Counts, CurrentFigures, MathVerify, RecordFigures, Sample, Set};

/// The set; the strata are as they were when it was graded (the labels file's header says how
/// the samples were drawn).
const SET: Set = Set {
    name: "fifth held-out set",
    graded_on: "2026-12-07",
    responses: (
        "heldout5_responses.jsonl",
        include_str!("fixtures/heldout5_responses.jsonl"),
    ),
    labels: (
        "heldout5_responses_labels.jsonl",
        include_str!("fixtures/heldout5_responses_labels.jsonl"),
    ),
    total: 700,
    sources: &["autorace", "autorace-dbrx"],
    disagree: 0,
    both_right: Sample {
        size: 380,
        sampled: 109,
    },
    both_wrong: Sample {
        size: 320,
        sampled: 91,
    },
    shape: |responses| assert!(heldout::free_form(responses), "free-form answers only"),
};

/// The measurement of record (docs/checker.md, "A fifth held-out set"): rlvr's verdict then is
/// its stratum's (right on `both-right`, wrong on `both-wrong`, math-verify's opposite on
/// `disagree`), so these figures hold for every later checker.
#[test]
fn figures_of_record() {
    heldout::check_record(
        &SET,
        &RecordFigures {
            graded: 200,
            disagree: Counts::default(),
            // no disagreements: the same figures as rlvr's
            math_verify: Counts::default(),
            both_right: 109,
            both_wrong: 91,
            false_positives: (0, 0),
            accuracy: ["100.0%", "95.2%", "100.0%"],
            math_verify_accuracy: ["100.0%", "95.2%", "100.0%"],
            fp_per_200: "4.8",
            bar: true,
        },
    );
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_fifth_held_out_set() {
    // The figures, as measured on 2026-12-07 with the checker after the peer suites' open forms (boxes per root, Greek letters, approximations) (docs/checker.md, "A
    // fifth held-out set"). A checker change that moves one fails here: update the docs and these
    // figures.
    heldout::check_current(
        &SET,
        &CurrentFigures {
            graded: 200,
            disagree: Counts::default(),
            both_right: 109,
            both_wrong: 91,
            accuracy: ["100.0%", "95.2%", "100.0%"],
            false_positives: 0,
            fp_per_200: "4.8",
            // no disagreement with math-verify
            current: Counts::default(),
            current_math_verify: MathVerify::Counts(Counts::default()),
            // by source and task (the source's first two fields)
            key: |r| heldout::source_fields(r, &[0, 1]),
            groups: Some(&[]),
            bar: true,
        },
    );
}
