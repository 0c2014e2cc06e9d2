//! A held-out measurement of the checker against math-verify: 1,046 real model responses from
//! four public evaluation outputs that no other fixture uses (tests/fixtures/heldout_responses.jsonl,
//! rebuilt from its sources by scripts/tasks/build_heldout_responses.py: GPT-4 on Chinese gaokao
//! problems, recent open models on the 2026 gaokao, GPT-3/3.5/4 and Codex on
//! GSM8K/SVAMP/MultiArith/ASDiv/AQuA, and text-davinci-003/gpt-3.5-turbo/gpt-4o-mini on
//! GSM8K/SVAMP). Each line records math-verify 0.9.0's verdict.
//!
//! Graded by hand (tests/fixtures/heldout_responses_labels.jsonl, under the policy of
//! real_responses_labels.jsonl). The **first look** (2026-12-07, before any rule was written from
//! this set) graded every response where rlvr and math-verify disagreed (stratum `disagree`,
//! 111) and a seeded random sample of 200 where they agreed (104 of the 488 `both-right`, 96 of
//! the 447 `both-wrong`). Those strata are fixed: each label names the stratum it was graded in,
//! whatever a later checker says. The rules that look prompted moved many responses; the ones on
//! which the checker with those rules and math-verify newly disagree were graded afterwards
//! (stratum `regraded-after-fix`, not a random sample).
//!
//! Two tests, each asserting its figures exactly:
//! - `first_look_figures_of_record`: the measurement of record, from the labels, the fixed
//!   strata and math-verify's verdicts alone (rlvr's first-look verdict is its stratum's), so no
//!   checker change moves it: rlvr right on 64 of the 111 disagreements, whole set 87.5%
//!   [80.9%, 90.6%];
//! - `the_current_checker_on_the_held_out_set`: today's checker, on the same fixed strata:
//!   its right answers and false positives on the 111 first-look disagreements; the stratified
//!   whole-set estimate, by the same method (the 111 counted, the two agreement strata
//!   extrapolated from their random samples, a Wilson interval for each at 97.5%, z = 2.2414,
//!   combined by the strata's weights: Bonferroni over the two, so at least 95% jointly);
//!   false positives over the 311 first-look cases and over every graded case; and its right
//!   answers on every response where it and math-verify disagree now. That last figure needs
//!   every current disagreement graded: a checker change that makes an ungraded one fails the
//!   test (it names the ids) until it is graded by hand and added to the labels with its own
//!   stratum name. A change that moves a figure fails it too: update docs/checker.md ("A
//!   held-out set") with the new figures.
//!
//! `cargo test -p rlvr-tasks --test heldout_responses -- --nocapture` prints the figures.
//! The code it shares with the second held-out set (tests/heldout2_responses.rs) is in
//! tests/common/heldout.rs.

use std::collections::HashMap;

#[path = "common/heldout.rs"]
mod heldout;

use heldout::{
    pct, print_accuracy, strata, wilson, Counts, Label, Response, Strata, Stratum, BOTH_RIGHT,
    BOTH_WRONG, DISAGREE, REGRADED,
};

/// Sizes of the first look's agreement strata (the labels file's header says how they were
/// drawn); with the 111 disagreements they are the whole set.
const BOTH_RIGHT_SIZE: usize = 488;
const BOTH_WRONG_SIZE: usize = 447;
const SIZES: (usize, usize) = (BOTH_RIGHT_SIZE, BOTH_WRONG_SIZE);

/// The set and its labels, checked for shape.
fn load() -> (Vec<Response>, HashMap<usize, Label>) {
    let (responses, labels) = heldout::load_set(
        (
            "heldout_responses.jsonl",
            include_str!("fixtures/heldout_responses.jsonl"),
        ),
        (
            "heldout_responses_labels.jsonl",
            include_str!("fixtures/heldout_responses_labels.jsonl"),
        ),
        111,
        SIZES,
        1046,
        &["faithful-cot", "gaokao-2026", "gaokao-bench", "rereading"],
    );
    (responses, labels)
}

/// The first look, the measurement of record (docs/checker.md, "A held-out set"): rlvr's
/// verdict then is its stratum's (right on `both-right`, wrong on `both-wrong`, math-verify's
/// opposite on `disagree`), so these figures hold for every later checker.
#[test]
fn first_look_figures_of_record() {
    let (responses, labels) = load();
    let mv = |id: usize| responses[id].math_verify;
    let first_look = |id: usize| match labels[&id].stratum.as_str() {
        DISAGREE => !mv(id),
        BOTH_RIGHT => true,
        _ => false,
    };
    let graded: Vec<&Label> = labels.values().filter(|l| l.stratum != REGRADED).collect();
    for l in &graded {
        // the strata are what the two verdicts were when graded
        match l.stratum.as_str() {
            BOTH_RIGHT => assert!(mv(l.id), "#{} both-right, math-verify wrong", l.id),
            BOTH_WRONG => assert!(!mv(l.id), "#{} both-wrong, math-verify right", l.id),
            _ => {}
        }
    }
    let n = responses.len();
    let rlvr = strata(&labels, SIZES, first_look);
    let math_verify = strata(&labels, SIZES, mv);
    let fp = |v: &dyn Fn(usize) -> bool| graded.iter().filter(|l| v(l.id) && !l.label).count();
    let graded_fp = (fp(&first_look), fp(&mv));
    // whole-set false positives of rlvr: a response is a false positive only where it says
    // right; on both-right, bound from the sample
    let (_, fp_hi) = wilson(
        rlvr.both_right.sampled - rlvr.both_right.right,
        rlvr.both_right.sampled,
    );
    let fp_whole_hi = (rlvr.disagree.false_pos as f64 + BOTH_RIGHT_SIZE as f64 * fp_hi) / n as f64;
    let dis = rlvr.disagree.total();
    let bar = rlvr.disagree.right * 100 >= 95 * dis && graded_fp.0 * 200 <= graded.len();

    eprintln!(
        "first look (2026-12-07): {n} responses, {} graded by hand",
        graded.len()
    );
    eprintln!(
        "  disagreements ({dis}): rlvr {:?}, math-verify {:?}",
        rlvr.disagree, math_verify.disagree
    );
    eprintln!(
        "  rlvr right on {} ({}), math-verify on {} ({})",
        rlvr.disagree.right,
        pct(rlvr.disagree.right as f64 / dis as f64),
        math_verify.disagree.right,
        pct(math_verify.disagree.right as f64 / dis as f64)
    );
    print_accuracy("rlvr", rlvr.accuracy(n));
    print_accuracy("math-verify", math_verify.accuracy(n));
    eprintln!(
        "  false positives over the {} graded: rlvr {}, math-verify {}; whole-set false \
         positives of rlvr at most {:.1} per 200 (95%)",
        graded.len(),
        graded_fp.0,
        graded_fp.1,
        200.0 * fp_whole_hi
    );
    eprintln!(
        "  the issue's bar (>= 95% right on the disagreements, <= 1 false positive per 200 \
         graded): {}",
        if bar { "holds" } else { "does NOT hold" }
    );

    assert_eq!(graded.len(), 311);
    assert_eq!(
        rlvr,
        Strata {
            disagree: Counts {
                right: 64,
                false_pos: 0,
                false_neg: 47
            },
            both_right: Stratum {
                size: 488,
                sampled: 104,
                right: 104
            },
            both_wrong: Stratum {
                size: 447,
                sampled: 96,
                right: 78
            },
        }
    );
    assert_eq!(
        math_verify.disagree,
        Counts {
            right: 47,
            false_pos: 0,
            false_neg: 64
        }
    );
    assert_eq!(graded_fp, (0, 0));
    assert_eq!(rlvr.accuracy(n).map(pct), ["87.5%", "80.9%", "90.6%"]);
    assert_eq!(
        math_verify.accuracy(n).map(pct),
        ["85.9%", "79.3%", "89.0%"]
    );
    assert_eq!(format!("{:.1}", 200.0 * fp_whole_hi), "4.3");
    assert!(!bar, "the first look's bar does not hold");
}

/// Today's checker on the same fixed strata, and on every response where it and math-verify
/// disagree now (all of them graded).
#[test]
fn the_current_checker_on_the_held_out_set() {
    let (responses, labels) = load();
    let n = responses.len();
    let heldout::Current {
        verdicts,
        strata: s,
        disagreements: current,
        math_verify: current_mv,
        false_positives: fp_all,
        false_positive_rate_hi: fp_whole_hi,
    } = heldout::current(&responses, &labels, SIZES);
    let now = |id: usize| verdicts[id];
    let acc = s.accuracy(n);
    let first: Vec<&Label> = labels.values().filter(|l| l.stratum != REGRADED).collect();
    let fp_first = first.iter().filter(|l| now(l.id) && !l.label).count();
    let dis = current.total();
    let bar = current.right * 100 >= 95 * dis && fp_all * 200 <= labels.len();

    eprintln!(
        "current checker: {n} responses, {} graded by hand ({} in the first look)",
        labels.len(),
        first.len()
    );
    eprintln!(
        "  on the first look's 111 disagreements: rlvr {:?} ({} right)",
        s.disagree,
        pct(s.disagree.right as f64 / s.disagree.total() as f64)
    );
    eprintln!(
        "  agreement samples: both-right {:?}, both-wrong {:?}",
        s.both_right, s.both_wrong
    );
    print_accuracy("rlvr", acc);
    eprintln!(
        "  false positives: {fp_first} over the {} first-look graded, {fp_all} over all {} \
         graded; whole-set false positives at most {:.1} per 200 (95%)",
        first.len(),
        labels.len(),
        200.0 * fp_whole_hi
    );
    eprintln!(
        "  current disagreements with math-verify ({dis}, all graded): rlvr {current:?} ({} \
         right), math-verify {current_mv:?}",
        pct(current.right as f64 / dis as f64)
    );
    eprintln!(
        "  the issue's bar (>= 95% right on the current disagreements, <= 1 false positive per \
         200 graded): {} (but the set is no longer held out for the formats it prompted)",
        if bar { "holds" } else { "does NOT hold" }
    );

    // The figures, as measured on 2026-12-07 after the rules the first look prompted
    // (docs/checker.md, "A held-out set"). A checker change that moves one fails here: update
    // the docs and these figures.
    assert_eq!(labels.len(), 374);
    assert_eq!(
        s,
        Strata {
            disagree: Counts {
                right: 111,
                false_pos: 0,
                false_neg: 0
            },
            both_right: Stratum {
                size: 488,
                sampled: 104,
                right: 104
            },
            both_wrong: Stratum {
                size: 447,
                sampled: 96,
                right: 94
            },
        }
    );
    assert_eq!(acc.map(pct), ["99.1%", "94.2%", "99.8%"]);
    assert_eq!((fp_first, fp_all), (0, 0));
    assert_eq!(format!("{:.1}", 200.0 * fp_whole_hi), "4.3");
    assert_eq!(
        current,
        Counts {
            right: 143,
            false_pos: 0,
            false_neg: 0
        }
    );
    assert_eq!(current_mv.right, 0);
    assert!(bar);
}
