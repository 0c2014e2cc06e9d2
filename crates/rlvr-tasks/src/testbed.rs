//! The CPU testbed: generated multi-step addition problems that a model of a few million
//! parameters learns in minutes on two cores, with a difficulty knob, a seed, and the two
//! regimes of the paper's analysis.
//!
//! A problem is `Add: 7 9 5 =`; its worked solution writes the running sum step by step and
//! ends with `Answer: <sum>`:
//!
//! ```text
//! concise:  " 7+9=16 16+5=21 Answer: 21"
//! verbose:  " Step by step. 7+9=16, so 16. 16+5=21, so 21. Answer: 21"
//! ```
//!
//! Solutions used for the supervised warm start contain *slips*: at each step, with a
//! per-step probability that depends on the style, the running sum is written off by 1 or 2,
//! and the solution carries on from the wrong value, so its final answer is wrong. A model
//! warm-started on them samples right and wrong solutions at rates RL can improve.
//!
//! Regimes ([`Regime`]). Two put a run in the paper's two regimes through the style of the
//! warm-start solutions (per-step slips, more frequent in the verbose style):
//! - `length-variation`: one (concise) style, 2..=difficulty terms. Length grows with the
//!   number of terms, so lengths vary a lot across prompts (CV about 0.4 for difficulty 8), but
//!   right and wrong answers to the same prompt have the same length: a small pos-neg gap.
//! - `pos-neg-gap`: the style is chosen at the first response token (verbose with probability
//!   [`ErrorModel::p_verbose`]); verbose solutions are about twice as long and slip far more
//!   often, so for the same prompt wrong answers are about 1.5-2x longer than right ones.
//!
//! Four more tie the length of a wrong answer to the *kind* of error, so that the sign of the
//! pos-neg gap is a property of the task, not of a style the policy can drop during training
//! (each has one error kind, [`ErrorKind`]; arithmetic is otherwise exact):
//! - `wrong-long` (runaway repetition): a wrong solution adds one term again, one or more
//!   times (` 7+9=16 16+9=25 25+5=30`), so it is wrong and longer by whole steps.
//! - `right-long` (skipped work): a wrong solution stops early and answers a partial sum, so
//!   it is wrong and shorter; right answers are the longer ones.
//! - `high-variation`: a wrong solution slips one running sum by 1 or 2 (same length); half
//!   the solutions are verbose, half concise, with the same error rate: high length CV, no gap.
//! - `control`: slips as in `high-variation`, concise only: low length CV, no gap.
//!
//! Held-out problems are disjoint from training problems by construction: a term sequence is
//! held out iff its FNV-1a hash is divisible by [`HELDOUT_MODULUS`].
//!
//! The tokenizer ([`train_tokenizer`]) is a small BPE trained with the `tokenizers` crate on
//! generated text: digits stay single characters, words may merge, spaces are their own tokens,
//! and `<|endoftext|>` / `<|pad|>` are special tokens. It round-trips through `tokenizer.json`,
//! so the testbed model loads through the same path as a Hugging Face checkpoint.

use std::collections::HashSet;
use std::str::FromStr;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};
use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
use tokenizers::models::TrainerWrapper;
use tokenizers::pre_tokenizers::split::{Split as SplitPre, SplitPattern};
use tokenizers::{AddedToken, SplitDelimiterBehavior, Tokenizer};

use crate::{Problem, Prompt, Score, Verifier};

/// End-of-sequence token of the testbed tokenizer.
pub const EOS: &str = "<|endoftext|>";
/// Padding token of the testbed tokenizer.
pub const PAD: &str = "<|pad|>";
/// A term sequence is held out iff `fnv1a(terms) % HELDOUT_MODULUS == 0` (1 in 8).
pub const HELDOUT_MODULUS: u64 = 8;

/// Which length regime the warm-start solutions put a run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Regime {
    /// High response-length variation, small pos-neg gap (per-step slips, one style).
    LengthVariation,
    /// Large pos-neg gap: a verbose style that slips more often.
    PosNegGap,
    /// Wrong answers longer: the error repeats a step.
    WrongLong,
    /// Right answers longer: the error stops early.
    RightLong,
    /// No gap, high length variation: two styles with the same error rate.
    HighVariation,
    /// No gap, low length variation: one style, errors that keep the length.
    Control,
    /// Wrong answers longer, through the model's own slips: every solution checks its sum by a
    /// second pass in reverse order and, when the two disagree, makes a third pass and answers
    /// it ([`write_rechecked_solution`]). A wrong answer needs a disagreement, so it is always
    /// three passes long; a right one is two passes unless it was rescued.
    WrongLongRecheck,
    /// Right answers longer, through the model's own slips: every step is checked by a
    /// subtraction, and a step whose check fails stops the solution without an answer
    /// ([`write_step_checked_solution`]). A wrong answer is cut short at its slip.
    RightLongAbort,
    /// Wrong answers longer, through a checker the policy cannot write for itself: after every
    /// step the environment inserts its verdict (`ok` / `no`, [`checker_verdict`]) and a
    /// failed step is done again ([`write_verified_solution`]). Every answer that finishes is
    /// right; a wrong one runs out of tokens at the response-length limit, so it is the longest.
    VerifiedRetry,
    /// Right answers longer, through a checker the policy cannot write for itself: as
    /// [`Regime::VerifiedRetry`], but the environment ends the response at its first `no`, so
    /// a wrong answer is cut short at its slip.
    VerifiedAbort,
}

impl Regime {
    /// Every regime.
    pub const ALL: [Regime; 10] = [
        Regime::LengthVariation,
        Regime::PosNegGap,
        Regime::WrongLong,
        Regime::RightLong,
        Regime::HighVariation,
        Regime::Control,
        Regime::WrongLongRecheck,
        Regime::RightLongAbort,
        Regime::VerifiedRetry,
        Regime::VerifiedAbort,
    ];

    /// The name users type.
    pub fn as_str(self) -> &'static str {
        match self {
            Regime::LengthVariation => "length-variation",
            Regime::PosNegGap => "pos-neg-gap",
            Regime::WrongLong => "wrong-long",
            Regime::RightLong => "right-long",
            Regime::HighVariation => "high-variation",
            Regime::Control => "control",
            Regime::WrongLongRecheck => "wrong-long-recheck",
            Regime::RightLongAbort => "right-long-abort",
            Regime::VerifiedRetry => "verified-retry",
            Regime::VerifiedAbort => "verified-abort",
        }
    }

    /// How the regime's warm-start solutions go wrong.
    pub fn error_model(self) -> ErrorModel {
        let per_solution = |kind, p_verbose| ErrorModel {
            p_verbose,
            kind,
            rate_concise: 0.4,
            rate_verbose: 0.4,
        };
        match self {
            Regime::LengthVariation => ErrorModel {
                p_verbose: 0.0,
                kind: ErrorKind::StepSlip,
                rate_concise: 0.05,
                rate_verbose: 0.05,
            },
            Regime::PosNegGap => ErrorModel {
                p_verbose: 0.5,
                kind: ErrorKind::StepSlip,
                rate_concise: 0.02,
                rate_verbose: 0.25,
            },
            Regime::WrongLong => per_solution(ErrorKind::Repeat, 0.0),
            Regime::RightLong => per_solution(ErrorKind::StopEarly, 0.0),
            Regime::HighVariation => per_solution(ErrorKind::Slip, 0.5),
            Regime::Control => per_solution(ErrorKind::Slip, 0.0),
            Regime::WrongLongRecheck => ErrorModel {
                p_verbose: 0.0,
                kind: ErrorKind::Recheck,
                rate_concise: 0.3,
                rate_verbose: 0.3,
            },
            Regime::RightLongAbort => per_solution(ErrorKind::CheckStep, 0.0),
            Regime::VerifiedRetry => ErrorModel {
                p_verbose: 0.0,
                kind: ErrorKind::Verified,
                rate_concise: 0.2,
                rate_verbose: 0.2,
            },
            Regime::VerifiedAbort => per_solution(ErrorKind::Verified, 0.0),
        }
    }

    /// What the environment does after a failed step, for the regimes whose steps it checks
    /// ([`checker_verdict`]); `None` for the others.
    pub fn on_failed_step(self) -> Option<OnFailedStep> {
        match self {
            Regime::VerifiedRetry => Some(OnFailedStep::Retry),
            Regime::VerifiedAbort => Some(OnFailedStep::End),
            _ => None,
        }
    }
}

/// What follows the environment's `no` in a verified regime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailedStep {
    /// The policy does the step again.
    Retry,
    /// The environment ends the response (no answer).
    End,
}

/// The environment's verdict on a step of a verified regime that continues the right sum.
pub const VERDICT_OK: &str = "ok";
/// The environment's verdict on a failed step.
pub const VERDICT_NO: &str = "no";

/// The checker of the verified regimes: `Some(true)` (`ok`) or `Some(false)` (`no`) when the
/// response so far ends with a step the checker has not judged yet, `None` otherwise.
///
/// A step is a word `a+b=c` followed by a space. Its verdict is `ok` iff it continues the
/// right sum: with `i` = 1 + the number of `ok` steps before it, `a` is the sum of the first
/// `i` terms, `b` is term `i` and `c = a + b`; a step after the last term is `no`. The verdict
/// reads only the problem's terms and the response, so the policy cannot make a wrong step
/// pass.
pub fn checker_verdict(terms: &[u32], response: &str) -> Option<bool> {
    let body = response.strip_suffix(' ')?;
    let words: Vec<&str> = body.split(' ').collect();
    let (last, before) = words.split_last()?;
    let (a, b, c) = parse_step(last)?;
    let done = before
        .windows(2)
        .filter(|w| w[1] == VERDICT_OK && parse_step(w[0]).is_some())
        .count();
    let i = done + 1;
    if i >= terms.len() {
        return Some(false);
    }
    let prefix: i64 = terms[..i].iter().map(|&t| i64::from(t)).sum();
    let term = i64::from(terms[i]);
    Some(a == prefix && b == term && c == prefix + term)
}

/// `a+b=c` as its three numbers (at most 18 digits each).
fn parse_step(word: &str) -> Option<(i64, i64, i64)> {
    let num = |x: &str| {
        if x.is_empty() || x.len() > 18 || !x.bytes().all(|d| d.is_ascii_digit()) {
            return None;
        }
        x.parse::<i64>().ok()
    };
    let (a, rest) = word.split_once('+')?;
    let (b, c) = rest.split_once('=')?;
    Some((num(a)?, num(b)?, num(c)?))
}

/// A solution of a verified regime as the environment's verdicts make it: each step
/// ` a+b=c ` is followed by `ok` or `no`; `slip(step)` is called for every attempt at a step
/// (0-based) and gives the amount its sum is off by (`None`: right; the sum is not written
/// below 0). After a `no` the step is done again ([`OnFailedStep::Retry`], at most
/// `max_attempts` attempts per step, after which the solution ends there without an answer) or
/// the solution ends ([`OnFailedStep::End`]). Returns the text (the verdicts included) and the
/// answer it states.
///
/// ```text
/// no slip:                  " 7+9=16 ok 16+5=21 ok Answer: 21"
/// Retry, step 1 off by -1:  " 7+9=16 ok 16+5=20 no 16+5=21 ok Answer: 21"
/// End, step 1 off by -1:    " 7+9=16 ok 16+5=20 no"
/// ```
pub fn write_verified_solution(
    terms: &[u32],
    on_fail: OnFailedStep,
    max_attempts: usize,
    mut slip: impl FnMut(usize) -> Option<i64>,
) -> (String, Option<i64>) {
    let mut out = String::new();
    let mut acc = i64::from(terms[0]);
    for (step, &t) in terms[1..].iter().enumerate() {
        let right = acc + i64::from(t);
        let mut passed = false;
        for _ in 0..max_attempts.max(1) {
            let next = slip(step).map_or(right, |d| (right + d).max(0));
            passed = next == right;
            let verdict = if passed { VERDICT_OK } else { VERDICT_NO };
            out.push_str(&format!(" {acc}+{t}={next} {verdict}"));
            if passed || on_fail == OnFailedStep::End {
                break;
            }
        }
        if !passed {
            return (out, None);
        }
        acc = right;
    }
    out.push_str(&format!(" Answer: {acc}"));
    (out, Some(acc))
}

impl FromStr for Regime {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Regime::ALL
            .into_iter()
            .find(|r| r.as_str() == s.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Regime::ALL.iter().map(|r| r.as_str()).collect();
                format!(
                    "unknown testbed regime {s:?}; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// How a warm-start solution goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// At each step, with the style's rate, the running sum is written off by 1 or 2 and the
    /// solution carries on from it (at most one slip per solution).
    StepSlip,
    /// With the style's rate per solution, one running sum (uniform step) is off by 1 or 2.
    Slip,
    /// With the style's rate per solution, the term of a uniform step is added again `r` more
    /// times, `r` = 1 + Geometric(1/2), at most [`MAX_REPEATS`].
    Repeat,
    /// With the style's rate per solution, the solution answers after a uniform number of
    /// steps `s` < steps (the partial sum of the first `s + 1` terms).
    StopEarly,
    /// The solution is checked ([`write_rechecked_solution`]); each pass, independently with
    /// the style's rate, has one running sum off by 1 or 2 (uniform step), carried to the end
    /// of the pass.
    Recheck,
    /// Every step is checked ([`write_step_checked_solution`]); with the style's rate per
    /// solution, one running sum (uniform step) is off by 1 or 2, its check fails and the
    /// solution stops there.
    CheckStep,
    /// The environment checks every step ([`write_verified_solution`]): with
    /// [`OnFailedStep::Retry`], each attempt at a step is off by 1 or 2 with the style's rate
    /// (at most [`MAX_ATTEMPTS`] attempts); with [`OnFailedStep::End`], with the style's rate
    /// per solution one step (uniform) is.
    Verified,
}

/// The most attempts at one step in a warm-start solution of [`Regime::VerifiedRetry`].
pub const MAX_ATTEMPTS: usize = 4;

/// The most extra steps of one [`ErrorKind::Repeat`].
pub const MAX_REPEATS: usize = 6;

/// Style and error probabilities of warm-start solutions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorModel {
    /// Probability that a solution is written in the verbose style.
    pub p_verbose: f64,
    /// The kind of error.
    pub kind: ErrorKind,
    /// Error rate of the concise style (per step for [`ErrorKind::StepSlip`], else per solution).
    pub rate_concise: f64,
    /// Error rate of the verbose style (same unit).
    pub rate_verbose: f64,
}

/// One error in a written solution (see [`write_solution`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mistake {
    /// The running sum after step `step` (0-based) is off by `delta`; the solution carries on.
    Slip { step: usize, delta: i64 },
    /// Step `step` is written, then its term is added again `times` more times.
    Repeat { step: usize, times: usize },
    /// The solution answers right after writing `steps` steps (fewer than the problem has).
    StopAfter { steps: usize },
}

/// Settings of the testbed task.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestbedConfig {
    /// The length regime.
    pub regime: Regime,
    /// Difficulty: the largest number of terms (at least 2); problems have
    /// `min_terms..=difficulty` terms.
    pub difficulty: usize,
    /// The smallest number of terms (2..=difficulty).
    #[serde(default = "default_min_terms")]
    pub min_terms: usize,
    /// Terms are drawn from 1..=max_operand.
    pub max_operand: u32,
    /// A term sequence is held out iff `fnv1a(terms) % heldout_modulus == 0` (2..=1000).
    #[serde(default = "default_heldout_modulus")]
    pub heldout_modulus: u64,
    /// Seed of the problem streams and of the warm-start solutions.
    pub seed: u64,
}

fn default_min_terms() -> usize {
    2
}

fn default_heldout_modulus() -> u64 {
    HELDOUT_MODULUS
}

impl Default for TestbedConfig {
    /// `length-variation`, 2..=8 single-digit terms, 1 in 8 held out, seed 0.
    fn default() -> Self {
        Self {
            regime: Regime::LengthVariation,
            difficulty: 8,
            min_terms: 2,
            max_operand: 9,
            heldout_modulus: HELDOUT_MODULUS,
            seed: 0,
        }
    }
}

impl TestbedConfig {
    /// Checks the knobs: 2 <= min_terms <= difficulty, 1 <= max_operand <= 999,
    /// 2 <= heldout_modulus <= 1000.
    pub fn validate(&self) -> Result<(), String> {
        if self.difficulty < 2 {
            return Err(format!(
                "testbed difficulty must be at least 2 terms, got {}",
                self.difficulty
            ));
        }
        if !(2..=self.difficulty).contains(&self.min_terms) {
            return Err(format!(
                "testbed min_terms must be in 2..={} (the difficulty), got {}",
                self.difficulty, self.min_terms
            ));
        }
        if !(1..=999).contains(&self.max_operand) {
            return Err(format!(
                "testbed max_operand must be in 1..=999, got {}",
                self.max_operand
            ));
        }
        if !(2..=1000).contains(&self.heldout_modulus) {
            return Err(format!(
                "testbed heldout_modulus must be in 2..=1000, got {}",
                self.heldout_modulus
            ));
        }
        Ok(())
    }

    /// How many distinct term sequences the problem space has: `sum over n of max_operand^n`
    /// (saturating).
    pub fn space_size(&self) -> u64 {
        (self.min_terms.max(2)..=self.difficulty.max(2))
            .map(|n| u64::from(self.max_operand.max(1)).saturating_pow(n as u32))
            .fold(0u64, u64::saturating_add)
    }
}

/// Which side of the train / held-out split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Problems for training (warm start and RL).
    Train,
    /// Problems for evaluation only.
    Heldout,
}

/// FNV-1a over the terms (platform-independent).
fn fnv1a(terms: &[u32]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for t in terms {
        for b in t.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Which split a term sequence belongs to, with 1 in `modulus` held out.
pub fn split_of(terms: &[u32], modulus: u64) -> Split {
    if fnv1a(terms).is_multiple_of(modulus.max(2)) {
        Split::Heldout
    } else {
        Split::Train
    }
}

/// The prompt text of a term sequence: `Add: 7 9 5 =`.
pub fn prompt_text(terms: &[u32]) -> String {
    let list: Vec<String> = terms.iter().map(u32::to_string).collect();
    format!("Add: {} =", list.join(" "))
}

/// The terms of a testbed prompt (inverse of [`prompt_text`]).
pub fn parse_prompt(prompt: &str) -> Option<Vec<u32>> {
    let body = prompt
        .trim()
        .strip_prefix("Add:")?
        .trim()
        .strip_suffix('=')?;
    let terms: Option<Vec<u32>> = body.split_whitespace().map(|t| t.parse().ok()).collect();
    terms.filter(|t| t.len() >= 2)
}

/// The testbed's one name, wherever a config or a problem names it: `model.path`,
/// `data.train_files` and `eval.datasets` of a run, `rlvr eval --data`, and the `data_source`
/// of its problems (which routes them to [`TestbedVerifier`] under `reward.kind = "auto"`).
pub const NAME: &str = "testbed";

/// A problem from its terms.
pub fn problem(terms: &[u32]) -> Problem {
    let ids: Vec<String> = terms.iter().map(u32::to_string).collect();
    Problem {
        id: format!("{NAME}-{}", ids.join("-")),
        prompt: Prompt::Text(prompt_text(terms)),
        answer: terms.iter().map(|&t| u64::from(t)).sum::<u64>().to_string(),
        solution: None,
        data_source: NAME.into(),
    }
}

/// Draws one term sequence of `split` (rejection sampling on the split hash).
pub fn sample_terms(cfg: &TestbedConfig, split: Split, rng: &mut StdRng) -> Vec<u32> {
    loop {
        let n =
            rng.random_range(cfg.min_terms.clamp(2, cfg.difficulty.max(2))..=cfg.difficulty.max(2));
        let terms: Vec<u32> = (0..n)
            .map(|_| rng.random_range(1..=cfg.max_operand.max(1)))
            .collect();
        if split_of(&terms, cfg.heldout_modulus) == split {
            return terms;
        }
    }
}

/// The seed offset of a split's problem stream (train and held-out draw from different streams).
fn stream_seed(split: Split) -> u64 {
    match split {
        Split::Train => 0x7261_696e,
        Split::Heldout => 0x6865_6c64,
    }
}

/// `count` problems of `split`, deterministic in `(cfg.seed, split, count)`. Train and held-out
/// streams use different seeds, and never share a problem.
pub fn problems(cfg: &TestbedConfig, split: Split, count: usize) -> Vec<Problem> {
    let stream = stream_seed(split);
    let mut rng = StdRng::seed_from_u64(cfg.seed ^ stream);
    (0..count)
        .map(|_| problem(&sample_terms(cfg, split, &mut rng)))
        .collect()
}

/// `count` distinct problems of `split` (the held-out evaluation set), deterministic in
/// `(cfg.seed, split)`: the split's term sequences in a seeded random order, each once; when the
/// split has fewer than `count`, the list repeats from its start (each problem then counts
/// equally often, up to one). Also returns how many are distinct.
///
/// Spaces of up to [`ENUMERATE_LIMIT`] sequences are enumerated; larger ones are drawn by
/// rejection of repeats (they have far more distinct problems than any evaluation needs).
pub fn distinct_problems(cfg: &TestbedConfig, split: Split, count: usize) -> (Vec<Problem>, usize) {
    let stream = stream_seed(split);
    let mut rng = StdRng::seed_from_u64(cfg.seed ^ stream ^ 0x6469_7374);
    let mut seqs: Vec<Vec<u32>> = Vec::new();
    if cfg.space_size() <= ENUMERATE_LIMIT {
        for n in cfg.min_terms.max(2)..=cfg.difficulty.max(2) {
            let mut terms = vec![1u32; n];
            'odometer: loop {
                if split_of(&terms, cfg.heldout_modulus) == split {
                    seqs.push(terms.clone());
                }
                // the next sequence over 1..=max_operand, last term fastest
                for i in (0..n).rev() {
                    if terms[i] < cfg.max_operand.max(1) {
                        terms[i] += 1;
                        continue 'odometer;
                    }
                    terms[i] = 1;
                }
                break;
            }
        }
        // Fisher-Yates with the seeded stream
        for i in (1..seqs.len()).rev() {
            let j = rng.random_range(0..=i);
            seqs.swap(i, j);
        }
        seqs.truncate(count);
    } else {
        let mut seen = HashSet::new();
        while seqs.len() < count {
            let terms = sample_terms(cfg, split, &mut rng);
            if seen.insert(terms.clone()) {
                seqs.push(terms);
            }
        }
    }
    let distinct = seqs.len();
    let out = (0..count)
        .filter_map(|i| seqs.get(i % distinct.max(1)))
        .map(|t| problem(t))
        .collect();
    (out, distinct)
}

/// The largest problem space [`distinct_problems`] enumerates.
pub const ENUMERATE_LIMIT: u64 = 2_000_000;

/// The two solution styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// ` 7+9=16 16+5=21 Answer: 21`.
    Concise,
    /// ` Step by step. 7+9=16, so 16. 16+5=21, so 21. Answer: 21`.
    Verbose,
}

/// A worked solution written in `style`, with at most one `mistake`. Returns the text and the
/// final answer it states.
///
/// ```text
/// none:                      " 7+9=16 16+5=21 Answer: 21"
/// Slip { step: 0, delta: 1 }: " 7+9=17 17+5=22 Answer: 22"
/// Repeat { step: 0, times: 1 }: " 7+9=16 16+9=25 25+5=30 Answer: 30"
/// StopAfter { steps: 1 }:     " 7+9=16 Answer: 16"
/// ```
pub fn write_solution(terms: &[u32], style: Style, mistake: Option<Mistake>) -> (String, i64) {
    let mut out = String::new();
    if style == Style::Verbose {
        out.push_str(" Step by step.");
    }
    let write_step = |out: &mut String, acc: i64, t: u32, next: i64| match style {
        Style::Concise => out.push_str(&format!(" {acc}+{t}={next}")),
        Style::Verbose => out.push_str(&format!(" {acc}+{t}={next}, so {next}.")),
    };
    let mut acc = i64::from(terms[0]);
    for (step, &t) in terms[1..].iter().enumerate() {
        if mistake == Some(Mistake::StopAfter { steps: step }) {
            break;
        }
        let mut next = acc + i64::from(t);
        if let Some(Mistake::Slip { step: s, delta }) = mistake {
            if s == step {
                next = (next + delta).max(0);
            }
        }
        write_step(&mut out, acc, t, next);
        acc = next;
        if let Some(Mistake::Repeat { step: s, times }) = mistake {
            if s == step {
                for _ in 0..times {
                    let again = acc + i64::from(t);
                    write_step(&mut out, acc, t, again);
                    acc = again;
                }
            }
        }
    }
    out.push_str(&format!(" Answer: {acc}"));
    (out, acc)
}

/// The mistake (if any) of one warm-start solution of `steps` steps in `style`, drawn from
/// `model`.
pub fn draw_mistake(
    model: &ErrorModel,
    style: Style,
    steps: usize,
    rng: &mut StdRng,
) -> Option<Mistake> {
    let rate = match style {
        Style::Concise => model.rate_concise,
        Style::Verbose => model.rate_verbose,
    };
    let slip = |rng: &mut StdRng| {
        let d = rng.random_range(1..=2i64);
        if rng.random_bool(0.5) {
            d
        } else {
            -d
        }
    };
    if model.kind == ErrorKind::StepSlip {
        let step = (0..steps).find(|_| rng.random_bool(rate))?;
        let delta = slip(rng);
        return Some(Mistake::Slip { step, delta });
    }
    if steps == 0 || !rng.random_bool(rate) {
        return None;
    }
    let step = rng.random_range(0..steps);
    Some(match model.kind {
        // (for `Recheck`, the slip of one pass)
        ErrorKind::StepSlip
        | ErrorKind::Slip
        | ErrorKind::Recheck
        | ErrorKind::CheckStep
        | ErrorKind::Verified => Mistake::Slip {
            step,
            delta: slip(rng),
        },
        ErrorKind::Repeat => {
            let mut times = 1;
            while times < MAX_REPEATS && rng.random_bool(0.5) {
                times += 1;
            }
            Mistake::Repeat { step, times }
        }
        ErrorKind::StopEarly => Mistake::StopAfter { steps: step },
    })
}

/// The most passes of a checked solution ([`write_rechecked_solution`]).
pub const RECHECK_PASSES: usize = 3;

/// A checked solution: pass 0 adds the terms in order, pass 1 (` check`) adds them in reverse
/// order; when the two sums agree the solution answers, otherwise pass 2 (` check`, in order
/// again) is made and its sum is the answer. `slips[p] = Some((step, delta))` writes the
/// running sum after step `step` (0-based) of pass `p` off by `delta` (not below 0), carried
/// to the end of that pass. Returns the text and the answer it states.
///
/// ```text
/// no slip:            " 7+9=16 16+5=21 check 5+9=14 14+7=21 Answer: 21"
/// pass 0, (0, +1):    " 7+9=17 17+5=22 check 5+9=14 14+7=21 check 7+9=16 16+5=21 Answer: 21"
/// pass 1, (1, -1) and
/// pass 2, (0, +2):    " 7+9=16 16+5=21 check 5+9=14 14+7=20 check 7+9=18 18+5=23 Answer: 23"
/// ```
///
/// A wrong answer needs two slipped passes, one of them the last pass, so it is three passes
/// long, unless passes 0 and 1 slip to the same wrong sum.
pub fn write_rechecked_solution(
    terms: &[u32],
    slips: [Option<(usize, i64)>; RECHECK_PASSES],
) -> (String, i64) {
    let mut out = String::new();
    let mut sums = Vec::with_capacity(RECHECK_PASSES);
    for (pass, slip) in slips.iter().enumerate() {
        if pass == 2 && sums[0] == sums[1] {
            break;
        }
        if pass > 0 {
            out.push_str(" check");
        }
        let order: Vec<u32> = if pass % 2 == 0 {
            terms.to_vec()
        } else {
            terms.iter().rev().copied().collect()
        };
        let mut acc = i64::from(order[0]);
        for (step, &t) in order[1..].iter().enumerate() {
            let mut next = acc + i64::from(t);
            if let Some((s, delta)) = *slip {
                if s == step {
                    next = (next + delta).max(0);
                }
            }
            out.push_str(&format!(" {acc}+{t}={next}"));
            acc = next;
        }
        sums.push(acc);
    }
    let answer = *sums.last().expect("at least two passes");
    out.push_str(&format!(" Answer: {answer}"));
    (out, answer)
}

/// A solution whose every step is checked by subtracting its term again: the check gives back
/// the previous running sum, or, after a slipped step (`slip = Some((step, delta))`, the sum
/// written off by `delta`, not below 0), it does not, and the solution stops there without an
/// answer. Returns the text and the answer it states (`None` when it stopped).
///
/// ```text
/// no slip:  " 7+9=16 16-9=7 16+5=21 21-5=16 Answer: 21"
/// (1, -1):  " 7+9=16 16-9=7 16+5=20 20-5=15 stop"
/// ```
pub fn write_step_checked_solution(
    terms: &[u32],
    slip: Option<(usize, i64)>,
) -> (String, Option<i64>) {
    let mut out = String::new();
    let mut acc = i64::from(terms[0]);
    for (step, &t) in terms[1..].iter().enumerate() {
        let mut next = acc + i64::from(t);
        if let Some((s, delta)) = slip {
            if s == step {
                next = (next + delta).max(0);
            }
        }
        let back = next - i64::from(t);
        out.push_str(&format!(" {acc}+{t}={next} {next}-{t}={back}"));
        if back != acc {
            out.push_str(" stop");
            return (out, None);
        }
        acc = next;
    }
    out.push_str(&format!(" Answer: {acc}"));
    (out, Some(acc))
}

/// One warm-start solution for `terms`, drawn from the regime's [`ErrorModel`]: the style,
/// then the mistake (for [`ErrorKind::Recheck`], a slip or none for each pass, independently).
/// Returns the text (without EOS) and whether it is correct.
pub fn worked_solution(cfg: &TestbedConfig, terms: &[u32], rng: &mut StdRng) -> (String, bool) {
    let model = cfg.regime.error_model();
    let truth: i64 = terms.iter().map(|&t| i64::from(t)).sum();
    // a checked solution's slip in one pass (concise style only)
    let draw_slip =
        |rng: &mut StdRng| match draw_mistake(&model, Style::Concise, terms.len() - 1, rng) {
            Some(Mistake::Slip { step, delta }) => Some((step, delta)),
            _ => None,
        };
    if model.kind == ErrorKind::Recheck {
        let slips: [Option<(usize, i64)>; RECHECK_PASSES] = std::array::from_fn(|_| draw_slip(rng));
        let (text, answer) = write_rechecked_solution(terms, slips);
        return (text, answer == truth);
    }
    if model.kind == ErrorKind::CheckStep {
        let (text, answer) = write_step_checked_solution(terms, draw_slip(rng));
        return (text, answer == Some(truth));
    }
    if let Some(on_fail) = cfg.regime.on_failed_step() {
        let (text, answer) = match on_fail {
            OnFailedStep::Retry => {
                let rate = model.rate_concise;
                write_verified_solution(terms, on_fail, MAX_ATTEMPTS, |_| {
                    if !rng.random_bool(rate) {
                        return None;
                    }
                    let d = rng.random_range(1..=2i64);
                    Some(if rng.random_bool(0.5) { d } else { -d })
                })
            }
            OnFailedStep::End => {
                let slip = draw_slip(rng);
                write_verified_solution(terms, on_fail, 1, |step| {
                    slip.and_then(|(s, d)| (s == step).then_some(d))
                })
            }
        };
        return (text, answer == Some(truth));
    }
    let style = if rng.random_bool(model.p_verbose) {
        Style::Verbose
    } else {
        Style::Concise
    };
    let mistake = draw_mistake(&model, style, terms.len() - 1, rng);
    let (text, answer) = write_solution(terms, style, mistake);
    (text, answer == truth)
}

/// The answer a response states: the integer after the last `Answer:` (None if there is none).
pub fn extract_answer(response: &str) -> Option<i64> {
    let at = response.rfind("Answer:")?;
    let rest = response[at + "Answer:".len()..].trim_start();
    let end = rest
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(rest.len(), |(i, _)| i);
    let digits = &rest[..end];
    if digits.len() > 18 {
        return None; // longer than any testbed answer; avoid overflow
    }
    digits.parse().ok()
}

/// The testbed's verifier: reward 1 iff the stated answer equals the sum of the terms.
#[derive(Debug, Clone, Copy, Default)]
pub struct TestbedVerifier;

impl Verifier for TestbedVerifier {
    fn score(&self, response: &str, problem: &Problem) -> Score {
        let Ok(gold) = problem.answer.trim().parse::<i64>() else {
            return Score::binary(
                false,
                None,
                format!("reference {:?} is not an integer", problem.answer),
            );
        };
        match extract_answer(response) {
            None => Score::binary(false, None, "no \"Answer: <integer>\" found"),
            Some(a) if a == gold => Score::binary(true, Some(a.to_string()), "exact integer match"),
            Some(a) => Score::binary(false, Some(a.to_string()), format!("{a} != {gold}")),
        }
    }
}

/// Trains the testbed's BPE tokenizer on `texts` with the `tokenizers` crate: at most
/// `vocab_size` tokens, digits and spaces kept as single-character tokens (words may merge),
/// `<|endoftext|>` (id 0) and `<|pad|>` (id 1) as special tokens, a fusing decoder so that
/// decode(encode(s)) = s.
pub fn train_tokenizer<I, S>(texts: I, vocab_size: usize) -> Result<Tokenizer, String>
where
    I: Iterator<Item = S> + Send,
    S: AsRef<str> + Send,
{
    let specials = vec![AddedToken::from(EOS, true), AddedToken::from(PAD, true)];
    // Every printable ASCII character is in the alphabet, so no input character is unknown.
    let alphabet: HashSet<char> = (' '..='~').collect();
    let mut trainer = TrainerWrapper::BpeTrainer(
        BpeTrainerBuilder::new()
            .vocab_size(vocab_size)
            .min_frequency(2)
            .show_progress(false)
            .special_tokens(specials.clone())
            .initial_alphabet(alphabet)
            .build(),
    );
    let mut tok = Tokenizer::new(BPE::default());
    let split = SplitPre::new(
        SplitPattern::Regex(r"[0-9]|\s|[A-Za-z]+|[^0-9A-Za-z\s]".into()),
        SplitDelimiterBehavior::Isolated,
        false,
    )
    .map_err(|e| format!("tokenizer pre-tokenizer: {e}"))?;
    tok.with_pre_tokenizer(Some(split));
    tok.with_decoder(Some(tokenizers::decoders::fuse::Fuse::new()));
    tok.train(&mut trainer, texts)
        .map_err(|e| format!("training the testbed tokenizer: {e}"))?;
    tok.add_special_tokens(specials)
        .map_err(|e| format!("adding special tokens: {e}"))?;
    Ok(tok)
}

/// The testbed tokenizer for `cfg`: trained on prompts and solutions of both styles (concise and
/// checked solutions for the checked regimes), deterministic in `cfg.seed`, 128 tokens at most.
pub fn testbed_tokenizer(cfg: &TestbedConfig) -> Result<Tokenizer, String> {
    let mut rng = StdRng::seed_from_u64(cfg.seed ^ 0x746f_6b65);
    let mut texts = Vec::new();
    let kind = cfg.regime.error_model().kind;
    for i in 0..2000 {
        let terms = sample_terms(cfg, Split::Train, &mut rng);
        let solution = if i % 2 == 0 {
            write_solution(&terms, Style::Concise, None).0
        } else if kind == ErrorKind::Recheck {
            write_rechecked_solution(&terms, [None; RECHECK_PASSES]).0
        } else if kind == ErrorKind::CheckStep {
            // the stop word too
            write_step_checked_solution(&terms, Some((i % (terms.len() - 1), 1))).0
        } else if kind == ErrorKind::Verified {
            // both verdicts: one step slips at its first attempt
            let slipped = i % (terms.len() - 1);
            let mut first = true;
            write_verified_solution(&terms, OnFailedStep::Retry, 2, |step| {
                let slip = step == slipped && first;
                first &= !slip;
                slip.then_some(1)
            })
            .0
        } else {
            write_solution(&terms, Style::Verbose, None).0
        };
        texts.push(format!("{}{solution}", prompt_text(&terms)));
    }
    train_tokenizer(texts.into_iter(), 128)
}

/// Length statistics of the warm-start solution distribution, measured by sampling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolutionStats {
    /// Fraction of correct solutions.
    pub accuracy: f64,
    /// Coefficient of variation of solution lengths over all samples.
    pub length_cv: f64,
    /// Mean over groups with both right and wrong solutions of `L+ - L-` (right minus wrong).
    pub pos_neg_gap: f64,
    /// Mean over those groups of `L- / L+` (wrong over right).
    pub neg_pos_ratio: f64,
    /// Groups with both right and wrong solutions.
    pub mixed_groups: usize,
    /// Mean solution length over all samples.
    pub mean_length: f64,
}

/// Samples `g` warm-start solutions for each of `prompts` training problems and measures the
/// length CV and the within-group pos-neg gap; `length` measures a solution (characters, or
/// tokens with a tokenizer).
pub fn solution_stats(
    cfg: &TestbedConfig,
    prompts: usize,
    g: usize,
    length: &dyn Fn(&str) -> usize,
) -> SolutionStats {
    let mut rng = StdRng::seed_from_u64(cfg.seed ^ 0x7374_6174);
    let (mut all, mut right_count) = (Vec::new(), 0usize);
    let (mut gaps, mut ratios) = (Vec::new(), Vec::new());
    for _ in 0..prompts {
        let terms = sample_terms(cfg, Split::Train, &mut rng);
        let (mut pos, mut neg) = (Vec::new(), Vec::new());
        for _ in 0..g {
            let (text, ok) = worked_solution(cfg, &terms, &mut rng);
            let l = length(&text) as f64;
            all.push(l);
            if ok {
                right_count += 1;
                pos.push(l);
            } else {
                neg.push(l);
            }
        }
        if !pos.is_empty() && !neg.is_empty() {
            let (lp, ln) = (mean(&pos), mean(&neg));
            gaps.push(lp - ln);
            ratios.push(ln / lp);
        }
    }
    let m = mean(&all);
    let sd = (all.iter().map(|l| (l - m) * (l - m)).sum::<f64>() / all.len().max(1) as f64).sqrt();
    SolutionStats {
        accuracy: right_count as f64 / all.len().max(1) as f64,
        length_cv: if m > 0.0 { sd / m } else { 0.0 },
        pos_neg_gap: mean(&gaps),
        neg_pos_ratio: mean(&ratios),
        mixed_groups: gaps.len(),
        mean_length: m,
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solutions_by_hand() {
        assert_eq!(
            write_solution(&[7, 9, 5], Style::Concise, None),
            (" 7+9=16 16+5=21 Answer: 21".into(), 21)
        );
        assert_eq!(
            write_solution(&[7, 9, 5], Style::Verbose, None).0,
            " Step by step. 7+9=16, so 16. 16+5=21, so 21. Answer: 21"
        );
        // a slip of +1 at the first step carries on
        assert_eq!(
            write_solution(
                &[7, 9, 5],
                Style::Concise,
                Some(Mistake::Slip { step: 0, delta: 1 })
            ),
            (" 7+9=17 17+5=22 Answer: 22".into(), 22)
        );
        // a repeated step adds its term again and is longer
        assert_eq!(
            write_solution(
                &[7, 9, 5],
                Style::Concise,
                Some(Mistake::Repeat { step: 0, times: 2 })
            ),
            (" 7+9=16 16+9=25 25+9=34 34+5=39 Answer: 39".into(), 39)
        );
        // stopping early answers a partial sum and is shorter
        assert_eq!(
            write_solution(
                &[7, 9, 5],
                Style::Concise,
                Some(Mistake::StopAfter { steps: 1 })
            ),
            (" 7+9=16 Answer: 16".into(), 16)
        );
        assert_eq!(
            write_solution(
                &[7, 9, 5],
                Style::Verbose,
                Some(Mistake::StopAfter { steps: 0 })
            ),
            (" Step by step. Answer: 7".into(), 7)
        );
        assert_eq!(prompt_text(&[7, 9, 5]), "Add: 7 9 5 =");
        assert_eq!(parse_prompt("Add: 7 9 5 ="), Some(vec![7, 9, 5]));
        assert_eq!(parse_prompt("Add: 7 ="), None);
    }

    #[test]
    fn verifier_reads_the_last_answer() {
        let p = problem(&[7, 9, 5]);
        assert_eq!(p.answer, "21");
        let v = TestbedVerifier;
        assert!(v.score(" 7+9=16 16+5=21 Answer: 21", &p).correct);
        assert!(
            v.score(" Answer: 20 ... Answer: 21<|endoftext|>", &p)
                .correct
        );
        let s = v.score(" 7+9=17 17+5=22 Answer: 22", &p);
        assert!(!s.correct && s.extracted.as_deref() == Some("22"));
        assert!(!v.score(" 7+9=16 16+5=21", &p).correct);
        assert!(!v.score(" Answer: 99999999999999999999999999", &p).correct);
        assert_eq!(v.score(" Answer: 21", &p).reward, 1.0);
    }

    #[test]
    fn splits_are_disjoint_and_deterministic() {
        let cfg = TestbedConfig::default();
        let train = problems(&cfg, Split::Train, 3000);
        let held = problems(&cfg, Split::Heldout, 500);
        let train_ids: HashSet<&str> = train.iter().map(|p| p.id.as_str()).collect();
        assert!(held.iter().all(|p| !train_ids.contains(p.id.as_str())));
        assert_eq!(problems(&cfg, Split::Heldout, 500), held);
        let lens: HashSet<usize> = held
            .iter()
            .map(|p| parse_prompt(p.prompt.text()).unwrap().len())
            .collect();
        assert_eq!(lens, (2..=8).collect::<HashSet<_>>(), "every size appears");
    }

    #[test]
    fn tokenizer_round_trips_and_keeps_digits_single() {
        let cfg = TestbedConfig::default();
        let tok = testbed_tokenizer(&cfg).unwrap();
        assert!(tok.get_vocab_size(true) <= 128);
        assert_eq!(tok.token_to_id(EOS), Some(0));
        assert_eq!(tok.token_to_id(PAD), Some(1));
        let text = "Add: 17 9 5 = Step by step. 17+9=26, so 26. Answer: 31";
        let enc = tok.encode(text, false).unwrap();
        assert_eq!(tok.decode(enc.get_ids(), false).unwrap(), text);
        // digits are never merged
        for t in enc.get_tokens() {
            assert!(
                !(t.len() > 1 && t.chars().any(|c| c.is_ascii_digit())),
                "merged digit token {t:?}"
            );
        }
        // through tokenizer.json and back
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        tok.save(&path, false).unwrap();
        let back = Tokenizer::from_file(&path).unwrap();
        assert_eq!(back.encode(text, false).unwrap().get_ids(), enc.get_ids());
        // special token decodes away with skip_special_tokens
        let mut ids = enc.get_ids().to_vec();
        ids.push(0);
        assert_eq!(back.decode(&ids, true).unwrap(), text);
    }

    #[test]
    fn regimes_differ_as_claimed() {
        let tok = testbed_tokenizer(&TestbedConfig::default()).unwrap();
        let tokens = |s: &str| tok.encode(s, false).unwrap().get_ids().len();
        let lv = solution_stats(
            &TestbedConfig {
                regime: Regime::LengthVariation,
                ..Default::default()
            },
            400,
            8,
            &tokens,
        );
        let gap = solution_stats(
            &TestbedConfig {
                regime: Regime::PosNegGap,
                ..Default::default()
            },
            400,
            8,
            &tokens,
        );
        eprintln!("length-variation: {lv:?}\npos-neg-gap: {gap:?}");
        // (a) high length variation, small within-group gap
        assert!(lv.length_cv > 0.35, "{lv:?}");
        assert!((lv.neg_pos_ratio - 1.0).abs() < 0.1, "{lv:?}");
        // (b) wrong answers 1.5-2x longer than right ones for the same prompt
        assert!(
            gap.neg_pos_ratio > 1.4 && gap.neg_pos_ratio < 2.2,
            "{gap:?}"
        );
        assert!(gap.pos_neg_gap < -10.0, "{gap:?}");
        // reward off the ceiling and off the floor in both
        for s in [lv, gap] {
            assert!(s.accuracy > 0.5 && s.accuracy < 0.95, "{s:?}");
        }
    }

    /// The study's problem space: sums of exactly 4 single-digit terms, 1 in 4 held out.
    /// `solution_stats` of a study regime's warm-start data (2,000 problems x 8 solutions, in
    /// tokens of its tokenizer), and the token count of a text.
    fn token_stats(regime: Regime) -> (SolutionStats, impl Fn(&str) -> usize) {
        let cfg = study(regime);
        let tok = testbed_tokenizer(&cfg).unwrap();
        let tokens = move |s: &str| tok.encode(s, false).unwrap().get_ids().len();
        let s = solution_stats(&cfg, 2000, 8, &tokens);
        eprintln!("{} {s:?}", regime.as_str());
        (s, tokens)
    }

    fn study(regime: Regime) -> TestbedConfig {
        TestbedConfig {
            regime,
            difficulty: 4,
            min_terms: 4,
            heldout_modulus: 4,
            ..Default::default()
        }
    }

    #[test]
    fn study_regimes_tie_length_to_the_kind_of_error() {
        let tok = testbed_tokenizer(&study(Regime::Control)).unwrap();
        let tokens = |s: &str| tok.encode(s, false).unwrap().get_ids().len();
        let stats = |r| solution_stats(&study(r), 600, 8, &tokens);
        let (wl, rl, hv, ctl) = (
            stats(Regime::WrongLong),
            stats(Regime::RightLong),
            stats(Regime::HighVariation),
            stats(Regime::Control),
        );
        eprintln!("wrong-long {wl:?}\nright-long {rl:?}\nhigh-variation {hv:?}\ncontrol {ctl:?}");
        for s in [wl, rl, hv, ctl] {
            // 40% of solutions carry one mistake
            assert!((s.accuracy - 0.6).abs() < 0.03, "{s:?}");
            assert!(s.mixed_groups > 400, "{s:?}");
        }
        // wrong answers longer by at least a third of the mean length
        assert!(wl.pos_neg_gap / wl.mean_length < -0.33, "{wl:?}");
        // right answers longer by at least a quarter
        assert!(rl.pos_neg_gap / rl.mean_length > 0.25, "{rl:?}");
        // no gap (within 2% of the mean length), high against low variation
        for s in [hv, ctl] {
            assert!((s.pos_neg_gap / s.mean_length).abs() < 0.02, "{s:?}");
        }
        assert!(
            hv.length_cv > 0.15 && ctl.length_cv < 0.06,
            "{hv:?} {ctl:?}"
        );
    }

    #[test]
    fn rechecked_solutions_by_hand() {
        let none = [None; RECHECK_PASSES];
        assert_eq!(
            write_rechecked_solution(&[7, 9, 5], none),
            (" 7+9=16 16+5=21 check 5+9=14 14+7=21 Answer: 21".into(), 21)
        );
        // a slipped first pass disagrees with the check: a third pass decides
        assert_eq!(
            write_rechecked_solution(&[7, 9, 5], [Some((0, 1)), None, None]),
            (
                " 7+9=17 17+5=22 check 5+9=14 14+7=21 check 7+9=16 16+5=21 Answer: 21".into(),
                21
            )
        );
        // the check slips and so does the third pass: wrong, and three passes long
        assert_eq!(
            write_rechecked_solution(&[7, 9, 5], [None, Some((1, -1)), Some((0, 2))]),
            (
                " 7+9=16 16+5=21 check 5+9=14 14+7=20 check 7+9=18 18+5=23 Answer: 23".into(),
                23
            )
        );
        // the first two passes slip to the same sum: they agree, wrong after two passes
        assert_eq!(
            write_rechecked_solution(&[7, 9, 5], [Some((1, 2)), Some((0, 2)), Some((0, 1))]),
            (" 7+9=16 16+5=23 check 5+9=16 16+7=23 Answer: 23".into(), 23)
        );
        // a slip never goes below 0
        assert_eq!(
            write_rechecked_solution(&[1, 1], [Some((0, -2)), None, None]).0,
            " 1+1=0 check 1+1=2 check 1+1=2 Answer: 2"
        );
    }

    /// The checked regime's warm-start data: with a slip in each pass at rate q = 0.3, a
    /// solution is right when both first passes are clean (0.49) or they disagree (everything
    /// but both clean and both slipped by the same delta, 0.09 / 4) and the third is clean:
    /// 0.49 + (1 - 0.49 - 0.0225) * 0.7 = 0.831. Wrong answers are the longer ones, and every
    /// checked solution fits the study's 96-token responses.
    #[test]
    fn the_checked_regime_makes_wrong_answers_longer() {
        let (s, tokens) = token_stats(Regime::WrongLongRecheck);
        assert!((s.accuracy - 0.831).abs() < 0.015, "{s:?}");
        assert!(s.mixed_groups > 1000, "{s:?}");
        assert!(s.pos_neg_gap / s.mean_length < -0.15, "{s:?}");
        // "check" is one token, and the longest solution (three passes, two-digit sums) plus
        // eos fits in 96 tokens
        assert_eq!(tokens(" check"), 2);
        let longest = write_rechecked_solution(&[9, 9, 9, 9], [Some((0, 1)), None, Some((0, 1))]).0;
        assert!(tokens(&longest) < 96, "{} tokens and eos", tokens(&longest));
    }

    #[test]
    fn step_checked_solutions_by_hand() {
        assert_eq!(
            write_step_checked_solution(&[7, 9, 5], None),
            (" 7+9=16 16-9=7 16+5=21 21-5=16 Answer: 21".into(), Some(21))
        );
        assert_eq!(
            write_step_checked_solution(&[7, 9, 5], Some((1, -1))),
            (" 7+9=16 16-9=7 16+5=20 20-5=15 stop".into(), None)
        );
        // a slip below 0 is written as 0 and its check is negative
        assert_eq!(
            write_step_checked_solution(&[1, 1], Some((0, -2))).0,
            " 1+1=0 0-1=-1 stop"
        );
        // the verifier finds no answer in a stopped solution
        let p = problem(&[7, 9, 5]);
        let stopped = write_step_checked_solution(&[7, 9, 5], Some((0, 2))).0;
        assert_eq!(TestbedVerifier.score(&stopped, &p).reward, 0.0);
    }

    /// The step-checked regime's warm-start data: 40% of solutions slip once and stop at the
    /// slipped step (a uniform one of three), so right answers are the longer ones.
    #[test]
    fn the_step_checked_regime_makes_right_answers_longer() {
        let (s, tokens) = token_stats(Regime::RightLongAbort);
        assert!((s.accuracy - 0.6).abs() < 0.015, "{s:?}");
        assert!(s.mixed_groups > 1500, "{s:?}");
        assert!(s.pos_neg_gap / s.mean_length > 0.25, "{s:?}");
        assert_eq!(tokens(" stop"), 2);
    }

    #[test]
    fn verified_solutions_by_hand() {
        let none = |_| None;
        assert_eq!(
            write_verified_solution(&[7, 9, 5], OnFailedStep::Retry, 4, none),
            (" 7+9=16 ok 16+5=21 ok Answer: 21".into(), Some(21))
        );
        // step 1 slips at its first attempt only
        let mut calls = Vec::new();
        let first_of_step_1 = |step: usize| {
            calls.push(step);
            (step == 1 && calls.iter().filter(|&&s| s == 1).count() == 1).then_some(-1)
        };
        assert_eq!(
            write_verified_solution(&[7, 9, 5], OnFailedStep::Retry, 4, first_of_step_1),
            (
                " 7+9=16 ok 16+5=20 no 16+5=21 ok Answer: 21".into(),
                Some(21)
            )
        );
        assert_eq!(calls, [0, 1, 1]);
        assert_eq!(
            write_verified_solution(&[7, 9, 5], OnFailedStep::End, 4, |s| (s == 1).then_some(-1)),
            (" 7+9=16 ok 16+5=20 no".into(), None)
        );
        // out of attempts: the solution ends at the step, without an answer
        assert_eq!(
            write_verified_solution(&[7, 9], OnFailedStep::Retry, 2, |_| Some(2)),
            (" 7+9=18 no 7+9=18 no".into(), None)
        );
        // a slip below 0 is written as 0
        assert_eq!(
            write_verified_solution(&[1, 1], OnFailedStep::End, 1, |_| Some(-3)).0,
            " 1+1=0 no"
        );
    }

    /// The checker judges exactly the steps the writer judged, the same way, at the point
    /// where the environment inserts its verdict, and nothing else.
    #[test]
    fn the_checker_agrees_with_every_written_verdict() {
        for regime in [Regime::VerifiedRetry, Regime::VerifiedAbort] {
            let cfg = study(regime);
            let mut rng = StdRng::seed_from_u64(5);
            let mut judged = 0;
            for _ in 0..300 {
                let terms = sample_terms(&cfg, Split::Train, &mut rng);
                let (text, _) = worked_solution(&cfg, &terms, &mut rng);
                for (at, c) in text.char_indices() {
                    if c != ' ' {
                        continue;
                    }
                    let prefix = &text[..=at];
                    let rest = &text[at + 1..];
                    let expected = if rest.starts_with(VERDICT_OK) {
                        Some(true)
                    } else if rest.starts_with(VERDICT_NO) {
                        Some(false)
                    } else {
                        None
                    };
                    assert_eq!(
                        checker_verdict(&terms, prefix),
                        expected,
                        "{text:?} at {at}"
                    );
                    judged += usize::from(expected.is_some());
                }
            }
            assert!(judged > 600, "{regime:?}: {judged}");
        }
    }

    #[test]
    fn the_checker_refuses_what_does_not_continue_the_sum() {
        let t = [7, 9, 5, 3];
        assert_eq!(checker_verdict(&t, " 7+9=16 "), Some(true));
        assert_eq!(
            checker_verdict(&t, " 7+9=16"),
            None,
            "no space yet: the number may go on"
        );
        assert_eq!(checker_verdict(&t, " 7+9=16 ok "), None, "already judged");
        assert_eq!(checker_verdict(&t, ""), None);
        assert_eq!(checker_verdict(&t, " "), None);
        // right arithmetic, wrong chain: a skipped term, a wrong start, a reordered step
        assert_eq!(checker_verdict(&t, " 7+5=12 "), Some(false));
        assert_eq!(checker_verdict(&t, " 6+9=15 "), Some(false));
        assert_eq!(checker_verdict(&t, " 9+7=16 "), Some(false));
        assert_eq!(checker_verdict(&t, " 7+9=16 ok 16+5=21 "), Some(true));
        // an `ok` the policy writes after a wrong step does not advance the chain
        assert_eq!(checker_verdict(&t, " 7+9=17 no ok 16+5=21 "), Some(false));
        assert_eq!(
            checker_verdict(&t, " 7+9=16 ok 16+5=21 ok 21+3=24 ok 24+1=25 "),
            Some(false),
            "past the last term"
        );
        // hostile numbers: too long, signs, empty parts
        assert_eq!(
            checker_verdict(&t, &format!(" 7+9={} ", "1".repeat(40))),
            None
        );
        assert_eq!(checker_verdict(&t, " 7+-9=-2 "), None);
        assert_eq!(checker_verdict(&t, " +9= "), None);
        assert_eq!(checker_verdict(&t, " 7+9=16=16 "), None);
    }

    /// The verified regimes' warm-start data: with retries every solution ends right (a wrong
    /// answer needs the response-length limit, which only a live rollout has); with aborts 40%
    /// stop at their slip, so right answers are the longer ones. `ok` and `no` are one token.
    #[test]
    fn the_verified_regimes_warm_start_data() {
        let (s, tokens) = token_stats(Regime::VerifiedAbort);
        assert!((s.accuracy - 0.6).abs() < 0.015, "{s:?}");
        assert!(s.pos_neg_gap / s.mean_length > 0.25, "{s:?}");
        assert_eq!((tokens(VERDICT_OK), tokens(VERDICT_NO)), (1, 1));

        let (s, tokens) = token_stats(Regime::VerifiedRetry);
        assert!(s.accuracy > 0.99, "{s:?}");
        assert!(s.length_cv > 0.15, "retries vary the length: {s:?}");
        assert_eq!((tokens(VERDICT_OK), tokens(VERDICT_NO)), (1, 1));
    }

    #[test]
    fn distinct_heldout_problems_are_distinct_disjoint_and_cycle_when_few() {
        let cfg = study(Regime::Control);
        assert_eq!(cfg.space_size(), 6561);
        let (held, distinct) = distinct_problems(&cfg, Split::Heldout, 1000);
        assert_eq!((held.len(), distinct), (1000, 1000));
        let ids: HashSet<&str> = held.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids.len(), 1000, "no repeats");
        assert!(held.iter().all(|p| {
            let t = parse_prompt(p.prompt.text()).unwrap();
            t.len() == 4 && split_of(&t, 4) == Split::Heldout
        }));
        let train: HashSet<String> = problems(&cfg, Split::Train, 5000)
            .into_iter()
            .map(|p| p.id)
            .collect();
        assert!(held.iter().all(|p| !train.contains(&p.id)));
        assert_eq!(distinct_problems(&cfg, Split::Heldout, 1000).0, held);
        // all held-out sequences of the space: about a quarter of 6561
        let (all, n_all) = distinct_problems(&cfg, Split::Heldout, 10_000);
        assert!((1500..1800).contains(&n_all), "{n_all}");
        assert_eq!(all.len(), 10_000);
        assert_eq!(all[n_all].id, all[0].id, "cycles from the start");
        // a small space: 2..=3 terms, 1 in 8
        let small = TestbedConfig {
            difficulty: 3,
            ..Default::default()
        };
        let (p, n) = distinct_problems(&small, Split::Heldout, 400);
        assert!(n < 150 && p.len() == 400, "{n}");
        // a space too large to enumerate is drawn without repeats
        let big = TestbedConfig {
            max_operand: 999,
            ..Default::default()
        };
        let (p, n) = distinct_problems(&big, Split::Heldout, 300);
        assert_eq!(n, 300);
        assert_eq!(p.iter().map(|p| &p.id).collect::<HashSet<_>>().len(), 300);
    }

    #[test]
    fn config_validation() {
        assert!(TestbedConfig {
            difficulty: 1,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(TestbedConfig {
            max_operand: 0,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(TestbedConfig::default().validate().is_ok());
        assert_eq!("pos-neg-gap".parse::<Regime>().unwrap(), Regime::PosNegGap);
        assert!("gap".parse::<Regime>().is_err());
        for r in Regime::ALL {
            assert_eq!(r.as_str().parse::<Regime>().unwrap(), r);
        }
        assert!(TestbedConfig {
            min_terms: 9,
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .contains("min_terms"));
        assert!(TestbedConfig {
            heldout_modulus: 1,
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .contains("heldout_modulus"));
    }
}
