//! Math answer checking: extraction, a parse into an expression tree, comparison.
//!
//! [`verify`] = [`extract_answer`] on the response, then both the gold answer and the
//! extracted answer are parsed and compared; [`explain()`] gives the same verdict with both
//! trees and the deciding rule (`rlvr verify --explain`).
//!
//! The pipeline, one concept per module:
//! - [`special_tokens`]: chat and end-of-sequence markers left in decoded text;
//! - [`extract`]: the final answer of a response, in the order a careful grader reads (last
//!   box; last answer marker: "the answer is", `Answer:`, `####`, a `# Answer` block; a bare
//!   one-line response; the final line), naming the rule that found it;
//! - [`span`]: the expression inside a statement, cut where the math ends, with its
//!   restatements ("0.25, or 1/4");
//! - [`final_line`]: the final-line fallback and its truncation heuristic;
//! - [`refusal`]: statements that decline to answer;
//! - [`instruction`]: sentences that restate how the question wants its answer coded;
//! - [`choices`]: multiple choice, when the options are known ([`verify_with_choices`]);
//! - [`normalize()`]: text-level cleanup (delimiters, digit-group separators);
//! - [`lex`] and [`parse`]: tokens, then a recursive-descent parser (its grammar and its
//!   reading decisions are in [`parse`]'s docs) into an [`parse::Expr`] tree;
//! - [`compare`]: structural comparison (relations, labels, lists, sets, tuples,
//!   intervals, matrices, units, percent, bases) and numeric comparison of expressions;
//! - [`numeric`]: complex evaluation at sample points, exact rationals and the tolerances;
//! - [`explain()`]: the verdict with its reasons.
//!
//! Ambiguous readings are decided once, in the docs of the module that reads them, each
//! with an example: `32, 349` is a list (never 32349) in [`normalize()`]; `\log` is natural
//! and `xy` is x·y in [`parse`]; a label `x =` is dropped only before a side that is not a
//! relation, and `0.33` does not stand for 1/3 in [`compare`] and [`numeric`].
//!
//! A gold answer that does not parse (or an answer that does not) can only match as the same
//! normalized text. False positives are worse than false negatives: when a rule is unsure,
//! it says "not equal".
//!
//! **Bounds**: a response is searched whole; one longer than [`MAX_RESPONSE_BYTES`] is not
//! searched and scores wrong (it has no answer); answers
//! longer than [`MAX_ANSWER_CHARS`] are cut; a parse stops at
//! [`lex::MAX_TOKENS`] tokens, depth [`parse::MAX_DEPTH`] and [`parse::MAX_NODES`] nodes;
//! one comparison makes at most [`compare::MAX_COMPARISONS`] element comparisons, each
//! evaluating a tree at a fixed number of points; powers are in `f64` or checked `i128`.
//! So [`verify`] runs in bounded time on any input; it never panics.

pub mod choices;
pub mod compare;
pub mod explain;
pub mod extract;
pub mod final_line;
pub mod instruction;
pub mod lex;
pub mod normalize;
pub mod numeric;
pub mod parse;
pub mod refusal;
pub mod restated;
pub mod span;
pub mod special_tokens;
mod text;

use crate::Score;

pub use choices::{gold_names_option, strip_labels, verify_with_choices, MAX_CHOICES};
pub use explain::{explain, gold_answer, Explanation};
pub use extract::{
    extract_answer, extract_with_rule, last_boxed, Extracted, NoAnswer, Rule, BARE_ANSWER_CHARS,
    MAX_RESPONSE_BYTES,
};
pub use normalize::{normalize, MAX_ANSWER_CHARS};
pub use special_tokens::{strip_special_tokens, strip_tokens};

/// Scores `response` against `gold`: reward 1 when the extracted answer is equivalent.
///
/// A gold answer holding `\boxed{..}` is unwrapped first. `extracted` is the raw extracted
/// answer; `reason` is the rule that decided (see [`compare`]).
pub fn verify(gold: &str, response: &str) -> Score {
    let e = explain(gold, response);
    Score::binary(e.correct, e.extracted, e.rule)
}

/// Scores `response` against a problem: [`verify_asked`] with its gold, its options when it has
/// some ([`Problem::choices`](crate::Problem::choices)) and its question. Every math score with
/// a problem at hand (training rewards, `rlvr eval`) goes through here.
pub fn verify_problem(problem: &crate::Problem, response: &str) -> Score {
    verify_asked(
        &problem.answer,
        response,
        problem.choices.as_deref(),
        Some(&problem.question()),
    )
}

/// Scores `response` against `gold`: [`verify_with_choices`] with options (non-empty), else
/// [`verify`], except that, with the `question` at hand, an answer that restates the question's
/// own expression instead of working it out (`(x+1)^2` for "Expand $(x+1)^2$") is wrong
/// ([`restated`]). Python's `rlvr.verify(..., question=...)` scores through here, and
/// `rlvr verify --jsonl` through [`explain_asked`].
pub fn verify_asked(
    gold: &str,
    response: &str,
    choices: Option<&[String]>,
    question: Option<&str>,
) -> Score {
    if let Some(choices) = choices.filter(|c| !c.is_empty()) {
        return verify_with_choices(gold, response, choices);
    }
    let e = explain_asked(gold, response, None, question);
    Score::binary(e.correct, e.extracted, e.rule)
}

/// [`verify_asked`]'s verdict with its explanation ([`explain()`]): with options, the verdict,
/// extraction and rule of [`verify_with_choices`] (the trees stay those of the plain
/// comparison); else the plain explanation, wrong with the rule [`RESTATED`] when the answer
/// restates the question.
pub fn explain_asked(
    gold: &str,
    response: &str,
    choices: Option<&[String]>,
    question: Option<&str>,
) -> Explanation {
    let mut e = explain(gold, response);
    if let (false, Some(listed)) = (e.correct, question.and_then(|q| comma_listed_gold(gold, q))) {
        let again = explain(&listed, response);
        if again.correct {
            e = Explanation {
                rule: format!("{} (the question separates values by commas)", again.rule),
                ..again
            };
        }
    }
    if let Some(choices) = choices.filter(|c| !c.is_empty()) {
        let s = verify_with_choices(gold, response, choices);
        (e.correct, e.extracted, e.rule) = (s.correct, s.extracted, s.reason);
    } else if let (true, Some(answer), Some(question)) = (e.correct, &e.extracted, question) {
        if restated::restates_question(&e.gold, answer, question) {
            e.correct = false;
            e.rule = RESTATED.to_string();
        }
    }
    e
}

/// `gold` read as a list when the question asks for values separated by commas ("Enter all the
/// solutions, separated by commas") and the gold is integers joined by bare commas that would
/// otherwise read as digit groups (`45,135` → `45, 135`; without such a question `45,135` is
/// 45135, [`normalize()`]); None otherwise.
fn comma_listed_gold(gold: &str, question: &str) -> Option<String> {
    static ASKS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    static GOLD: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let asks = text::regex_cached(
        &ASKS,
        r"(?i)separated by commas|comma[- ]separated|separate[ds]? (?:\w+ ){0,3}(?:with|by) commas",
    );
    let numbers = text::regex_cached(&GOLD, r"^[+-]?\d+(?:,[+-]?\d+)+$");
    let g = gold_answer(gold);
    let g = g.trim().trim_matches('$').trim();
    (numbers.is_match(g) && asks.is_match(question)).then(|| g.replace(',', ", "))
}

/// The reason of an answer that restates the question ([`verify_asked`]).
pub const RESTATED: &str = "the question's own expression restated, not worked out";

/// Whether two answers (not responses: no extraction) are equivalent.
pub fn equivalent(gold: &str, answer: &str) -> bool {
    explain::equivalent_reason(gold, answer).is_ok()
}

#[cfg(test)]
mod tests;
