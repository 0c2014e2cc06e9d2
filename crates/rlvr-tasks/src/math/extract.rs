//! Extraction: the final answer of a model response (and of a gold answer).
//!
//! [`extract_answer`], first rule that finds something wins:
//! 1. the last `\boxed{...}` / `\fbox{...}` (nested braces, `\{ \}` escapes; `\boxed 5` too);
//!    boxes right before it separated only by `,`/`and`/`or`/`\quad` are joined (several
//!    answers; [`super::verify`] joins them only when the gold answer has several parts);
//! 2. GSM8K's `#### 42` (the text after the last `####`, to the end of its line);
//! 3. the last line with `Answer:` (DAPO's format; also `Final Answer:`, `**Answer:**`);
//! 4. the last "the answer is ..." (to the end of its sentence);
//! 5. a short one-line response (at most [`BARE_ANSWER_CHARS`]) is the answer itself;
//! 6. fallback: the right-hand side of the last `$...$` span, else the last number.
//!
//! Answers found by rules 2-4 are sentences at times ("The largest $n$ is 34. I hope it is
//! correct."): [`sentence_answer`] keeps the first sentence, the part after its last
//! "answer is" / " is ", and, when prose remains, its last `$...$` span or else its last
//! number.
//!
//! A response is searched whole, in linear scans; one longer than [`MAX_RESPONSE_BYTES`] is not
//! searched at all and has no answer (so it scores wrong: an answer the verifier did not read
//! in full could hide a different final answer before the part it read).

use super::normalize::clean_inline;

/// The longest response searched for an answer: 1 MiB, far beyond any generation budget
/// (about 250,000 tokens of text). A longer response has no answer ([`extract_answer`] returns
/// `None`) and is scored wrong, never judged on a part of it.
pub const MAX_RESPONSE_BYTES: usize = 1 << 20;
/// A response of one line with at most this many characters and no other answer marker is
/// taken as the answer itself.
pub const BARE_ANSWER_CHARS: usize = 80;
const MAX_ITEMS: usize = 64;

/// Extracts the final answer from a model response (rules in the module docs).
pub fn extract_answer(response: &str) -> Option<String> {
    extract(response, true)
}

pub(crate) fn extract(response: &str, join_boxes: bool) -> Option<String> {
    if response.len() > MAX_RESPONSE_BYTES {
        return None;
    }
    let text = response;
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
        if let Some(a) = non_empty(sentence_answer(rest)) {
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
        && !is_prose(trimmed)
    {
        return non_empty(clean_inline(trimmed));
    }
    last_math_span(text).or_else(|| last_number(text))
}

pub(crate) fn head(s: &str, max: usize) -> &str {
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
pub(crate) fn extract_boxed(s: &str) -> Option<String> {
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
    t.split_whitespace().all(|w| {
        matches!(
            w.to_ascii_lowercase().as_str(),
            "and" | "or" | "&" | "quad" | "qquad"
        )
    })
}

fn answer_line(text: &str) -> Option<String> {
    // lines from the last one up, lowercased once (ASCII lowercase keeps byte offsets)
    let lower = text.to_ascii_lowercase();
    let mut end = text.len();
    loop {
        let start = lower[..end].rfind('\n').map_or(0, |p| p + 1);
        // the last "answer" of the line followed by a colon (at most 8 tried per line)
        let mut line_end = end;
        for _ in 0..8 {
            let Some(p) = lower[start..line_end].rfind("answer") else {
                break;
            };
            let after = &text[start + p + 6..end];
            let after = after.trim_start_matches(['*', ' ']);
            if let Some(rest) = after.strip_prefix(':').or_else(|| after.strip_prefix('：')) {
                if let Some(a) = non_empty(sentence_answer(rest)) {
                    return Some(a);
                }
            }
            line_end = start + p;
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

/// The last non-empty `$...$` (or `$$...$$`) span: the right-hand side of its last `=` when
/// the part before its first `=` is plain arithmetic (`$180+24=204$` → 204), else the whole
/// span (`$x \leq 2$`, `$y = 2x+1$`: the comparison reads relations and labels).
fn last_math_span(text: &str) -> Option<String> {
    let mut end = text.rfind('$')?;
    // skip the second `$` of a closing `$$` and empty spans
    for _ in 0..4 {
        let start = text[..end].rfind('$')?;
        let span = text[start + 1..end].trim();
        if span.is_empty() {
            end = start;
            continue;
        }
        let first_lhs = span.split('=').next().unwrap_or("");
        let arithmetic = !span.contains('=')
            || (!strip_commands(first_lhs)
                .chars()
                .any(|c| c.is_ascii_alphabetic())
                && !span.contains(['<', '>', '!']));
        let chosen = if arithmetic {
            span.rsplit('=').next().unwrap_or(span)
        } else {
            span
        };
        return non_empty(clean_inline(chosen));
    }
    None
}

/// `s` without its `\commands` (`\frac{1}{2}` → `{1}{2}`).
fn strip_commands(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            while chars.peek().is_some_and(|n| n.is_ascii_alphabetic()) {
                chars.next();
            }
            continue;
        }
        out.push(c);
    }
    out
}

fn last_number(text: &str) -> Option<String> {
    let re = regex_cached(&NUMBER_RE, r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?");
    re.find_iter(text)
        .last()
        .and_then(|m| non_empty(m.as_str().trim_end_matches(',').to_string()))
}

static NUMBER_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static BOX_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();

fn regex_cached<'a>(
    cell: &'a std::sync::OnceLock<regex::Regex>,
    pattern: &str,
) -> &'a regex::Regex {
    cell.get_or_init(|| regex::Regex::new(pattern).expect("static regex compiles"))
}

/// The answer inside a sentence (rules in the module docs).
pub(crate) fn sentence_answer(s: &str) -> String {
    let s = first_sentence(s.trim());
    let lower = s.to_ascii_lowercase();
    let mut t = s;
    if let Some(p) = lower.rfind("answer is") {
        t = &s[p + "answer is".len()..];
    } else if is_prose(s) {
        if let Some(p) = outside_math_rfind(s, " is ") {
            t = &s[p + 4..];
        }
    }
    let t = t.trim_start_matches([':', ' ']).trim();
    if is_prose(t) {
        if let Some(span) = last_math_span(t) {
            return span;
        }
        if let Some(n) = last_number(t) {
            return n;
        }
    }
    clean_inline(t)
}

/// Up to the first `. ` (or `.` at the end) outside `$...$` that is not a decimal point.
fn first_sentence(s: &str) -> &str {
    let b = s.as_bytes();
    let mut dollars = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'$' {
            dollars += 1;
        }
        if c == b'.' && dollars % 2 == 0 && b.get(i + 1).is_some_and(|n| n.is_ascii_whitespace()) {
            return &s[..i];
        }
    }
    s
}

/// Byte offset of the last `pat` outside `$...$` spans and braces.
fn outside_math_rfind(s: &str, pat: &str) -> Option<usize> {
    let b = s.as_bytes();
    let (mut dollars, mut depth, mut last) = (0, 0i32, None);
    for i in 0..b.len() {
        match b[i] {
            b'$' => dollars += 1,
            b'{' => depth += 1,
            b'}' => depth -= 1,
            _ => {}
        }
        if dollars % 2 == 0 && depth == 0 && b[i..].starts_with(pat.as_bytes()) {
            last = Some(i);
        }
    }
    last
}

/// Whether `s` reads as prose: outside `$...$` and braces, at least two tokens made only
/// of letters, one of them of four or more (`The largest $n$ is 34`, but not `125 miles`,
/// `\text{Evelyn}` or `AZYUK2A`).
pub(crate) fn is_prose(s: &str) -> bool {
    let mut outside = String::with_capacity(s.len());
    let (mut dollars, mut depth) = (0, 0i32);
    for c in s.chars() {
        match c {
            '$' => dollars += 1,
            '{' => depth += 1,
            '}' => depth -= 1,
            _ if dollars % 2 == 0 && depth <= 0 => outside.push(c),
            _ => {}
        }
    }
    let words: Vec<&str> = outside
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | ':' | ';' | '!' | '?'))
        .filter(|w| {
            !w.is_empty()
                && w.chars().any(|c| c.is_ascii_alphabetic())
                && w.chars().all(|c| c.is_ascii_alphabetic() || c == '\'')
        })
        .collect();
    words.len() >= 2 && (words.len() >= 3 || words.iter().any(|w| w.len() >= 4))
}
