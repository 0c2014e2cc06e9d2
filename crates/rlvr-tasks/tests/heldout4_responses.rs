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

use std::collections::{BTreeMap, HashMap};

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{pct, Counts, Label, Response, Strata, Stratum, REGRADED};

/// Sizes of the strata when the set was graded (the labels file's header says how the samples
/// were drawn); together they are the whole set.
const DISAGREE_SIZE: usize = 145;
const BOTH_RIGHT_SIZE: usize = 19;
const BOTH_WRONG_SIZE: usize = 503;
const SIZES: (usize, usize) = (BOTH_RIGHT_SIZE, BOTH_WRONG_SIZE);

/// The set and its labels, checked for shape.
fn load() -> (Vec<Response>, HashMap<usize, Label>) {
    let (responses, labels) = heldout::load_set(
        (
            "heldout4_responses.jsonl",
            include_str!("fixtures/heldout4_responses.jsonl"),
        ),
        (
            "heldout4_responses_labels.jsonl",
            include_str!("fixtures/heldout4_responses_labels.jsonl"),
        ),
        DISAGREE_SIZE,
        SIZES,
        667,
        &["agieval", "mr-gsm8k"],
    );
    (responses, labels)
}

/// The measurement of record (docs/checker.md, "A fourth held-out set"): rlvr's verdict then is
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
        "fourth held-out set (2026-12-07)",
        &responses,
        &labels,
        SIZES,
    );
    assert_eq!(labels.len(), 345);
    assert_eq!(
        rlvr,
        Strata {
            disagree: Counts {
                right: 144,
                false_pos: 1,
                false_neg: 0
            },
            both_right: Stratum {
                size: 19,
                sampled: 7,
                right: 7
            },
            both_wrong: Stratum {
                size: 503,
                sampled: 193,
                right: 193
            },
        }
    );
    assert_eq!(
        math_verify.disagree,
        Counts {
            right: 1,
            false_pos: 30,
            false_neg: 114
        }
    );
    assert_eq!(graded_fp, (1, 30));
    assert_eq!(rlvr.accuracy(n).map(pct), ["99.9%", "96.7%", "99.9%"]);
    assert_eq!(
        math_verify.accuracy(n).map(pct),
        ["78.4%", "75.3%", "78.4%"]
    );
    assert_eq!(format!("{:.1}", 200.0 * fp_whole_hi), "2.7");
    assert!(bar, "the bar holds on the fourth held-out set");
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_fourth_held_out_set() {
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

    // The figures, as measured on 2026-12-07 with the checker after the third held-out set's rules (docs/checker.md, "A
    // fourth held-out set"). A checker change that moves one fails here: update the docs and
    // these figures.
    assert_eq!(labels.len(), 345);
    assert_eq!(
        s,
        Strata {
            disagree: Counts {
                right: 144,
                false_pos: 1,
                false_neg: 0
            },
            both_right: Stratum {
                size: 19,
                sampled: 7,
                right: 7
            },
            both_wrong: Stratum {
                size: 503,
                sampled: 193,
                right: 193
            },
        }
    );
    assert_eq!(acc.map(pct), ["99.9%", "96.7%", "99.9%"]);
    assert_eq!(fp_all, 1);
    assert_eq!(format!("{:.1}", 200.0 * fp_whole_hi), "2.7");
    assert_eq!(
        current,
        Counts {
            right: 144,
            false_pos: 1,
            false_neg: 0
        }
    );
    assert_eq!(current_mv.right, 1);
    let expected: BTreeMap<String, (usize, usize)> = [
        ("agieval:gaokao/mathcloze", (0, 1)),
        ("agieval:gaokao/mathqa", (25, 25)),
        ("agieval:sat/math", (119, 119)),
    ]
    .into_iter()
    .map(|(task, v)| (task.to_string(), v))
    .collect();
    assert_eq!(
        by_task, expected,
        "no disagreement on the mr-gsm8k responses"
    );
    assert!(bar);
}
