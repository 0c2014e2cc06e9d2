//! An answer that restates the question's own expression: "Expand $(x+1)^2$" answered
//! `(x+1)^2`, "Simplify $\frac{x^2-1}{x-1}$" answered `\frac{x^2-1}{x-1}`, "Factorize:
//! 18x^3+15x^2-x-2" answered with the polynomial itself. Each is equal to the gold as an
//! expression, so the comparison alone calls it right; but the question asked for another form
//! of it, and a policy rewarded for copying the question's expression would learn to copy.
//! With the question at hand ([`super::verify_problem`]: training rewards, `rlvr eval`), such
//! an answer is wrong.
//!
//! The answer restates the question when, in the text forms the comparison reads
//! ([`mod@super::normalize`]: delimiters, spaces and sentence punctuation aside):
//! * it equals a whole piece of the question: a math span (`$..$`, `$$..$$`, `\(..\)`,
//!   `\[..\]`; not one of several listed together as candidates, `$10^{-16}$, $10^{-24}$ or
//!   $10^{-32}$`, which the answer may pick), a line or a clause of it (split at `:`, `;`, `?`,
//!   `，`, `：`, sentence ends), or one side of an `=` in one of those (`Let $f(x) = (x+1)^2$. Expand f(x).` restates
//!   `(x+1)^2`);
//! * it is an expression to work out (an operation or a function: not a bare number, letter or
//!   negated number) of at least three characters;
//! * and it is not written as the gold is (the same tree: a question that states its own answer,
//!   "Show that the sum is $\frac{n(n+1)}{2}$", keeps it right).
//!
//! A piece of the question is only ever compared whole, so an answer that is a part of a longer
//! expression (`x+1` inside `(x+1)^2 - x^2 - x`) is not a restatement. Bounded: the first
//! [`MAX_QUESTION_CHARS`] characters of the question, at most [`MAX_PIECES`] pieces.

use super::normalize::{normalize, prepare};
use super::parse::{parse, Expr};

/// Characters of the question read.
pub const MAX_QUESTION_CHARS: usize = 20_000;
/// Pieces of the question compared.
pub const MAX_PIECES: usize = 512;

/// Whether `answer` (extracted from a response) restates an expression of `question` instead
/// of answering it (module docs); `gold` is the gold answer as compared.
pub fn restates_question(gold: &str, answer: &str, question: &str) -> bool {
    let wanted = normalize(answer);
    let n = wanted.len();
    if wanted.chars().count() < 3 || question.is_empty() {
        return false;
    }
    // the text match first (cheap: pieces far shorter or longer than the answer cannot
    // normalize to it), the parses only when a piece matches
    let matched = pieces(question)
        .into_iter()
        .filter(|piece| piece.len() >= n / 2 && piece.len() <= 4 * n + 64)
        .any(|piece| normalize(piece) == wanted);
    if !matched {
        return false;
    }
    let Ok(tree) = parse(&prepare(answer)) else {
        return false;
    };
    to_work_out(&tree) && parse(&prepare(gold)).map_or(true, |g| g != tree)
}

/// An operation or a function: something a question can ask to be worked out.
fn to_work_out(e: &Expr) -> bool {
    match e {
        Expr::Num(_) | Expr::Var(_) | Expr::Const(_) | Expr::Word(_) => false,
        Expr::Neg(x) => to_work_out(x),
        Expr::Add(_)
        | Expr::Mul(_)
        | Expr::Div(..)
        | Expr::Pow(..)
        | Expr::Func(..)
        | Expr::Apply(..)
        | Expr::PlusMinus(..) => true,
        _ => false,
    }
}

/// The pieces of `question` an answer is compared with whole (module docs).
fn pieces(question: &str) -> Vec<&str> {
    let text: &str = match question.char_indices().nth(MAX_QUESTION_CHARS) {
        Some((cut, _)) => &question[..cut],
        None => question,
    };
    let mut out: Vec<&str> = Vec::new();
    fn push<'a>(piece: &'a str, out: &mut Vec<&'a str>) {
        if out.len() >= MAX_PIECES {
            return;
        }
        let piece = piece.trim();
        if piece.is_empty() {
            return;
        }
        out.push(piece);
        // each side of an `=` (not of `<=`, `>=`, `!=`)
        let bytes = piece.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let relation = i > 0 && matches!(bytes[i - 1], b'<' | b'>' | b'!');
            if b == b'=' && !relation && out.len() < MAX_PIECES {
                out.push(piece[start..i].trim());
                start = i + 1;
            }
        }
        if start > 0 && out.len() < MAX_PIECES {
            out.push(piece[start..].trim());
        }
    }
    for span in math_spans(text) {
        push(span, &mut out);
    }
    for clause in text.split(['\n', ':', ';', '?', '，', '：', '。']) {
        for sentence in clause.split(". ") {
            push(sentence, &mut out);
        }
    }
    out
}

/// The contents of the math spans of `text` (`$$..$$`, `$..$`, `\(..\)`, `\[..\]`) that are not
/// listed with others: a span separated from the next or the previous one only by commas,
/// semicolons, "or" and spaces (or by "and" after such a list) is one of a list of candidates
/// (`$10^{-16}$, $10^{-24}$ or $10^{-32}$`), which an answer may pick.
fn math_spans(text: &str) -> Vec<&str> {
    // (content, text before it since the previous span)
    let mut found: Vec<(&str, &str)> = Vec::new();
    let mut rest = text;
    while found.len() < MAX_PIECES {
        let next = [("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")]
            .into_iter()
            .filter_map(|(open, close)| rest.find(open).map(|p| (p, open, close)))
            .min_by_key(|(p, open, _)| (*p, std::cmp::Reverse(open.len())));
        let Some((p, open, close)) = next else { break };
        let body = &rest[p + open.len()..];
        let Some(end) = body.find(close) else { break };
        found.push((&body[..end], &rest[..p]));
        rest = &body[end + close.len()..];
    }
    // the gap before span i joins it to span i - 1: only commas, semicolons and "or"; or "and"
    // closing a list already begun (`$1$, $2$ and $3$`, not `$f(x) = 2x$ and $g(x) = 3$`)
    let mut joined = vec![false; found.len()];
    for i in 1..found.len() {
        let words = found[i].1.replace([',', ';'], " ").to_lowercase();
        let words: Vec<&str> = words.split_whitespace().collect();
        joined[i] = words.iter().all(|w| *w == "or") || (words == ["and"] && joined[i - 1]);
    }
    (0..found.len())
        .filter(|&i| !joined[i] && !joined.get(i + 1).copied().unwrap_or(false))
        .map(|i| found[i].0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_questions_expression_restated() {
        assert!(restates_question(
            "x^2+2x+1",
            "(x+1)^2",
            "Expand $(x+1)^2$."
        ));
        assert!(restates_question(
            "x+1",
            "\\frac{x^2-1}{x-1}",
            "Simplify $\\frac{x^2 - 1}{x - 1}$ for $x \\neq 1$."
        ));
        assert!(restates_question(
            "(3x+2)(2x+1)(3x-1)",
            "18x^3+15x^2-x-2",
            "Factorize: 18x^3 + 15x^2 - x - 2"
        ));
        // one side of an equation in the question
        assert!(restates_question(
            "x^2+2x+1",
            "(x+1)^2",
            "Let $f(x) = (x+1)^2$. Expand f(x)."
        ));
        assert!(restates_question(
            "2\\sqrt{2}",
            "\\sqrt{8}",
            "Simplify \\(\\sqrt{8}\\)."
        ));
    }

    #[test]
    fn answers_that_are_not_restatements() {
        // the gold's own form, even when the question states it
        assert!(!restates_question(
            "\\frac{n(n+1)}{2}",
            "\\frac{n(n+1)}{2}",
            "Show that the sum of the first n integers is $\\frac{n(n+1)}{2}$."
        ));
        // a part of a longer expression
        assert!(!restates_question(
            "1+x",
            "x+1",
            "Simplify $(x+1)^2 - x^2 - x$."
        ));
        // a worked answer, a bare number or letter
        assert!(!restates_question(
            "x+1",
            "x+1",
            "Simplify $\\frac{x^2-1}{x-1}$."
        ));
        assert!(!restates_question(
            "5",
            "5",
            "What is $2 + 3$? The answer is 5"
        ));
        assert!(!restates_question("x", "x", "Solve for $x$: $x$"));
        // a candidate the question lists
        assert!(!restates_question(
            "10^{-16} \\text{ cm}^2",
            "10^{-16}",
            "Typical cross section is $10^{-16}$, $10^{-24}$, $10^{-32}$, $10^{-40}$ $cm^2$."
        ));
        // no question
        assert!(!restates_question("x^2+2x+1", "(x+1)^2", ""));
    }

    #[test]
    fn pieces_are_whole_spans_clauses_and_sides() {
        let p = pieces("Let $f(x) = (x+1)^2$ and $g(x) \\le 3$. Expand: f(x)");
        assert!(p.contains(&"(x+1)^2"), "{p:?}");
        assert!(p.contains(&"f(x)"), "{p:?}");
        assert!(!p.contains(&"3"), "a side of `\\le` is not a piece: {p:?}");
        assert_eq!(
            math_spans("$$a$$ then $b$. So \\(c\\) if \\[d\\] $e"),
            ["a", "b", "c", "d"]
        );
        // candidates listed together are not pieces; two statements joined by "and" are
        assert_eq!(math_spans("Is it $1$, $2$ or $3$? Take $x+1$."), ["x+1"]);
        assert_eq!(math_spans("$1$, $2$ and $3$"), Vec::<&str>::new());
        assert_eq!(math_spans("$f = 2$ and $g = 3$"), ["f = 2", "g = 3"]);
    }

    #[test]
    fn a_long_question_is_bounded() {
        let q = "$x+1$, ".repeat(10_000);
        assert!(pieces(&q).len() <= MAX_PIECES);
        assert!(!restates_question("2", "y+2", &q));
    }
}
