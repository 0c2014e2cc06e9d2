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

use std::collections::HashMap;

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{pct, Counts, Label, Response, Strata, Stratum, REGRADED};

/// Sizes of the strata when the set was graded (the labels file's header says how the samples
/// were drawn); together they are the whole set.
const DISAGREE_SIZE: usize = 0;
const BOTH_RIGHT_SIZE: usize = 380;
const BOTH_WRONG_SIZE: usize = 320;
const SIZES: (usize, usize) = (BOTH_RIGHT_SIZE, BOTH_WRONG_SIZE);

/// The set and its labels, checked for shape.
fn load() -> (Vec<Response>, HashMap<usize, Label>) {
    let (responses, labels) = heldout::load_set(
        (
            "heldout5_responses.jsonl",
            include_str!("fixtures/heldout5_responses.jsonl"),
        ),
        (
            "heldout5_responses_labels.jsonl",
            include_str!("fixtures/heldout5_responses_labels.jsonl"),
        ),
        DISAGREE_SIZE,
        SIZES,
        700,
        &["autorace", "autorace-dbrx"],
    );
    assert!(
        responses.iter().all(|r| r.choices.is_none()),
        "free-form answers only"
    );
    (responses, labels)
}

/// The measurement of record (docs/checker.md, "A fifth held-out set"): rlvr's verdict then is
/// its stratum's (right on `both-right`, wrong on `both-wrong`, math-verify's opposite on
/// `disagree`), so these figures hold for every later checker.
#[test]
fn figures_of_record() {
    let (responses, mut labels) = load();
    labels.retain(|_, l| l.stratum != REGRADED);
    let n = responses.len();
    let heldout::Record {
        rlvr,
        math_verify,
        graded_fp,
        fp_whole_hi,
        bar,
    } = heldout::record(
        "fifth held-out set (2026-12-07)",
        &responses,
        &labels,
        SIZES,
    );
    assert_eq!(labels.len(), 200);
    assert_eq!(
        rlvr,
        Strata {
            disagree: Counts::default(),
            both_right: Stratum {
                size: 380,
                sampled: 109,
                right: 109
            },
            both_wrong: Stratum {
                size: 320,
                sampled: 91,
                right: 91
            },
        }
    );
    assert_eq!(math_verify, rlvr, "no disagreements: the same figures");
    assert_eq!(graded_fp, (0, 0));
    assert_eq!(rlvr.accuracy(n).map(pct), ["100.0%", "95.2%", "100.0%"]);
    assert_eq!(format!("{:.1}", 200.0 * fp_whole_hi), "4.8");
    assert!(bar, "the bar holds on the fifth held-out set");
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_fifth_held_out_set() {
    let (responses, labels) = load();
    let n = responses.len();
    let cur = heldout::current(&responses, &labels, SIZES);
    let by_task = heldout::groups(&responses, &labels, &cur.verdicts, |r| {
        let mut parts = r.source.split(':');
        let source = parts.next().unwrap_or("");
        let task = parts.next().unwrap_or("");
        format!("{source}:{task}")
    });
    let bar = heldout::print_current(n, labels.len(), DISAGREE_SIZE, &cur, &by_task);
    let heldout::Current {
        strata: s,
        disagreements: current,
        math_verify: current_mv,
        false_positives: fp_all,
        false_positive_rate_hi: fp_whole_hi,
        ..
    } = cur;
    let acc = s.accuracy(n);

    // The figures, as measured on 2026-12-07 with the checker after the peer suites' open forms (boxes per root, Greek letters, approximations) (docs/checker.md, "A
    // fifth held-out set"). A checker change that moves one fails here: update the docs and these
    // figures.
    assert_eq!(labels.len(), 200);
    assert_eq!(
        s,
        Strata {
            disagree: Counts::default(),
            both_right: Stratum {
                size: 380,
                sampled: 109,
                right: 109
            },
            both_wrong: Stratum {
                size: 320,
                sampled: 91,
                right: 91
            },
        }
    );
    assert_eq!(acc.map(pct), ["100.0%", "95.2%", "100.0%"]);
    assert_eq!(fp_all, 0);
    assert_eq!(format!("{:.1}", 200.0 * fp_whole_hi), "4.8");
    assert_eq!(
        current,
        Counts::default(),
        "no disagreement with math-verify"
    );
    assert_eq!(current_mv, Counts::default());
    assert!(by_task.is_empty());
    assert!(bar);
}
