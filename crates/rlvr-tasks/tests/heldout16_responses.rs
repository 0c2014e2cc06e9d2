//! A sixteenth held-out measurement of the checker against math-verify, on answers inside an
//! `<answer>` block and on a new answer form, an EQUATION: 700 real responses from a public project
//! that no other fixture uses (tests/fixtures/heldout16_responses.jsonl, rebuilt from its source by
//! scripts/tasks/build_heldout16_responses.py): the evaluation outputs committed to
//! suzgunmirac/dynamic-cheatsheet (MIT) by "Dynamic Cheatsheet: Test-Time Learning with Adaptive
//! Memory" (2025), Claude 3.5 Sonnet and GPT-4o, bare or with a cheatsheet memory, told to end on
//! "FINAL ANSWER:" and an `<answer>` block. Seeded draws of 350 responses to an arithmetic
//! "equation balancer" (question "19 ? 8 ? 28 = -205": fill in the operators; gold "19 - 8 * 28 =
//! -205", the whole equation) and of 350 to AIME 2020-2025 problems (integer golds; one "080 or 081
//! (both were accepted)"). Each line records math-verify 0.9.0's verdict. Nothing in
//! `crates/rlvr-tasks/src` was changed for this set: it measures, it does not tune.
//!
//! Graded by hand (tests/fixtures/heldout16_responses_labels.jsonl, under the policy of
//! real_responses_labels.jsonl) on 2026-12-07, against the checker of commit 82491c9 (the frozen
//! release binary runs/checker-frozen16/rlvr): all 213 responses where rlvr and math-verify
//! disagree, all 72 `both-right` (fewer than the sample of 100) and a seeded random sample of 100
//! of the 415 `both-wrong`.
//!
//! - `figures_of_record`: rlvr right on 209 of the 213 disagreements (98.1%; math-verify on 4);
//!   every disagreement is rlvr calling right what math-verify calls wrong: math-verify reads an
//!   equation-balancer response as the number on its right side and never equates it with the gold
//!   equation. 4 false positives of rlvr in the 385 graded (2.1 per 200; at most 2.5 per 200 over
//!   the whole set at 95%), all equation-balancer answers that rlvr reads as "same equation"
//!   because both sides of both equations evaluate equal: a true equation built from other
//!   numbers (#50, #59) and two valid fills given together (#313, #342; a hedge by the policy's
//!   rule 4, a judgement call). Whole set 99.4% [95.9%, 99.4%] for rlvr, 70.1% [66.6%, 70.1%] for
//!   math-verify; the bar does not hold (its false-positive half).
//! - `the_current_checker_on_the_sixteenth_held_out_set`: today's checker, after the rule that a
//!   relation between constants is right when it holds and uses the gold's numbers in the gold's
//!   order: 209 of 211 current disagreements, 2 false positives in 385 graded (#313, #342, the
//!   judgement call), whole set 99.7% [96.2%, 99.7%]; the bar still fails narrowly (1.04 per 200;
//!   no longer a held-out measurement). A checker change that makes an ungraded
//!   disagreement fails it (it names the ids) until it is graded and added to the labels under
//!   stratum `regraded-after-fix`; one that moves a figure fails it too: update docs/checker.md
//!   ("A sixteenth held-out set").
//!
//! `cargo test -p rlvr-tasks --test heldout16_responses -- --nocapture` prints the figures.

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{Counts, CurrentFigures, MathVerify, RecordFigures, Sample, Set};

/// The set; the strata are as they were when it was graded (the labels file's header says how
/// the samples were drawn).
const SET: Set = Set {
    name: "sixteenth held-out set",
    graded_on: "2026-12-07",
    responses: (
        "heldout16_responses.jsonl",
        include_str!("fixtures/heldout16_responses.jsonl"),
    ),
    labels: (
        "heldout16_responses_labels.jsonl",
        include_str!("fixtures/heldout16_responses_labels.jsonl"),
    ),
    total: 700,
    sources: &["dynamic-cheatsheet"],
    disagree: 213,
    both_right: Sample {
        size: 72,
        sampled: 72,
    },
    both_wrong: Sample {
        size: 415,
        sampled: 100,
    },
    shape: |responses| {
        assert!(
            heldout::free_form(responses),
            "no question lists lettered options: no line has choices"
        )
    },
};

/// The measurement of record (docs/checker.md, "A sixteenth held-out set"): rlvr's verdict then is
/// its stratum's, so these figures hold for every later checker.
#[test]
fn figures_of_record() {
    heldout::check_record(
        &SET,
        &RecordFigures {
            graded: 385,
            disagree: Counts {
                right: 209,
                false_pos: 4,
                false_neg: 0,
            },
            math_verify: Counts {
                right: 4,
                false_pos: 0,
                false_neg: 209,
            },
            both_right: 72,
            both_wrong: 100,
            false_positives: (4, 0),
            accuracy: ["99.4%", "95.9%", "99.4%"],
            math_verify_accuracy: ["70.1%", "66.6%", "70.1%"],
            fp_per_200: "2.5",
            // 209 of 213 disagreements right, but 4 false positives in 385 graded
            bar: false,
        },
    );
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_sixteenth_held_out_set() {
    // After the rule written from this set (2026-12-07: a relation between constants is right
    // when it holds and uses the gold's numbers in the gold's order), the true equations with other
    // numbers (#50, #59) are wrong, as graded; the two answer blocks of two equations each (#313,
    // #342, judgement call (b)) stay false positives. No longer a held-out measurement: these
    // figures move with the checker (update docs/checker.md, "A sixteenth held-out set").
    heldout::check_current(
        &SET,
        &CurrentFigures {
            graded: 385,
            disagree: Counts {
                right: 211,
                false_pos: 2,
                false_neg: 0,
            },
            both_right: 72,
            both_wrong: 100,
            accuracy: ["99.7%", "96.2%", "99.7%"],
            false_positives: 2,
            fp_per_200: "1.9",
            current: Counts {
                right: 209,
                false_pos: 2,
                false_neg: 0,
            },
            current_math_verify: MathVerify::Counts(Counts {
                right: 2,
                false_pos: 0,
                false_neg: 209,
            }),
            // by source and task ("dynamic-cheatsheet:MathEquationBalancer", "...:AIME_2024")
            key: |r| heldout::source_fields(r, &[0, 1]),
            groups: Some(&[
                ("dynamic-cheatsheet:AIME_2020_2024", (1, 1)),
                ("dynamic-cheatsheet:MathEquationBalancer", (208, 210)),
            ]),
            // 209 of 211 current disagreements right, 2 false positives in 385 graded
            bar: false,
        },
    );
}
