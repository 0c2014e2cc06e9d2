//! Text scanning the extraction rules share ([`super::extract`], [`super::final_line`],
//! [`super::span`]): the head of a long text, its first sentence, prose, the last math span,
//! the last number, a pattern outside math.

use super::normalize::clean_inline;

/// The first `max` bytes of `s` (fewer to end on a character boundary).
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

/// Whether `c` is a CJK ideograph or CJK / full-width punctuation (`答`, `。`, `，`, `：`): text
/// that is not math, as English words are.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(
        c,
        '\u{3000}'..='\u{303f}'
            | '\u{3400}'..='\u{4dbf}'
            | '\u{4e00}'..='\u{9fff}'
            | '\u{f900}'..='\u{faff}'
            | '\u{ff00}'..='\u{ffef}'
    )
}

/// `s` trimmed, or None when nothing is left.
pub(crate) fn non_empty(s: String) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The last non-empty `$...$` (or `$$...$$`, `\(..\)`, `\[..\]`) span: the right-hand side of its last `=` when
/// the part before its first `=` is plain arithmetic (`$180+24=204$` → 204), else the whole
/// span (`$x \leq 2$`, `$y = 2x+1$`: the comparison reads relations and labels).
pub(crate) fn last_math_span(text: &str) -> Option<String> {
    // a `\(..\)` or `\[..\]` span ending after the last `$`
    let dollar = text.rfind('$');
    let paren = ["\\)", "\\]"]
        .iter()
        .filter_map(|c| text.rfind(c).map(|p| (p, *c)))
        .max();
    if let Some((close, c)) = paren {
        if dollar.is_none_or(|d| close > d) {
            let open = if c == "\\)" { "\\(" } else { "\\[" };
            if let Some(start) = text[..close].rfind(open) {
                return span_value(text[start + 2..close].trim());
            }
        }
    }
    let mut end = dollar?;
    // skip the second `$` of a closing `$$` and empty spans
    for _ in 0..4 {
        let start = text[..end].rfind('$')?;
        let span = text[start + 1..end].trim();
        if span.is_empty() {
            end = start;
            continue;
        }
        return span_value(span);
    }
    None
}

/// [`last_math_span`], with the `$..$` spans right before it that only `and`, `or`, `&` and
/// commas separate from it, joined as list items in order: "Hence $B = 3$ and $E = 5$." →
/// `B = 3, E = 5` (a named pair), "so $x = 2$ or $x = 3$." → `x = 2, x = 3` (two values: the
/// comparison reads them as several answers, a hedge against one gold). A span that words
/// other than these separate is a step, not part of the answer ("from $x = 2$ we get $y = 5$"
/// → `y = 5`). At most [`MAX_JOINED_SPANS`] spans.
pub(crate) fn last_math_spans(text: &str) -> Option<String> {
    let last = last_math_span(text)?;
    // single-`$` spans only, and only when the text's last delimiter closes one of them
    let t = text.trim_end().trim_end_matches(['.', '!', ' ']);
    if !t.ends_with('$') || t.ends_with("$$") || t.contains("$$") || t.contains("\\$") {
        return Some(last);
    }
    let dollars: Vec<usize> = t.match_indices('$').map(|(i, _)| i).collect();
    if !dollars.len().is_multiple_of(2) {
        return Some(last);
    }
    let spans: Vec<(usize, usize)> = dollars.chunks(2).map(|p| (p[0], p[1])).collect();
    let mut items = vec![last];
    let mut k = spans.len() - 1;
    while k > 0 && items.len() < MAX_JOINED_SPANS {
        let between = &t[spans[k - 1].1 + 1..spans[k].0];
        if !only_separators(between) {
            break;
        }
        match span_value(t[spans[k - 1].0 + 1..spans[k - 1].1].trim()) {
            Some(v) => items.push(v),
            None => break,
        }
        k -= 1;
    }
    items.reverse();
    Some(items.join(", "))
}

/// The most `$..$` spans [`last_math_spans`] joins.
pub(crate) const MAX_JOINED_SPANS: usize = 8;

/// Whether `between` holds only list separators: commas, `and`, `or`, `&`, spaces; and at
/// least one of them (two spans side by side are one expression cut in two).
fn only_separators(between: &str) -> bool {
    let t = between.replace(',', " , ");
    let words: Vec<&str> = t.split_whitespace().collect();
    !words.is_empty()
        && words.len() <= 3
        && words
            .iter()
            .all(|w| matches!(w.to_ascii_lowercase().as_str(), "," | "and" | "or" | "&"))
}

/// A math span's answer: the right-hand side of plain arithmetic, else the whole span.
fn span_value(span: &str) -> Option<String> {
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
    non_empty(clean_inline(chosen))
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

/// The last number of `text` (`1,234`, `-0.5`, `3/4`; a clock time `8:45 PM` as one) that is
/// no exponent (`1,000.99m^{2}` → `1,000.99`: the `2` of a unit's power states nothing).
pub(crate) fn last_number(text: &str) -> Option<String> {
    // a clock time (`8:45 PM`, after [`super::normalize::clock_times`]) is one number
    let re = regex_cached(
        &NUMBER_RE,
        r"\b\d{1,2}:\d{2}(?: [AP]M)?\b|-?\d[\d,]*(?:\.\d+)?(?:/\d+)?",
    );
    let exponent = |start: usize| {
        let before = text[..start].trim_end_matches('{');
        before.ends_with('^')
    };
    re.find_iter(text)
        .filter(|m| !exponent(m.start()))
        .last()
        .and_then(|m| non_empty(m.as_str().trim_end_matches(',').to_string()))
}

static NUMBER_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();

/// A regex compiled once into `cell`.
pub(crate) fn regex_cached<'a>(
    cell: &'a std::sync::OnceLock<regex::Regex>,
    pattern: &str,
) -> &'a regex::Regex {
    cell.get_or_init(|| regex::Regex::new(pattern).expect("static regex compiles"))
}

/// Up to the first `. ` (or `.` at the end) outside `$...$` that is not a decimal point.
pub(crate) fn first_sentence(s: &str) -> &str {
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
pub(crate) fn outside_math_rfind(s: &str, pat: &str) -> Option<usize> {
    outside_math_find_all(s, pat).pop()
}

/// Every byte offset of `pat` in `s` outside `$..$` and braces, in order (linear in `s`).
pub(crate) fn outside_math_find_all(s: &str, pat: &str) -> Vec<usize> {
    let b = s.as_bytes();
    let (mut dollars, mut depth, mut all) = (0, 0i32, Vec::new());
    for i in 0..b.len() {
        match b[i] {
            b'$' => dollars += 1,
            b'{' => depth += 1,
            b'}' => depth -= 1,
            _ => {}
        }
        if dollars % 2 == 0 && depth == 0 && b[i..].starts_with(pat.as_bytes()) {
            all.push(i);
        }
    }
    all
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
