//! Why a response was scored as it was: both parsed trees and the rule that decided
//! (`rlvr verify --explain`). [`super::verify`] is this, reduced to a [`crate::Score`].

use std::fmt;

use super::compare::compare;
use super::extract::{extract_boxed, extract_with_rule, BARE_ANSWER_CHARS};
use super::normalize::{normalize, prepare, MAX_ANSWER_CHARS};
use super::parse::{parse, Const, Expr, Func, RelOp};
use super::text::{head, is_prose};

/// The verdict on one (gold, response) pair with its reasons.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// The gold answer as compared (a boxed gold unwrapped).
    pub gold: String,
    /// The answer extracted from the response.
    pub extracted: Option<String>,
    /// The extraction rule that found it ([`super::extract::Rule::describe`]), or why
    /// there is none.
    pub extracted_by: String,
    /// The gold's tree (prefix form), or why it did not parse.
    pub gold_tree: Result<String, String>,
    /// The answer's tree, or why it did not parse.
    pub answer_tree: Result<String, String>,
    pub correct: bool,
    /// The rule that decided.
    pub rule: String,
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tree = |t: &Result<String, String>| match t {
            Ok(s) => s.clone(),
            Err(e) => format!("(not parsed: {e})"),
        };
        writeln!(f, "correct: {}", self.correct)?;
        writeln!(f, "gold: {}", self.gold)?;
        writeln!(
            f,
            "extracted: {}",
            self.extracted.as_deref().unwrap_or("(none)")
        )?;
        writeln!(f, "extracted by: {}", self.extracted_by)?;
        writeln!(f, "gold tree: {}", tree(&self.gold_tree))?;
        writeln!(f, "answer tree: {}", tree(&self.answer_tree))?;
        write!(f, "rule: {}", self.rule)
    }
}

/// The gold answer to compare: the (joined) boxes of a gold that has `\boxed`, the
/// extracted answer of a long gold that reads as prose and names its answer (a worked
/// solution ending "Final Answer: ..."), else the gold itself.
pub fn gold_answer(gold: &str) -> String {
    let gold = head(gold, 4 * MAX_ANSWER_CHARS);
    let gold = super::normalize::unicode_math(gold);
    let gold = super::normalize::repeating_decimals(gold.as_ref());
    let gold = gold.as_ref();
    if gold.contains("\\boxed") || gold.contains("\\fbox") {
        if let Some(b) = extract_boxed(gold) {
            return b;
        }
    }
    if gold.trim().chars().count() > BARE_ANSWER_CHARS
        && is_prose(gold)
        && gold.to_ascii_lowercase().contains("answer")
    {
        if let Ok(a) = extract_with_rule(gold) {
            return a.answer;
        }
    }
    gold.trim().to_string()
}

fn tree(answer: &str) -> Result<Expr, String> {
    parse(&prepare(answer))
}

/// Scores `response` against `gold` and says why.
pub fn explain(gold: &str, response: &str) -> Explanation {
    let gold = gold_answer(gold);
    let gold_tree = tree(&gold);
    let found = match extract_with_rule(response) {
        Ok(found) => found,
        Err(why) => {
            return Explanation {
                gold,
                extracted: None,
                extracted_by: "(nothing)".into(),
                gold_tree: gold_tree.map(|t| t.to_string()),
                answer_tree: Err("no answer".into()),
                correct: false,
                rule: why.describe(),
            };
        }
    };
    let extracted = found.answer;
    let answer_tree = tree(&extracted);
    let (correct, rule) = match verdict((&gold, &gold_tree), (&extracted, &answer_tree)) {
        Ok(r) => (true, r),
        Err(r) => (false, r),
    };
    let (correct, rule) = match (correct, decimal_comma_reason(&gold, &extracted)) {
        (false, Some(r)) => (true, r),
        other => (other.0, rule),
    };
    Explanation {
        gold,
        extracted: Some(extracted),
        extracted_by: found.rule.describe().to_string(),
        gold_tree: gold_tree.map(|t| t.to_string()),
        answer_tree: answer_tree.map(|t| t.to_string()),
        correct,
        rule,
    }
}

/// [`compare`], except that a computation written out is not its value: against a gold that is a
/// number, an answer that adds or multiplies numbers (`903 * 6116`, `76 + 27 \times 55`) is
/// wrong even when it evaluates to the gold. A model that restates the question's arithmetic has
/// not answered it (and under RL would learn to); fractions (`\frac{1}{2}`), powers and
/// scientific notation (`3 \times 10^8`), and mixed numbers (`2 \frac{1}{2}`) are values.
///
/// Likewise a trigonometric, logarithmic or exponential function of numbers left unevaluated
/// (`\tan 100^\circ + 4 \sin 100^\circ` against `-\sqrt{3}`, `\log_2 8` against 3,
/// `\sin 30^\circ` against `\frac12`) is not the value, against a gold that is a constant
/// written without one: the question asked for the value. A gold that holds such a function
/// (`\ln 2`, `\log_2 3`) is compared as before.
///
/// An equation answering a number is held to the same: its numbers must agree with each other
/// (`1740 = 76 * 27` is false, whatever `76 * 27` is), and one of them must be a value, not
/// only a computation (`x = 76 * 27`). A policy trained against a checker that read such an
/// equation by its last side learned to write the question's product after any number.
fn decide(gold: &Expr, answer: &Expr) -> Result<&'static str, &'static str> {
    let rule = compare(gold, answer)?;
    if is_number_tree(gold) && states_no_value(answer) {
        return Err("a computation written out, not its value");
    }
    if !has_variable(gold) {
        if let Some(why) = relation_fault(gold, answer) {
            return Err(why);
        }
    }
    if closed_constant(gold) && function_of_numbers(final_value(answer)) {
        return Err("a function of numbers left unevaluated, not its value");
    }
    Ok(rule)
}

/// Functions whose value at a number a question asks to be worked out.
fn transcendental(f: Func) -> bool {
    !matches!(
        f,
        Func::Sqrt
            | Func::Root
            | Func::Abs
            | Func::Floor
            | Func::Ceil
            | Func::Binom
            | Func::Factorial
    )
}

/// A constant in closed form without a transcendental function: numbers, `\pi`, `e`, radicals,
/// fractions, powers, sums and products of them (`-\sqrt{3}`, `\frac{\pi}{4}`, `2^{10}`).
fn closed_constant(e: &Expr) -> bool {
    match e {
        Expr::Num(_) | Expr::Const(_) => true,
        Expr::Neg(x) | Expr::Percent(x) | Expr::Degrees(x) => closed_constant(x),
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().all(closed_constant),
        Expr::Div(a, b) | Expr::Pow(a, b) => closed_constant(a) && closed_constant(b),
        Expr::Func(f, xs) => !transcendental(*f) && xs.iter().all(closed_constant),
        _ => false,
    }
}

/// Whether `e` applies a transcendental function to an argument without variables.
fn function_of_numbers(e: &Expr) -> bool {
    match e {
        Expr::Func(f, xs) if transcendental(*f) => xs.iter().all(|x| !has_variable(x)),
        Expr::Neg(x) | Expr::Percent(x) | Expr::Degrees(x) => function_of_numbers(x),
        Expr::Add(xs) | Expr::Mul(xs) | Expr::Func(_, xs) => xs.iter().any(function_of_numbers),
        Expr::Div(a, b) | Expr::Pow(a, b) => function_of_numbers(a) || function_of_numbers(b),
        _ => false,
    }
}

/// Whether `e` holds a variable.
fn has_variable(e: &Expr) -> bool {
    match e {
        Expr::Var(_) | Expr::Word(_) | Expr::Apply(..) => true,
        Expr::Num(_) | Expr::Const(_) => false,
        Expr::Neg(x) | Expr::Percent(x) | Expr::Degrees(x) => has_variable(x),
        Expr::Add(xs) | Expr::Mul(xs) | Expr::Func(_, xs) => xs.iter().any(has_variable),
        Expr::Div(a, b) | Expr::Pow(a, b) => has_variable(a) || has_variable(b),
        _ => true,
    }
}

/// The value an answer states: the last member of an equation chain (`x = \sin 30^\circ`),
/// else the answer.
fn final_value(e: &Expr) -> &Expr {
    match e {
        Expr::Rel(members, ops) if ops.iter().all(|o| *o == RelOp::Eq) => {
            members.last().unwrap_or(e)
        }
        _ => e,
    }
}

/// A number, possibly negative.
fn is_number_tree(e: &Expr) -> bool {
    match e {
        Expr::Num(_) => true,
        Expr::Neg(x) => is_number_tree(x),
        _ => false,
    }
}

/// Whether `e` adds or multiplies numbers (and nothing but numbers and fractions of them):
/// arithmetic left to do.
fn unevaluated(e: &Expr) -> bool {
    let mixed_number = |xs: &[Expr]| {
        matches!(xs, [Expr::Num(_), Expr::Div(a, b)]
            if matches!(**a, Expr::Num(_)) && matches!(**b, Expr::Num(_)))
    };
    // `3 \times 10^8`, `1.5 \cdot 10^{-3}`: a value in scientific notation
    let scientific = |xs: &[Expr]| {
        matches!(xs, [m, Expr::Pow(b, _)]
            if is_number_tree(m) && matches!(&**b, Expr::Num(n) if n.text == "10"))
    };
    match e {
        Expr::Neg(x) => unevaluated(x),
        Expr::Add(xs) if mixed_number(xs) => false,
        Expr::Mul(xs) if scientific(xs) => false,
        Expr::Add(xs) | Expr::Mul(xs) => {
            (xs.len() >= 2 && xs.iter().all(arithmetic)) || xs.iter().any(unevaluated)
        }
        // a computation inside a fraction or a power (`\frac{76 \cdot 27}{1}`, `(76 \cdot 27)^1`)
        Expr::Div(a, b) | Expr::Pow(a, b) => unevaluated(a) || unevaluated(b),
        _ => false,
    }
}

/// Whether `e` states no value, only computations: a computation written out
/// ([`unevaluated`]), a relation whose sides made of numbers all are (`x = 76 * 27 = 76 * 27`),
/// or a list, set or tuple of such (`76 * 27 or 76 * 27`, `\{76 \times 27\}`).
fn states_no_value(e: &Expr) -> bool {
    match e {
        Expr::Rel(members, _) => {
            let mut numbers = members.iter().filter(|m| arithmetic(m)).peekable();
            numbers.peek().is_some() && numbers.all(unevaluated)
        }
        Expr::List(xs) | Expr::Set(xs) | Expr::Braces(xs) | Expr::Tuple(_, _, xs) => {
            !xs.is_empty() && xs.iter().all(states_no_value)
        }
        e => unevaluated(e),
    }
}

/// [`equation_of_numbers_fault`] of the answer, or of any item of a list or set it gives
/// (`1740 = 76 * 27 or 1740 = 76 * 27`).
fn relation_fault(gold: &Expr, answer: &Expr) -> Option<&'static str> {
    match answer {
        Expr::List(xs) | Expr::Set(xs) | Expr::Braces(xs) => {
            xs.iter().find_map(|x| relation_fault(gold, x))
        }
        _ => equation_of_numbers_fault(gold, answer),
    }
}

/// Numbers and the arithmetic of numbers: literals, signs, fractions, sums, products and
/// powers of them (`76 * 27`, `\frac{3}{4}`, `2^{10} + 1`).
///
/// A function of such numbers whose value is a whole number is one too (`|76|`, `\lceil 76
/// \rceil`, `\sqrt{76^2}`): wrapping a factor in it does not make a computation a value;
/// `\sqrt{3}` (irrational) stays a value, so `2\sqrt{3}` is no computation.
fn arithmetic(e: &Expr) -> bool {
    match e {
        _ if is_number_tree(e) => true,
        Expr::Neg(x) => arithmetic(x),
        Expr::Div(a, b) | Expr::Pow(a, b) => arithmetic(a) && arithmetic(b),
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().all(arithmetic),
        Expr::Func(_, args) if args.iter().all(arithmetic) => {
            real_value(e).is_some_and(|v| v.is_finite() && v == v.round())
        }
        _ => false,
    }
}

/// Why an equation or approximation answering a constant is no answer (`None`: it answers as
/// [`compare`] reads it):
/// - an equation (`=` only) whose constant sides disagree (`1740 = 76 * 27`, `5 = 2\sqrt{2}`):
///   it does not hold, whatever its last side is (a decimal side agrees with a value that rounds
///   to it: `x = \frac{1}{3} = 0.333`, `\sqrt{2} = 1.414`);
/// - against a gold that is a number, a relation (`=`, `≈`) whose sides made of numbers are all
///   computations (`x = 76 * 27`), or none of whose stated values is the gold
///   (`1740 \approx 76 * 27`, `76 \times 27 \approx 2050` for 2052): the answer is the value it
///   states, not a computation the checker evaluates.
///
/// Sides with variables or functions the checker cannot evaluate (`x`, `f(2)`) are not checked:
/// `x = 3 + 4 = 7`, `f(2) = 14`, `\binom{8}{3} = 56`, `2052 = 76 * 27` answer.
fn equation_of_numbers_fault(gold: &Expr, answer: &Expr) -> Option<&'static str> {
    let Expr::Rel(members, ops) = answer else {
        return None;
    };
    if !ops.iter().all(|o| matches!(o, RelOp::Eq | RelOp::Approx)) || members.len() > 8 {
        return None;
    }
    // a lone `e` or `i` opening the chain is a label (`e = \sqrt{\frac{11}{6}}`, an
    // eccentricity), not Euler's number
    let label = |k: usize, m: &Expr| k == 0 && matches!(m, Expr::Const(Const::E | Const::I));
    let constants: Vec<&Expr> = members
        .iter()
        .enumerate()
        .filter(|&(k, m)| {
            !label(k, m) && !has_variable(m) && super::numeric::eval(m, &|_| None).is_some()
        })
        .map(|(_, m)| m)
        .collect();
    if let Some((first, rest)) = constants.split_first() {
        if ops.iter().all(|o| *o == RelOp::Eq) && rest.iter().any(|m| !sides_agree(first, m)) {
            return Some("an equation between numbers that does not hold");
        }
    }
    if !is_number_tree(gold) {
        return None;
    }
    let numbers: Vec<&Expr> = members.iter().filter(|m| arithmetic(m)).collect();
    if numbers.is_empty() {
        return None;
    }
    let values: Vec<&Expr> = numbers.into_iter().filter(|m| !unevaluated(m)).collect();
    if values.is_empty() {
        return Some("a computation written out, not its value");
    }
    (!values.iter().any(|v| compare(gold, v).is_ok()))
        .then_some("the value it states is not the gold")
}

/// The number of decimal places of a decimal literal (`-0.333` → 3; none for `3`, `1e5`).
fn decimal_places(e: &Expr) -> Option<i32> {
    match e {
        Expr::Num(n) if n.is_decimal() && !n.text.contains(['e', 'E']) => {
            n.text.split_once('.').map(|(_, f)| f.len() as i32)
        }
        Expr::Neg(x) => decimal_places(x),
        _ => None,
    }
}

/// Whether two constant sides of an equation have the same value: as [`compare`] reads them
/// (either way round), or a decimal side as the other's value rounded to that decimal's places
/// (`\frac{1}{3} = 0.333`, `\sqrt{2} = 1.414`).
fn sides_agree(a: &Expr, b: &Expr) -> bool {
    if compare(a, b).is_ok() || compare(b, a).is_ok() {
        return true;
    }
    let (Some(x), Some(y)) = (real_value(a), real_value(b)) else {
        return false;
    };
    match (decimal_places(a), decimal_places(b)) {
        (Some(p), _) => super::numeric::rounds_to_places(x, p, y),
        (_, Some(p)) => super::numeric::rounds_to_places(y, p, x),
        _ => false,
    }
}

/// The real value of a constant tree (None with a variable, or a non-real value).
fn real_value(e: &Expr) -> Option<f64> {
    super::numeric::eval(e, &|_| None)
        .filter(|v| v.im == 0.0)
        .map(|v| v.re)
}

/// The commands that wrap text in an answer (`\\text{...}`), longest first so that none leaves
/// a piece of another.
const TEXT_WRAPPERS: [&str; 5] = ["\\textnormal", "\\textbf", "\\text", "\\mathrm", "\\mbox"];

/// Whether `gold` and `answer` are both answers in words alone and say the same words
/// (`\text{sampling survey}` against `sampling survey`; `\text{necessary and sufficient}`
/// against `necessary and sufficient condition`): their [`word_answer`]s are equal. Words are
/// read where the parser would see a product of words or a list joined by "and"; this
/// compares them as the sentence they are, in order (`sufficient but not necessary` is not
/// `necessary but not sufficient`).
fn same_words(gold: &str, answer: &str) -> bool {
    match (word_answer(gold), word_answer(answer)) {
        (Some(g), Some(a)) => g == a,
        _ => false,
    }
}

/// The words of an answer written in words alone, lowercased, or `None` when it holds anything
/// but letters (of any script), spaces, punctuation, brackets, dollar signs and emphasis, once
/// the text wrappers (`\text`, `\textbf`, `\textit`, `\textnormal`, `\mathrm`, `\mbox`) are
/// removed (a digit, an operator, a relation, another command: mathematics), or a word of one
/// letter other than the article "a" (a variable or an option letter). The punctuation and
/// brackets separate words. A leading article ("a", "an", "the") and a
/// closing "condition" are dropped: the noun of a blank such as "a ( ) condition", which the
/// answer may leave to the question. At least one word of three letters or more is needed.
fn word_answer(s: &str) -> Option<Vec<String>> {
    // `\\textit` before the others, which would leave its `it`
    let mut t = s.to_lowercase().replace("\\textit", " ");
    for cmd in TEXT_WRAPPERS {
        t = t.replace(cmd, " ");
    }
    let allowed = |c: char| {
        c.is_alphabetic() || c.is_whitespace() || ".,;:!?'\"()[]{}$*-–，。、：；“”（）".contains(c)
    };
    if !t.chars().all(allowed) {
        return None;
    }
    let mut words: Vec<String> = t
        .split(|c: char| !c.is_alphabetic() && c != '\'')
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    if words.len() > 1 && ["a", "an", "the"].contains(&words[0].as_str()) {
        words.remove(0);
    }
    if words.len() > 1 && matches!(words.last().map(String::as_str), Some("condition")) {
        words.pop();
    }
    let ok = words.iter().any(|w| w.chars().count() >= 3)
        && words.iter().all(|w| w.chars().count() >= 2 || w == "a");
    ok.then_some(words)
}

/// Same normalized text, ignoring case and the text commands around words
/// (`4:30 \text{ p.m.}` is `\text{4:30 p.m.}`): the commands, spacing commands, dollar signs
/// and braces removed, then the
/// clock times' meridiems written alike ([`super::normalize::clock_times`]: the `p.m.` that a
/// `\text{ }` kept apart from its time is joined to it only here), a final period dropped.
fn same_text(a: &str, b: &str) -> bool {
    let plain = |s: &str| {
        let mut t = s.to_lowercase();
        for cmd in TEXT_WRAPPERS {
            t = t.replace(cmd, "");
        }
        // spacing commands (`\,n=1\,` against `n = 1`) and dollar signs
        for space in ["\\qquad", "\\quad", "\\,", "\\;", "\\:", "\\!", "\\ ", "$"] {
            t = t.replace(space, "");
        }
        let t = t.replace(['{', '}'], "");
        let t: String = super::normalize::clock_times(&t)
            .to_lowercase()
            .split_whitespace()
            .collect();
        // a sentence's period (`\text{4:30 p.m.}` against `4:30 PM`), and the backslash left
        // of a closing spacing command whose punctuation the normalization took (`\,`)
        t.trim_end_matches(['.', '\\']).to_string()
    };
    !a.is_empty() && (a.to_lowercase() == b.to_lowercase() || plain(a) == plain(b))
}

/// Whether two answers (no extraction) are equivalent, with the deciding rule. An answer (or a
/// gold) that is one number written with a decimal comma (`1000,99`, `0,111`, `-2,5`: a comma
/// not followed by exactly three digits, or after a lone `0`) also counts as that decimal when
/// the other side is a number (`1,234` stays one thousand two hundred thirty-four; `1, 2`
/// stays a list).
pub fn equivalent_reason(gold: &str, answer: &str) -> Result<String, String> {
    let first = equivalent_as_written(gold, answer);
    match (&first, decimal_comma_reason(gold, answer)) {
        (Err(_), Some(r)) => Ok(r),
        _ => first,
    }
}

/// The rule by which `answer`, read with a decimal comma, equals a number `gold` (see
/// [`equivalent_reason`]); None when it is not such a number or does not equal it.
fn decimal_comma_reason(gold: &str, answer: &str) -> Option<String> {
    let gold = gold_answer(gold);
    let found = match (decimal_comma(answer), decimal_comma(&gold)) {
        // the answer written with a decimal comma, the gold a number
        (Some(decimal), _) if is_number(&gold) => equivalent_as_written(&gold, &decimal),
        // the gold written with one, the answer a number
        (_, Some(decimal)) if is_number(answer) => equivalent_as_written(&decimal, answer),
        _ => return None,
    };
    found.ok().map(|r| format!("{r} (a decimal comma)"))
}

/// `answer` with its decimal comma as a point, when it is one number written so (see
/// [`equivalent_reason`]).
fn decimal_comma(answer: &str) -> Option<String> {
    let t = super::normalize::clean_inline(answer);
    let t = t.trim();
    let (sign, body) = match t.strip_prefix('-') {
        Some(b) => ("-", b),
        None => ("", t),
    };
    let (int, frac) = body.split_once(',')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // `-3,0` is two values (a list), not -3.0: a decimal comma before a lone zero says nothing
    if !digits(int) || !digits(frac) || (frac.len() == 3 && int != "0") || frac == "0" {
        return None;
    }
    Some(format!("{sign}{int}.{frac}"))
}

/// Whether `s` is one plain number (`12`, `-0.5`, `1,234`).
fn is_number(s: &str) -> bool {
    let t = super::normalize::clean_inline(s).replace(',', "");
    let t = t.trim();
    let t = t.strip_prefix('-').unwrap_or(t);
    !t.is_empty() && t.parse::<f64>().is_ok() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

fn equivalent_as_written(gold: &str, answer: &str) -> Result<String, String> {
    let gold = gold_answer(gold);
    verdict((&gold, &tree(&gold)), (answer, &tree(answer)))
}

/// The verdict on a gold and an answer, each with its tree: two answers in words alone that
/// say the same words are equal ([`same_words`]); else [`decide`] where both parse;
/// against a gold that is a relation sign alone, [`completed_comparison`]; else only the same
/// text matches (an answer that does not parse, or a gold).
fn verdict(
    (gold, gold_tree): (&str, &Result<Expr, String>),
    (answer, answer_tree): (&str, &Result<Expr, String>),
) -> Result<String, String> {
    if same_words(gold, answer) {
        return Ok("same words".into());
    }
    let sign = || gold_tree.is_err().then(|| relation_sign(gold)).flatten();
    match (gold_tree, answer_tree, sign()) {
        (Ok(g), Ok(p), _) => decide(g, p).map(str::to_string).map_err(str::to_string),
        (Err(_), Ok(p), Some(op)) => completed_comparison(op, p)
            .map(str::to_string)
            .map_err(str::to_string),
        _ => {
            if same_text(&normalize(gold), &normalize(answer)) {
                Ok("same text (not parsed)".into())
            } else {
                Err("not parsed, and the texts differ".into())
            }
        }
    }
}

/// The relation of a gold that is one relation sign and nothing else (`<`, `>`, `=`, `\leq`,
/// `≥`, `\neq`: the answer key of "compare: 3/4 _ 2/3" problems).
fn relation_sign(gold: &str) -> Option<RelOp> {
    match super::lex::lex(&prepare(gold))?.as_slice() {
        [super::lex::Tok::Rel(op)] if !matches!(op, RelOp::In | RelOp::NotIn | RelOp::Approx) => {
            Some(*op)
        }
        _ => None,
    }
}

/// An answer to a relation-sign gold `op` written as the completed comparison of two values
/// (`5 > 2` for `>`, `\frac34 > \frac23`): right when its one relation is `op` and holds
/// between the two values; the sign alone is compared as text.
fn completed_comparison(op: RelOp, answer: &Expr) -> Result<&'static str, &'static str> {
    let Expr::Rel(members, ops) = answer else {
        return Err("not a comparison, against a relation sign");
    };
    let ([a, b], [o]) = (members.as_slice(), ops.as_slice()) else {
        return Err("a chain of comparisons, against one relation sign");
    };
    if *o != op {
        return Err("the comparison's sign differs");
    }
    let none = |_: &str| None;
    let (Some(x), Some(y)) = (
        super::numeric::eval(a, &none),
        super::numeric::eval(b, &none),
    ) else {
        return Err("a comparison of what has no value");
    };
    if x.im != 0.0 || y.im != 0.0 {
        return Err("a comparison of complex values");
    }
    let equal = super::numeric::same_constant(x, y);
    let holds = match op {
        RelOp::Eq => equal,
        RelOp::Ne => !equal,
        RelOp::Lt => x.re < y.re && !equal,
        RelOp::Gt => x.re > y.re && !equal,
        RelOp::Le => x.re < y.re || equal,
        RelOp::Ge => x.re > y.re || equal,
        _ => false,
    };
    if holds {
        Ok("the completed comparison, with the gold's sign")
    } else {
        Err("a completed comparison that does not hold")
    }
}
