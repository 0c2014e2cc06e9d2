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

use std::collections::HashMap;

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{pct, Counts, Label, Response, Strata, Stratum, REGRADED};

/// Sizes of the strata when the set was graded (the labels file's header says how the samples
/// were drawn); together they are the whole set.
const DISAGREE_SIZE: usize = 84;
const BOTH_RIGHT_SIZE: usize = 316;
const BOTH_WRONG_SIZE: usize = 498;
const SIZES: (usize, usize) = (BOTH_RIGHT_SIZE, BOTH_WRONG_SIZE);

/// The set and its labels, checked for shape.
fn load() -> (Vec<Response>, HashMap<usize, Label>) {
    let (responses, labels) = heldout::load_set(
        (
            "heldout7_responses.jsonl",
            include_str!("fixtures/heldout7_responses.jsonl"),
        ),
        (
            "heldout7_responses_labels.jsonl",
            include_str!("fixtures/heldout7_responses_labels.jsonl"),
        ),
        DISAGREE_SIZE,
        SIZES,
        898,
        &["hardmath", "owm-evals"],
    );
    assert!(
        responses.iter().all(|r| r.choices.is_none()),
        "no options field: free-form answers"
    );
    assert!(
        responses.iter().all(|r| r
            .gold
            .trim()
            .trim_start_matches('-')
            .parse::<u64>()
            .is_err()),
        "no gold is a plain integer"
    );
    assert!(
        responses.iter().all(|r| !r.gold.contains("**")),
        "no gold in SymPy's power syntax (the builder leaves those out)"
    );
    (responses, labels)
}

/// The measurement of record (docs/checker.md, "A seventh held-out set"): rlvr's verdict then is
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
        "seventh held-out set (2026-12-07)",
        &responses,
        &labels,
        SIZES,
    );
    assert_eq!(labels.len(), 284);
    let both_right = Stratum {
        size: 316,
        sampled: 100,
        right: 100,
    };
    let both_wrong = Stratum {
        size: 498,
        sampled: 100,
        right: 98,
    };
    assert_eq!(
        rlvr,
        Strata {
            disagree: Counts {
                right: 82,
                false_pos: 0,
                false_neg: 2
            },
            both_right,
            both_wrong,
        }
    );
    assert_eq!(
        math_verify,
        Strata {
            disagree: Counts {
                right: 2,
                false_pos: 2,
                false_neg: 80
            },
            both_right,
            both_wrong,
        }
    );
    assert_eq!(graded_fp, (0, 2));
    assert_eq!(rlvr.accuracy(n).map(pct), ["98.7%", "93.6%", "99.5%"]);
    assert_eq!(
        math_verify.accuracy(n).map(pct),
        ["89.8%", "84.7%", "90.6%"]
    );
    assert_eq!(format!("{:.1}", 200.0 * fp_whole_hi), "3.4");
    assert!(
        bar,
        "the bar holds on the seventh held-out set: 97.6% right on the disagreements, \
         no false positive in 284 graded"
    );
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_seventh_held_out_set() {
    let (responses, labels) = load();
    let n = responses.len();
    let cur = heldout::current(&responses, &labels, SIZES);
    // by source, and for hardmath by subset (its second field)
    let by_source = heldout::groups(&responses, &labels, &cur.verdicts, |r| {
        let parts: Vec<&str> = r.source.split(':').collect();
        match parts.as_slice() {
            ["hardmath", subset, ..] => format!("hardmath:{subset}"),
            [source, ..] => source.to_string(),
            [] => String::new(),
        }
    });
    let bar = heldout::print_current(n, labels.len(), DISAGREE_SIZE, &cur, &by_source);
    let heldout::Current {
        strata: s,
        disagreements: current,
        math_verify: current_mv,
        false_positives: fp_all,
        false_positive_rate_hi: fp_whole_hi,
        ..
    } = cur;
    let acc = s.accuracy(n);

    // The figures, as measured on 2026-12-07 with the checker after the sixth set's rules (the
    // checker of record: no rule has been written from this set; docs/checker.md, "A seventh
    // held-out set"). A checker change that moves one fails here: update the docs and these
    // figures.
    assert_eq!(labels.len(), 284);
    assert_eq!(
        s,
        Strata {
            disagree: Counts {
                right: 82,
                false_pos: 0,
                false_neg: 2
            },
            both_right: Stratum {
                size: 316,
                sampled: 100,
                right: 100
            },
            both_wrong: Stratum {
                size: 498,
                sampled: 100,
                right: 98
            },
        }
    );
    assert_eq!(acc.map(pct), ["98.7%", "93.6%", "99.5%"]);
    assert_eq!(fp_all, 0);
    assert_eq!(format!("{:.1}", 200.0 * fp_whole_hi), "3.4");
    assert_eq!(
        current,
        Counts {
            right: 82,
            false_pos: 0,
            false_neg: 2
        }
    );
    assert_eq!(
        current_mv,
        Counts {
            right: 2,
            false_pos: 2,
            false_neg: 80
        }
    );
    let expected: std::collections::BTreeMap<String, (usize, usize)> = [
        ("hardmath:nondimensionalization_symbolic", (78, 80)),
        ("owm-evals", (4, 4)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(by_source, expected);
    assert!(bar);
}
