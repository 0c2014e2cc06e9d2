//! A fourteenth held-out measurement of the checker against math-verify, on yes/no and counting
//! questions of elementary number theory whose answer key writes "yes" / "No" and "\\boxed{N}" (the
//! backslash doubled): 500 real responses from a public project that no other fixture uses
//! (tests/fixtures/heldout14_responses.jsonl, rebuilt from its source by
//! scripts/tasks/build_heldout14_responses.py): the generations committed to lchen001/LLMDrift
//! (Apache-2.0) by "How is ChatGPT's behavior changing over time?", gpt-3.5-turbo-0301 and -0613 and
//! gpt-4-0314 and -0613 asked whether a number is prime ("answer "[Yes]" or "[No]"") and how many
//! happy numbers lie in an interval ("answer within \boxed"). A seeded draw of 250 of each. Each
//! line records math-verify 0.9.0's verdict. Nothing in `crates/rlvr-tasks/src` was changed for this
//! set: it measures, it does not tune.
//!
//! Graded by hand (tests/fixtures/heldout14_responses_labels.jsonl, under the policy of
//! real_responses_labels.jsonl) on 2026-12-08, against the checker of commit 4994076 (the frozen
//! release binary runs/checker-frozen14/rlvr): all 79 responses where rlvr and math-verify disagree,
//! a seeded random sample of 100 of the 126 `both-right` and of 100 of the 295 `both-wrong`.
//!
//! - `figures_of_record`: rlvr right on 79 of the 79 disagreements (math-verify on none: it reads
//!   no yes/no gold); whole set 75.0% [67.0%, 81.3%] for rlvr, 59.2% [51.2%, 65.5%] for
//!   math-verify; 1 false positive of each in the 279 graded (#339, a truncated chain both read as
//!   its last equation); 42 of the 100 sampled `both-wrong` are right (misses of both: a bracketed
//!   "[Yes]"/"[No]" after the working, read by rlvr as the working's last number); the bar holds.
//! - `the_current_checker_on_the_fourteenth_held_out_set`: today's checker, after the rule that a
//!   last line of one bracketed word is the answer: 142 of 142 current disagreements (39 of them
//!   graded under `regraded-after-fix`), 1 false positive in 318 graded, whole set 89.1%
//!   [81.8%, 93.5%]; the bar holds (no longer a held-out measurement). A checker change that makes an
//!   ungraded disagreement fails it (it names the ids) until it is graded and added to the labels
//!   under stratum `regraded-after-fix`; one that moves a figure fails it too: update
//!   docs/checker.md ("A fourteenth held-out set").
//!
//! `cargo test -p rlvr-tasks --test heldout14_responses -- --nocapture` prints the figures.

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{Counts, CurrentFigures, MathVerify, RecordFigures, Sample, Set};

/// The set; the strata are as they were when it was graded (the labels file's header says how
/// the samples were drawn).
const SET: Set = Set {
    name: "fourteenth held-out set",
    graded_on: "2026-12-08",
    responses: (
        "heldout14_responses.jsonl",
        include_str!("fixtures/heldout14_responses.jsonl"),
    ),
    labels: (
        "heldout14_responses_labels.jsonl",
        include_str!("fixtures/heldout14_responses_labels.jsonl"),
    ),
    total: 500,
    sources: &["llmdrift"],
    disagree: 79,
    both_right: Sample {
        size: 126,
        sampled: 100,
    },
    both_wrong: Sample {
        size: 295,
        sampled: 100,
    },
    shape: |responses| {
        assert!(
            heldout::free_form(responses),
            "no question lists options: no line has choices"
        )
    },
};

/// The measurement of record (docs/checker.md, "A fourteenth held-out set"): rlvr's verdict then is
/// its stratum's, so these figures hold for every later checker.
#[test]
fn figures_of_record() {
    heldout::check_record(
        &SET,
        &RecordFigures {
            graded: 279,
            disagree: Counts {
                right: 79,
                false_pos: 0,
                false_neg: 0,
            },
            math_verify: Counts {
                right: 0,
                false_pos: 0,
                false_neg: 79,
            },
            both_right: 99,
            both_wrong: 58,
            false_positives: (1, 1),
            accuracy: ["75.0%", "67.0%", "81.3%"],
            math_verify_accuracy: ["59.2%", "51.2%", "65.5%"],
            fp_per_200: "3.3",
            // 79 of 79 disagreements right, 1 false positive in 279 graded
            bar: true,
        },
    );
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_fourteenth_held_out_set() {
    // After the rule that a last line of one bracketed word is the answer (`[Yes]`, `[No]`), 39
    // unsampled both-wrong responses became disagreements with math-verify, graded under
    // `regraded-after-fix` (all right); 24 of the sampled both-wrong are now right too. No longer a
    // held-out measurement: these figures move with the checker (update docs/checker.md, "A
    // fourteenth held-out set").
    // Since an equation answering a number must hold (2026-12-07, docs/checker.md, "An equation
    // answering a number must hold"): #339, `1^2 + 4^2 + 5^2 = 1` cut at the token limit, its
    // false positive, is wrong.
    heldout::check_current(
        &SET,
        &CurrentFigures {
            graded: 318,
            disagree: Counts {
                right: 79,
                false_pos: 0,
                false_neg: 0,
            },
            both_right: 100,
            both_wrong: 82,
            accuracy: ["89.4%", "82.2%", "93.5%"],
            false_positives: 0,
            fp_per_200: "2.4",
            current: Counts {
                right: 143,
                false_pos: 0,
                false_neg: 0,
            },
            current_math_verify: MathVerify::Counts(Counts {
                right: 0,
                false_pos: 1,
                false_neg: 142,
            }),
            // by source and task ("llmdrift:prime", "llmdrift:happy")
            key: |r| heldout::source_fields(r, &[0, 1]),
            groups: Some(&[("llmdrift:happy", (1, 1)), ("llmdrift:prime", (142, 142))]),
            // 143 of 143 current disagreements right, no false positive in 318 graded
            bar: true,
        },
    );
}
