//! Text-level normalization, before the lexer sees an answer.
//!
//! [`prepare`] does only what a tree cannot: math delimiters (`$`, `\(..\)`, `\[..\]`) and
//! trailing sentence punctuation go, and digit-group separators are removed:
//! - `{,}`, `,\!`, `\,`, `\ `, `~`, `\;` and `\:` between a digit and a group of exactly
//!   three digits are always thousands separators (`14{,}916` = 14916, `12,\!000` = 12000,
//!   `1\,000` = 1000, `1~000` = 1000);
//! - a plain comma (or a single space) is a thousands separator only when the whole answer
//!   is one number of the form `d{1,3}(,ddd)+(.d+)?` (`1,234` = 1234, `7,425,000`): a
//!   comma followed by a space, a group that is not three digits, or any other content makes
//!   it a list separator (`32, 349` is the list 32, 349, never 32349; `(1,234)` is a pair);
//!   such a number followed by a unit or a word keeps the rule (`1,000.99 m` = 1000.99 m);
//! - digits spaced out, single digits separated by single spaces, are one number
//!   (`2 0 2 4` = 2024; `1 2` = 12: a list needs commas).
//!
//! Units and words are not removed here: the parser reads them as words and the comparison
//! strips them alike on both sides ([`super::compare`]).

/// Longer answers are compared as normalized strings only.
pub const MAX_ANSWER_CHARS: usize = 2_000;

/// The canonical text form of an answer (delimiters, separators and whitespace removed).
pub fn normalize(answer: &str) -> String {
    prepare(&clock_times(answer))
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// The answer text handed to the lexer (rules in the module docs).
pub fn prepare(answer: &str) -> String {
    let s: String = answer.trim().chars().take(MAX_ANSWER_CHARS).collect();
    let s = without_trailing_series_dots(&s);
    let s = without_currency_signs(&clean_inline(s).replace('$', " "));
    let s = s.replace("\\(", " ").replace("\\)", " ");
    // an answer that opens with "approximately" is its value (`\approx 3.14` → 3.14)
    let t = s.trim_start();
    let s = match t
        .strip_prefix("\\approx")
        .or_else(|| t.strip_prefix('≈'))
        .filter(|rest| !rest.trim().is_empty())
    {
        Some(rest) => rest.to_string(),
        None => s,
    };
    // a set of one variable given by a condition is that condition (`\{x \mid -2 \le x < 1\}`
    // → `-2 \le x < 1`, which the comparison reads as the interval `[-2, 1)`)
    let s = set_builder_condition(&s).unwrap_or(s);
    let s = join_digit_groups(&s);
    let s = arithmetic_digit_groups(&s).unwrap_or(s);
    let t = s.trim();
    if whole_number_with_separators(t) {
        return t.replace([',', ' '], "");
    }
    // a separated number followed by a unit or a word (`1,000.99 m`, `7,425,000 dollars`)
    let num_end = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, ',' | '.' | '-' | '+')))
        .unwrap_or(t.len());
    let (num, rest) = t.split_at(num_end);
    if !rest.is_empty()
        && !rest.contains(',')
        && rest
            .trim_start()
            .starts_with(|c: char| c.is_alphabetic() || c == '\\')
        && whole_number_with_separators(num)
    {
        return format!("{}{rest}", num.replace(',', ""));
    }
    if let Some(joined) = spaced_digits(t) {
        return joined;
    }
    t.to_string()
}

/// Currency signs other than `$` (dropped with the math delimiters) written as spaces: `€66`,
/// `66 €`, `£5`, `₹120`, `₨66`, `৳50`, `¥3`, `\euro 5`, `\pounds 5`, `\textsterling`: an
/// amount is its number (`$` amounts compare so already).
pub const CURRENCY_SIGNS: &[char] = &[
    '€', '£', '¥', '₹', '₨', '৳', '₩', '₽', '₺', '₦', '฿', '₫', '₱', '₪', '₴', '₸', '₡', '₲', '₵',
    '¢',
];

fn without_currency_signs(s: &str) -> String {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let out = s.replace(CURRENCY_SIGNS, " ");
    if !out.contains('\\') {
        return out;
    }
    // the command alone, not the start of a longer one
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"\\(?:texteuro|euro|textsterling|pounds|textyen|yen)([^A-Za-z]|$)")
            .expect("static regex compiles")
    });
    re.replace_all(&out, " ${1}").into_owned()
}

/// `s` without a closing `+ ...` that marks the rest of a series (`1 - \frac{7}{2x} + \dots`,
/// `+ .....`, `+ \cdots`, `+ …`, the marks repeated: `+ \dots\dots\dots`): the leading terms a
/// question asks for are the answer, so a gold and an answer compare on those terms whether
/// either writes the dots.
fn without_trailing_series_dots(s: &str) -> &str {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"\s*\+\s*(?:(?:\.{2,}|…|\\[lc]?dots\b)\s*)+[\s.$)\\\]]*$")
            .expect("static regex compiles")
    });
    match re.find(s) {
        Some(m) if m.start() > 0 => &s[..m.start()],
        _ => s,
    }
}

/// Strips markdown bold, math delimiters at the ends and trailing sentence punctuation.
pub fn clean_inline(s: &str) -> String {
    let owned = without_emphasis(s);
    let mut t = owned.trim().trim_matches('*').trim();
    loop {
        let before = t;
        t = t.trim_end_matches(['.', ',', ';', ':', '。']).trim();
        // a leading `=` left by "is = 4" or "total = **4**" cut at the sign
        if let Some(x) = t
            .strip_prefix('=')
            .filter(|x| !x.trim().is_empty() && !x.starts_with('='))
        {
            t = x.trim();
        }
        // a closing quote whose opening one is not in the answer (`₨66."` of `"Answer: ₨66."`)
        if t.ends_with(['"', '”']) && t.matches(['"', '“', '”']).count() % 2 == 1 {
            t = t[..t.len() - t.chars().last().map_or(0, char::len_utf8)].trim();
        }
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

/// `s` without GSM8K's calculator annotations: `<<83-49=34>>` (an expression, `=`, its value,
/// between `<<` and `>>`) is what GSM8K's reference solutions mark each computation with, and
/// models trained on them write it into their working (`83 - 49 = <<83-49=34>>34 ballerinas`
/// reads `83 - 49 = 34 ballerinas`). Only a run of at most 200 characters on one line, with no
/// `<` or `>` inside and an `=` in it, is an annotation: a shift `a << 2` or a placeholder
/// `<<your final answer here.>>` stays.
pub fn calculator_annotations(s: &str) -> std::borrow::Cow<'_, str> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    if !s.contains("<<") {
        return std::borrow::Cow::Borrowed(s);
    }
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"<<[^<>\n]{0,200}=[^<>\n]{0,200}>>").expect("static regex compiles")
    });
    re.replace_all(s, "")
}

/// `s` with each repeating decimal written out with an ellipsis as its exact fraction:
/// `17.2162162162...` → `\frac{637}{37}`, `0.333…` → `\frac{1}{3}`, `0.1666\ldots` →
/// `\frac{1}{6}` (the grading policy's `0.111...`: a decimal whose digits repeat, with an
/// ellipsis, is the exact value; without one it is a rounding). The digits must show the
/// repeating block at least twice after a non-repeating head (three times for a one-digit
/// block: `0.33...` is not enough, `0.333...` is), with a block of at most 9 digits and at
/// most 30 digits after the point; else the text stays (`3.14159...` is an approximation).
pub fn repeating_decimals(s: &str) -> std::borrow::Cow<'_, str> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    if !(s.contains("...") || s.contains('…') || s.contains("dots")) {
        return std::borrow::Cow::Borrowed(s);
    }
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"\b(\d{1,18})\.(\d{2,30})[ \t]?(?:\.\.\.|…|\\ldots|\\dots|\\cdots)")
            .expect("static regex compiles")
    });
    re.replace_all(s, |c: &regex::Captures| {
        repeating_fraction(&c[1], &c[2]).unwrap_or_else(|| c[0].to_string())
    })
}

/// `\frac{N}{D}` (lowest terms) of the repeating decimal `int.frac...` (see
/// [`repeating_decimals`]); None when the digits show no repeating block.
fn repeating_fraction(int: &str, frac: &str) -> Option<String> {
    let d = frac.as_bytes();
    // the shortest block, then the shortest head before it
    let (head, block) = (1..=9usize).find_map(|p| {
        (0..d.len()).find_map(|q| {
            let tail = &d[q..];
            let shown = if p == 1 { 3 } else { 2 * p };
            (tail.len() >= shown && (p..tail.len()).all(|i| tail[i] == tail[i - p]))
                .then_some((q, p))
        })
    })?;
    let num = |t: &str| -> Option<i128> {
        if t.is_empty() {
            Some(0)
        } else {
            t.parse().ok()
        }
    };
    let ten = |k: usize| 10i128.checked_pow(u32::try_from(k).ok()?);
    let (i, h, r) = (
        num(int)?,
        num(&frac[..head])?,
        num(&frac[head..head + block])?,
    );
    let nines = ten(block)? - 1;
    let scale = ten(head)?;
    // int + (h + r / nines) / scale
    let n = i
        .checked_mul(scale)?
        .checked_add(h)?
        .checked_mul(nines)?
        .checked_add(r)?;
    let super::numeric::Rat(n, den) = super::numeric::Rat::new(n, scale.checked_mul(nines)?)?;
    Some(format!("\\frac{{{n}}}{{{den}}}"))
}

/// `s` with the meridiem of clock times written `AM` / `PM`: `8:45 P.M.` → `8:45 PM.` (its
/// last period kept: it may end the sentence), `8:45 p.m`, `8:45pm` → `8:45 PM`, so the period
/// inside `P.M.` does not end the answer's sentence and the spellings compare equal.
pub fn clock_times(s: &str) -> std::borrow::Cow<'_, str> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::Regex::new(r"\b(\d{1,2}:\d{2})[ \t]?([AaPp])\.?[ \t]?[Mm]\b")
            .expect("static regex compiles")
    });
    if !s.contains(':') {
        return std::borrow::Cow::Borrowed(s);
    }
    re.replace_all(s, |c: &regex::Captures| {
        format!("{} {}M", &c[1], c[2].to_ascii_uppercase())
    })
}

/// The ASCII digit of a decimal digit of another script (Arabic-Indic `٣`, Devanagari `३`,
/// Bengali `৩`, Thai `๓`, fullwidth `３`, ...: the zero of each block of ten in
/// [`DIGIT_ZEROS`]), so that `৭/৯` reads as `7/9`.
fn digit(c: char) -> Option<char> {
    let u = c as u32;
    DIGIT_ZEROS
        .iter()
        .find(|&&z| (z..z + 10).contains(&u))
        .and_then(|&z| char::from_digit(u - z, 10))
}

/// The zeros of the Unicode blocks of ten decimal digits read as digits ([`unicode_math`]):
/// Arabic-Indic, Extended Arabic-Indic, Devanagari, Bengali, Gurmukhi, Gujarati, Oriya, Tamil,
/// Telugu, Kannada, Malayalam, Thai, Lao, Tibetan, Myanmar, Khmer, Mongolian, fullwidth.
const DIGIT_ZEROS: [u32; 18] = [
    0x0660, 0x06F0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66, 0x0E50,
    0x0ED0, 0x0F20, 0x1040, 0x17E0, 0x1810, 0xFF10,
];

/// `s` with the Unicode spellings of math that chat and reasoning models write outside `$..$`
/// rewritten as the lexer reads them: the decimal digits of other scripts are ASCII digits
/// (`৭/৯` → `7/9`, `３` → `3`); a run of superscript digits (and `⁻`, `⁺`) is an exponent
/// (`(2/3)³` → `(2/3)^{3}`, `10⁻²` → `10^{-2}`), a run of subscript digits a subscript (`a₁` →
/// `a_{1}`), and the no-break and thin spaces (U+00A0, U+2007, U+2009, U+202F and the other
/// fixed-width spaces U+2000-U+200A) plain spaces (`took\u{202f}2 more` → `took 2 more`). `−`, `×`,
/// `÷` and Greek letters are the lexer's own (`lex.rs`). Borrowed when there is nothing to
/// rewrite (every ASCII text). One linear pass.
pub fn unicode_math(s: &str) -> std::borrow::Cow<'_, str> {
    fn superscript(c: char) -> Option<char> {
        Some(match c {
            '⁰' => '0',
            '¹' => '1',
            '²' => '2',
            '³' => '3',
            '⁴' => '4',
            '⁵' => '5',
            '⁶' => '6',
            '⁷' => '7',
            '⁸' => '8',
            '⁹' => '9',
            '⁻' => '-',
            '⁺' => '+',
            _ => return None,
        })
    }
    fn subscript(c: char) -> Option<char> {
        let d = (c as u32).checked_sub('₀' as u32)?;
        (d < 10).then(|| char::from_digit(d, 10).unwrap_or('0'))
    }
    fn space(c: char) -> bool {
        matches!(c, '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}')
    }
    if s.is_ascii()
        || !s.chars().any(|c| {
            space(c) || superscript(c).is_some() || subscript(c).is_some() || digit(c).is_some()
        })
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let (map, mark): (fn(char) -> Option<char>, char) = if superscript(c).is_some() {
            (superscript, '^')
        } else if subscript(c).is_some() {
            (subscript, '_')
        } else {
            out.push(if space(c) { ' ' } else { digit(c).unwrap_or(c) });
            continue;
        };
        // the run of marks that `c` opens, as one group
        out.push(mark);
        out.push('{');
        out.extend(map(c));
        while let Some(next) = chars.peek().copied().and_then(map) {
            out.push(next);
            chars.next();
        }
        out.push('}');
    }
    std::borrow::Cow::Owned(out)
}

/// `s` with the dollar signs of currency amounts removed, so that they are not read as math
/// delimiters (`$25/$5 = 5 hours` → `25/5 = 5 hours`, `costs $5.50.` → `costs 5.50.`), while
/// `$x = 5$`, `$5$` and `$180 + 24 = 204$` stay math. A `$` is a currency sign when a digit
/// follows it and it opens no math span: the next `$` cannot close one, because a space comes
/// before it or a digit after it (the rule Pandoc applies to `$` delimiters). So
/// `$18 + $13 = $31` and `$25/$5` hold no span, and in `costs $5, so $x = 5$` only the `$5` is
/// currency. `\$` and `$$...$$` are left as they are. One linear pass.
pub fn currency_signs(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('$') {
        return std::borrow::Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    // the next `$` at or after `from` that no backslash escapes
    let next_dollar = |from: usize| {
        let mut j = from;
        while j < b.len() {
            match b[j] {
                b'\\' => j += 2,
                b'$' => return Some(j),
                _ => j += 1,
            }
        }
        None
    };
    let digit_at = |j: usize| b.get(j).is_some_and(u8::is_ascii_digit);
    let mut currency = Vec::new();
    let mut i = 0;
    while let Some(p) = next_dollar(i) {
        if b.get(p + 1) == Some(&b'$') {
            // display math, to its closing `$$`
            i = s[p + 2..].find("$$").map_or(b.len(), |q| p + 2 + q + 2);
            continue;
        }
        let close = next_dollar(p + 1);
        let closes = close.is_some_and(|q| !b[q - 1].is_ascii_whitespace() && !digit_at(q + 1));
        if digit_at(p + 1) && !closes {
            currency.push(p);
            i = p + 1;
            continue;
        }
        i = close.map_or(b.len(), |q| q + 1);
    }
    if currency.is_empty() {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut from = 0;
    for p in currency {
        out.push_str(&s[from..p]);
        from = p + 1;
    }
    out.push_str(&s[from..]);
    std::borrow::Cow::Owned(out)
}

/// `s` without Markdown emphasis markers (`**`, `__`) that open or close a span: a run of
/// them at either end or next to a space (`x = **4**`, `= **4`); a run between two
/// non-space characters (`2**3`, Python's power) stays.
fn without_emphasis(s: &str) -> String {
    if !s.contains("**") && !s.contains("__") {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if (c == '*' || c == '_') && chars.get(i + 1) == Some(&c) {
            let mut j = i;
            while j < chars.len() && chars[j] == c {
                j += 1;
            }
            let before = i.checked_sub(1).map(|k| chars[k]);
            let after = chars.get(j).copied();
            let edge = |x: Option<char>| x.is_none_or(char::is_whitespace);
            if edge(before) || edge(after) {
                i = j;
                continue;
            }
            out.extend(&chars[i..j]);
            i = j;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Single digits separated by single spaces (`2 0 2 4` → 2024), at least two of them.
fn spaced_digits(t: &str) -> Option<String> {
    let parts: Vec<&str> = t.split(' ').collect();
    let ok = parts.len() >= 2
        && parts
            .iter()
            .all(|p| p.len() == 1 && p.as_bytes()[0].is_ascii_digit());
    ok.then(|| parts.concat())
}

/// `d{1,3}(,ddd)+(.d+)?` or `d{1,3}( ddd)+`, with an optional sign.
fn whole_number_with_separators(t: &str) -> bool {
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    let (int, frac) = match t.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (t, None),
    };
    if frac.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    for sep in [',', ' '] {
        let groups: Vec<&str> = int.split(sep).collect();
        if groups.len() < 2 || (sep == ' ' && frac.is_some()) {
            continue;
        }
        let first_ok =
            (1..=3).contains(&groups[0].len()) && groups[0].bytes().all(|b| b.is_ascii_digit());
        let rest_ok = groups[1..]
            .iter()
            .all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()));
        if first_ok && rest_ok {
            return true;
        }
    }
    false
}

/// `s` with its digit-group commas removed when it is arithmetic on numbers written with them
/// (`53,200 + 76,000 = 129,200` → `53200 + 76000 = 129200`): every comma of `s` sits between a
/// group of one to three digits (or a previous group) and exactly three digits, outside any
/// bracket, and `s` holds an operator (`+`, `-` after a number, `=`, `×`, `*`, `/`). None
/// otherwise: `1, 234` and `1,23` are lists, `(1,234)` a pair, a lone `1,234` is read by
/// [`whole_number_with_separators`].
fn arithmetic_digit_groups(s: &str) -> Option<String> {
    if !s.contains(',') {
        return None;
    }
    let b = s.as_bytes();
    let mut depth = 0i32;
    let mut operator = false;
    let mut commas = Vec::new();
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '+' | '=' | '×' | '*' | '/' => operator = true,
            '-' if s[..i].trim_end().ends_with(|p: char| p.is_ascii_digit()) => operator = true,
            ',' => {
                let before = s[..i].bytes().rev().take_while(u8::is_ascii_digit).count();
                let after = b[i + 1..].iter().take_while(|x| x.is_ascii_digit()).count();
                // the group before: 1-3 digits after a non-digit, or 3 after another comma
                let lead = i - before;
                let group_ok = match lead.checked_sub(1).map(|j| b[j]) {
                    Some(b',') => before == 3,
                    Some(b'.') => false,
                    _ => (1..=3).contains(&before),
                };
                if depth != 0 || after != 3 || !group_ok {
                    return None;
                }
                commas.push(i);
            }
            _ => {}
        }
    }
    if !operator {
        return None;
    }
    let mut out = s.to_string();
    for &i in commas.iter().rev() {
        out.remove(i);
    }
    Some(out)
}

/// Removes `{,}`, `,\!`, `{,\!}` and `\,` between a digit and exactly three digits.
fn join_digit_groups(s: &str) -> String {
    const SEPS: &[&str] = &[
        "{,\\!}", "{,}", ",\\!", ",\\,", "\\,", "\\!,", "{ , }", "{, }", "\\ ", "~", "\\;", "\\:",
    ];
    if !SEPS.iter().any(|p| s.contains(p)) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let b = s.as_bytes();
    'outer: while i < s.len() {
        // a digit before the separator, possibly with spaces between (`14 {, }916`)
        if out.trim_end().ends_with(|c: char| c.is_ascii_digit()) && (i == 0 || b[i - 1] != b'\\') {
            for sep in SEPS {
                if s[i..].starts_with(sep) {
                    let after = &s[i + sep.len()..];
                    let after = after.trim_start_matches(' ');
                    let digits = after.bytes().take_while(|c| c.is_ascii_digit()).count();
                    if digits == 3 {
                        out.truncate(out.trim_end().len());
                        i = s.len() - after.len();
                        continue 'outer;
                    }
                }
            }
        }
        let ch = s[i..].chars().next().expect("in bounds");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// The condition of a set of one variable written in set-builder notation, when it is an
/// inequality in that variable: `\{x \mid -2 \le x < 1\}`, `\{x | x > 3\}`, `\{x \in \mathbb{R}
/// : x \ge 0\}` give `-2 \le x < 1`, `x > 3`, `x \ge 0`. None for any other text (`\{3k \mid k
/// \in \mathbb{Z}\}` is not an interval).
pub(crate) fn set_builder_condition(s: &str) -> Option<String> {
    let re = SET_BUILDER_RE.get_or_init(|| {
        regex::Regex::new(
            r"^\s*(?:\\left)?\\\{\s*([A-Za-z])\s*(?:\\in\s*\\mathbb\s*\{?R\}?\s*)?(?:\\mid|\\vert|\||:)\s*(.+?)\s*(?:\\right)?\\\}\s*$",
        )
        .expect("static regex compiles")
    });
    let c = re.captures(s)?;
    let (var, cond) = (c.get(1)?.as_str(), c.get(2)?.as_str());
    let relation = ["<", ">", "\\le", "\\ge", "\\lt", "\\gt", "≤", "≥"]
        .iter()
        .any(|r| cond.contains(r));
    let mentions = cond.char_indices().any(|(i, ch)| {
        ch.to_string() == var
            && !cond[..i].ends_with(|p: char| p.is_ascii_alphabetic() || p == '\\')
            && !cond[i + ch.len_utf8()..].starts_with(|p: char| p.is_ascii_alphabetic())
    });
    (relation && mentions && !cond.contains(',')).then(|| cond.to_string())
}

static SET_BUILDER_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeating_decimals_with_an_ellipsis_are_exact() {
        assert_eq!(
            repeating_decimals("### Answer: $17.2162162162..."),
            "### Answer: $\\frac{637}{37}"
        );
        assert_eq!(
            repeating_decimals("so 0.333... of it"),
            "so \\frac{1}{3} of it"
        );
        assert_eq!(repeating_decimals("0.1666\\ldots"), "\\frac{1}{6}");
        assert_eq!(repeating_decimals("0.999…"), "\\frac{1}{1}");
        assert_eq!(repeating_decimals("-2.4545..."), "-\\frac{27}{11}");
        // no repeating block shown, or too few repeats: the text stays
        for s in ["3.14159...", "0.33...", "1, 2, 3, ...", "0.5...", "0.1212"] {
            assert_eq!(repeating_decimals(s), s);
        }
    }

    #[test]
    fn calculator_annotations_are_dropped() {
        assert_eq!(
            calculator_annotations("leaving 83 - 49 = <<83-49=34>>34 ballerinas"),
            "leaving 83 - 49 = 34 ballerinas"
        );
        assert_eq!(
            calculator_annotations("$13.3 - $4.971 = <<13.3-4.971=8.329>>8.329 and <<2*3=6>>6"),
            "$13.3 - $4.971 = 8.329 and 6"
        );
        // no `=` inside, or across lines, or nested: not an annotation
        for s in [
            "### Answer: <<your final answer here.>>",
            "x << 2 and y >> 3",
            "<<1+\n1=2>>",
            "a <<b<c=d>> e",
        ] {
            assert_eq!(calculator_annotations(s), s);
        }
    }

    #[test]
    fn separators() {
        assert_eq!(prepare("14{,}916"), "14916");
        assert_eq!(prepare("14 {, }916"), "14916");
        assert_eq!(prepare("11,\\! 111,\\! 111,\\! 100"), "11111111100");
        assert_eq!(prepare("1\\,000"), "1000");
        assert_eq!(prepare("1,234"), "1234");
        assert_eq!(prepare("7,425,000"), "7425000");
        assert_eq!(prepare("1,000.5"), "1000.5");
        assert_eq!(prepare("1 000"), "1000");
        assert_eq!(prepare("32, 349"), "32, 349");
        // digit groups in arithmetic on numbers written with them
        assert_eq!(
            prepare("53,200 + 76,000 = 129,200"),
            "53200 + 76000 = 129200"
        );
        assert_eq!(prepare("1,234,567 - 1,000"), "1234567 - 1000");
        assert_eq!(prepare("(1,234) + 5"), "(1,234) + 5");
        assert_eq!(prepare("1, 234 + 5"), "1, 234 + 5");
        assert_eq!(prepare("1,23 + 5"), "1,23 + 5");
        assert_eq!(prepare("2.5,000 + 1"), "2.5,000 + 1");
        assert_eq!(prepare("1,23"), "1,23");
        assert_eq!(prepare("(1,234)"), "(1,234)");
        assert_eq!(prepare("$\\frac12$."), "\\frac12");
        assert_eq!(normalize(" 1, 2 "), "1,2");
        assert_eq!(prepare("1,000.99m"), "1000.99m");
        assert_eq!(prepare("7,425,000 dollars"), "7425000 dollars");
        assert_eq!(prepare("1, 000 m"), "1, 000 m");
        assert_eq!(prepare("2 0 2 4"), "2024");
        assert_eq!(prepare("1~000"), "1000");
        assert_eq!(prepare("1\\ 000"), "1000");
    }

    #[test]
    fn unicode_superscripts_subscripts_and_spaces_are_rewritten() {
        use std::borrow::Cow;
        for (s, want) in [
            ("(2/3)³", "(2/3)^{3}"),
            ("10⁻¹²", "10^{-12}"),
            ("a₁₀ + b₂", "a_{10} + b_{2}"),
            ("x²y³", "x^{2}y^{3}"),
            ("took\u{202f}2\u{a0}more\u{2009}hours", "took 2 more hours"),
            ("−3 × π", "−3 × π"),
        ] {
            assert_eq!(unicode_math(s), want, "{s}");
        }
        assert!(matches!(unicode_math("x^2 + 1"), Cow::Borrowed(_)));
        assert!(matches!(unicode_math("−3 × π"), Cow::Borrowed(_)));
    }

    #[test]
    fn currency_signs_are_not_math_delimiters() {
        // amounts in prose: no `$` pair encloses math
        assert_eq!(currency_signs("it costs $5.50."), "it costs 5.50.");
        assert_eq!(
            currency_signs("$12 + $30 = $42 in all"),
            "12 + 30 = 42 in all"
        );
        assert_eq!(
            currency_signs("she pays $60/$4 = 15 a day"),
            "she pays 60/4 = 15 a day"
        );
        assert_eq!(
            currency_signs("from $1,200 down to $900"),
            "from 1,200 down to 900"
        );
        // an amount next to real math: only the amount loses its sign
        assert_eq!(
            currency_signs("costs $8, so $y = 8$ and $z$ too"),
            "costs 8, so $y = 8$ and $z$ too"
        );
        // math that opens with a digit stays math
        for m in [
            "$7$",
            "we get $180+24=204$.",
            "$3$ and $4$",
            "$2x + 1 = 7$",
            "$10$-$20$",
        ] {
            assert_eq!(currency_signs(m), m);
        }
        // escaped signs and display math are left alone
        for m in [
            "it costs \\$5 and \\$6",
            "$$12 + 30$$ and $$1$$",
            "$x = 5$",
            "no dollars",
        ] {
            assert_eq!(currency_signs(m), m);
        }
    }
}
