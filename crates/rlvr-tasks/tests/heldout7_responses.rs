//! A seventh held-out measurement of the checker against math-verify, on free-form answers in harder
//! forms, every gold other than a plain integer: 898 real model responses from two public projects
//! that no other fixture uses (tests/fixtures/heldout7_responses.jsonl, rebuilt from its sources by
//! scripts/tasks/build_heldout7_responses.py: HARDMath's committed responses of GPT-3.5, GPT-4,
//! o1-mini, Llama 3/3.1, Code Llama and Mistral 7B to its nondimensionalization problems, a symbolic
//! answer `\frac{a_{1} \left(\frac{a_{3}}{a_{2}}\right)^{\frac{7}{2}}}{a_{3}}` or a two-decimal value of
//! epsilon, boxed, often as `\[boxed{...}\]` or `\boxed{\epsilon = ...}`; and the MATH algebra outputs
//! of the OpenWebMath paper's 1B base models and Pythia-1.4B committed to a fork of the evaluation
//! harness, few-shot continuations that go on to invent new problems). Each line records math-verify
//! 0.9.0's verdict. Nothing in `crates/rlvr-tasks/src` was changed for this set: it measures, it does
//! not tune.
//!
//! Graded by hand (tests/fixtures/heldout7_responses_labels.jsonl, under the policy of
//! real_responses_labels.jsonl) on 2026-12-07, against the checker after the sixth set's rules (the
//! frozen release binary of commit 60c8952): all 84 responses where rlvr and math-verify disagree, and
//! a seeded random sample of 100 of each agreement stratum (100 of the 316 `both-right`, 100 of the 498
//! `both-wrong`). The strata are fixed: each label names the stratum it was graded in, whatever a later
//! checker says.
//!
//! Two tests, each asserting its figures exactly, as tests/heldout6_responses.rs does for the sixth
//! held-out set (the code they share is tests/common/heldout.rs):
//! - `figures_of_record`: the measurement of record, from the labels, the fixed strata and
//!   math-verify's verdicts alone (rlvr's verdict then is its stratum's), so no checker change moves
//!   it: rlvr right on 82 of the 84 disagreements (97.6%; no false positive, 2 misses), math-verify on
//!   2; whole set 98.7% [93.6%, 99.5%] for rlvr, 89.8% [84.7%, 90.6%] for math-verify; no false
//!   positive of rlvr in the 284 graded, 2 of math-verify's; the bar holds;
//! - `the_current_checker_on_the_seventh_held_out_set`: today's checker on the same strata, and on
//!   every response where it and math-verify disagree now. That needs every current disagreement
//!   graded: a checker change that makes an ungraded one fails the test (it names the ids) until it is
//!   graded by hand and added to the labels with its own stratum name. A change that moves a figure
//!   fails it too: update docs/checker.md ("A seventh held-out set") with the new figures.
//!
//! `cargo test -p rlvr-tasks --test heldout7_responses -- --nocapture` prints the figures.

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{Counts, CurrentFigures, MathVerify, RecordFigures, Sample, Set};

/// The set; the strata are as they were when it was graded (the labels file's header says how
/// the samples were drawn).
const SET: Set = Set {
    name: "seventh held-out set",
    graded_on: "2026-12-07",
    responses: (
        "heldout7_responses.jsonl",
        include_str!("fixtures/heldout7_responses.jsonl"),
    ),
    labels: (
        "heldout7_responses_labels.jsonl",
        include_str!("fixtures/heldout7_responses_labels.jsonl"),
    ),
    total: 898,
    sources: &["hardmath", "owm-evals"],
    disagree: 84,
    both_right: Sample {
        size: 316,
        sampled: 100,
    },
    both_wrong: Sample {
        size: 498,
        sampled: 100,
    },
    shape: |responses| {
        assert!(
            heldout::free_form(responses),
            "no options field: free-form answers"
        );
        assert_eq!(
            heldout::plain_integers(responses),
            0,
            "no gold is a plain integer"
        );
        assert!(
            responses.iter().all(|r| !r.gold.contains("**")),
            "no gold in SymPy's power syntax (the builder leaves those out)"
        );
    },
};

/// The measurement of record (docs/checker.md, "A seventh held-out set"): rlvr's verdict then is
/// its stratum's (right on `both-right`, wrong on `both-wrong`, math-verify's opposite on
/// `disagree`), so these figures hold for every later checker.
#[test]
fn figures_of_record() {
    heldout::check_record(
        &SET,
        &RecordFigures {
            graded: 284,
            disagree: Counts {
                right: 82,
                false_pos: 0,
                false_neg: 2,
            },
            math_verify: Counts {
                right: 2,
                false_pos: 2,
                false_neg: 80,
            },
            both_right: 100,
            both_wrong: 98,
            false_positives: (0, 2),
            accuracy: ["98.7%", "93.6%", "99.5%"],
            math_verify_accuracy: ["89.8%", "84.7%", "90.6%"],
            fp_per_200: "3.4",
            // 97.6% right on the disagreements, no false positive in 284 graded
            bar: true,
        },
    );
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_seventh_held_out_set() {
    // The figures, as measured on 2026-12-07 with the checker after the sixth set's rules (the
    // checker of record: no rule has been written from this set; docs/checker.md, "A seventh
    // held-out set"). A checker change that moves one fails here: update the docs and these
    // figures.
    heldout::check_current(
        &SET,
        &CurrentFigures {
            graded: 284,
            disagree: Counts {
                right: 82,
                false_pos: 0,
                false_neg: 2,
            },
            both_right: 100,
            both_wrong: 98,
            accuracy: ["98.7%", "93.6%", "99.5%"],
            false_positives: 0,
            fp_per_200: "3.4",
            current: Counts {
                right: 82,
                false_pos: 0,
                false_neg: 2,
            },
            current_math_verify: MathVerify::Counts(Counts {
                right: 2,
                false_pos: 2,
                false_neg: 80,
            }),
            // by source, and for hardmath by subset (its second field)
            key: |r| {
                heldout::source_fields(
                    r,
                    if r.source.starts_with("hardmath:") {
                        &[0, 1]
                    } else {
                        &[0]
                    },
                )
            },
            groups: Some(&[
                ("hardmath:nondimensionalization_symbolic", (78, 80)),
                ("owm-evals", (4, 4)),
            ]),
            bar: true,
        },
    );
}
