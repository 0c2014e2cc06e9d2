//! A thirteenth held-out measurement of the checker against math-verify, on procedurally generated
//! algebra, arithmetic and geometry tasks whose answer key is written in the task generators' own forms:
//! 700 real responses from a public project that no other fixture uses
//! (tests/fixtures/heldout13_responses.jsonl, rebuilt from its source by
//! scripts/tasks/build_heldout13_responses.py): the zero-shot evaluation outputs the Reasoning Gym
//! authors committed to open-thought/reasoning-gym-eval, 11 chat and reasoning models (o3-mini,
//! DeepSeek-R1, QwQ-32B, Grok 3 mini, Claude 3.5 Sonnet and Claude Sonnet 4, Gemma 3 27B, Llama 3.3 70B,
//! Llama 4 Maverick and Scout, Mistral Small 3.1) on 26 tasks, told to give their answer as
//! `<answer>answer here</answer>`. A seeded draw of 600 answers to the tasks' problems whose gold is
//! not a plain integer (SymPy antiderivatives with `+ C`, expanded polynomials, complex numbers
//! "-3.0 - 3.0i", comma-separated roots, hexadecimal integers, weekday names, durations "01:29:27.345",
//! prime factorizations "2 × 2 × 7", fractions, floats in e notation, coordinates) and of 100 to the
//! others. Each line records math-verify 0.9.0's verdict. Nothing in `crates/rlvr-tasks/src` was
//! changed for this set: it measures, it does not tune.
//!
//! Graded by hand (tests/fixtures/heldout13_responses_labels.jsonl, under the policy of
//! real_responses_labels.jsonl) on 2026-12-07, against the checker of commit bc2118c (the frozen
//! release binary runs/checker-frozen13/rlvr): all 179 responses where rlvr and math-verify
//! disagree, all 28 of the `both-right` and a seeded random sample of 100 of the 493 `both-wrong`. The
//! strata are fixed: each label names the stratum it was graded in, whatever a later checker says.
//! After the rules written from this set (`<answer>...</answer>` tags, hexadecimal literals, golds
//! printed at double precision; then Python's `**` as a power), 170 unsampled responses became
//! disagreements; they were graded by hand then (stratum `regraded-after-fix`: 164 right, 6
//! wrong), and count in the current disagreements and false positives, not in the whole-set
//! estimate.
//!
//! Two tests, each asserting its figures exactly, as tests/heldout12_responses.rs does for the
//! twelfth held-out set (the code they share is tests/common/heldout.rs):
//! - `figures_of_record`: the measurement of record, from the labels, the fixed strata and
//!   math-verify's verdicts alone (rlvr's verdict then is its stratum's), so no checker change
//!   moves it: rlvr right on 21 of the 179 disagreements (no false positive, 158 misses), math-verify
//!   on 158 (19 false positives, 2 misses); whole set 43.5% [34.8%, 51.5%] for rlvr, 63.0% [54.4%,
//!   71.1%] for math-verify (6 of the 28 `both-right` are wrong and 53 of the 100 sampled `both-wrong`
//!   are wrong, 47 right); 6 false positives of rlvr in the 307 graded, 25 of math-verify's; the bar
//!   does NOT hold (see docs/checker.md, "A thirteenth held-out set");
//! - `the_current_checker_on_the_thirteenth_held_out_set`: today's checker on the same strata, and on
//!   every response where it and math-verify disagree now. That needs every current disagreement
//!   graded: a checker change that makes an ungraded one fails the test (it names the ids) until it
//!   is graded by hand and added to the labels with its own stratum name. A change that moves a
//!   figure fails it too: update docs/checker.md ("A thirteenth held-out set") with the new figures.
//!   After the rules written from this set (no longer a held-out measurement; answer tags,
//!   hexadecimal literals, float-printed golds, then Python's `**` as a power): rlvr right on 173 of
//!   the 179 graded disagreements (2 false positives, 4 misses) and on 231 of the 244 current ones
//!   (9 false positives, 4 misses; math-verify on 13), 15 false positives in the 477 graded (at
//!   most 5.9 per 200 over the whole set at 95%), whole set 95.8% [90.0%, 98.0%]; the bar does NOT
//!   hold. Its 15 false positives: 12 fractions equal to the gold but not in the lowest terms the
//!   task asks for, #514 (a tagged gold the response then disowns), and #369 and #455 (a product a
//!   "simplify" task asks to expand, left unexpanded; equal in value); 9 of the fractions and #514
//!   are regressions of the answer-tag rule, #369 and #455 of the power rule (the frozen checker
//!   read neither). Its 5 misses (4 disagreements, #568 in the `both-wrong` sample): #513, #528,
//!   #568 and #632, antiderivatives equal to the gold only up to a constant (graded right), and
//!   #507's "14D" for "14 days".
//!   Since the checker takes the question (`math::verify_asked`: an answer that restates the
//!   question's own expression is wrong), 5 of those false positives are gone (the unreduced
//!   fractions restated from "Simplify the fraction 1978/13915" and the like, and #369's product
//!   copied from "Simplify this expression"): 174 of 179 graded disagreements, 234 of 245 current
//!   ones, 10 false positives in 477 graded, whole set 96.9% [91.5%, 98.6%].
//!
//! `cargo test -p rlvr-tasks --test heldout13_responses -- --nocapture` prints the figures.

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{Counts, CurrentFigures, MathVerify, RecordFigures, Sample, Set};

/// The set; the strata are as they were when it was graded (the labels file's header says how
/// the samples were drawn).
const SET: Set = Set {
    name: "thirteenth held-out set",
    graded_on: "2026-12-07",
    responses: (
        "heldout13_responses.jsonl",
        include_str!("fixtures/heldout13_responses.jsonl"),
    ),
    labels: (
        "heldout13_responses_labels.jsonl",
        include_str!("fixtures/heldout13_responses_labels.jsonl"),
    ),
    total: 700,
    sources: &["reasoning-gym"],
    disagree: 179,
    both_right: Sample {
        size: 28,
        sampled: 28,
    },
    both_wrong: Sample {
        size: 493,
        sampled: 100,
    },
    shape: |responses| {
        assert!(
            heldout::free_form(responses),
            "no task lists options: no line has choices"
        )
    },
};

/// The measurement of record (docs/checker.md, "A thirteenth held-out set"): rlvr's verdict then is
/// its stratum's (right on `both-right`, wrong on `both-wrong`, math-verify's opposite on `disagree`),
/// so these figures hold for every later checker.
#[test]
fn figures_of_record() {
    heldout::check_record(
        &SET,
        &RecordFigures {
            graded: 307,
            disagree: Counts {
                right: 21,
                false_pos: 0,
                false_neg: 158,
            },
            math_verify: Counts {
                right: 158,
                false_pos: 19,
                false_neg: 2,
            },
            both_right: 22,
            both_wrong: 53,
            false_positives: (6, 25),
            accuracy: ["43.5%", "34.8%", "51.5%"],
            math_verify_accuracy: ["63.0%", "54.4%", "71.1%"],
            fp_per_200: "3.4",
            // 21 of 179 disagreements right (11.7%), 6 false positives in 307 graded
            bar: false,
        },
    );
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_thirteenth_held_out_set() {
    // The figures after the rules written from this set (2026-12-07: answer tags, hexadecimal
    // literals, golds printed at double precision, Python's `**`): no longer a held-out
    // measurement (at first look, with the frozen checker of commit bc2118c, they were those of
    // `figures_of_record`: 21 of 179, 6 false positives, 43.5%). The 170 disagreements those rules
    // made are graded under `regraded-after-fix`. A checker change that moves one fails here:
    // update docs/checker.md ("A thirteenth held-out set") and these figures.
    heldout::check_current(
        &SET,
        &CurrentFigures {
            graded: 477,
            disagree: Counts {
                right: 174,
                false_pos: 1,
                false_neg: 4,
            },
            both_right: 26,
            both_wrong: 97,
            accuracy: ["96.9%", "91.5%", "98.6%"],
            false_positives: 10,
            fp_per_200: "4.3",
            current: Counts {
                right: 234,
                false_pos: 7,
                false_neg: 4,
            },
            current_math_verify: MathVerify::Counts(Counts {
                right: 11,
                false_pos: 22,
                false_neg: 212,
            }),
            // by source and task (the source's first and third fields: the task's category and name)
            key: |r| heldout::source_fields(r, &[0, 2]),
            groups: Some(&[
                ("reasoning-gym:algebra/complex_arithmetic", (32, 32)),
                ("reasoning-gym:algebra/intermediate_integration", (18, 21)),
                ("reasoning-gym:algebra/polynomial_equations", (12, 13)),
                ("reasoning-gym:algebra/polynomial_multiplication", (18, 19)),
                ("reasoning-gym:algebra/simple_equations", (1, 1)),
                ("reasoning-gym:algebra/simple_integration", (20, 20)),
                ("reasoning-gym:arithmetic/basic_arithmetic", (1, 1)),
                ("reasoning-gym:arithmetic/bitwise_arithmetic", (14, 14)),
                ("reasoning-gym:arithmetic/calendar_arithmetic", (18, 18)),
                ("reasoning-gym:arithmetic/count_bits", (1, 1)),
                ("reasoning-gym:arithmetic/decimal_arithmetic", (4, 4)),
                ("reasoning-gym:arithmetic/decimal_chain_sum", (4, 4)),
                ("reasoning-gym:arithmetic/dice", (3, 3)),
                ("reasoning-gym:arithmetic/fraction_simplification", (13, 18)),
                ("reasoning-gym:arithmetic/gcd", (6, 6)),
                ("reasoning-gym:arithmetic/gsm_symbolic", (1, 1)),
                ("reasoning-gym:arithmetic/lcm", (1, 1)),
                ("reasoning-gym:arithmetic/number_format", (11, 11)),
                ("reasoning-gym:arithmetic/power_function", (3, 3)),
                ("reasoning-gym:arithmetic/prime_factorization", (21, 21)),
                ("reasoning-gym:arithmetic/time_intervals", (19, 20)),
                ("reasoning-gym:geometry/advanced_geometry", (11, 11)),
                ("reasoning-gym:geometry/simple_geometry", (2, 2)),
            ]),
            // 234 of 245 current disagreements right (95.5%), 10 false positives in 477 graded
            bar: false,
        },
    );
}
