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

use std::collections::HashMap;

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{pct, Counts, Label, Response, Strata, Stratum, REGRADED};

/// Sizes of the strata when the set was graded; together they are the whole set.
const DISAGREE_SIZE: usize = 79;
const BOTH_RIGHT_SIZE: usize = 126;
const BOTH_WRONG_SIZE: usize = 295;
const SIZES: (usize, usize) = (BOTH_RIGHT_SIZE, BOTH_WRONG_SIZE);

/// The set and its labels, checked for shape.
fn load() -> (Vec<Response>, HashMap<usize, Label>) {
    let (responses, labels) = heldout::load_set(
        (
            "heldout14_responses.jsonl",
            include_str!("fixtures/heldout14_responses.jsonl"),
        ),
        (
            "heldout14_responses_labels.jsonl",
            include_str!("fixtures/heldout14_responses_labels.jsonl"),
        ),
        DISAGREE_SIZE,
        SIZES,
        500,
        &["llmdrift"],
    );
    assert!(
        responses.iter().all(|r| r.choices.is_none()),
        "no question lists options: no line has choices"
    );
    (responses, labels)
}

const BOTH_RIGHT: Stratum = Stratum {
    size: 126,
    sampled: 100,
    right: 99,
};
const BOTH_WRONG: Stratum = Stratum {
    size: 295,
    sampled: 100,
    right: 58,
};

/// The measurement of record (docs/checker.md, "A fourteenth held-out set"): rlvr's verdict then is
/// its stratum's, so these figures hold for every later checker.
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
        "fourteenth held-out set (2026-12-08)",
        &responses,
        &labels,
        SIZES,
    );
    assert_eq!(labels.len(), 279);
    assert_eq!(
        rlvr,
        Strata {
            disagree: Counts {
                right: 79,
                false_pos: 0,
                false_neg: 0
            },
            both_right: BOTH_RIGHT,
            both_wrong: BOTH_WRONG,
        }
    );
    assert_eq!(
        math_verify,
        Strata {
            disagree: Counts {
                right: 0,
                false_pos: 0,
                false_neg: 79
            },
            both_right: BOTH_RIGHT,
            both_wrong: BOTH_WRONG,
        }
    );
    assert_eq!(graded_fp, (1, 1));
    assert_eq!(rlvr.accuracy(n).map(pct), ["75.0%", "67.0%", "81.3%"]);
    assert_eq!(
        math_verify.accuracy(n).map(pct),
        ["59.2%", "51.2%", "65.5%"]
    );
    assert_eq!(format!("{:.1}", 200.0 * fp_whole_hi), "3.3");
    assert!(
        bar,
        "the bar holds on the fourteenth held-out set: 79 of 79 disagreements right, 1 false \
         positive in 279 graded"
    );
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_fourteenth_held_out_set() {
    let (responses, labels) = load();
    let n = responses.len();
    let cur = heldout::current(&responses, &labels, SIZES);
    // by source and task ("llmdrift:prime", "llmdrift:happy")
    let by_task = heldout::groups(&responses, &labels, &cur.verdicts, |r| {
        let parts: Vec<&str> = r.source.split(':').collect();
        match parts.as_slice() {
            [source, task, ..] => format!("{source}:{task}"),
            _ => r.source.clone(),
        }
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
    // After the rule that a last line of one bracketed word is the answer (`[Yes]`, `[No]`), 39
    // unsampled both-wrong responses became disagreements with math-verify, graded under
    // `regraded-after-fix` (all right); 24 of the sampled both-wrong are now right too. No longer a
    // held-out measurement: these figures move with the checker (update docs/checker.md, "A
    // fourteenth held-out set").
    assert_eq!(labels.len(), 318);
    assert_eq!(
        s,
        Strata {
            disagree: Counts {
                right: 79,
                false_pos: 0,
                false_neg: 0
            },
            both_right: BOTH_RIGHT,
            both_wrong: Stratum {
                right: 82,
                ..BOTH_WRONG
            },
        }
    );
    assert_eq!(s.accuracy(n).map(pct), ["89.1%", "81.8%", "93.5%"]);
    assert_eq!(fp_all, 1);
    assert_eq!(format!("{:.1}", 200.0 * fp_whole_hi), "3.3");
    assert_eq!(
        current,
        Counts {
            right: 142,
            false_pos: 0,
            false_neg: 0
        }
    );
    assert_eq!(
        current_mv,
        Counts {
            right: 0,
            false_pos: 0,
            false_neg: 142
        }
    );
    let expected: std::collections::BTreeMap<String, (usize, usize)> =
        [("llmdrift:prime", (142, 142))]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
    assert_eq!(by_task, expected);
    assert!(
        bar,
        "the bar holds: 142 of 142 current disagreements right, 1 false positive in 318 graded"
    );
}
