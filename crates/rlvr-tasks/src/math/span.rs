//! The answer expression inside a statement: where it starts and where it ends.
//!
//! After an answer marker ("the answer is", `Answer:`, `####`, a `# Answer` block) or in a
//! final line, the text is a sentence; [`statement_answer`] takes the mathematical
//! expression out of it, in its first sentence:
//! - **a declining, negated or scaled statement** (a [`super::refusal`] phrase, or `not`,
//!   `no`, `neither`, `negative`, `minus`, `none`, `undefined`, `half`, `twice`, ... before
//!   the expression) declines ([`Statement::Declines`]; extraction then finds no answer):
//!   "the answer is not 5" does not answer 5, "the answer is negative 5" is not 5, "half of
//!   10" is not 10;
//! - **prose** (two or more words outside math, one of four letters) is read after its last
//!   copula outside math (` is `, ` are `, ` equals `, ` was `, ` be `) that a value
//!   follows, else after its last one: "The largest $n$ is 34" → `34`; "there are 500
//!   pieces left to be placed" → `500`;
//! - a **JSON list** of strings or numbers is its items (`["B", "F"]` → `B, F`);
//! - up to 8 **leading words** are skipped ("that there are 125 trees on 5 labeled
//!   vertices" → `125`; "approximately 3.14" → `3.14`), "and"/"or" among them when they join
//!   words ("Joan and Tom have 48 books" → `48`);
//! - the expression then ends at the **end of the mathematical expression**, not of the
//!   sentence ([`expression`]): a `$..$`, `\(..\)` or `\[..\]` span is taken whole; plain
//!   text stops at a word of two or more letters that is not a function, constant or unit
//!   name (`125 trees` → `125`, `2 cm^2` stays), at a sentence end (`.` not in a number,
//!   `;`, `?`, `!` before a space), at a closing bracket it did not open, or at the end of
//!   the line;
//! - **restatements and alternatives** after it are kept as further list items, joined with
//!   `, `: `, or`, `or`, `, i.e.`, `, that is`, `, which is`, `or equivalently`, `and`,
//!   `,`, Chinese `或`/`或者` (or), `和`/`与`/`及` (and) and `、`, a `;` when the value
//!   after it ends the sentence (several blanks: `0; 3` → `0, 3`), or a parenthesis holding
//!   an expression (`0.25, or 1/4` → `0.25, 1/4`; `$\frac12$, i.e. $0.5$` → `\frac12, 0.5`;
//!   `3 or 5` → `3, 5`; `3或5` → `3, 5`). The comparison counts
//!   items that are all equal as one answer and different items as a hedge
//!   ([`super::compare`]).
//!
//! Every scan is linear in the statement, which is at most [`MAX_STATEMENT`] bytes.

use super::normalize::clean_inline;
use super::text::{first_sentence, head, is_prose, outside_math_find_all};

/// The most bytes of a statement read.
pub const MAX_STATEMENT: usize = 4_000;
const MAX_PIECES: usize = 16;
const MAX_SKIPPED_WORDS: usize = 8;

/// Words that make a statement not a plain value (kept whole as text).
const NEGATING: &[&str] = &[
    "not",
    "no",
    "n't",
    "neither",
    "nor",
    "never",
    "negative",
    "minus",
    "none",
    "undefined",
    "isn't",
    "aren't",
    "cannot",
    "can't",
    "impossible",
    "nothing",
];
/// Words that scale the number after them ("half of 10" is not 10).
const NUMBER_WORDS: &[&str] = &[
    "half", "halves", "twice", "double", "triple", "third", "thirds", "quarter", "quarters",
    "times", "percent",
];
/// Letter runs that belong to an expression in plain text.
const MATH_WORDS: &[&str] = &[
    "sin", "cos", "tan", "sec", "csc", "cot", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "ln", "log", "lg", "exp", "sqrt", "abs", "pi", "inf", "infty", "infinity", "mod", "cm", "mm",
    "km", "ft", "kg", "mg", "ml", "hr", "lb", "mi", "in", "sq", "m", "s", "g", "h", "am", "pm",
];
const COPULAS: &[&str] = &[" is ", " are ", " equals ", " was ", " be ", " equal to "];

/// Whether `s` holds a word outside math: a run of two or more ASCII letters outside `$..$`,
/// not a `\command`, not a function, constant or unit name (`Check: 5 + 15 = 20` has one;
/// `x = 5`, `$S = \frac{1}{2}$`, `\sin x = 1`, `12 cm` have none).
pub fn has_words(s: &str) -> bool {
    let b = s.as_bytes();
    let (mut i, mut dollars) = (0, 0);
    while i < b.len() {
        let c = b[i];
        if c == b'$' {
            dollars += 1;
        }
        if dollars % 2 == 1 || !c.is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let len = s[i..]
            .find(|ch: char| !ch.is_ascii_alphabetic())
            .unwrap_or(s.len() - i);
        let command = i > 0 && b[i - 1] == b'\\';
        let word = s[i..i + len].to_ascii_lowercase();
        if len >= 2 && !command && !MATH_WORDS.contains(&word.as_str()) {
            return true;
        }
        i += len;
    }
    false
}

/// What a statement says (rules in the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Statement {
    /// The answer expression (restatements and alternatives joined with `, `).
    Answer(String),
    /// It declines, negates or scales: no answer may be drawn from it.
    Declines,
    /// No expression.
    Nothing,
}

/// The answer held by a statement (rules in the module docs); empty when it holds none or
/// declines.
pub fn statement_answer(s: &str) -> String {
    match read_statement(s) {
        Statement::Answer(a) => a,
        Statement::Declines | Statement::Nothing => String::new(),
    }
}

/// A statement without what its marker left before it (spaces, `:`, `*`, `：`, an opening
/// quote), and the quote that opened it, if any (`The final answer is "even".`).
fn after_marker(s: &str) -> (&str, Option<char>) {
    let s = s.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, ':' | '*' | '：'));
    let quote = s.chars().next().filter(|c| matches!(c, '"' | '\'' | '“'));
    let s = s.trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, ':' | '*' | '：' | '"' | '\'' | '“')
    });
    (s, quote)
}

/// What the quotes of a statement opened by `open` hold, when they close on its first line:
/// a quoted statement is what its quotes hold.
fn quoted(s: &str, open: Option<char>) -> Option<&str> {
    let close = match open? {
        '“' => '”',
        q => q,
    };
    let line = s.lines().next().unwrap_or("");
    line.find(close).filter(|&e| e > 0).map(|e| &line[..e])
}

/// What a statement says: its answer, a refusal or negation, or nothing.
pub fn read_statement(s: &str) -> Statement {
    let answer = |a: String| {
        if a.trim().is_empty() {
            Statement::Nothing
        } else {
            Statement::Answer(a)
        }
    };
    let (s, quote) = after_marker(head(s, MAX_STATEMENT));
    // the `}` closing a `\text{Answer: }` that held the marker (`$$\text{Answer: } \frac{17}{50}$$`)
    let s = s.strip_prefix('}').map_or(s, str::trim_start);
    // a quote escaped as in a JSON string (`The final answer is \"$12$ and $13$\".`)
    let s = s.strip_prefix("\\\"").unwrap_or(s);
    // a JSON list of values (`"answer": ["B", "F"]`, `"answer": [3, 5]`): its items
    if let Some(items) = json_list(s) {
        return answer(items.join(", "));
    }
    if let Some(inner) = quoted(s, quote) {
        return read_statement(inner);
    }
    // math opening the statement, possibly over several lines
    for (open, close) in [("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)")] {
        if let Some(inner) = s.strip_prefix(open) {
            if let Some(end) = find_unescaped(inner, close) {
                let rest = &inner[end + close.len()..];
                return answer(join(clean_inline(&inner[..end]), &more_pieces(rest)));
            }
        }
    }
    let line = s.lines().next().unwrap_or("").trim();
    let sentence = first_sentence(line);
    if super::refusal::is_refusal(sentence) {
        return Statement::Declines;
    }
    // "the answer is: return 1 for finite and 0 for infinite" states no value
    if super::instruction::restates_instruction(sentence) {
        return Statement::Nothing;
    }
    // a sentence in words, in any language, that holds one number and no other math
    // states that number ("Cecilia benötigt 5 Tüten Hundefutter." → `5`)
    if let Some(n) = lone_number(sentence) {
        return Statement::Answer(n);
    }
    let mut t = sentence;
    if is_prose(t) {
        // after the last copula that a value follows ("there are 500 pieces left to be
        // placed" → `500`), else after the last one ("The largest $n$ is 34")
        let mut copulas: Vec<(usize, usize)> = COPULAS
            .iter()
            .flat_map(|c| {
                outside_math_find_all(t, c)
                    .into_iter()
                    .map(|p| (p, c.len()))
            })
            .collect();
        copulas.sort_unstable();
        let valued = copulas
            .iter()
            .rev()
            .find(|&&(p, len)| starts_math(&t[p + len..]));
        // a sentence that opens with a value is read at its start unless a copula later
        // gives another ("10 years from now, his age will be 109 years." → `109`)
        let chosen = if !starts_math(t) {
            valued.or(copulas.last())
        } else if opens_noun_phrase(t) {
            valued
        } else {
            None // `12, and the sum is 7` states 12
        };
        if let Some(&(p, len)) = chosen {
            t = &t[p + len - 1..];
        }
    }
    // a negating word that is the whole statement is the answer itself ("the answer is No.",
    // "Answer: none", "undefined")
    let whole = t
        .trim()
        .trim_matches(|c: char| matches!(c, '*' | '.' | '!' | '"' | '\'' | ' '));
    let lower = whole.to_ascii_lowercase();
    if ["no", "none", "never", "nothing", "impossible", "undefined"].contains(&lower.as_str()) {
        return Statement::Answer(whole.to_string());
    }
    // leading words skipped; a negation or a number word keeps the statement as text
    let mut rest = t.trim_start();
    for skipped in 0..MAX_SKIPPED_WORDS {
        let word_len = rest
            .find(|c: char| !(c.is_ascii_alphabetic() || c == '\''))
            .unwrap_or(rest.len());
        if word_len == 0 {
            break;
        }
        let lower = rest[..word_len].to_ascii_lowercase();
        let after = &rest[word_len..];
        let before_word =
            after.starts_with(' ') && after[1..].starts_with(|c: char| c.is_ascii_alphabetic());
        // a lone letter is a variable (`x = 3`, `B`), but for the article "a"
        if word_len == 1 && !(&rest[..1] == "a" && before_word && !after.starts_with(" or ")) {
            break;
        }
        // "and"/"or" open a list of values, unless they join the words skipped so far
        // ("Sally and Mary grew a total of 242 turnips" → `242`)
        if (lower == "or" || lower == "and") && skipped == 0 {
            break;
        }
        // a function or constant name starts the expression (`sqrt(2)`, `pi/2`)
        if MATH_WORDS.contains(&lower.as_str()) && !before_word {
            break;
        }
        if NEGATING.contains(&lower.as_str())
            || FOREIGN_NEGATING.contains(&lower.as_str())
            || NUMBER_WORDS.contains(&lower.as_str())
        {
            return Statement::Declines;
        }
        rest = after.trim_start_matches([' ', ',', ':', '*']);
    }
    // the expression is read on the whole line: it ends where the math ends, which may be
    // past what `first_sentence` took for a sentence end (`\frac12, i.e. 0.5`)
    let start = rest.as_ptr() as usize - line.as_ptr() as usize;
    let rest = &line[start..];
    let (first, end) = expression(rest);
    answer(join(first, &more_pieces(&rest[end..])))
}

/// Negating words of the languages models answer in, besides English's [`NEGATING`] (a
/// sentence holding one is never read as stating its number).
const FOREIGN_NEGATING: &[&str] = &[
    "nicht",
    "kein",
    "keine",
    "keinen",
    "nie",
    "pas",
    "jamais",
    "aucun",
    "aucune",
    "nunca",
    "nada",
    "ningún",
    "ninguna",
    "não",
    "nenhum",
    "не",
    "нет",
    "ни",
    "ничего",
];
/// Negations written without spaces (Chinese, Japanese).
const CJK_NEGATING: &[&str] = &["不", "没", "沒", "無", "无", "ない", "ません"];

/// The one number of a sentence in words, in any language, that holds no other math: the
/// value it states (`Cecilia benötigt 5 Tüten Hundefutter im ersten Jahr.` → `5`,
/// `彼は15個のおもちゃを取り除く必要があります` → `15`, `Each person (Isabel, her mother, and her
/// father) contributed 32 to the party.` → `32`). None when the sentence:
/// - is not words: fewer than 4 letters (any script), or one run of them (`14 años` is a
///   number with its unit, read by [`expression`]);
/// - holds math: `$`, `\`, a bracket, an operator or relation (`=`, `+`, `*`, `/`, `^`, `<`,
///   `>`, `×`, `÷`, ...), a number against a Latin letter (`2x`, `3rd`, `x2`), or a lone
///   Latin letter other than the articles and the pronoun before a word ("a", "A", "I"): a
///   variable or an option's label (`D) 3.85 miles`);
/// - holds a negating or scaling word ([`NEGATING`], [`NUMBER_WORDS`], [`FOREIGN_NEGATING`],
///   [`CJK_NEGATING`]): "not 5", "half of 10";
/// - holds no number, or several ("8 pens cost 12.00" says two things).
///
/// A number is a run of digits with `,` or `.` between digits (`70,000`, `7.5`), a `-` before
/// it at a word's start, and a `%` after it; its one comma before exactly two digits is a
/// decimal comma (`243,00 $` → `243.00`). One `$` in the sentence is a currency sign.
fn lone_number(sentence: &str) -> Option<String> {
    // one dollar sign is a currency (`243,00 $`); two open math (`$x$`)
    let dollars = sentence.matches('$').count();
    if dollars > 1 {
        return None;
    }
    const MATH: &[char] = &[
        '\\', '{', '}', '[', ']', '|', '=', '<', '>', '+', '*', '/', '^', '×', '÷', '√', '≤', '≥',
        '≠', '≈', '±', '⁄', '∕', '·',
    ];
    if sentence.contains(MATH) || CJK_NEGATING.iter().any(|w| sentence.contains(w)) {
        return None;
    }
    let latin = |c: char| c.is_ascii_alphabetic();
    let letter = |c: char| c.is_alphabetic();
    let (mut letters, mut runs, mut in_run) = (0, 0, false);
    for c in sentence.chars() {
        if letter(c) {
            letters += 1;
            runs += usize::from(!in_run);
        }
        in_run = letter(c);
    }
    if letters < 4 || runs < 2 {
        return None;
    }
    // a lone Latin letter is a variable or an option's label (`x`, `D) 3.85 miles`), but for
    // the articles and the pronoun ("a total of 5", "A total of 5", "I get 5")
    let mut rest = sentence;
    while let Some(p) = rest.find(latin) {
        let c = rest[p..].chars().next().unwrap_or(' ');
        let before = rest[..p].chars().next_back();
        let after = &rest[p + 1..];
        // an elision or a possessive is part of a word (`l'achat`, `Allen's`)
        let joined = |c: char| letter(c) || matches!(c, '\'' | '’');
        let lone = !before.is_some_and(joined) && !after.starts_with(joined);
        let article = matches!(c, 'a' | 'A' | 'I') && after.starts_with(' ');
        if lone && !article {
            return None;
        }
        rest = after.trim_start_matches(letter);
    }
    let words = sentence
        .split(|c: char| !(letter(c) || c == '\''))
        .map(str::to_lowercase);
    for w in words {
        let w = w.as_str();
        if NEGATING.contains(&w) || NUMBER_WORDS.contains(&w) || FOREIGN_NEGATING.contains(&w) {
            return None;
        }
    }
    let chars: Vec<char> = sentence.chars().collect();
    let mut found: Option<String> = None;
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        if i > 0 && latin(chars[i - 1]) {
            return None; // `x2`
        }
        // a minus sign opens a word (`-5`); a hyphen joins one (`400-meter`)
        let minus = i > 0
            && chars[i - 1] == '-'
            && (i == 1 || chars[i - 2].is_whitespace() || chars[i - 2] == '(');
        let start = if minus { i - 1 } else { i };
        let mut end = i;
        while end < chars.len()
            && (chars[end].is_ascii_digit()
                || (matches!(chars[end], ',' | '.')
                    && chars.get(end + 1).is_some_and(char::is_ascii_digit)))
        {
            end += 1;
        }
        if chars.get(end) == Some(&'%') {
            end += 1;
        }
        if chars.get(end).is_some_and(|&c| latin(c)) {
            return None; // `2x`, `3rd`
        }
        if found.is_some() {
            return None;
        }
        let mut number: String = chars[start..end].iter().collect();
        // a decimal comma before two digits, the only comma (`243,00 $`, `4,00 €`); `1,234`
        // and `3,5` keep theirs (thousands, or a list)
        if let Some((whole, cents)) = number.split_once(',') {
            let cents_digits = cents.trim_end_matches('%');
            if cents_digits.len() == 2 && !cents.contains(',') && !whole.contains('.') {
                number = format!("{whole}.{cents}");
            }
        }
        // with the unit the expression reader keeps after it (`15 km`, an option's text)
        let byte_at = |k: usize| {
            sentence
                .char_indices()
                .nth(k)
                .map_or(sentence.len(), |(b, _)| b)
        };
        let raw: String = chars[start..end].iter().collect();
        let (read, _) = expression(&sentence[byte_at(start)..]);
        found = Some(match read.strip_prefix(raw.as_str()) {
            Some(unit) if !unit.is_empty() => format!("{number}{unit}"),
            _ => number,
        });
        i = end;
    }
    found
}

/// The items of a JSON list of strings (and numbers) that opens `s` on its first line (at
/// most [`MAX_PIECES`] items, none empty); None for anything else, and for a list of numbers
/// only, which the expression reader takes as written (`[1, 2]` may be an interval).
fn json_list(s: &str) -> Option<Vec<String>> {
    let line = s.lines().next()?.trim_start();
    if !line.starts_with('[') {
        return None;
    }
    let close = line.find(']')?;
    let items: Vec<serde_json::Value> = serde_json::from_str(&line[..=close]).ok()?;
    if items.is_empty() || items.len() > MAX_PIECES {
        return None;
    }
    // a list of numbers only is read as written (`[1, 2]` may be an interval)
    if !items.iter().any(serde_json::Value::is_string) {
        return None;
    }
    items
        .iter()
        .map(|v| match v {
            serde_json::Value::String(t) if !t.trim().is_empty() => Some(clean_inline(t)),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
        .collect()
}

/// The first `pat` in `s` not escaped by a backslash (`\$` is a dollar sign).
fn find_unescaped(s: &str, pat: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = s[from..].find(pat) {
        let at = from + p;
        if pat != "$" || !s[..at].ends_with('\\') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The words of a statement that holds no expression (`Answer: east` → `east`): its first
/// sentence, when it has at most [`super::BARE_ANSWER_CHARS`] characters; else empty.
/// [`super::extract`] uses it when no marker holds an expression.
pub fn statement_words(s: &str) -> String {
    let (s, quote) = after_marker(head(s, MAX_STATEMENT));
    let line = quoted(s, quote).unwrap_or_else(|| s.lines().next().unwrap_or(""));
    let sentence = first_sentence(line.trim());
    if sentence.chars().count() > super::BARE_ANSWER_CHARS {
        return String::new();
    }
    clean_inline(sentence)
}

fn join(first: String, more: &[String]) -> String {
    let mut out = first;
    for m in more {
        out.push_str(", ");
        out.push_str(m);
    }
    out
}

/// Restatements or alternatives after an expression (see the module docs).
fn more_pieces(mut rest: &str) -> Vec<String> {
    let mut out = Vec::new();
    while out.len() < MAX_PIECES {
        let r = rest.trim_start_matches([' ', '\t']);
        // a `;` separates the values of several blanks only when a value alone follows it
        // (`0; 3` → `0, 3`; "5; the other root is extraneous" ends at 5)
        let blanks = r.starts_with(';');
        let (r, paren) = match r.strip_prefix('(') {
            Some(x) => (x, true),
            None => (r.strip_prefix([',', '、', ';']).unwrap_or(r), false),
        };
        let mut r = r.trim_start_matches([' ', '\t']);
        if r.starts_with("\\\"") {
            break; // the closing quote of `\"$12$ and $13$\"`
        }
        let lower = r.get(..24.min(r.len())).unwrap_or(r).to_ascii_lowercase();
        for c in [
            "or equivalently",
            "i.e.,",
            "i.e.",
            "ie.",
            "that is,",
            "which is",
            "which equals",
            "or",
            "and",
            "=",
            // the same in Chinese: or, and
            "或者",
            "或",
            "和",
            "与",
            "及",
        ] {
            let ok = lower.starts_with(c)
                && (!c.is_ascii()
                    || !lower[c.len()..].starts_with(|ch: char| ch.is_ascii_alphabetic()));
            if ok {
                r = r[c.len()..].trim_start_matches([' ', '\t', ',']);
                break;
            }
        }
        if !starts_math(r) {
            break;
        }
        let (piece, end) = expression(r);
        if piece.is_empty() {
            break;
        }
        let mut after = &r[end..];
        if blanks && !after.trim_start().is_empty() && !after.trim_start().starts_with(['.', ';']) {
            break;
        }
        if paren {
            match after.trim_start().strip_prefix(')') {
                Some(a) => after = a,
                None => break,
            }
        }
        out.push(piece);
        rest = after;
    }
    out
}

/// Whether the value that opens `t` is part of a noun phrase (`10 years from now, ...`,
/// `8 pens cost ...`): a word follows it, not a comma, a sentence end or more math.
fn opens_noun_phrase(t: &str) -> bool {
    let (_, end) = expression(t);
    t[end..].trim_start().starts_with(word_letter)
}

/// Whether `c` continues a word: a letter of any script but Greek (`θ`, `π` are symbols).
fn word_letter(c: char) -> bool {
    c.is_alphabetic() && !('\u{370}'..='\u{3ff}').contains(&c)
}

/// Whether the parenthesis whose content starts `inner` is a remark in words after a value
/// (`8.329 (rounded to 2 decimal places)`, `5/9 (simplified form)`, `12 (approximately)`): its
/// first word has three or more letters and is not a function, constant, unit or Greek
/// letter's name, nor `or`/`and` (`5 (or 7)` is an alternative), and nothing but a sentence
/// end follows its closing parenthesis. `x (x+1)`, `2 (\pi r)`, `3 (mod 7)`, `2 (theta + 1)`
/// and `93 (miles per hour) + 93` are not remarks.
fn remark(inner: &str) -> bool {
    let inner = inner.trim_start_matches([' ', '\t']);
    let len = inner.find(|c: char| !word_letter(c)).unwrap_or(inner.len());
    let word = inner[..len].to_lowercase();
    // the remark closes the statement: nothing but a sentence end follows it (`93 (miles per
    // hour) + 93 (miles per hour) = 186` goes on with math: a unit, not a remark)
    let closes = inner[len..].find(')').is_some_and(|c| {
        let after = inner[len + c + 1..].trim_start_matches([' ', '\t']);
        after.is_empty() || after.starts_with(['.', ',', ';', '!', '?', '\n', '\r'])
    });
    len >= 3
        && !MATH_WORDS.contains(&word.as_str())
        && !super::lex::GREEK_LETTERS.contains(&word.as_str())
        && !matches!(word.as_str(), "and" | "or" | "mod" | "bmod" | "pmod")
        && closes
}

/// Whether `s` starts with something an expression can start with.
fn starts_math(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c)
            if c.is_ascii_digit()
                || matches!(
                    c,
                    '$' | '\\' | '-' | '(' | '[' | '{' | '|' | '−' | '√' | '∞' | 'π' | '.'
                ) =>
        {
            true
        }
        Some(c) if c.is_ascii_alphabetic() => {
            // a lone letter (a variable), not a word nor an article before one ("A triangle")
            let rest = chars.as_str();
            let next_word = rest
                .strip_prefix(' ')
                .and_then(|r| r.split(|ch: char| !ch.is_ascii_alphabetic()).next())
                .map(str::to_ascii_lowercase)
                .unwrap_or_default();
            let word_follows = next_word.len() >= 2
                && !MATH_WORDS.contains(&next_word.as_str())
                && next_word != "or"
                && next_word != "and";
            !rest.starts_with(word_letter) && !word_follows
        }
        _ => false,
    }
}

/// The expression at the start of `s` (cleaned) and the byte offset where it ends.
pub fn expression(s: &str) -> (String, usize) {
    let b = s.as_bytes();
    let mut i = 0;
    let mut end = 0; // after the last character that belongs to the expression
    let mut depth = 0i32;
    // a math span opening the expression is taken whole
    for (open, close) in [("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")] {
        if let Some(inner) = s.strip_prefix(open) {
            return match inner.find(close) {
                Some(e) => (clean_inline(&inner[..e]), open.len() + e + close.len()),
                None => (String::new(), 0),
            };
        }
    }
    while i < b.len() {
        let c = b[i];
        match c {
            b'$' => break,
            b'\\' => {
                let name_len = s[i + 1..]
                    .find(|ch: char| !ch.is_ascii_alphabetic())
                    .unwrap_or(s.len() - i - 1);
                if name_len == 0 {
                    // `\{`, `\%`, `\,`: one escaped character (`\)`/`\]` close a span)
                    match b.get(i + 1) {
                        Some(b')' | b']') | None => break,
                        Some(_) => {
                            i += 1 + s[i + 1..].chars().next().map_or(0, char::len_utf8);
                        }
                    }
                } else {
                    i += 1 + name_len;
                }
                end = i;
            }
            b'(' if depth == 0 && end > 0 && remark(&s[i + 1..]) && s[..i].ends_with(' ') => {
                break; // `8.329 (rounded to 2 decimal places)`: a remark, not a factor
            }
            b'{' | b'(' | b'[' => {
                depth += 1;
                i += 1;
                end = i;
            }
            b'}' | b')' | b']' => {
                if depth == 0 {
                    break;
                }
                depth -= 1;
                i += 1;
                end = i;
            }
            b'0'..=b'9' => {
                i += 1;
                end = i;
            }
            b'.' => {
                let next_digit = b.get(i + 1).is_some_and(u8::is_ascii_digit);
                if next_digit || (depth > 0 && b.get(i + 1) == Some(&b'.')) {
                    i += 1;
                    end = i;
                } else if depth > 0 && b.get(i + 1).is_some_and(|n| !n.is_ascii_whitespace()) {
                    i += 1;
                } else {
                    break;
                }
            }
            b',' => {
                if depth > 0 || b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                    end = i;
                } else {
                    break; // a following item is taken by `more_pieces`
                }
            }
            b' ' | b'\t' => i += 1,
            b'!' => {
                if b.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()) {
                    break; // an exclamation mark, not a factorial
                }
                i += 1;
                end = i;
            }
            b'=' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'^' | b'_' | b'|' | b'%' | b'\''
            | b':' | b'&' | b'~' => {
                i += 1;
                if !(c == b':' && b.get(i).is_none_or(u8::is_ascii_whitespace) && depth == 0) {
                    end = i;
                } else {
                    break;
                }
            }
            b'a'..=b'z' | b'A'..=b'Z' => {
                // a word runs on through letters of any Latin, Cyrillic, ... script (`años`,
                // `Mädchen` are words, not `a`, `M` times something); Greek letters are
                // symbols (`sinθ`)
                let len = s[i..]
                    .find(|ch: char| !word_letter(ch))
                    .unwrap_or(s.len() - i);
                let word = s[i..i + len].to_ascii_lowercase();
                let after = s[i + len..].trim_start_matches(' ');
                let connector = word == "or" || word == "and";
                if connector && depth == 0 {
                    break; // alternatives are taken by `more_pieces`
                }
                let math = if len == 1 {
                    // a lone letter, unless a word follows it (the article in "5 a day",
                    // prose after a cut: "x is")
                    let next_word = s[i + 1..]
                        .starts_with(' ')
                        .then(|| after.split(|ch: char| !ch.is_ascii_alphabetic()).next())
                        .flatten()
                        .map(str::to_ascii_lowercase);
                    !next_word.is_some_and(|w| {
                        w.len() >= 2 && !MATH_WORDS.contains(&w.as_str()) && w != "or" && w != "and"
                    })
                } else {
                    depth > 0 || MATH_WORDS.contains(&word.as_str()) || connector
                };
                if !math {
                    break;
                }
                i += len;
                end = i;
            }
            _ if c >= 0x80 => {
                let ch = s[i..].chars().next().unwrap_or(' ');
                // math symbols, and Greek letters (variables: `2α`, `y(τ)`)
                let greek = ('\u{391}'..='\u{3c9}').contains(&ch);
                if !greek && !"×÷⁄∕−√π∞≤≥≠≈°·±∓∈∪∩′".contains(ch)
                {
                    break;
                }
                i += ch.len_utf8();
                end = i;
            }
            _ => break,
        }
    }
    // trailing operators are not part of the value (`5 =` from a cut line)
    let mut t = s[..end].trim_end();
    while let Some(x) = t.strip_suffix(['=', '+', '-', '*', '/', '^', '_', ':', ',']) {
        t = x.trim_end();
    }
    (clean_inline(t), end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> String {
        statement_answer(s)
    }

    #[test]
    fn a_remark_in_parentheses_ends_the_expression() {
        assert_eq!(a(" 8.329 (rounded to 2 decimal places)"), "8.329");
        assert_eq!(a(" 5/9 (Simplified form)"), "5/9");
        assert_eq!(a(" 12 (approximately)."), "12");
        // a factor, an alternative, a modulus, a Greek letter's name: kept
        assert_eq!(a(" 2 (x+1)"), "2 (x+1)");
        assert_eq!(a(" 3 (mod 7)"), "3 (mod 7)");
        assert_eq!(a(" 2 (theta + 1)"), "2 (theta + 1)");
        assert_eq!(a(" 5 (or 7)"), "5 (or 7)");
        assert_eq!(a(" f(x) = 2x"), "f(x) = 2x");
        // math after the parenthesis: a unit inside the working, not a closing remark
        assert_eq!(
            a(" 93 (miles per hour) + 93 (miles per hour) = 186 (miles per hour)"),
            "93 (miles per hour) + 93 (miles per hour) = 186"
        );
    }

    #[test]
    fn the_expression_ends_where_the_math_ends() {
        assert_eq!(a("that there are 125 trees on 5 labeled vertices."), "125");
        assert_eq!(a(" $\\frac{3}{4}$. I hope it is correct."), "\\frac{3}{4}");
        assert_eq!(a(" 3.5 cm. Done"), "3.5 cm");
        assert_eq!(a(": **42**"), "42");
        assert_eq!(a(" 12 km/h, since speed is distance over time"), "12 km/h");
        assert_eq!(a(" x = 3, so we are done"), "x = 3");
        assert_eq!(a("The largest $n$ is 34."), "34");
        assert_eq!(a(" \\(\\sqrt{2}\\)."), "\\sqrt{2}");
        assert_eq!(a(" 1,234 dollars"), "1,234");
        assert_eq!(a(" $(0, 1)$. I hope it is correct."), "(0, 1)");
        assert_eq!(a(" B."), "B");
        assert_eq!(a(" approximately 3.14"), "3.14");
        assert_eq!(a(" 2\\sqrt{3} units"), "2\\sqrt{3}");
        assert_eq!(a(":\n\\[\n\\frac{1}{2}\n\\]"), "\\frac{1}{2}");
        assert_eq!(a("\": \"200\"\n}"), "200");
        assert_eq!(a(" 'D)80'."), "D");
    }

    #[test]
    fn restatements_and_alternatives_are_items() {
        assert_eq!(a(" 0.25, or 1/4."), "0.25, 1/4");
        assert_eq!(a(" $\\frac12$, i.e. $0.5$."), "\\frac12, 0.5");
        assert_eq!(a(" 3 or 5"), "3, 5");
        assert_eq!(a(" either 3 or 5"), "3, 5");
        assert_eq!(a(" $\\frac{1}{2}$ (or $0.5$)."), "\\frac{1}{2}, 0.5");
        assert_eq!(a(" 5, which is the number of ways"), "5");
        assert_eq!(a(" 12, and the sum is 7"), "12");
        // Chinese: 或 (or), 、 (a list), 和 (and)
        assert_eq!(a(" 3或5"), "3, 5");
        assert_eq!(a("A、C"), "A, C");
        assert_eq!(a(" $x=1$ 和 $x=2$"), "x=1, x=2");
        // but not before text
        assert_eq!(a(" 5，因为和为 5"), "5");
    }

    #[test]
    fn words_outside_math() {
        for s in ["Check: 5 + 15 = 20", "so x = 5", "$x$ is 5"] {
            assert!(has_words(s), "{s}");
        }
        for s in [
            "x = 5",
            "$S_{10} = \\frac{10}{2}(1+19) = 100$",
            "\\sin x = 1",
            "12 cm",
            "4x = 20",
        ] {
            assert!(!has_words(s), "{s}");
        }
    }

    #[test]
    fn negations_and_refusals_decline() {
        for s in [
            " not 5",
            " negative 5",
            " half of 10",
            " that there is not enough information to determine f(0).",
        ] {
            assert_eq!(read_statement(s), Statement::Declines, "{s}");
        }
        assert_eq!(read_statement(" the number of trees."), Statement::Nothing);
    }
}
