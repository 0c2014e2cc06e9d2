//! Labelled (gold, response) fixtures of the answer checker, read and scored in one place.
//!
//! A fixture line is `{"id", "gold", "response", "label", "kind", "source"?, "math_verify"?}`:
//! `label` says whether `response` answers `gold` correctly, `math_verify` is math-verify's
//! verdict on the same pair where it was recorded.

use rlvr_tasks::math;

#[derive(serde::Deserialize)]
pub struct Pair {
    pub id: usize,
    pub gold: String,
    pub response: String,
    pub label: bool,
    pub kind: String,
    #[serde(default)]
    pub source: String,
    pub math_verify: Option<bool>,
}

/// Parses a JSONL fixture; a bad line panics with its line number.
pub fn read_pairs(name: &str, text: &str) -> Vec<Pair> {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{name} line {}: {e}", i + 1))
        })
        .collect()
}

/// Verdict counts of rlvr (and of math-verify over the pairs that record it) against the labels.
#[derive(Debug, Default)]
pub struct Tally {
    pub pairs: usize,
    /// rlvr's verdict equals the label.
    pub right: usize,
    /// rlvr accepted a pair labelled wrong.
    pub false_pos: usize,
    /// Pairs with a recorded math-verify verdict.
    pub mv_known: usize,
    pub mv_right: usize,
    pub mv_false_pos: usize,
}

impl Tally {
    pub fn accuracy(&self) -> f64 {
        self.right as f64 / self.pairs as f64
    }
}

/// Scores every pair with `math::verify`, printing each rlvr error and each disagreement with
/// math-verify to stderr (`cargo test -- --nocapture` shows them), then the totals.
pub fn score(pairs: &[Pair]) -> Tally {
    let mut t = Tally {
        pairs: pairs.len(),
        ..Tally::default()
    };
    for p in pairs {
        let s = math::verify(&p.gold, &p.response);
        let ok = s.correct == p.label;
        t.right += usize::from(ok);
        t.false_pos += usize::from(s.correct && !p.label);
        if !ok {
            eprintln!(
                "RLVR WRONG #{} [{} / {}] gold {:?} extracted {:?} label {} ({})",
                p.id, p.source, p.kind, p.gold, s.extracted, p.label, s.reason
            );
        }
        if let Some(mv) = p.math_verify {
            if mv != s.correct {
                eprintln!(
                    "DISAGREE #{} [{} / {}] gold {:?} extracted {:?} label {} rlvr {} math-verify {}",
                    p.id, p.source, p.kind, p.gold, s.extracted, p.label, s.correct, mv
                );
            }
            t.mv_known += 1;
            t.mv_right += usize::from(mv == p.label);
            t.mv_false_pos += usize::from(mv && !p.label);
        }
    }
    eprintln!(
        "rlvr: {}/{} = {:.4}, false positives {}",
        t.right,
        t.pairs,
        t.accuracy(),
        t.false_pos
    );
    if t.mv_known > 0 {
        eprintln!(
            "math-verify: {}/{} = {:.4}, false positives {}",
            t.mv_right,
            t.mv_known,
            t.mv_right as f64 / t.mv_known as f64,
            t.mv_false_pos
        );
    }
    t
}
