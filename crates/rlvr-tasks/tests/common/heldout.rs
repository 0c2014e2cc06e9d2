//! What the held-out measurements (tests/heldout_responses.rs, tests/heldout2_responses.rs, ...)
//! share: the line formats of a held-out set and its labels, rlvr's verdict on a line, and the
//! stratified estimate of whole-set accuracy from every graded disagreement with math-verify and a
//! seeded random sample of each agreement stratum.
//!
//! A set's test file states its set as a [`Set`] (fixtures, size, sources, fixed strata, its own
//! checks of shape) and its figures as a [`RecordFigures`] and a [`CurrentFigures`]; its two tests
//! call [`check_record`] and [`check_current`], which load the set, compute, print and assert
//! every figure, a failure naming the set and the figure.
//!
//! Included by those tests with `#[path = "common/heldout.rs"] mod heldout;` (not through
//! `common/mod.rs`, so the other tests that use `common` do not compile it); each uses a part.
#![allow(dead_code)]

use std::collections::HashMap;

use rlvr_tasks::math;

/// A line of a held-out set (build_heldout_responses.py's format).
#[derive(serde::Deserialize)]
pub struct Response {
    pub id: usize,
    pub source: String,
    pub gold: String,
    pub response: String,
    pub choices: Option<Vec<String>>,
    pub math_verify: bool,
    /// The problem's text (cut to its first characters by some builders), as the checker
    /// takes the question.
    #[serde(default)]
    pub problem: String,
}

/// A hand-graded line of a labels file.
#[derive(serde::Deserialize)]
pub struct Label {
    pub id: usize,
    pub label: bool,
    pub stratum: String,
}

/// Every response where rlvr and math-verify disagreed when the set was graded.
pub const DISAGREE: &str = "disagree";
/// Both said right: a seeded random sample graded.
pub const BOTH_RIGHT: &str = "both-right";
/// Both said wrong: a seeded random sample graded.
pub const BOTH_WRONG: &str = "both-wrong";
/// Graded after a checker change made them disagreements no one had graded (not a random
/// sample: they count in the current disagreements and false positives, not in the whole-set
/// estimate).
pub const REGRADED: &str = "regraded-after-fix";

/// The sources of a set: each response's `source` up to its first `:`.
pub fn source_names(responses: &[Response]) -> std::collections::BTreeSet<&str> {
    responses
        .iter()
        .map(|r| r.source.split(':').next().unwrap_or(""))
        .collect()
}

/// Right, false positives and false negatives of one checker against the labels.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Counts {
    pub right: usize,
    pub false_pos: usize,
    pub false_neg: usize,
}

impl Counts {
    pub fn add(&mut self, verdict: bool, label: bool) {
        self.right += usize::from(verdict == label);
        self.false_pos += usize::from(verdict && !label);
        self.false_neg += usize::from(!verdict && label);
    }

    pub fn total(&self) -> usize {
        self.right + self.false_pos + self.false_neg
    }
}

/// Parses a JSONL file, skipping blank lines and `#` comments; a bad line panics with its number.
pub fn read<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> Vec<T> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{name} line {}: {e}", i + 1))
        })
        .collect()
}

/// A held-out set and its labels, checked for shape: ids are positions, every label names a
/// response and one of `strata`.
pub fn load(
    (responses_name, responses_text): (&str, &str),
    (labels_name, labels_text): (&str, &str),
    strata: &[&str],
) -> (Vec<Response>, HashMap<usize, Label>) {
    let responses: Vec<Response> = read(responses_name, responses_text);
    let labels: HashMap<usize, Label> = read::<Label>(labels_name, labels_text)
        .into_iter()
        .map(|l| (l.id, l))
        .collect();
    for (i, r) in responses.iter().enumerate() {
        assert_eq!(r.id, i, "ids are positions");
    }
    assert!(labels.keys().all(|id| *id < responses.len()));
    for l in labels.values() {
        assert!(
            strata.contains(&l.stratum.as_str()),
            "label #{}: unknown stratum {:?}",
            l.id,
            l.stratum
        );
    }
    (responses, labels)
}

/// rlvr's verdict, as `rlvr verify --jsonl` gives it: with the options when the line has them,
/// and with its problem's text (`math::verify_asked`, as training scores a response).
pub fn verdict(r: &Response) -> bool {
    let question = (!r.problem.is_empty()).then_some(r.problem.as_str());
    math::verify_asked(&r.gold, &r.response, r.choices.as_deref(), question).correct
}

/// Two-sided 97.5% normal quantile: two strata at 97.5% each cover jointly at least 95%.
pub const Z: f64 = 2.241_402_727_604_947;

/// Wilson score interval for k successes out of n at quantile `Z`.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z * Z;
    let d = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / d;
    let half = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / d;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// One agreement stratum: its size, its random sample's size, and how many of the sample a
/// checker is right on.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Stratum {
    pub size: usize,
    pub sampled: usize,
    pub right: usize,
}

/// A checker's figures over the fixed strata: its counts on the disagreements (all graded) and
/// on each agreement stratum's sample.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Strata {
    pub disagree: Counts,
    pub both_right: Stratum,
    pub both_wrong: Stratum,
}

impl Strata {
    /// Whole-set accuracy, estimated by stratum: (estimate, lower, upper) at 95% jointly (a
    /// Wilson interval at 97.5% for each agreement stratum, combined by the strata's weights).
    pub fn accuracy(&self, n: usize) -> [f64; 3] {
        let (br, bw) = (self.both_right, self.both_wrong);
        let (br_lo, br_hi) = wilson(br.right, br.sampled);
        let (bw_lo, bw_hi) = wilson(bw.right, bw.sampled);
        let total = |a: f64, b: f64| {
            (self.disagree.right as f64 + br.size as f64 * a + bw.size as f64 * b) / n as f64
        };
        [
            total(
                br.right as f64 / br.sampled as f64,
                bw.right as f64 / bw.sampled as f64,
            ),
            total(br_lo, bw_lo),
            total(br_hi, bw_hi),
        ]
    }
}

/// A checker's figures over the fixed strata (of sizes `both_right_size` and `both_wrong_size`),
/// from its verdict on each graded case; labels of other strata are left out.
pub fn strata(
    labels: &HashMap<usize, Label>,
    (both_right_size, both_wrong_size): (usize, usize),
    verdict: impl Fn(usize) -> bool,
) -> Strata {
    let mut s = Strata {
        both_right: Stratum {
            size: both_right_size,
            ..Stratum::default()
        },
        both_wrong: Stratum {
            size: both_wrong_size,
            ..Stratum::default()
        },
        ..Strata::default()
    };
    for l in labels.values() {
        let v = verdict(l.id);
        let stratum = match l.stratum.as_str() {
            DISAGREE => {
                s.disagree.add(v, l.label);
                continue;
            }
            BOTH_RIGHT => &mut s.both_right,
            BOTH_WRONG => &mut s.both_wrong,
            _ => continue,
        };
        stratum.sampled += 1;
        stratum.right += usize::from(v == l.label);
    }
    s
}

pub fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

pub fn print_accuracy(name: &str, a: [f64; 3]) {
    eprintln!(
        "  whole set, estimated: {name} {} [{}, {}] (95%, Wilson per stratum, Bonferroni)",
        pct(a[0]),
        pct(a[1]),
        pct(a[2])
    );
}

/// Today's checker on a held-out set, from its fixed strata and its labels.
pub struct Current {
    /// rlvr's verdict on every response, by id.
    pub verdicts: Vec<bool>,
    /// The fixed strata, scored with today's verdicts.
    pub strata: Strata,
    /// rlvr on every response where it and math-verify disagree now (all graded).
    pub disagreements: Counts,
    /// math-verify on the same responses.
    pub math_verify: Counts,
    /// rlvr's false positives over every graded response.
    pub false_positives: usize,
    /// The 95% upper bound of rlvr's whole-set false-positive rate: every response it calls
    /// right where math-verify calls it wrong is graded (a current disagreement), as is every
    /// response of the disagreement stratum; only the both-right stratum's unsampled part is
    /// bounded from its sample.
    pub false_positive_rate_hi: f64,
}

/// Scores today's checker on `responses` (strata sizes `sizes`: both-right, both-wrong). Every
/// current disagreement with math-verify must be graded: an ungraded one fails, naming its id,
/// until it is graded by hand and added to the labels under a stratum of its own. Prints every
/// graded response rlvr gets wrong.
pub fn current(
    responses: &[Response],
    labels: &HashMap<usize, Label>,
    sizes: (usize, usize),
) -> Current {
    let verdicts: Vec<bool> = responses.iter().map(verdict).collect();
    let now = |id: usize| verdicts[id];
    let mv = |id: usize| responses[id].math_verify;
    let ungraded: Vec<String> = responses
        .iter()
        .filter(|r| now(r.id) != r.math_verify && !labels.contains_key(&r.id))
        .map(|r| format!("#{} ({}: rlvr {})", r.id, r.source, now(r.id)))
        .collect();
    assert!(
        ungraded.is_empty(),
        "disagreements with math-verify that no one has graded (grade them by hand and add them \
         to the labels with a stratum of their own): {ungraded:?}"
    );
    let (mut disagreements, mut math_verify) = (Counts::default(), Counts::default());
    for r in responses.iter().filter(|r| now(r.id) != r.math_verify) {
        let l = &labels[&r.id];
        disagreements.add(now(r.id), l.label);
        math_verify.add(r.math_verify, l.label);
    }
    let mut wrong: Vec<&Label> = labels.values().filter(|l| now(l.id) != l.label).collect();
    wrong.sort_by_key(|l| l.id);
    for l in wrong {
        let r = &responses[l.id];
        eprintln!(
            "RLVR WRONG #{} [{} / {}] gold {:?} label {} math-verify {}",
            r.id, r.source, l.stratum, r.gold, l.label, r.math_verify
        );
    }
    let strata = strata(labels, sizes, now);
    let false_positives = labels.values().filter(|l| now(l.id) && !l.label).count();
    let known = labels
        .values()
        .filter(|l| now(l.id) && !l.label && (!mv(l.id) || l.stratum == DISAGREE))
        .count();
    let both_right_fp = labels
        .values()
        .filter(|l| l.stratum == BOTH_RIGHT && now(l.id) && !l.label)
        .count();
    let (_, hi) = wilson(both_right_fp, strata.both_right.sampled);
    let false_positive_rate_hi = (known as f64 + sizes.0 as f64 * hi) / responses.len() as f64;
    Current {
        verdicts,
        strata,
        disagreements,
        math_verify,
        false_positives,
        false_positive_rate_hi,
    }
}

/// The measurement of record of a held-out set, from its labels (re-graded ones left out),
/// its fixed strata and math-verify's verdicts alone: rlvr's verdict then is its stratum's
/// (right on `both-right`, wrong on `both-wrong`, math-verify's opposite on `disagree`), so
/// the figures hold for every later checker.
pub struct Record {
    /// rlvr's counts per stratum.
    pub rlvr: Strata,
    /// math-verify's.
    pub math_verify: Strata,
    /// False positives among the graded: (rlvr, math-verify).
    pub graded_fp: (usize, usize),
    /// rlvr's whole-set false-positive rate, upper 95% bound.
    pub fp_whole_hi: f64,
    /// Whether the bar holds (>= 95% right on the disagreements, <= 1 false positive per 200
    /// graded).
    pub bar: bool,
}

/// Computes and prints the [`Record`] of the set called `name` (`labels` without the
/// re-graded ones; `sizes` the both-right and both-wrong strata's sizes), checking first that
/// every label's stratum is what math-verify said when it was graded.
pub fn record(
    name: &str,
    responses: &[Response],
    labels: &HashMap<usize, Label>,
    sizes: (usize, usize),
) -> Record {
    let n = responses.len();
    let mv = |id: usize| responses[id].math_verify;
    let then = |id: usize| match labels[&id].stratum.as_str() {
        DISAGREE => !mv(id),
        BOTH_RIGHT => true,
        _ => false,
    };
    for l in labels.values() {
        // the strata are what math-verify said when they were graded
        match l.stratum.as_str() {
            BOTH_RIGHT => assert!(mv(l.id), "#{} both-right, math-verify wrong", l.id),
            BOTH_WRONG => assert!(!mv(l.id), "#{} both-wrong, math-verify right", l.id),
            _ => {}
        }
    }
    let rlvr = strata(labels, sizes, then);
    let math_verify = strata(labels, sizes, mv);
    let fp = |v: &dyn Fn(usize) -> bool| labels.values().filter(|l| v(l.id) && !l.label).count();
    let graded_fp = (fp(&then), fp(&mv));
    // whole-set false positives of rlvr: every one it calls right is graded except the unsampled
    // part of both-right, bounded from the sample
    let (_, br_fp_hi) = wilson(
        rlvr.both_right.sampled - rlvr.both_right.right,
        rlvr.both_right.sampled,
    );
    let fp_whole_hi = (rlvr.disagree.false_pos as f64 + sizes.0 as f64 * br_fp_hi) / n as f64;
    let dis = rlvr.disagree.total();
    let bar = rlvr.disagree.right * 100 >= 95 * dis && graded_fp.0 * 200 <= labels.len();

    eprintln!("{name}: {n} responses, {} graded by hand", labels.len());
    eprintln!(
        "  disagreements ({dis}): rlvr {:?}, math-verify {:?}",
        rlvr.disagree, math_verify.disagree
    );
    eprintln!(
        "  rlvr right on {} ({}), math-verify on {} ({})",
        rlvr.disagree.right,
        share(rlvr.disagree.right, dis),
        math_verify.disagree.right,
        share(math_verify.disagree.right, dis)
    );
    eprintln!(
        "  agreement samples: both-right {:?}, both-wrong {:?}",
        rlvr.both_right, rlvr.both_wrong
    );
    print_accuracy("rlvr", rlvr.accuracy(n));
    print_accuracy("math-verify", math_verify.accuracy(n));
    eprintln!(
        "  false positives over the {} graded: rlvr {} ({:.1} per 200), math-verify {}; \
         whole-set false positives of rlvr at most {:.1} per 200 (95%)",
        labels.len(),
        graded_fp.0,
        200.0 * graded_fp.0 as f64 / labels.len() as f64,
        graded_fp.1,
        200.0 * fp_whole_hi
    );
    eprintln!(
        "  the bar (>= 95% right on the disagreements, <= 1 false positive per 200 graded): {}{}",
        if bar { "holds" } else { "does NOT hold" },
        if dis == 0 {
            " (no disagreements: its first half has nothing to test)"
        } else {
            ""
        }
    );
    Record {
        rlvr,
        math_verify,
        graded_fp,
        fp_whole_hi,
        bar,
    }
}

/// rlvr's (right, total) on today's disagreements with math-verify, by `key` of each response
/// (its source, or source and task).
pub fn groups(
    responses: &[Response],
    labels: &HashMap<usize, Label>,
    verdicts: &[bool],
    key: impl Fn(&Response) -> String,
) -> std::collections::BTreeMap<String, (usize, usize)> {
    let mut out = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for r in responses.iter().filter(|r| verdicts[r.id] != r.math_verify) {
        let e = out.entry(key(r)).or_default();
        e.0 += usize::from(verdicts[r.id] == labels[&r.id].label);
        e.1 += 1;
    }
    out
}

/// Prints today's checker's figures on a held-out set of `n` responses (`graded` labels, a
/// disagreement stratum of `disagree_size`), with the disagreements by `groups`, and returns
/// whether the bar holds on them (>= 95% right on the current disagreements, <= 1 false
/// positive per 200 graded).
pub fn print_current(
    n: usize,
    graded: usize,
    disagree_size: usize,
    cur: &Current,
    groups: &std::collections::BTreeMap<String, (usize, usize)>,
) -> bool {
    let (s, current, current_mv) = (&cur.strata, &cur.disagreements, &cur.math_verify);
    let dis = current.total();
    let bar = current.right * 100 >= 95 * dis && cur.false_positives * 200 <= graded;
    eprintln!("current checker: {n} responses, {graded} graded by hand");
    eprintln!(
        "  on the {disagree_size} graded disagreements: rlvr {:?} ({} right)",
        s.disagree,
        share(s.disagree.right, s.disagree.total())
    );
    eprintln!(
        "  agreement samples: both-right {:?}, both-wrong {:?}",
        s.both_right, s.both_wrong
    );
    print_accuracy("rlvr", s.accuracy(n));
    eprintln!(
        "  false positives: {} over the {graded} graded; whole-set false positives at most \
         {:.1} per 200 (95%)",
        cur.false_positives,
        200.0 * cur.false_positive_rate_hi
    );
    eprintln!(
        "  current disagreements with math-verify ({dis}, all graded): rlvr {current:?} ({} \
         right), math-verify {current_mv:?}",
        share(current.right, dis)
    );
    for (group, (right, total)) in groups {
        eprintln!(
            "    {group}: rlvr right on {right} of {total} ({})",
            share(*right, *total)
        );
    }
    eprintln!(
        "  the bar (>= 95% right on the current disagreements, <= 1 false positive per 200 \
         graded): {}",
        if bar { "holds" } else { "does NOT hold" }
    );
    bar
}

/// The fraction `k / n` as a percentage, or "n/a" when there is nothing to count.
pub fn share(k: usize, n: usize) -> String {
    if n == 0 {
        "n/a".to_string()
    } else {
        pct(k as f64 / n as f64)
    }
}

/// A held-out set and its labels ([`load`]), checked for shape: `total` responses, the
/// disagreement stratum's size and `sizes` (both-right, both-wrong) covering them, and the
/// `sources` the responses come from.
pub fn load_set(
    responses: (&str, &str),
    labels: (&str, &str),
    disagree_size: usize,
    sizes: (usize, usize),
    total: usize,
    sources: &[&str],
) -> (Vec<Response>, HashMap<usize, Label>) {
    let name = responses.0;
    let (responses, labels) = load(
        responses,
        labels,
        &[DISAGREE, BOTH_RIGHT, BOTH_WRONG, REGRADED],
    );
    assert_eq!(responses.len(), total, "{name}: responses in the set");
    assert_eq!(
        disagree_size + sizes.0 + sizes.1,
        responses.len(),
        "{name}: the strata cover the set"
    );
    assert_eq!(
        source_names(&responses),
        sources
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<&str>>(),
        "{name}: the sources of the set"
    );
    (responses, labels)
}

/// An agreement stratum when the set was graded: its size, and how many of it were drawn by the
/// seeded sample and graded by hand.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub size: usize,
    pub sampled: usize,
}

/// A held-out set, as its test file states it.
pub struct Set {
    /// What failures and the printed figures call it: "second held-out set".
    pub name: &'static str,
    /// When it was graded by hand (the heading of its figures of record).
    pub graded_on: &'static str,
    /// The responses' fixture: its file name and its text.
    pub responses: (&'static str, &'static str),
    /// The labels' fixture: its file name and its text.
    pub labels: (&'static str, &'static str),
    /// How many responses it holds.
    pub total: usize,
    /// The sources they come from (each response's `source` up to its first `:`).
    pub sources: &'static [&'static str],
    /// The fixed strata, as they were when the set was graded (together they are the whole
    /// set; the labels file's header says how the samples were drawn): the disagreements (all
    /// graded), and the two agreement strata.
    pub disagree: usize,
    pub both_right: Sample,
    pub both_wrong: Sample,
    /// The set's own checks of its responses (options, golds, how many of a kind), run whenever
    /// it is loaded; `|_| {}` where it has none.
    pub shape: fn(&[Response]),
}

impl Set {
    /// The set and its labels, checked for shape ([`load_set`], then the set's own checks).
    pub fn load(&self) -> (Vec<Response>, HashMap<usize, Label>) {
        let (responses, labels) = load_set(
            self.responses,
            self.labels,
            self.disagree,
            self.sizes(),
            self.total,
            self.sources,
        );
        (self.shape)(&responses);
        (responses, labels)
    }

    /// The agreement strata's sizes: (both-right, both-wrong).
    pub fn sizes(&self) -> (usize, usize) {
        (self.both_right.size, self.both_wrong.size)
    }

    /// Asserts `got`, a checker's figures over the fixed strata, against its stated counts on
    /// the disagreement stratum, its right answers on each agreement stratum's sample
    /// (both-right, both-wrong) and its whole-set accuracy; `what` names the set, the test and
    /// the checker in a failure.
    #[track_caller]
    fn check_strata(
        &self,
        what: &str,
        got: &Strata,
        disagree: Counts,
        (both_right, both_wrong): (usize, usize),
        accuracy: [&str; 3],
    ) {
        assert_eq!(got.disagree, disagree, "{what} on the disagreement stratum");
        assert_eq!(
            got.both_right,
            stratum(self.both_right, both_right),
            "{what} on the both-right sample"
        );
        assert_eq!(
            got.both_wrong,
            stratum(self.both_wrong, both_wrong),
            "{what} on the both-wrong sample"
        );
        assert_eq!(
            got.accuracy(self.total).map(pct),
            accuracy,
            "{what}: whole-set accuracy"
        );
    }
}

/// A fixed agreement stratum with a checker right on `right` of its sample.
fn stratum(sample: Sample, right: usize) -> Stratum {
    Stratum {
        size: sample.size,
        sampled: sample.sampled,
        right,
    }
}

/// The figures of record of a set ([`record`]), as its test states them: from the labels (the
/// re-graded left out), the fixed strata and math-verify's verdicts alone.
pub struct RecordFigures {
    /// How many responses were graded by hand when the set was graded.
    pub graded: usize,
    /// rlvr on the disagreement stratum (its verdict then: math-verify's opposite).
    pub disagree: Counts,
    /// math-verify on the disagreement stratum.
    pub math_verify: Counts,
    /// How many of the both-right stratum's sample rlvr was right on (math-verify too: it
    /// said the same).
    pub both_right: usize,
    /// How many of the both-wrong stratum's sample rlvr was right on (math-verify too).
    pub both_wrong: usize,
    /// False positives among the graded: (rlvr, math-verify).
    pub false_positives: (usize, usize),
    /// rlvr's whole-set accuracy, estimated: estimate, lower and upper bound (95%), as
    /// percentages to a tenth.
    pub accuracy: [&'static str; 3],
    /// math-verify's.
    pub math_verify_accuracy: [&'static str; 3],
    /// The upper bound (95%) of rlvr's whole-set false positives per 200, to a tenth.
    pub fp_per_200: &'static str,
    /// Whether the bar holds (>= 95% right on the disagreements, <= 1 false positive per 200
    /// graded).
    pub bar: bool,
}

/// math-verify on today's disagreements, as a set's test states it.
pub enum MathVerify {
    /// Its counts.
    Counts(Counts),
    /// Its right answers alone.
    Right(usize),
}

/// Today's checker's figures on a set ([`current`]), as its test states them.
pub struct CurrentFigures {
    /// How many responses are graded by hand (the re-graded included).
    pub graded: usize,
    /// rlvr on the disagreement stratum.
    pub disagree: Counts,
    /// How many of the both-right stratum's sample rlvr is right on.
    pub both_right: usize,
    /// How many of the both-wrong stratum's sample rlvr is right on.
    pub both_wrong: usize,
    /// rlvr's whole-set accuracy, estimated: estimate, lower and upper bound (95%).
    pub accuracy: [&'static str; 3],
    /// rlvr's false positives over every graded response.
    pub false_positives: usize,
    /// The upper bound (95%) of rlvr's whole-set false positives per 200, to a tenth.
    pub fp_per_200: &'static str,
    /// rlvr on every response where it and math-verify disagree today (all of them graded).
    pub current: Counts,
    /// math-verify on the same responses.
    pub current_math_verify: MathVerify,
    /// The key today's disagreements are counted by (see [`source_fields`]).
    pub key: fn(&Response) -> String,
    /// rlvr's (right, total) on today's disagreements by `key`, every key with one; `None`
    /// where the set states none (they are printed all the same).
    pub groups: Option<&'static [(&'static str, (usize, usize))]>,
    /// Whether the bar holds (>= 95% right on today's disagreements, <= 1 false positive per
    /// 200 graded).
    pub bar: bool,
}

/// The fields `which` of a response's source (its `:`-separated parts), joined by `:`; the
/// whole source where it has fewer.
pub fn source_fields(r: &Response, which: &[usize]) -> String {
    let fields: Vec<&str> = r.source.split(':').collect();
    which
        .iter()
        .map(|&i| fields.get(i).copied())
        .collect::<Option<Vec<&str>>>()
        .map_or_else(|| r.source.clone(), |f| f.join(":"))
}

/// Whether no response lists options (free-form answers only).
pub fn free_form(responses: &[Response]) -> bool {
    responses.iter().all(|r| r.choices.is_none())
}

/// How many responses have a gold that is a plain integer (digits, a leading `-` allowed).
pub fn plain_integers(responses: &[Response]) -> usize {
    responses
        .iter()
        .filter(|r| {
            let g = r.gold.trim();
            let digits = g.strip_prefix('-').unwrap_or(g);
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        })
        .count()
}

/// What a failed `bar` assertion says: the bar's terms and the figures it was judged on.
fn bar_figures(bar: bool, disagreements: Counts, false_positives: usize, graded: usize) -> String {
    format!(
        "the bar (>= 95% right on the disagreements, <= 1 false positive per 200 graded) {}: \
         {} of {} disagreements right, {false_positives} false positives in {graded} graded",
        if bar { "holds" } else { "does not hold" },
        disagreements.right,
        disagreements.total()
    )
}

/// A whole-set false-positive rate, per 200 to a tenth.
fn per_200(rate: f64) -> String {
    format!("{:.1}", 200.0 * rate)
}

/// The figures of record of `set` ([`record`], which prints them): asserts each of `want`, a
/// failure naming the set and the figure.
#[track_caller]
pub fn check_record(set: &Set, want: &RecordFigures) {
    let (responses, mut labels) = set.load();
    labels.retain(|_, l| l.stratum != REGRADED);
    let heading = format!("{} ({})", set.name, set.graded_on);
    let got = record(&heading, &responses, &labels, set.sizes());
    let of = format!("{}, figures of record", set.name);
    assert_eq!(labels.len(), want.graded, "{of}: responses graded");
    let samples = (want.both_right, want.both_wrong);
    set.check_strata(
        &format!("{of}: rlvr"),
        &got.rlvr,
        want.disagree,
        samples,
        want.accuracy,
    );
    set.check_strata(
        &format!("{of}: math-verify"),
        &got.math_verify,
        want.math_verify,
        samples,
        want.math_verify_accuracy,
    );
    assert_eq!(
        got.graded_fp, want.false_positives,
        "{of}: false positives among the graded (rlvr, math-verify)"
    );
    assert_eq!(
        per_200(got.fp_whole_hi),
        want.fp_per_200,
        "{of}: rlvr's whole-set false positives per 200 (upper bound)"
    );
    assert_eq!(
        got.bar,
        want.bar,
        "{of}: {}",
        bar_figures(got.bar, got.rlvr.disagree, got.graded_fp.0, labels.len())
    );
}

/// Today's checker on `set` ([`current`] and [`print_current`], which print its figures, with
/// today's disagreements by `want.key`): asserts each of `want`, a failure naming the set and the
/// figure. Returns the set, its labels and the figures, for checks of the set's own.
#[track_caller]
pub fn check_current(
    set: &Set,
    want: &CurrentFigures,
) -> (Vec<Response>, HashMap<usize, Label>, Current) {
    let (responses, labels) = set.load();
    let cur = current(&responses, &labels, set.sizes());
    let by_key = groups(&responses, &labels, &cur.verdicts, want.key);
    let bar = print_current(set.total, labels.len(), set.disagree, &cur, &by_key);
    let of = format!("{}, current checker", set.name);
    assert_eq!(labels.len(), want.graded, "{of}: responses graded");
    set.check_strata(
        &format!("{of}: rlvr"),
        &cur.strata,
        want.disagree,
        (want.both_right, want.both_wrong),
        want.accuracy,
    );
    assert_eq!(
        cur.false_positives, want.false_positives,
        "{of}: false positives among the graded"
    );
    assert_eq!(
        per_200(cur.false_positive_rate_hi),
        want.fp_per_200,
        "{of}: whole-set false positives per 200 (upper bound)"
    );
    assert_eq!(
        cur.disagreements, want.current,
        "{of}: rlvr on today's disagreements with math-verify"
    );
    match want.current_math_verify {
        MathVerify::Counts(counts) => assert_eq!(
            cur.math_verify, counts,
            "{of}: math-verify on today's disagreements"
        ),
        MathVerify::Right(right) => assert_eq!(
            cur.math_verify.right, right,
            "{of}: math-verify's right answers on today's disagreements"
        ),
    }
    if let Some(expected) = want.groups {
        let expected: std::collections::BTreeMap<String, (usize, usize)> = expected
            .iter()
            .map(|&(key, counts)| (key.to_string(), counts))
            .collect();
        assert_eq!(
            by_key, expected,
            "{of}: rlvr's (right, total) on today's disagreements by key"
        );
    }
    assert_eq!(
        bar,
        want.bar,
        "{of}: {}",
        bar_figures(bar, cur.disagreements, cur.false_positives, labels.len())
    );
    (responses, labels, cur)
}
