//! The last resort of extraction: the final line of a finished response.
//!
//! A response with no box and no answer marker is read at its **final line** (the last
//! non-empty line; up to [`MAX_CLOSING_LINES`] closing lines with no digit and no math, such
//! as "I hope this helps!" or a paragraph explaining the method, are passed over). Earlier lines are never searched: an earlier
//! formula is a step, not the answer.
//!
//! **Truncation heuristic.** The fallback only fires on a genuine final line; a response
//! that stopped mid-computation (a generation cut at its token budget) or loops has no
//! committed answer, whatever its last number is. A response is taken as unfinished when:
//! - it **repeats itself**: its last [`TAIL_CHARS`] characters occur 3 or more times in it,
//!   or its final line (8 characters or more) is 3 or more of its lines;
//! - its final line is **cut**: an unclosed `\[`/`\(`, or more `{` than `}` (a `$` count
//!   says nothing: `$` is also a currency sign);
//! - its final line **does not end a sentence**: it must end with `.`, `!`, `。`, `।` (the
//!   danda of Bengali and Hindi), a closing
//!   `$`, `\]`, `\)` or `**`, be a closing question with no digit and no math ("Is there
//!   anything else I can help you with?"), be an equation line (not prose) whose right side
//!   is a plain number (`P(X > 2) = 0.452`), be the whole response on one line of at most
//!   [`super::BARE_ANSWER_CHARS`] characters, or be a short stand-alone line (at most
//!   [`STANDALONE_CHARS`] characters, not prose) that follows a blank line or a line ending
//!   in `:` ("...\n\n15", "Therefore:\nx = 7"). So "Then we add 3 + 4 = 7" (cut
//!   mid-sentence) has no answer, while "So she has 7 apples left." has 7. An author
//!   signature after the last sentence is not part of it (`... $180 + 24 = 204$. -sepehr2010`
//!   ends a sentence; [`SIGNATURE_CHARS`]).
//!
//! A final line that declines to answer ([`super::refusal`]) or restates the question's
//! instruction ([`super::instruction`]: "Return 1 for finite dimension and 0 for infinite.")
//! has no answer, and so has one
//! that announces work still to come ("We will now proceed to solve the quadratics for C and
//! D."): the response stopped before its answer, and the formula above is a step. When the line
//! above it states a value in prose ("Thus the integral is $\frac{\pi}{4}$."), that statement
//! is the answer and the announcement a closing line.
//!
//! From the final line: a line of Chinese text gives the value it ends on ([`cjk_end_value`]:
//! `所以，离心率为 1/2。` → `1/2`); prose with a copula is read like a statement
//! ([`super::span::statement_answer`]: "Thus there are $125$ trees on $5$ vertices." →
//! 125); else its last `$..$` span (the right-hand side of plain arithmetic,
//! `$180+24=204$` → 204), with the spans before it that only `and`, `or` and commas separate
//! (`text::last_math_spans`: "Hence $B = 3$ and $E = 5$." → `B = 3, E = 5`); else
//! two or more assignments of numbers that end the sentence ("Solving, we get B = 3, E = 5."
//! → `B = 3, E = 5`); else the line itself when it is short and not prose (`x = 7`); else
//! its last number.

use super::normalize::clean_inline;
use super::text::{head, is_cjk, is_prose, last_math_spans, last_number, outside_math_rfind};

/// Closing lines passed over at the end of a response.
pub const MAX_CLOSING_LINES: usize = 4;
/// Characters of the tail whose repetition marks a looping response.
pub const TAIL_CHARS: usize = 48;
/// The longest name in a trailing author signature (`-sepehr2010`).
pub const SIGNATURE_CHARS: usize = 32;
/// The longest stand-alone final line.
pub const STANDALONE_CHARS: usize = 40;
const MAX_LINE: usize = 2_000;

/// Why the final line gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoFinal {
    /// No line with a number or math.
    Nothing,
    /// The response repeats itself.
    Looping,
    /// The final line is cut or does not end a sentence.
    Unfinished,
    /// The final line declines to answer.
    Refusal,
    /// The final line restates the question's instruction ([`super::instruction`]).
    Instruction,
}

/// The answer of the final line of `text` (rules in the module docs).
/// The word of a line that is one word of letters in square brackets (`[Yes]`, `[ no ]`,
/// `[False].`), of at most 12 letters.
fn bracketed_word(line: &str) -> Option<&str> {
    let inner = line
        .trim_end_matches('.')
        .strip_prefix('[')?
        .strip_suffix(']')?
        .trim();
    (!inner.is_empty() && inner.len() <= 12 && inner.chars().all(|c| c.is_ascii_alphabetic()))
        .then_some(inner)
}

pub fn final_line_answer(text: &str) -> Result<String, NoFinal> {
    let text = text.trim_end();
    if text.is_empty() {
        return Err(NoFinal::Nothing);
    }
    if loops(text) {
        return Err(NoFinal::Looping);
    }
    // a response that ends on a display whose delimiters stand on their own lines (`\[`, the
    // math, `\]`) ends on the math inside it, read as one line of math
    if let Some(inner) = closing_display(text) {
        let inner = inner.split_whitespace().collect::<Vec<_>>().join(" ");
        if !inner.is_empty() && !inner.contains('$') {
            return final_line_answer(&format!("${inner}$"));
        }
    }
    let lines: Vec<&str> = text.rsplit('\n').take(2 * MAX_CLOSING_LINES + 6).collect();
    let last = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
    let final_line = lines[last].trim();
    // a last line that is one word in brackets is the answer the prompt asked for in that form
    // (`[Yes]`, `[No]`: "answer "[Yes]" or "[No]""), not a closing line to pass over
    if let Some(word) = bracketed_word(final_line) {
        return Ok(word.to_string());
    }
    let before = lines.get(last + 1).map(|l| l.trim());
    // passing over closing lines without digits or math
    let mut chosen = None;
    for (passed, l) in lines[last..]
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        if l.contains(|c: char| c.is_ascii_digit() || c == '$' || c == '\\') {
            chosen = Some(l);
            break;
        }
        if passed == MAX_CLOSING_LINES {
            break;
        }
    }
    let line = without_enumerator(without_signature(head(
        chosen.ok_or(NoFinal::Nothing)?,
        MAX_LINE,
    )));
    if super::refusal::is_refusal(line) || super::refusal::is_refusal(final_line) {
        return Err(NoFinal::Refusal);
    }
    if !finished(final_line, before) {
        return Err(NoFinal::Unfinished);
    }
    let sentence = last_sentence_with_math(line);
    // a final line that announces more work ("We will now solve the quadratics...") was cut
    // before the answer: the formula above it is a step, unless that line states a value
    // ("Thus the integral is $\frac{\pi}{4}$.\n\nNow, let's summarize it in JSON.")
    if announces_more_work(final_line) && !(is_prose(sentence) && has_copula(sentence)) {
        return Err(NoFinal::Unfinished);
    }
    // "Return 1 for finite dimension and 0 for infinite." names codes, not an answer
    if super::instruction::restates_instruction(sentence) {
        return Err(NoFinal::Instruction);
    }
    // a line in Chinese gives the value it ends on (`所以，离心率为 1/2。` → `1/2`)
    if let Some(v) = cjk_end_value(sentence) {
        return Ok(v);
    }
    let stated = if is_prose(sentence) && has_copula(sentence) {
        super::span::statement_answer(sentence)
    } else {
        String::new()
    };
    let answer = if !stated.trim().is_empty() {
        stated
    } else if let Some(span) = last_math_spans(sentence) {
        span
    } else if let Some(pairs) = trailing_assignments(sentence) {
        pairs
    } else if !is_prose(sentence) && sentence.chars().count() <= super::BARE_ANSWER_CHARS {
        clean_inline(sentence.trim_start_matches(['-', '>', ' ']))
    } else {
        last_number(sentence).unwrap_or_default()
    };
    let answer = answer.trim();
    if answer.is_empty() {
        Err(NoFinal::Nothing)
    } else {
        Ok(answer.to_string())
    }
}

/// Two or more plain-text assignments of numbers to letters that end a sentence, joined as
/// list items: "Solving, we get B = 3, E = 5." → `B = 3, E = 5` (a named tuple;
/// [`super::compare`]). None when the sentence does not end so.
fn trailing_assignments(sentence: &str) -> Option<String> {
    let re = super::text::regex_cached(
        &ASSIGNMENTS_RE,
        r"(?:^|[\s,:;])((?:[A-Za-z](?:_\{?\w{1,3}\}?)?\s*=\s*-?\d+(?:[./]\d+)?\s*(?:,\s*and|,|and|&)\s*){1,7}[A-Za-z](?:_\{?\w{1,3}\}?)?\s*=\s*-?\d+(?:[./]\d+)?)\s*[.!]?\s*$",
    );
    let m = re.captures(head(sentence, MAX_LINE))?.get(1)?;
    let items: Vec<String> = m
        .as_str()
        .split([',', '&'])
        .flat_map(|p| p.split(" and "))
        .map(|p| p.trim().trim_start_matches("and ").trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    (items.len() >= 2).then(|| items.join(", "))
}

static ASSIGNMENTS_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();

/// Openings of a line that announces steps still to come.
const MORE_WORK: &[&str] = &[
    "we will now",
    "we'll now",
    "now we will",
    "now, we will",
    "now we'll",
    "next, we will",
    "next we will",
    "next, we'll",
    "we will proceed",
    "we now proceed",
    "let's now",
    "let us now",
    "now let's",
    "now, let's",
    "now let us",
    "let's proceed",
    "let us proceed",
    "i will now",
    "i'll now",
];

/// Whether `line`, with no digit and no math, announces work still to come ("We will now
/// proceed to solve the quadratic equations for C and D.", "Next, let's check each option.").
/// A line with a value is never such a line ("Now we will add 3 + 4 = 7." is cut or answers).
/// The math of the display that ends `text` when its closing `\]` (or `$$`) stands alone on
/// the last line: what lies between it and the opening delimiter before it.
fn closing_display(text: &str) -> Option<&str> {
    let last = text.rsplit('\n').next()?.trim();
    let (open, close) = match last {
        "\\]" => ("\\[", "\\]"),
        "$$" => ("$$", "$$"),
        _ => return None,
    };
    let body = text.trim_end().strip_suffix(close)?;
    let start = body.rfind(open)? + open.len();
    Some(&body[start..])
}

/// `line` without the number or letter of a list item that opens it, when a word follows
/// (`3) Therefore, the total is 203.` → `Therefore, the total is 203.`; also `3.`, `(3)`, `b)`):
/// the item's number is not a value the line states.
fn without_enumerator(line: &str) -> &str {
    let b = line.as_bytes();
    let (start, close) = match b.first() {
        Some(b'(') => (1, b')'),
        _ => (0, 0),
    };
    let mut i = start;
    while i < b.len() && i < start + 2 && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == start && b.get(i).is_some_and(u8::is_ascii_lowercase) && b.get(i + 1) == Some(&b')') {
        i += 1; // a letter item, `b)`
    }
    if i == start {
        return line;
    }
    let closed = match close {
        0 => matches!(b.get(i), Some(b')' | b'.')),
        c => b.get(i) == Some(&c),
    };
    if !closed {
        return line;
    }
    // `i` is at an ASCII `)` or `.`, so `i + 1` is a character boundary
    let rest = &line[i + 1..];
    let word = rest.strip_prefix([' ', '\t']).is_some_and(|r| {
        r.trim_start()
            .starts_with(|c: char| c.is_ascii_alphabetic() || c == '*')
    });
    if word {
        rest.trim_start()
    } else {
        line
    }
}

fn announces_more_work(line: &str) -> bool {
    if line.contains(|c: char| c.is_ascii_digit() || c == '$' || c == '\\') {
        return false;
    }
    let lower = line.to_ascii_lowercase().replace('’', "'");
    let lower = lower.trim_start_matches(|c: char| !c.is_ascii_alphabetic());
    MORE_WORK.iter().any(|p| lower.starts_with(p))
}

/// Units and measure words written after a number in Chinese and Japanese answers (money,
/// counts, lengths, areas, weights, times, ages), read as units by [`cjk_end_value`].
#[rustfmt::skip]
pub const CJK_UNITS: &[&str] = &[
    "元", "美元", "块", "块钱", "円", "个", "個", "人", "名", "位", "只", "本",
    "张", "辆", "条", "件", "棵", "头", "页", "瓶", "杯", "盒", "袋", "箱",
    "支", "颗", "朵", "枚", "匹", "次", "天", "日", "周", "年", "月", "岁",
    "小时", "時間", "分钟", "分", "秒", "米", "厘米", "毫米", "千米", "公里", "英里", "英尺",
    "克", "千克", "公斤", "磅", "升", "毫升", "度", "平方米", "立方米", "平方厘米", "立方厘米", "平方英尺",
];

/// The value a line of Chinese text ends on: the expression after its last CJK character,
/// sentence punctuation dropped (`因此，$a = 1$。` → `a = 1`; `解方程得到n=8.` → `n=8`;
/// `故选 B` → `B`). Values joined by 或/或者 (or), 和/与/及 (and) or `、` stay together as
/// items (`得到$q=1$或$q=2$` → `q=1, q=2`: a hedge against one gold). None when the line holds
/// no CJK or ends in text (`所以 $x=3$ 不成立`). CJK inside `$..$` is math, not text.
pub fn cjk_end_value(line: &str) -> Option<String> {
    let t = line.trim_end_matches(|c: char| {
        c.is_whitespace() || matches!(c, '。' | '.' | '！' | '!' | '；' | ';' | '，' | ',')
    });
    if !t.chars().any(is_cjk) {
        return None;
    }
    // a unit or measure word after the value (`129200 美元`, `5 个`, `12 天`): the value ends
    // the line (only the words of [`CJK_UNITS`]: `x=3 不成立`, "does not hold", is no unit)
    let unit = t
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_cjk(c))
        .last();
    let t = match unit {
        Some((i, _))
            if CJK_UNITS.contains(&&t[i..])
                && t[..i].trim_end().ends_with(|c: char| c.is_ascii_digit()) =>
        {
            t[..i].trim_end()
        }
        _ => t,
    };
    // the start of the trailing value, and the connectors inside it (byte range, reading)
    let mut start = 0;
    let mut connectors: Vec<(usize, usize, &str)> = Vec::new();
    let mut dollars = 0;
    let mut chars = t.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '$' && !t[..i].ends_with('\\') {
            dollars += 1;
        }
        if dollars % 2 == 1 || !is_cjk(c) {
            continue;
        }
        let mut end = i + c.len_utf8();
        let reading = match c {
            '或' => {
                if let Some(&(j, '者')) = chars.peek() {
                    chars.next();
                    end = j + '者'.len_utf8();
                }
                " or "
            }
            '和' | '与' | '及' => " and ",
            '、' => ", ",
            _ => "",
        };
        if !reading.is_empty() && !t[start..i].trim().is_empty() {
            connectors.push((i, end, reading));
        } else {
            start = end;
            connectors.clear();
        }
    }
    let mut value = String::new();
    let mut from = start;
    for (a, b, reading) in connectors {
        value.push_str(&t[from..a]);
        value.push_str(reading);
        from = b;
    }
    value.push_str(&t[from..]);
    let answer = super::span::statement_answer(&value);
    (!answer.trim().is_empty()).then(|| answer.trim().to_string())
}

/// The value a block of working ends on: an answer section that solves before it answers
/// (`Final Answer:\nx + 3x = 20\n4x = 20\nx = 5`, a `【答案】` block of working) commits to
/// the value of its last line with a digit or math (closing lines without are passed over, as
/// for the final line), when that line is a value: in Chinese text, the value it ends on
/// ([`cjk_end_value`]); otherwise a line of math with no word outside math
/// ([`super::span::has_words`]) that is an equation ending in a number (`x = 5`,
/// `$S = \frac{10}{2}(1+19) = 100$`) or a short expression (at most [`STANDALONE_CHARS`]
/// characters). None for a line of prose (`Check: 5 + 15 = 20`), a refusal, or a block longer
/// than [`super::span::MAX_STATEMENT`] bytes (too long to be read as one answer).
pub fn block_end_value(block: &str) -> Option<String> {
    if block.len() > super::span::MAX_STATEMENT {
        return None;
    }
    let mut lines = block
        .trim_end()
        .rsplit('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(MAX_CLOSING_LINES + 1)
        .peekable();
    if super::refusal::is_refusal(lines.peek()?) {
        return None;
    }
    let line = lines.find(|l| l.contains(|c: char| c.is_ascii_digit() || c == '$' || c == '\\'))?;
    if super::refusal::is_refusal(line) {
        return None;
    }
    if line.chars().any(is_cjk) {
        return cjk_end_value(line);
    }
    let t = line.trim_end_matches(['.', ' ']);
    let plain = t.replace('$', "");
    let value_line = !super::span::has_words(t)
        && (equation_value(&plain) || plain.trim().chars().count() <= STANDALONE_CHARS);
    if !value_line {
        return None;
    }
    let answer = super::span::statement_answer(t);
    (!answer.trim().is_empty()).then(|| answer.trim().to_string())
}

/// Whether `text` looks truncated: it repeats itself, or its final line is cut or does not
/// end a sentence (the rules in the module docs).
pub fn looks_truncated(text: &str) -> bool {
    let text = text.trim_end();
    if text.is_empty() {
        return false;
    }
    if loops(text) {
        return true;
    }
    let mut lines = text.rsplit('\n').map(str::trim).filter(|l| !l.is_empty());
    let last = lines.next().unwrap_or("");
    let before = text.rsplit('\n').nth(1).map(str::trim);
    !finished(last, before)
}

fn has_copula(s: &str) -> bool {
    [" is ", " are ", " equals ", " was "]
        .iter()
        .any(|c| outside_math_rfind(s, c).is_some())
}

/// The last sentence of a line holding a digit or math (the line when none splits).
fn last_sentence_with_math(line: &str) -> &str {
    let b = line.as_bytes();
    let mut starts = vec![0];
    let mut dollars = 0;
    for (i, &c) in b.iter().enumerate() {
        if c == b'$' {
            dollars += 1;
        }
        if matches!(c, b'.' | b'!' | b'?')
            && dollars % 2 == 0
            && b.get(i + 1).is_some_and(|n| *n == b' ')
        {
            starts.push(i + 1);
        }
    }
    let sentences = || {
        starts.iter().enumerate().rev().map(|(k, &s)| {
            let e = starts.get(k + 1).copied().unwrap_or(line.len());
            line[s..e].trim()
        })
    };
    // a sentence with math first (`we get $180+24=204$. -user2010`), else with a digit
    sentences()
        .find(|s| s.contains(['$', '\\']))
        .or_else(|| sentences().find(|s| s.contains(|c: char| c.is_ascii_digit())))
        .unwrap_or(line)
}

/// Whether the response repeats its tail or its final line (see the module docs).
fn loops(text: &str) -> bool {
    let n = text.chars().count();
    if n >= 4 * TAIL_CHARS {
        let start = text
            .char_indices()
            .nth(n - TAIL_CHARS)
            .map_or(0, |(i, _)| i);
        let tail = &text[start..];
        if text.matches(tail).take(3).count() >= 3 {
            return true;
        }
    }
    let last = text.rsplit('\n').next().unwrap_or("").trim();
    last.len() >= 8 && text.lines().filter(|l| l.trim() == last).take(3).count() >= 3
}

/// `line` without a trailing author signature: a space, then `-`, `~` or `—` and one name of at
/// most [`SIGNATURE_CHARS`] letters, digits, `_` or `.` (AoPS solutions end
/// `... $180 + 24 = 204$. -sepehr2010`). A signature is only cut after a sentence end, so a
/// line cut mid-sentence stays unfinished.
fn without_signature(line: &str) -> &str {
    let Some(p) = line.rfind([' ', '\t']) else {
        return line;
    };
    let (head, tail) = (line[..p].trim_end(), &line[p + 1..]);
    let name = tail
        .strip_prefix(['-', '~', '—'])
        .map(|n| n.trim_start_matches(['-', '~']));
    match name {
        Some(n)
            if !n.is_empty()
                && n.chars().count() <= SIGNATURE_CHARS
                && n.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
                && head.ends_with(['.', '!', '$']) =>
        {
            head
        }
        _ => line,
    }
}

/// Whether `t` is an equation whose last side is a plain number: `= 0.452`, `= -3`, `= 12%`.
fn equation_value(t: &str) -> bool {
    let Some(p) = t.rfind('=') else {
        return false;
    };
    let v = t[p + 1..].trim().trim_end_matches('%');
    let v = v.strip_prefix(['-', '+']).unwrap_or(v);
    !v.is_empty()
        && v.starts_with(|c: char| c.is_ascii_digit())
        && v.ends_with(|c: char| c.is_ascii_digit())
        && v.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '/'))
}

/// Whether the final line ends the response (see the module docs).
fn finished(line: &str, before: Option<&str>) -> bool {
    let unclosed = |o: &str, c: &str| line.rfind(o).is_some_and(|p| !line[p..].contains(c));
    if line.matches('{').count() > line.matches('}').count()
        || unclosed("\\[", "\\]")
        || unclosed("\\(", "\\)")
    {
        return false;
    }
    let t = without_signature(line.trim_end());
    let sentence_end = t.ends_with(['.', '!', '。', '।', '$'])
        || t.ends_with("\\]")
        || t.ends_with("\\)")
        || (t.ends_with("**") && t.len() > 4);
    if sentence_end {
        return true;
    }
    // a closing question with no digit and no math ("Is there anything else I can help
    // you with?"): the model finished and handed back the turn
    let closing = !t.contains(|c: char| c.is_ascii_digit() || c == '$' || c == '\\');
    if closing && t.ends_with(['?', '？']) {
        return true;
    }
    // an equation line whose right side is a whole value (`P(X > 2) = 0.452`)
    if !is_prose(t) && equation_value(t) {
        return true;
    }
    let n = t.chars().count();
    // the whole response is one short line; or a short stand-alone line after a break
    (before.is_none() && n <= super::BARE_ANSWER_CHARS)
        || (n <= STANDALONE_CHARS
            && !is_prose(t)
            && before.is_none_or(|b| b.is_empty() || b.ends_with(':')))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A final line announcing work still to come leaves the response unfinished; a closing
    /// line that announces nothing, or a line that carries its value, does not.
    #[test]
    fn a_final_line_announcing_more_work_is_unfinished() {
        for tail in [
            "We will now proceed to solve the quadratic equations for functions C and D.",
            "Next, we will check each of the remaining options.",
            "Now, let's solve for y.",
            "Let us now verify the other cases.",
        ] {
            let r = format!("For D: \\[ 0 = x^2 - 2x + 5 \\]\nThis is a quadratic.\n\n{tail}");
            assert_eq!(final_line_answer(&r), Err(NoFinal::Unfinished), "{tail}");
        }
        // the counter-cases keep their answers
        let r = "So the total is $15$.\n\nLet me know if you need more help!";
        assert_eq!(final_line_answer(r).as_deref(), Ok("15"));
        let r = "Step 1: 3 + 4 = 7.\nNow we will add 8, giving 15.";
        assert_eq!(final_line_answer(r).as_deref(), Ok("15"));
        let r = "Thus, the integral is $\\frac{\\pi}{4}$.\n\nNow, let's summarize the solution in JSON.";
        assert_eq!(final_line_answer(r).as_deref(), Ok("\\frac{\\pi}{4}"));
        assert!(!announces_more_work("We will now add 8 to get $15$."));
        assert!(!announces_more_work("Now the proof is complete."));
    }

    #[test]
    fn a_finished_final_line_gives_its_answer() {
        let r = "Step 1: $3 \\cdot 4 = 12$.\nStep 2: add 3.\nSo she has 15 apples left.";
        assert_eq!(final_line_answer(r).as_deref(), Ok("15"));
        let r = "We compute $x = 3$.\n\nThus there are $125$ trees on $5$ vertices.\n\nHope this helps!";
        assert_eq!(final_line_answer(r).as_deref(), Ok("125"));
        assert_eq!(
            final_line_answer("Work...\nTherefore:\nx = 7").as_deref(),
            Ok("x = 7")
        );
        assert_eq!(
            final_line_answer("we get $180+24=204$.").as_deref(),
            Ok("204")
        );
        // an AoPS solution's author signature after its last sentence
        let r = "Walk...\nso t = 24. $180 + 24 = 204$. -sepehr2010";
        assert_eq!(final_line_answer(r).as_deref(), Ok("204"));
        assert_eq!(
            final_line_answer("Work...\nSo the total is 17. ~user_12").as_deref(),
            Ok("17")
        );
    }

    #[test]
    fn a_signature_does_not_finish_a_cut_sentence() {
        // the mark must follow a sentence end, and be a name, not words
        assert_eq!(
            final_line_answer("Work...\nThen we add 3 + 4 = 7 -x2"),
            Err(NoFinal::Unfinished)
        );
        assert_eq!(
            final_line_answer("Work...\nSo we get 5. Then"),
            Err(NoFinal::Unfinished)
        );
        assert_eq!(
            final_line_answer("Work...\nSo we get 5. - then we add"),
            Err(NoFinal::Unfinished)
        );
    }

    #[test]
    fn a_truncated_or_looping_response_has_no_answer() {
        let r = "First we find the sum.\nThen we add 3 + 4 = 7 and multiply by";
        assert_eq!(final_line_answer(r), Err(NoFinal::Unfinished));
        let r = "We need the sum.\nNow 3 + 4 = 7, so the total is 7";
        assert_eq!(final_line_answer(r), Err(NoFinal::Unfinished));
        let r = "Work.\nSo $x = \\frac{7";
        assert_eq!(final_line_answer(r), Err(NoFinal::Unfinished));
        let looping = format!(
            "Let me compute.\n{}",
            "Wait, 3 + 4 = 7. Let me check again.\n".repeat(20)
        );
        assert_eq!(final_line_answer(&looping), Err(NoFinal::Looping));
    }

    #[test]
    fn a_line_in_chinese_gives_the_value_it_ends_on() {
        assert_eq!(cjk_end_value("因此，$a = 2$。").as_deref(), Some("a = 2"));
        assert_eq!(cjk_end_value("解方程得到k=7.").as_deref(), Some("k=7"));
        assert_eq!(cjk_end_value("故选 C").as_deref(), Some("C"));
        assert_eq!(
            cjk_end_value("最后得到$T_{4}=2+3+4=9$。").as_deref(),
            Some("T_{4}=2+3+4=9")
        );
        // values joined by 或 / 和 / 、 stay together (a hedge against one gold)
        assert_eq!(
            cjk_end_value("解得$t=2$或$t=-3$").as_deref(),
            Some("t=2, t=-3")
        );
        assert_eq!(cjk_end_value("所以取值为 1、2").as_deref(), Some("1, 2"));
        // a unit or measure word after the value
        assert_eq!(
            cjk_end_value("因此，两所房子的总价值为 129200 美元。").as_deref(),
            Some("129200")
        );
        assert_eq!(cjk_end_value("所以他还剩 5 个").as_deref(), Some("5"));
        assert_eq!(cjk_end_value("所以 x=3 不成立。"), None);
        // a line that ends in text, or holds no CJK, has no such value
        assert_eq!(cjk_end_value("所以 $x=3$ 不成立。"), None);
        assert_eq!(cjk_end_value("So x = 3."), None);
        // CJK inside math is math
        assert_eq!(
            cjk_end_value("面积为 $4\\text{平方米}$").as_deref(),
            Some("4\\text{平方米}")
        );
        let r = "先求离心率。\n所以，离心率为 1/3。";
        assert_eq!(final_line_answer(r).as_deref(), Ok("1/3"));
    }

    #[test]
    fn a_block_of_working_ends_on_its_value() {
        assert_eq!(
            block_end_value("2y - 4 = 10\n2y = 14\ny = 7").as_deref(),
            Some("y = 7")
        );
        assert_eq!(
            block_end_value("先求和：\n$S_3=1+2+4=7$").as_deref(),
            Some("S_3=1+2+4=7")
        );
        assert_eq!(
            block_end_value("2y = 14\n\ny = 7\nHope it helps!").as_deref(),
            Some("y = 7")
        );
        // a last line of prose, or one that declines, is no value
        assert_eq!(block_end_value("y = 7\nCheck: 2 * 7 - 4 = 10"), None);
        assert_eq!(block_end_value("2y = 14\nSo y is 7 apples"), None);
        assert_eq!(
            block_end_value("2y = 14\nThe value cannot be determined."),
            None
        );
    }

    #[test]
    fn a_refusal_has_no_answer() {
        let r = "Hmm.\nThere is not enough information to determine $f(0)$.";
        assert_eq!(final_line_answer(r), Err(NoFinal::Refusal));
    }
}
