//! Math answer checking: extraction, normalization, equivalence.
//!
//! [`verify`] is `extract_answer(response)` followed by [`equivalent`] against the gold answer.
//!
//! **Extraction** ([`extract_answer`]), first rule that finds something wins:
//! 1. the last `\boxed{...}` / `\fbox{...}` (nested braces, `\{ \}` escapes; `\boxed 5` too);
//!    boxes right before it separated only by `,`/`and`/`or` are joined (several answers;
//!    [`verify`] joins them only when the gold answer has several parts);
//! 2. GSM8K's `#### 42` (the text after the last `####`, to the end of its line);
//! 3. the last line with `Answer:` (DAPO's format; also `Final Answer:`, `**Answer:**`);
//! 4. the last "the answer is ..." (to the end of its sentence);
//! 5. a short one-line response (at most [`BARE_ANSWER_CHARS`]) is the answer itself;
//! 6. fallback: the right-hand side of the last `$...$` span, else the last number.
//!
//! **Normalization** ([`normalize`]): math delimiters, `\left`/`\right`, LaTeX spacing,
//! `\dfrac`/`\tfrac`, `\text{}`/`\mathrm{}`/`\textbf{}`/`\mbox{}` unwrapped, degree signs,
//! trailing units (from a fixed list), `\$`, thousands separators, trailing punctuation.
//!
//! **Equivalence** ([`equivalent`]): after normalization, equal strings; then lists of several
//! answers (top-level `,`/`;`/`or`/`and`, compared as multisets), sets `\{..\}` (any order),
//! tuples, intervals (bracket kinds must agree), `\cup` unions, matrices (cell by cell), and
//! equations `x = 3` (the left side, a lone variable, is dropped on either side). Scalars:
//! decimal literals (and integers) are compared exactly; other expressions (fractions, mixed
//! numbers `2\frac12`, radicals, `\pi`, scientific notation, percentages) are evaluated with the
//! `exmex` crate and compared with relative tolerance 1e-9 (beyond 2^53, where `f64` cannot
//! tell integers apart, integer expressions are evaluated exactly in `i128`, else judged not
//! equivalent); expressions with the same variables are compared at three fixed points, one
//! negative (points where both sides are undefined are skipped). A percentage `p\%` also
//! matches `p/100` and `p`. Last, text answers compare case-insensitively (multiple choice
//! `(C)` = `C`).
//!
//! **Bounds**: only the last [`MAX_RESPONSE_BYTES`] of a response are searched, answers longer
//! than [`MAX_ANSWER_CHARS`] compare as strings only, expressions longer than 400 characters or
//! nested deeper than 32 levels are not evaluated, lists hold at most 64 items, and one
//! comparison makes at most 1,000 item comparisons. All scanning is
//! linear (the `regex` crate has no backtracking), exponentiation is in `f64` (no big powers),
//! so [`verify`] runs in bounded time on any input; it never panics.

use crate::Score;
use exmex::Express;

/// Only this many trailing bytes of a response are searched for an answer.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024;
/// Longer answers (gold or extracted) are compared as normalized strings only.
pub const MAX_ANSWER_CHARS: usize = 2_000;
/// A response of one line with at most this many characters and no other answer marker is
/// taken as the answer itself.
pub const BARE_ANSWER_CHARS: usize = 80;

const MAX_EVAL_CHARS: usize = 400;
const MAX_DEPTH: usize = 32;
const MAX_ITEMS: usize = 64;
const REL_TOL: f64 = 1e-9;

/// Scores `response` against `gold`: reward 1 when the extracted answer is equivalent.
///
/// A gold answer written as `\boxed{..}` is unwrapped first. `extracted` is the raw extracted
/// answer; `reason` says which rule matched or why it did not.
pub fn verify(gold: &str, response: &str) -> Score {
    // a gold answer is short: only its first MAX_ANSWER_CHARS characters count
    let gold = head(gold, 4 * MAX_ANSWER_CHARS);
    let gold = match gold.trim_start().starts_with("\\boxed") {
        true => last_boxed(gold).unwrap_or_else(|| gold.to_string()),
        false => gold.to_string(),
    };
    // joined boxes ("\boxed{1} and \boxed{2}") only when the gold has several answers, so
    // that a response cannot hedge between boxes of one answer
    let several = split_top(&canon(&gold), true).len() > 1;
    let Some(pred) = extract(response, several) else {
        return Score::binary(false, None, "no answer found");
    };
    match equivalent_reason(&gold, &pred) {
        Some(reason) => Score::binary(true, Some(pred), reason),
        None => Score::binary(false, Some(pred), "not equivalent to the gold answer"),
    }
}

/// Whether two answers (not responses: no extraction) are equivalent.
pub fn equivalent(gold: &str, pred: &str) -> bool {
    equivalent_reason(gold, pred).is_some()
}

// ---------------------------------------------------------------------------------------
// extraction
// ---------------------------------------------------------------------------------------

/// Extracts the final answer from a model response (rules in the module docs).
pub fn extract_answer(response: &str) -> Option<String> {
    extract(response, true)
}

fn extract(response: &str, join_boxes: bool) -> Option<String> {
    let text = tail(response, MAX_RESPONSE_BYTES);
    let boxed = if join_boxes {
        extract_boxed(text)
    } else {
        last_boxed(text)
    };
    if let Some(b) = boxed {
        return non_empty(b);
    }
    if let Some(pos) = text.rfind("####") {
        let rest = text[pos + 4..].lines().next().unwrap_or("");
        if let Some(a) = non_empty(clean_inline(rest)) {
            return Some(a);
        }
    }
    if let Some(a) = answer_line(text) {
        return Some(a);
    }
    if let Some(a) = answer_is(text) {
        return Some(a);
    }
    let trimmed = text.trim();
    if !trimmed.is_empty()
        && !trimmed.contains('\n')
        && !trimmed.contains('$')
        && trimmed.chars().count() <= BARE_ANSWER_CHARS
    {
        return non_empty(clean_inline(trimmed));
    }
    last_math_span(text).or_else(|| last_number(text))
}

fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

fn head(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn non_empty(s: String) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Strips markdown bold, math delimiters at the ends and trailing sentence punctuation.
fn clean_inline(s: &str) -> String {
    let mut t = s.trim().trim_matches('*').trim();
    loop {
        let before = t;
        t = t.trim_end_matches(['.', ',', ';', ':', '!']).trim();
        t = t.trim_matches('*').trim();
        if let Some(x) = t.strip_prefix("$$").and_then(|x| x.strip_suffix("$$")) {
            t = x.trim();
        } else if let Some(x) = t.strip_prefix('$').and_then(|x| x.strip_suffix('$')) {
            t = x.trim();
        } else if let Some(x) = t.strip_prefix("\\(").and_then(|x| x.strip_suffix("\\)")) {
            t = x.trim();
        } else if let Some(x) = t.strip_prefix("\\[").and_then(|x| x.strip_suffix("\\]")) {
            t = x.trim();
        }
        if t == before {
            break;
        }
    }
    t.to_string()
}

/// Content of the balanced group starting at `open` (`s[open]` is `{`), and the index after
/// its `}`. `\{` and `\}` do not count.
fn balanced(s: &str, open: usize) -> Option<(&str, usize)> {
    let bytes = s.as_bytes();
    debug_assert_eq!(bytes.get(open), Some(&b'{'));
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&s[open + 1..i], i + 1));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// For each `{` of a text, the index of its matching `}` (one linear pass, so that many
/// unbalanced `\boxed{` cannot make extraction quadratic). `\{` and `\}` do not count.
struct Braces(Vec<u32>);

impl Braces {
    const NONE: u32 = u32::MAX;

    fn new(s: &str) -> Self {
        let bytes = s.as_bytes();
        let mut close = vec![Self::NONE; bytes.len()];
        let mut stack: Vec<usize> = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 1,
                b'{' => stack.push(i),
                b'}' => {
                    if let Some(open) = stack.pop() {
                        close[open] = i as u32;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Braces(close)
    }

    /// Content of the group opening at `open`, and the index after its `}`.
    fn group<'a>(&self, s: &'a str, open: usize) -> Option<(&'a str, usize)> {
        let c = *self.0.get(open)?;
        (c != Self::NONE).then(|| (&s[open + 1..c as usize], c as usize + 1))
    }
}

/// One `\boxed`/`\fbox` argument starting right after the command name at `at`.
fn boxed_arg<'a>(s: &'a str, braces: &Braces, at: usize) -> Option<(&'a str, usize)> {
    let rest = &s[at..];
    let skipped = rest.len() - rest.trim_start().len();
    let start = at + skipped;
    match s[start..].chars().next()? {
        '{' => braces.group(s, start),
        c if c.is_alphanumeric() || c == '-' || c == '\\' => {
            if skipped == 0 && c.is_alphabetic() {
                return None; // `\boxedx` is another command
            }
            let len = s[start..]
                .find(|c: char| c.is_whitespace() || c == '$')
                .unwrap_or(s.len() - start);
            Some((&s[start..start + len], start + len))
        }
        _ => None,
    }
}

/// The content of the last `\boxed{...}` / `\fbox{...}` in `text` (no joining).
pub fn last_boxed(text: &str) -> Option<String> {
    let braces = Braces::new(text);
    let mut last = None;
    let mut from = 0;
    for (p, len) in box_cmds(text) {
        if p < from {
            continue; // inside the previous box
        }
        if let Some((content, end)) = boxed_arg(text, &braces, p + len) {
            last = Some(content);
            from = end;
        }
    }
    last.map(|c| c.trim().to_string())
}

/// The last boxed answer; directly preceding boxes joined by connectors are included.
fn extract_boxed(s: &str) -> Option<String> {
    let braces = Braces::new(s);
    let mut boxes: Vec<(usize, usize, &str)> = Vec::new(); // (start, end, content)
    let mut from = 0;
    for (cmd_start, cmd_len) in box_cmds(s) {
        if cmd_start < from {
            continue; // inside the previous box
        }
        if let Some((content, end)) = boxed_arg(s, &braces, cmd_start + cmd_len) {
            boxes.push((cmd_start, end, content));
            from = end;
        }
        if boxes.len() > 10_000 {
            boxes.drain(..boxes.len() - 1);
        }
    }
    let (mut first, _, last) = *boxes.last()?;
    let mut parts = vec![last.trim()];
    for w in boxes.windows(2).rev() {
        let (_, prev_end, prev) = w[0];
        let between = &s[prev_end..first];
        if !is_connector(between) || parts.len() >= MAX_ITEMS {
            break;
        }
        parts.push(prev.trim());
        first = w[0].0;
    }
    parts.reverse();
    Some(parts.join(", "))
}

/// Start and length of every `\\boxed` / `\\fbox` command, in order (one linear pass).
fn box_cmds(s: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    regex_cached(&BOX_RE, r"\\boxed|\\fbox")
        .find_iter(s)
        .map(|m| (m.start(), m.len()))
}

fn is_connector(between: &str) -> bool {
    if between.len() > 24 {
        return false;
    }
    let t = between
        .replace("\\text", "")
        .replace(['$', ',', ';', '{', '}', '(', ')', '\\'], " ");
    t.split_whitespace()
        .all(|w| matches!(w.to_ascii_lowercase().as_str(), "and" | "or" | "&"))
}

fn answer_line(text: &str) -> Option<String> {
    // lines from the last one up, lowercased once (ASCII lowercase keeps byte offsets)
    let lower = text.to_ascii_lowercase();
    let mut end = text.len();
    loop {
        let start = lower[..end].rfind('\n').map_or(0, |p| p + 1);
        if let Some(p) = lower[start..end].rfind("answer") {
            let after = &text[start + p + 6..end];
            let after = after.trim_start_matches(['*', ' ']);
            if let Some(rest) = after.strip_prefix(':').or_else(|| after.strip_prefix('：')) {
                if let Some(a) = non_empty(clean_inline(rest)) {
                    return Some(a);
                }
            }
        }
        if start == 0 {
            return None;
        }
        end = start - 1;
    }
}

fn answer_is(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let p = lower.rfind("answer is")?;
    let rest = &text[p + "answer is".len()..];
    let rest = rest.lines().next().unwrap_or("");
    let rest = rest.trim_start_matches([':', ' ']);
    // the sentence ends at ". " (not inside a number) or at the end of the line
    let mut end = rest.len();
    let bytes = rest.as_bytes();
    let mut dollars = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'$' {
            dollars += 1;
        }
        if b == b'.' && dollars % 2 == 0 && bytes.get(i + 1).is_none_or(|c| *c == b' ') {
            end = i;
            break;
        }
    }
    non_empty(clean_inline(&rest[..end]))
}

fn last_math_span(text: &str) -> Option<String> {
    let end = text.rfind('$')?;
    let start = text[..end].rfind('$')?;
    let span = text[start + 1..end].trim();
    let rhs = span.rsplit('=').next().unwrap_or(span);
    non_empty(clean_inline(rhs))
}

fn last_number(text: &str) -> Option<String> {
    let re = regex_cached(&NUMBER_RE, r"-?\d[\d,]*(?:\.\d+)?");
    re.find_iter(text)
        .last()
        .and_then(|m| non_empty(m.as_str().trim_end_matches(',').to_string()))
}

static NUMBER_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static BOX_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static THOUSANDS_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static DECIMAL_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static LHS_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();

fn regex_cached<'a>(
    cell: &'a std::sync::OnceLock<regex::Regex>,
    pattern: &str,
) -> &'a regex::Regex {
    cell.get_or_init(|| regex::Regex::new(pattern).expect("static regex compiles"))
}

// ---------------------------------------------------------------------------------------
// normalization
// ---------------------------------------------------------------------------------------

/// Units dropped from the end of an answer (after a number or a closing bracket).
const UNITS: &[&str] = &[
    "units",
    "unit",
    "cm",
    "mm",
    "km",
    "m",
    "meters",
    "meter",
    "metres",
    "centimeters",
    "centimeter",
    "kilometers",
    "kilometer",
    "inches",
    "inch",
    "in",
    "feet",
    "foot",
    "ft",
    "yards",
    "yard",
    "miles",
    "mile",
    "mph",
    "dollars",
    "dollar",
    "cents",
    "cent",
    "degrees",
    "degree",
    "seconds",
    "second",
    "sec",
    "s",
    "minutes",
    "minute",
    "min",
    "hours",
    "hour",
    "hr",
    "hrs",
    "h",
    "days",
    "day",
    "weeks",
    "week",
    "years",
    "year",
    "months",
    "month",
    "pounds",
    "pound",
    "lbs",
    "lb",
    "kg",
    "g",
    "grams",
    "gram",
    "liters",
    "liter",
    "l",
    "ml",
    "sq",
    "square",
    "cubic",
    "people",
    "students",
    "points",
    "ways",
    "times",
    "percent",
    "mg",
    "nm",
    "cents",
    "kw",
    "w",
    "j",
    "k",
    "ev",
    "mev",
    "kev",
    "hz",
    "mhz",
    "ghz",
    "pc",
    "kpc",
    "mpc",
    "au",
    "ly",
    "v",
    "pa",
    "atm",
    "mol",
    "n",
];

/// The canonical form of an answer used for comparisons, with all whitespace removed.
pub fn normalize(answer: &str) -> String {
    squash(&canon(answer))
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Normalization keeping single spaces between words (needed to split on `or`/`and`).
fn canon(answer: &str) -> String {
    let mut s: String = answer.trim().chars().take(MAX_ANSWER_CHARS).collect();
    if s.trim_start().starts_with("\\boxed") || s.trim_start().starts_with("\\fbox") {
        if let Some(b) = extract_boxed(&s) {
            s = b;
        }
    }
    s = clean_inline(&s);
    // matrix row separators survive the spacing rules below
    s = s.replace("\\\\", "\u{1}");
    for (from, to) in [
        ("\\dfrac", "\\frac"),
        ("\\tfrac", "\\frac"),
        ("\\cfrac", "\\frac"),
        ("\\left", ""),
        ("\\right", ""),
        ("\\bigl", ""),
        ("\\bigr", ""),
        ("\\Bigl", ""),
        ("\\Bigr", ""),
        ("\\displaystyle", ""),
        ("\\qquad", " "),
        ("\\quad", " "),
        ("\\!", ""),
        ("\\,", " "),
        ("\\;", " "),
        ("\\:", " "),
        ("\\ ", " "),
        ("~", " "),
        ("\\$", ""),
        ("\\%", "%"),
        ("{,}", ","),
        ("^{\\circ}", ""),
        ("^\\circ", ""),
        ("^{\\circ }", ""),
        ("\\circ", ""),
        ("\\degree", ""),
        ("°", ""),
        ("\\infty", "\\infty "),
        ("\\le ", "\\leq "),
        ("\\ge ", "\\geq "),
        ("\\lvert", "|"),
        ("\\rvert", "|"),
        ("−", "-"),
        ("\\times10", "\\times 10"),
    ] {
        if s.contains(from) {
            s = s.replace(from, to);
        }
    }
    // `\left.` / `\right.` leave a lone dot before a delimiter: harmless after the above.
    for cmd in [
        "\\text",
        "\\textbf",
        "\\textit",
        "\\mathrm",
        "\\mathbf",
        "\\mathit",
        "\\mbox",
        "\\operatorname",
        "\\textrm",
        "\\mathsf",
        "\\emph",
        "\\textsf",
    ] {
        s = unwrap_command(&s, cmd);
    }
    s = s.replace('$', "").replace('\u{1}', "\\\\");
    s = strip_trailing_units(&s);
    s = clean_inline(&s);
    let t = squash(&s);
    let thousands = regex_cached(&THOUSANDS_RE, r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$");
    if thousands.is_match(&t) {
        s = t.replace(',', "");
    }
    // multiple choice: (C) or C  ->  C
    let t = squash(&s);
    let tb = t.as_bytes();
    if tb.len() == 3 && tb[0] == b'(' && tb[2] == b')' && tb[1].is_ascii_uppercase() {
        s = (tb[1] as char).to_string();
    }
    // whole-word "degrees"/units removed above; collapse whitespace
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Replaces `\cmd{X}` by ` X ` (spaces keep words apart, so unit words stay recognizable).
fn unwrap_command(s: &str, cmd: &str) -> String {
    if !s.contains(cmd) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(p) = s[i..].find(cmd) {
        let at = i + p;
        let after = at + cmd.len();
        out.push_str(&s[i..at]);
        // must be the whole command name (not \textbf when looking for \text)
        let next = s[after..].chars().next();
        if next.is_some_and(|c| c.is_ascii_alphabetic()) {
            out.push_str(cmd);
            i = after;
            continue;
        }
        let ws = s[after..].len() - s[after..].trim_start().len();
        if s[after + ws..].starts_with('{') {
            if let Some((content, end)) = balanced(s, after + ws) {
                out.push(' ');
                out.push_str(content);
                out.push(' ');
                i = end;
                continue;
            }
        }
        i = after;
    }
    out.push_str(&s[i..]);
    out
}

fn strip_trailing_units(s: &str) -> String {
    let mut t = s.trim_end().to_string();
    for _ in 0..4 {
        let trimmed = t.trim_end_matches(['.', ' ']);
        // the last word, possibly with ^2 / ^3 (square units)
        let base = trimmed
            .trim_end_matches(['2', '3', ' '])
            .trim_end_matches(['^', '{', '}', ' ']);
        let base = if base.len() < trimmed.len() && !trimmed[base.len()..].contains('^') {
            trimmed // a trailing 2 or 3 without ^ is part of the answer
        } else {
            base
        };
        let word_start = base
            .char_indices()
            .rev()
            .find(|(_, c)| !c.is_ascii_alphabetic())
            .map_or(0, |(p, c)| p + c.len_utf8());
        let word = &base[word_start..];
        if word.is_empty() || !UNITS.contains(&word.to_ascii_lowercase().as_str()) {
            break;
        }
        let before = &base[..word_start];
        let before_trim = before.trim_end();
        let sep = before.len() != before_trim.len();
        let ok_prev = before_trim
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_digit() || c == '}' || c == ')' || c == '%');
        // single-letter units only when written apart ("5 m"), so "2x" or "3m" stay
        if !ok_prev || (word.len() == 1 && !sep) {
            break;
        }
        t = before_trim.to_string();
    }
    t
}

// ---------------------------------------------------------------------------------------
// equivalence
// ---------------------------------------------------------------------------------------

thread_local! {
    /// Comparisons left for the current [`equivalent_reason`] call: nested lists of lists
    /// cannot blow up the pairwise matching.
    static BUDGET: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}
const MAX_COMPARISONS: u32 = 1_000;

fn spend() -> bool {
    BUDGET.with(|b| {
        let left = b.get();
        b.set(left.saturating_sub(1));
        left > 0
    })
}

fn equivalent_reason(gold: &str, pred: &str) -> Option<&'static str> {
    BUDGET.with(|b| b.set(MAX_COMPARISONS));
    let (g, p) = (canon(gold), canon(pred));
    if g.is_empty() || p.is_empty() {
        return None;
    }
    if squash(&g) == squash(&p) {
        return Some("same answer after normalization");
    }
    if g.chars().count() >= MAX_ANSWER_CHARS || p.chars().count() >= MAX_ANSWER_CHARS {
        return None;
    }
    equiv_items(&g, &p, 0)
}

/// Several answers: compare as multisets when either side has more than one.
fn equiv_items(g: &str, p: &str, depth: usize) -> Option<&'static str> {
    if depth > 4 {
        return None;
    }
    let gi = split_top(g, true);
    let pi = split_top(p, true);
    if gi.len() > 1 || pi.len() > 1 {
        if gi.len() > 1 && pi.len() > 1 && multiset_match(&gi, &pi, depth) {
            return Some("same list of answers");
        }
        // a bare list of answers against a set: the same multiset
        let (one, many) = if gi.len() == 1 {
            (&gi[0], &pi)
        } else {
            (&pi[0], &gi)
        };
        if gi.len() != pi.len() && (gi.len() == 1 || pi.len() == 1) {
            if let Some(c) = collection(one).filter(|c| c.kind == Kind::Set) {
                return multiset_match(&c.items, many, depth).then_some("same set");
            }
        }
        // "x = 1, y = 2" against "(1, 2)": fall through to a single-item comparison
        if gi.len() != pi.len() {
            return equiv_one(g, p, depth);
        }
        return None;
    }
    equiv_one(g, p, depth)
}

fn multiset_match(a: &[String], b: &[String], depth: usize) -> bool {
    if a.len() != b.len() || a.len() > MAX_ITEMS {
        return false;
    }
    let mut used = vec![false; b.len()];
    'outer: for x in a {
        for (j, y) in b.iter().enumerate() {
            if !used[j] && equiv_one(x, y, depth + 1).is_some() {
                used[j] = true;
                continue 'outer;
            }
        }
        return false;
    }
    true
}

/// Splits at top-level separators: `,` and `;` (when `commas`), and the words `or`/`and`.
fn split_top(s: &str, commas: bool) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() && (chars[i + 1] == '{' || chars[i + 1] == '}') {
            depth += if chars[i + 1] == '{' { 1 } else { -1 };
            cur.push(c);
            cur.push(chars[i + 1]);
            i += 2;
            continue;
        }
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            if commas && (c == ',' || c == ';') {
                parts.push(std::mem::take(&mut cur));
                i += 1;
                continue;
            }
            let rest: String = chars[i..chars.len().min(i + 5)].iter().collect();
            let at_word_start = i == 0 || chars[i - 1] == ' ';
            if at_word_start && (rest.starts_with("or ") || rest.starts_with("and ")) {
                parts.push(std::mem::take(&mut cur));
                i += if rest.starts_with("or ") { 3 } else { 4 };
                continue;
            }
        }
        cur.push(c);
        i += 1;
        if parts.len() > MAX_ITEMS {
            break;
        }
    }
    parts.push(cur);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Drops a left-hand side that is a lone variable: `x = 3` -> `3`, `x \in [0,1]` -> `[0,1]`.
fn strip_lhs(s: &str) -> &str {
    let re = regex_cached(
        &LHS_RE,
        r"^\s*(?:[A-Za-z]|\\[a-z]+)(?:_\{?[A-Za-z0-9]+\}?)?(?:\([a-z]\))?\s*(?:=|\\in)\s*",
    );
    match re.find(s) {
        Some(m) if m.end() < s.len() && !s[m.end()..].contains('=') => &s[m.end()..],
        _ => s,
    }
}

fn equiv_one(g: &str, p: &str, depth: usize) -> Option<&'static str> {
    if !spend() {
        return None;
    }
    let (g, p) = (g.trim(), p.trim());
    if squash(g) == squash(p) {
        return Some("same answer after normalization");
    }
    let (g2, p2) = (strip_lhs(g), strip_lhs(p));
    if (g2.len(), p2.len()) != (g.len(), p.len()) {
        if squash(g2) == squash(p2) {
            return Some("same right-hand side");
        }
        return equiv_items(g2, p2, depth + 1);
    }
    match (collection(g), collection(p)) {
        (Some(cg), Some(cp)) => return equiv_collections(&cg, &cp, depth),
        (Some(_), None) | (None, Some(_)) => return None,
        (None, None) => {}
    }
    equiv_scalar(g, p)
}

#[derive(Debug, PartialEq, Clone, Copy)]
enum Kind {
    /// `\{..\}`: order does not matter
    Set,
    /// `( )`, `[ ]`, `( ]`, `[ )`: ordered, brackets must agree
    Ordered(char, char),
    /// `A \cup B`: order does not matter
    Union,
    /// rows of a matrix
    Matrix,
}

struct Collection {
    kind: Kind,
    items: Vec<String>,
}

fn collection(s: &str) -> Option<Collection> {
    let t = s.trim();
    if t.contains("\\cup") {
        let items: Vec<String> = t.split("\\cup").map(|x| x.trim().to_string()).collect();
        if items.len() > 1 && items.len() <= MAX_ITEMS && items.iter().all(|i| !i.is_empty()) {
            return Some(Collection {
                kind: Kind::Union,
                items,
            });
        }
    }
    if let Some(body) = t.strip_prefix("\\begin{") {
        let env_end = body.find('}')?;
        let env = &body[..env_end];
        let end_tag = format!("\\end{{{env}}}");
        let inner = body[env_end + 1..].strip_suffix(&end_tag)?;
        let rows: Vec<String> = inner
            .split("\\\\")
            .map(|r| {
                r.split('&')
                    .map(|c| c.trim())
                    .collect::<Vec<_>>()
                    .join(" & ")
            })
            .filter(|r| !r.trim().is_empty())
            .collect();
        return Some(Collection {
            kind: Kind::Matrix,
            items: rows,
        });
    }
    if let Some(inner) = t.strip_prefix("\\{").and_then(|x| x.strip_suffix("\\}")) {
        if matching_outer(t, 2) {
            return Some(Collection {
                kind: Kind::Set,
                items: split_top(inner, true),
            });
        }
    }
    let first = t.chars().next()?;
    let last = t.chars().last()?;
    if matches!(first, '(' | '[') && matches!(last, ')' | ']') && t.len() >= 2 {
        let inner = &t[1..t.len() - 1];
        if matching_outer(t, 1) {
            let items = split_top(inner, true);
            if items.len() >= 2 {
                return Some(Collection {
                    kind: Kind::Ordered(first, last),
                    items,
                });
            }
        }
    }
    None
}

/// Whether the opening bracket of `s` (of byte length `open_len`) closes at the very end.
fn matching_outer(s: &str, open_len: usize) -> bool {
    let mut depth = 0i32;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (opening, closing) = if b == b'\\' && i + 1 < bytes.len() {
            let n = bytes[i + 1];
            i += 1;
            (n == b'{', n == b'}')
        } else {
            (
                matches!(b, b'(' | b'[' | b'{'),
                matches!(b, b')' | b']' | b'}'),
            )
        };
        if opening {
            depth += 1;
        } else if closing {
            depth -= 1;
            if depth == 0 && i + 1 < bytes.len() {
                return false;
            }
        }
        i += 1;
    }
    let _ = open_len;
    depth == 0
}

fn equiv_collections(g: &Collection, p: &Collection, depth: usize) -> Option<&'static str> {
    if g.items.len() != p.items.len() || g.items.len() > MAX_ITEMS || depth > 6 {
        return None;
    }
    match (g.kind, p.kind) {
        (Kind::Set, Kind::Set) | (Kind::Union, Kind::Union) => {
            multiset_match(&g.items, &p.items, depth).then_some("same set")
        }
        (Kind::Ordered(a, b), Kind::Ordered(c, d)) if (a, b) == (c, d) => g
            .items
            .iter()
            .zip(&p.items)
            .all(|(x, y)| equiv_one(x, y, depth + 1).is_some())
            .then_some("same tuple or interval"),
        (Kind::Matrix, Kind::Matrix) => g
            .items
            .iter()
            .zip(&p.items)
            .all(|(x, y)| {
                let (xs, ys): (Vec<&str>, Vec<&str>) =
                    (x.split('&').collect(), y.split('&').collect());
                xs.len() == ys.len()
                    && xs
                        .iter()
                        .zip(&ys)
                        .all(|(a, b)| equiv_one(a, b, depth + 1).is_some())
            })
            .then_some("same matrix"),
        _ => None,
    }
}

fn equiv_scalar(g: &str, p: &str) -> Option<&'static str> {
    let (gs, ps) = (squash(g), squash(p));
    // infinities
    let inf = |s: &str| match s {
        "\\infty" | "+\\infty" | "∞" | "inf" => Some(1),
        "-\\infty" | "-∞" | "-inf" => Some(-1),
        _ => None,
    };
    if let (Some(a), Some(b)) = (inf(&gs), inf(&ps)) {
        return (a == b).then_some("same infinity");
    }
    let (gp, gs) = split_percent(&gs);
    let (pp, ps) = split_percent(&ps);
    // exact decimal comparison when both are plain numbers
    if let (Some(a), Some(b)) = (decimal(gs), decimal(ps)) {
        if a == b {
            return Some("same number");
        }
        if gp != pp {
            let (x, y) = (gs.parse::<f64>().ok()?, ps.parse::<f64>().ok()?);
            let (x, y) = if gp { (x / 100.0, y) } else { (x, y / 100.0) };
            return close(x, y).then_some("same number (percentage)");
        }
        return None;
    }
    if let (Some(gt), Some(pt)) = (to_toks(gs), to_toks(ps)) {
        if let Some(reason) = equiv_exprs(&gt, &pt, gp, pp) {
            return Some(reason);
        }
    }
    // text answers
    let clean = |s: &str| {
        s.chars()
            .filter(|c| !matches!(c, '{' | '}' | '\\' | '(' | ')' | '.'))
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let (a, b) = (clean(gs), clean(ps));
    (!a.is_empty() && a == b && a.chars().any(|c| c.is_alphabetic())).then_some("same text")
}

fn split_percent(s: &str) -> (bool, &str) {
    match s.strip_suffix('%') {
        Some(x) => (true, x),
        None => (false, s),
    }
}

/// A plain decimal literal in canonical form (sign, no leading/trailing zeros), or None.
fn decimal(s: &str) -> Option<String> {
    let re = regex_cached(&DECIMAL_RE, r"^([-+]?)(\d*)(?:\.(\d*))?$");
    let c = re.captures(s)?;
    let int = c.get(2).map_or("", |m| m.as_str()).trim_start_matches('0');
    let frac = c.get(3).map_or("", |m| m.as_str()).trim_end_matches('0');
    if c.get(2).is_none_or(|m| m.as_str().is_empty())
        && c.get(3).is_none_or(|m| m.as_str().is_empty())
    {
        return None;
    }
    let neg = c.get(1).is_some_and(|m| m.as_str() == "-") && !(int.is_empty() && frac.is_empty());
    Some(format!("{}{}.{}", if neg { "-" } else { "" }, int, frac))
}

fn close(a: f64, b: f64) -> bool {
    if !a.is_finite() || !b.is_finite() {
        return false;
    }
    (a - b).abs() <= 1e-12 + REL_TOL * a.abs().max(b.abs())
}

/// Largest magnitude where `f64` still tells consecutive integers apart.
const F64_EXACT: f64 = 9_007_199_254_740_992.0; // 2^53

fn equiv_exprs(gt: &[Tok], pt: &[Tok], gp: bool, pp: bool) -> Option<&'static str> {
    let ge = exmex::parse::<f64>(&render(gt)).ok()?;
    let pe = exmex::parse::<f64>(&render(pt)).ok()?;
    let gv: Vec<String> = ge.var_names().to_vec();
    let pv: Vec<String> = pe.var_names().to_vec();
    if gv != pv || gv.len() > 8 {
        return None;
    }
    if gv.is_empty() {
        let (x, y) = (ge.eval(&[]).ok()?, pe.eval(&[]).ok()?);
        if close(x, y) {
            if x.abs().max(y.abs()) < F64_EXACT {
                return Some("same value");
            }
            // too large for f64 to decide: exact integers, else not equivalent
            return match (exact_int(gt), exact_int(pt)) {
                (Some(a), Some(b)) if a == b => Some("same integer"),
                _ => None,
            };
        }
        if gp != pp {
            let (x, y) = if gp { (x / 100.0, y) } else { (x, y / 100.0) };
            return close(x, y).then_some("same value (percentage)");
        }
        return None;
    }
    // same variables: equal at three fixed points
    let points = [-1.3717_f64, 0.7312, 2.3117];
    let mut checked = 0;
    for (k, base) in points.iter().enumerate() {
        let vals: Vec<f64> = (0..gv.len())
            .map(|i| base + 0.377 * i as f64 + 0.05 * k as f64)
            .collect();
        let (x, y) = (ge.eval(&vals).ok()?, pe.eval(&vals).ok()?);
        if x.is_nan() && y.is_nan() {
            continue;
        }
        if !close(x, y) {
            return None;
        }
        checked += 1;
    }
    (checked > 0).then_some("same expression")
}

// ---------------------------------------------------------------------------------------
// LaTeX -> exmex expression
// ---------------------------------------------------------------------------------------

/// Parses a (normalized, space-free) LaTeX scalar into tokens ([`render`] makes them an exmex
/// expression). None when it holds anything this converter does not understand.
fn to_toks(s: &str) -> Option<Vec<Tok>> {
    if s.len() > MAX_EVAL_CHARS || s.is_empty() {
        return None;
    }
    let chars: Vec<char> = s.chars().collect();
    let mut conv = Conv {
        c: &chars,
        i: 0,
        depth: 0,
    };
    let toks = conv.seq(None)?;
    if conv.i != chars.len() {
        return None;
    }
    Some(toks)
}

/// Exact value of an integer expression (`+ - *`, exact `/` and `\\frac`, `^` with exponent
/// 0..=127, parentheses, implicit products) in `i128`; None on anything else or on overflow.
/// Used where `f64` cannot tell numbers apart (beyond 2^53: `2^{1009}` vs `2^{1009}+1`).
fn exact_int(toks: &[Tok]) -> Option<i128> {
    fn operand(t: &Tok) -> Option<i128> {
        match t {
            Tok::Num(n) => n.parse().ok(),
            Tok::Group(g) if !matches!(g.first(), Some(Tok::Op(_)) | Some(Tok::Func(_))) => {
                exact_int(g)
            }
            Tok::Group(g) if matches!(g.first(), Some(Tok::Op('-'))) => exact_int(g),
            Tok::Frac(n, d, _) => {
                let (n, d) = (exact_int(n)?, exact_int(d)?);
                (d != 0 && n % d == 0).then(|| n / d)
            }
            _ => None,
        }
    }
    // sum of signed terms; a term is a product of operands with powers
    let (mut sum, mut term, mut sign) = (0i128, None::<i128>, 1i128);
    let mut pending_div = false;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Op('+') | Tok::Op('-') => {
                if let Some(t) = term.take() {
                    sum = sum.checked_add(sign.checked_mul(t)?)?;
                    sign = 1;
                }
                if toks[i] == Tok::Op('-') {
                    sign = -sign;
                }
            }
            Tok::Op('*') => {}
            Tok::Op('/') => pending_div = true,
            t => {
                // a mixed number (2\frac{1}{2}) is not an integer product
                if matches!(t, Tok::Frac(_, _, true))
                    && matches!(toks.get(i.wrapping_sub(1)), Some(Tok::Num(_)))
                {
                    return None;
                }
                let mut v = operand(t)?;
                while let Some(Tok::Group(g)) = toks.get(i + 1) {
                    if g.first() != Some(&Tok::Op('^')) {
                        break;
                    }
                    let e = exact_int(&g[1..])?;
                    if !(0..=127).contains(&e) {
                        return None;
                    }
                    v = v.checked_pow(e as u32)?;
                    i += 1;
                }
                term = Some(match (term, pending_div) {
                    (None, false) => v,
                    (None, true) => return None,
                    (Some(t), false) => t.checked_mul(v)?,
                    (Some(t), true) => {
                        if v == 0 || t % v != 0 {
                            return None;
                        }
                        t / v
                    }
                });
                pending_div = false;
            }
        }
        i += 1;
    }
    sum.checked_add(sign.checked_mul(term?)?)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(String),
    Var(String),
    Const(&'static str),
    Func(&'static str),
    Op(char),
    Group(Vec<Tok>),
    /// `\frac{int}{int}` right after an integer reads as a mixed number
    Frac(Vec<Tok>, Vec<Tok>, bool),
}

struct Conv<'a> {
    c: &'a [char],
    i: usize,
    depth: usize,
}

const GREEK: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "theta",
    "lambda",
    "mu",
    "sigma",
    "phi",
    "omega",
    "rho",
    "tau",
    "epsilon",
    "varepsilon",
    "eta",
    "xi",
    "psi",
    "chi",
    "kappa",
    "nu",
    "zeta",
];

impl Conv<'_> {
    fn peek(&self) -> Option<char> {
        self.c.get(self.i).copied()
    }

    fn command(&mut self) -> String {
        // at '\'
        self.i += 1;
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.i += 1;
        }
        self.c[start..self.i].iter().collect()
    }

    /// A sequence until `close` (or the end when None).
    fn seq(&mut self, close: Option<char>) -> Option<Vec<Tok>> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                if close.is_some() {
                    return None;
                }
                break;
            };
            if Some(c) == close {
                self.i += 1;
                break;
            }
            if close.is_none() && matches!(c, ')' | ']' | '}') {
                return None;
            }
            out.push(self.atom()?);
            if out.len() > MAX_EVAL_CHARS {
                return None;
            }
        }
        self.depth -= 1;
        Some(out)
    }

    /// One argument of `\frac`/`\sqrt`/`^`: a `{group}` or a single character/command.
    fn arg(&mut self) -> Option<Vec<Tok>> {
        match self.peek()? {
            '{' => {
                self.i += 1;
                self.seq(Some('}'))
            }
            c if c.is_ascii_digit() || c.is_ascii_alphabetic() => {
                self.i += 1;
                Some(vec![if c.is_ascii_digit() {
                    Tok::Num(c.to_string())
                } else {
                    Tok::Var(c.to_string())
                }])
            }
            '\\' => Some(vec![self.atom()?]),
            '-' => {
                self.i += 1;
                let mut v = vec![Tok::Op('-')];
                v.extend(self.arg()?);
                Some(vec![Tok::Group(v)])
            }
            _ => None,
        }
    }

    fn atom(&mut self) -> Option<Tok> {
        let c = self.peek()?;
        if c.is_ascii_digit() || c == '.' {
            return self.number();
        }
        if c.is_ascii_alphabetic() {
            self.i += 1;
            let mut name = c.to_string();
            if self.peek() == Some('_') {
                self.i += 1;
                let sub = self.arg()?;
                name.push('_');
                for t in sub {
                    match t {
                        Tok::Num(n) | Tok::Var(n) => name.push_str(&n),
                        _ => return None,
                    }
                }
            }
            if name == "e" {
                return Some(Tok::Const("E"));
            }
            return Some(Tok::Var(name));
        }
        self.i += 1;
        match c {
            '+' | '-' | '*' | '/' | '^' => {
                if c == '^' {
                    let a = self.arg()?;
                    return Some(Tok::Group(vec![Tok::Op('^'), Tok::Group(a)]));
                }
                Some(Tok::Op(c))
            }
            '(' => Some(Tok::Group(self.seq(Some(')'))?)),
            '[' => Some(Tok::Group(self.seq(Some(']'))?)),
            '{' => Some(Tok::Group(self.seq(Some('}'))?)),
            'π' => Some(Tok::Const("PI")),
            '√' => Some(Tok::Group(vec![Tok::Func("sqrt"), Tok::Group(self.arg()?)])),
            '\\' => {
                self.i -= 1;
                let name = self.command();
                match name.as_str() {
                    "frac" => {
                        let num = self.arg()?;
                        let den = self.arg()?;
                        let int = |v: &[Tok]| matches!(v, [Tok::Num(n)] if !n.contains('.'));
                        let simple = int(&num) && int(&den);
                        Some(Tok::Frac(num, den, simple))
                    }
                    "sqrt" => {
                        if self.peek() == Some('[') {
                            self.i += 1;
                            let n = self.seq(Some(']'))?;
                            let x = self.arg()?;
                            let mut inv = vec![Tok::Num("1".into()), Tok::Op('/'), Tok::Group(n)];
                            inv = vec![Tok::Group(inv)];
                            return Some(Tok::Group(vec![
                                Tok::Group(x),
                                Tok::Op('^'),
                                Tok::Group(inv),
                            ]));
                        }
                        Some(Tok::Group(vec![Tok::Func("sqrt"), Tok::Group(self.arg()?)]))
                    }
                    "pi" => Some(Tok::Const("PI")),
                    "cdot" | "times" | "ast" => Some(Tok::Op('*')),
                    "div" => Some(Tok::Op('/')),
                    "sin" | "cos" | "tan" | "ln" | "exp" | "log" | "arcsin" | "arccos"
                    | "arctan" => {
                        let f: &'static str = match name.as_str() {
                            "sin" => "sin",
                            "cos" => "cos",
                            "tan" => "tan",
                            "ln" => "ln",
                            "exp" => "exp",
                            "log" => "log10",
                            "arcsin" => "asin",
                            "arccos" => "acos",
                            _ => "atan",
                        };
                        if self.peek() == Some('_') || self.peek() == Some('^') {
                            return None;
                        }
                        let a = match self.peek()? {
                            '(' | '{' | '[' => vec![self.atom()?],
                            _ => vec![self.atom()?],
                        };
                        Some(Tok::Group(vec![Tok::Func(f), Tok::Group(a)]))
                    }
                    g if GREEK.contains(&g) => Some(Tok::Var(g.to_string())),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn number(&mut self) -> Option<Tok> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        if self.peek() == Some('.') {
            self.i += 1;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.i += 1;
            }
        }
        // scientific notation 1.5e-3 / 2E+5
        if matches!(self.peek(), Some('e') | Some('E')) {
            let save = self.i;
            self.i += 1;
            if matches!(self.peek(), Some('+') | Some('-')) {
                self.i += 1;
            }
            if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
            } else {
                self.i = save;
            }
        }
        let text: String = self.c[start..self.i].iter().collect();
        if text == "." {
            return None;
        }
        if text.bytes().all(|b| b.is_ascii_digit()) {
            // integer literals stay verbatim (exact arithmetic needs every digit)
            let t = text.trim_start_matches('0');
            return Some(Tok::Num(if t.is_empty() {
                "0".into()
            } else {
                t.to_string()
            }));
        }
        let v: f64 = text.parse().ok()?;
        Some(Tok::Num(format!("{v}")))
    }
}

fn is_operand_end(t: &Tok) -> bool {
    !matches!(t, Tok::Op(_) | Tok::Func(_))
}

fn render(toks: &[Tok]) -> String {
    let mut out = String::new();
    let mut prev: Option<&Tok> = None;
    for (i, t) in toks.iter().enumerate() {
        let starts_operand = !matches!(t, Tok::Op(_));
        let glue = match (prev, t) {
            (Some(Tok::Num(n)), Tok::Frac(_, _, true)) if !n.contains('.') && !n.contains('-') => {
                // mixed number: 2\frac{1}{2} = 2 + 1/2 (integer literal prefix only);
                // after a minus, -1\frac{1}{2} = -1 - 1/2
                let negated = i >= 2 && toks[i - 2] == Tok::Op('-');
                let powered = i >= 2
                    && matches!(&toks[i - 2], Tok::Group(g) if g.first() == Some(&Tok::Op('^')));
                match (negated, powered) {
                    (_, true) => "*",
                    (true, false) => "-",
                    (false, false) => "+",
                }
            }
            (Some(p), _) if is_operand_end(p) && starts_operand => "*",
            _ => "",
        };
        out.push_str(glue);
        match t {
            Tok::Num(n) => out.push_str(&format!("({n})")),
            Tok::Var(v) => out.push_str(v),
            Tok::Const(c) => out.push_str(c),
            Tok::Func(f) => out.push_str(f),
            Tok::Op(o) => out.push(*o),
            Tok::Group(g) => {
                // `^` groups render inline: the operator joins the previous operand
                if matches!(g.first(), Some(Tok::Op('^'))) {
                    if out.ends_with('*') {
                        out.pop();
                    }
                    out.push('^');
                    out.push('(');
                    out.push_str(&render(&g[1..]));
                    out.push(')');
                } else if matches!(g.first(), Some(Tok::Func(_))) {
                    out.push_str(&render(g));
                } else {
                    out.push('(');
                    out.push_str(&render(g));
                    out.push(')');
                }
            }
            Tok::Frac(n, d, _) => {
                out.push_str(&format!("(({})/({}))", render(n), render(d)));
            }
        }
        prev = Some(t);
    }
    // a number rendered as (1e0) right after a function name needs no `*`
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yes(g: &str, p: &str) {
        assert!(equivalent(g, p), "expected {g:?} == {p:?}");
    }
    fn no(g: &str, p: &str) {
        assert!(!equivalent(g, p), "expected {g:?} != {p:?}");
    }

    #[test]
    fn extraction_rules() {
        assert_eq!(
            extract_answer("so \\boxed{\\frac{1}{2}} and later \\boxed{\\{1, \\frac{3}{4}\\}}.")
                .as_deref(),
            Some("\\{1, \\frac{3}{4}\\}")
        );
        assert_eq!(extract_answer("\\fbox{7}").as_deref(), Some("7"));
        assert_eq!(extract_answer("$\\boxed 5$").as_deref(), Some("5"));
        assert_eq!(extract_answer("x\n#### 1,234\n").as_deref(), Some("1,234"));
        assert_eq!(extract_answer("work\nAnswer: $42$").as_deref(), Some("42"));
        assert_eq!(
            extract_answer("work\n**Final Answer:** 3.5.").as_deref(),
            Some("3.5")
        );
        assert_eq!(
            extract_answer("So the answer is 3.5. Done").as_deref(),
            Some("3.5")
        );
        assert_eq!(
            extract_answer("The answer is $\\frac{1}{2}$.").as_deref(),
            Some("\\frac{1}{2}")
        );
        assert_eq!(
            extract_answer("\\boxed{2} and \\boxed{3}").as_deref(),
            Some("2, 3")
        );
        assert_eq!(
            extract_answer("we get $180+24=204$. -sepehr2010").as_deref(),
            Some("204")
        );
        assert_eq!(extract_answer("x = 3").as_deref(), Some("x = 3"));
        assert_eq!(
            extract_answer("unbalanced \\boxed{1 + {2"),
            Some("unbalanced \\boxed{1 + {2".into())
        );
        assert_eq!(extract_answer(""), None);
    }

    #[test]
    fn normalization() {
        assert_eq!(
            normalize("\\left( 3, \\dfrac{\\pi}{2} \\right)"),
            "(3,\\frac{\\pi}{2})"
        );
        assert_eq!(normalize("10\\text{ cm}^2"), "10");
        assert_eq!(normalize("90^\\circ"), "90");
        assert_eq!(normalize("1,000,000."), "1000000");
        assert_eq!(normalize("\\$5.00"), "5.00");
        assert_eq!(normalize("\\text{(C)}"), "C");
        assert_eq!(normalize("2x"), "2x");
    }

    #[test]
    fn numbers() {
        yes("27", "27.0");
        yes("015", "15");
        yes("0.5", "\\frac{1}{2}");
        yes("\\frac{1}{2}", "\\dfrac12");
        yes("2\\frac{1}{2}", "\\frac{5}{2}");
        yes("-1\\frac{1}{2}", "-1.5");
        yes("3-1\\frac{1}{2}", "1.5");
        yes("2\\frac{\\sqrt{3}}{2}", "\\sqrt{3}");
        yes("50\\%", "0.5");
        yes("50\\%", "50");
        yes("1.5\\times10^{3}", "1500");
        yes("1.5e3", "1500");
        yes("-\\frac{3}{4}", "-0.75");
        yes("1,234", "1234");
        no("204", "205");
        no("0.33", "\\frac{1}{3}");
        no("123456789012", "123456789013");
        no("2^{1009}", "2^{1009}+1");
        yes("2^{100}", "1267650600228229401496703205376");
        no("2^{100}", "1267650600228229401496703205377");
        yes("2^{10}\\cdot 3", "3072");
        yes("\\frac{2^{70}}{4}", "2^{68}");
        no("3^{200}", "3^{200}-1");
        no("\\frac{1}{2}", "\\frac{1}{3}");
    }

    #[test]
    fn radicals_and_pi() {
        yes("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt2}");
        yes("2\\sqrt{3}", "\\sqrt{12}");
        yes("\\sqrt[3]{8}", "2");
        yes("\\frac{\\pi}{2}", "\\pi/2");
        yes("4\\pi", "4 \\pi");
        no("2\\sqrt{3}", "3\\sqrt{2}");
        no("\\pi", "3.14");
    }

    #[test]
    fn structures() {
        yes("\\left( 3, \\frac{\\pi}{2} \\right)", "(3, \\pi/2)");
        no("(3, \\frac{\\pi}{2})", "(\\frac{\\pi}{2}, 3)");
        yes("[2, 5)", "[2,5)");
        no("[2, 5)", "(2, 5)");
        yes("\\{1, 2, 3\\}", "\\{3, 1, 2\\}");
        yes("1, 2", "2, 1");
        yes("x = 3", "3");
        yes("3", "x=3");
        yes("-2, 1", "x = 1 \\text{ or } x = -2");
        yes(
            "(-\\infty, 3] \\cup (5, \\infty)",
            "(5,\\infty)\\cup(-\\infty,3]",
        );
        yes(
            "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}",
            "\\begin{pmatrix}1\\\\ 2.0\\end{pmatrix}",
        );
        no("1, 2", "1, 3");
        no("1, 2", "1");
        yes("2x+3", "3+2x");
        yes("\\frac{x^2-1}{x-1}", "x+1");
        no("\\sqrt{x^2}", "x");
        yes("\\sqrt{x}", "x^{1/2}");
        no("2x+3", "2x-3");
        yes("\\text{Evelyn}", "Evelyn");
        yes("(C)", "C");
    }

    #[test]
    fn verify_scores() {
        let s = verify("42", "blah \\boxed{42}");
        assert!(s.correct && s.reward == 1.0);
        assert_eq!(s.extracted.as_deref(), Some("42"));
        let s = verify(
            "42",
            "no digits here, long enough to not be a bare answer at all, no\nreally",
        );
        assert!(!s.correct);
        assert_eq!(s.reason, "no answer found");
        assert!(verify("\\boxed{7}", "Answer: 7").correct);
    }
}
