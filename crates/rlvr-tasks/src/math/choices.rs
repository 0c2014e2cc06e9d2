//! Multiple choice: a gold answer and a response read against the options of the problem.
//!
//! [`verify_with_choices`] takes the options in order (option `i` has the letter `A + i`).
//! With options given, a response is right when it names **the right option** and nothing
//! else, either by its **letter** or by its **text**, whichever way the gold answer is
//! written:
//! - the gold's options: the letter of a gold written as a letter (`B`, `(B)`, `B)`,
//!   `\text{(B)}`) and every option with the same text as that one (two options reading
//!   `6 kmph` are both right), else every option whose text equals the gold (compared as
//!   answers when neither holds a word: `\frac12` is the option `0.5`; else as text:
//!   `True, False` is not the option `False, True`);
//! - the response's option: the extracted answer ([`super::extract`]) read as a letter
//!   (`(B)`, `B`, `**B**`, or a label before the option's text, `(B) 5`, which counts as
//!   B; a letter followed by that option's own value, `C (50°)`, `(b), 2\theta^2`; also a final line that starts with a label, `D)Cannot be determined`, when
//!   extraction finds nothing else), else the one option its text equals (`5` is option B when B reads `5`); an answer
//!   equal to several options, to none, or a hedge (`A or B`) is wrong;
//! - a gold that is neither a letter in range nor any option's text (the record and its
//!   options disagree) is checked without the options, by [`super::verify`].
//!
//! Without options a letter gold is compared as a letter, as [`super::verify`] does.
//!
//! Options that each start with their own letter's label, in order (AQuA's `A)21`,
//! `B)21.5`, ...; also `(A) 21`, `A. 21`, `A: 21`), are read without the labels
//! ([`strip_labels`]), so the response `21` names option A. A label is removed only when every
//! option carries its own: `A) x` among unlabelled options is text.

use super::explain::{equivalent_reason, gold_answer};
use super::extract::extract_with_rule;
use crate::Score;

/// The most options read (`A` to `Z`).
pub const MAX_CHOICES: usize = 26;

/// Scores `response` against `gold` for a problem with these options (rules in the module
/// docs).
pub fn verify_with_choices<S: AsRef<str>>(gold: &str, response: &str, choices: &[S]) -> Score {
    let texts = strip_labels(&choices[..choices.len().min(MAX_CHOICES)]);
    let choices: Vec<&str> = texts.iter().map(String::as_str).collect();
    if choices.is_empty() {
        return super::verify(gold, response);
    }
    let gold = gold_answer(gold);
    let right = gold_options(&gold, &choices);
    if right.is_empty() {
        return super::verify(&gold, response);
    }
    let found = match extract_with_rule(response) {
        Ok(f) => f,
        Err(why) => {
            // a final line that is an option's label (`D)Cannot be determined`), or names
            // one after a heading (`Solution: Choice_D`)
            let last = response.trim_end().rsplit('\n').next().unwrap_or("").trim();
            let label = named_choice(last);
            match letter_of(label, choices.len()) {
                Some(_) if last.chars().count() <= super::BARE_ANSWER_CHARS => {
                    super::extract::Extracted {
                        answer: label.to_string(),
                        rule: super::extract::Rule::FinalLine,
                    }
                }
                _ => return Score::binary(false, None, why.describe()),
            }
        }
    };
    let extracted = Some(found.answer.clone());
    let labelled = labelled_option(&found.answer, &choices);
    let chosen = match labelled.or_else(|| letter_of(&found.answer, choices.len())) {
        Some(i) => i,
        None => match matching(&found.answer, &choices).as_slice() {
            [i] => *i,
            [] => return Score::binary(false, extracted, "names no option"),
            _ => return Score::binary(false, extracted, "equals several options"),
        },
    };
    let letter = (b'A' + chosen as u8) as char;
    if right.contains(&chosen) {
        Score::binary(
            true,
            extracted,
            format!("names the right option ({letter})"),
        )
    } else {
        Score::binary(false, extracted, format!("names another option ({letter})"))
    }
}

/// The gold's options: the option a letter gold names, and any with the same text as that
/// one; else every option whose text equals the gold. Empty when the gold names none.
fn gold_options(gold: &str, choices: &[&str]) -> Vec<usize> {
    match letter_of(gold, choices.len()) {
        Some(i) => same_options(i, choices),
        None => matching(gold, choices),
    }
}

/// Whether `gold` names one of `choices` (its letter in range, or an option's text, labels
/// removed as [`verify_with_choices`] removes them): when it does not, the record and its
/// options disagree and [`verify_with_choices`] checks the gold without the options.
pub fn gold_names_option<S: AsRef<str>>(gold: &str, choices: &[S]) -> bool {
    let texts = strip_labels(&choices[..choices.len().min(MAX_CHOICES)]);
    let choices: Vec<&str> = texts.iter().map(String::as_str).collect();
    !gold_options(&gold_answer(gold), &choices).is_empty()
}

/// The option texts without their labels when every option starts with the label of its own
/// letter, in order (`A)21`, `B)21.5`; `(A) 21`; `A. 21`; `A: 21`); else the options as they
/// are. The text after a label is trimmed.
pub fn strip_labels<S: AsRef<str>>(choices: &[S]) -> Vec<String> {
    let unlabelled = |i: usize, c: &str| -> Option<String> {
        let letter = char::from(b'A' + u8::try_from(i).ok().filter(|&i| i < 26)?);
        let t = c.trim_start();
        let rest = match t.strip_prefix('(') {
            Some(r) => r.strip_prefix(letter)?.strip_prefix(')')?,
            None => t.strip_prefix(letter)?.strip_prefix([')', '.', ':'])?,
        };
        Some(rest.trim().to_string())
    };
    let stripped: Option<Vec<String>> = choices
        .iter()
        .enumerate()
        .map(|(i, c)| unlabelled(i, c.as_ref()))
        .collect();
    match stripped {
        Some(texts) if !texts.is_empty() => texts,
        _ => choices.iter().map(|c| c.as_ref().to_string()).collect(),
    }
}

/// The options whose text equals `answer`: as answers when neither holds a word (`\frac12`
/// is the option `0.5`), else as the same text (case, spaces and `$` aside), since the
/// comparison of answers reads lists order-free and drops units, which options made of
/// words do not allow (`False, True` is not `True, False`).
fn matching(answer: &str, choices: &[&str]) -> Vec<usize> {
    let symbol = relation_symbol(answer);
    choices
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            !c.trim().is_empty()
                && if symbol.is_some() || relation_symbol(c).is_some() {
                    symbol == relation_symbol(c)
                } else if has_word(c) || has_word(answer) {
                    same_text(c, answer)
                } else {
                    equivalent_reason(c, answer).is_ok()
                }
        })
        .map(|(i, _)| i)
        .collect()
}

/// The relation an option or answer that is only a relation sign names, however it is written
/// (`$\geq$`, `\ge`, `≥`, `>=` are one; `$=$`, `<`, `\neq`): IneqMath-style options that ask
/// which sign fills a blank. None for any other text.
fn relation_symbol(s: &str) -> Option<&'static str> {
    let t: String = s
        .replace("\\(", "")
        .replace("\\)", "")
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '$')
        .collect();
    Some(match t.as_str() {
        "\\ge" | "\\geq" | "\\geqslant" | "≥" | ">=" => "≥",
        "\\le" | "\\leq" | "\\leqslant" | "≤" | "<=" => "≤",
        "\\ne" | "\\neq" | "≠" | "!=" => "≠",
        "=" => "=",
        "<" | "\\lt" => "<",
        ">" | "\\gt" => ">",
        _ => return None,
    })
}

/// The options with the same text as option `i` (and `i` itself).
fn same_options(i: usize, choices: &[&str]) -> Vec<usize> {
    // an option with no text (a bare label, `(A)`..`(E)`, whose figure the model saw) is the
    // same as no other: else every letter would name the right option
    let blank = choices[i].trim().is_empty();
    let mut out: Vec<usize> = (0..choices.len())
        .filter(|&j| j == i || (!blank && same_text(choices[i], choices[j])))
        .collect();
    out.dedup();
    out
}

fn same_text(a: &str, b: &str) -> bool {
    let t = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_whitespace() && *c != '$')
            .flat_map(char::to_lowercase)
            .collect()
    };
    t(a) == t(b)
}

/// Whether `s` holds a run of two or more letters that is not a `\command`.
fn has_word(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() {
            let start = i;
            while i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            }
            if i - start >= 2 && (start == 0 || b[start - 1] != b'\\') {
                return true;
            }
        } else {
            i += 1;
        }
    }
    false
}

/// The option `answer` names by a letter followed by that option's own value: `C (50°)`,
/// `(b), 2\theta^2`, `(C) 27` (any case inside parentheses, a capital outside). None when
/// there is no such label or the value is not that option's (then the letter alone decides,
/// [`letter_of`]).
fn labelled_option(answer: &str, choices: &[&str]) -> Option<usize> {
    let t = super::normalize::clean_inline(answer);
    let t = t.trim_matches('*').trim();
    let chars: Vec<char> = t.chars().take(3).collect();
    let (letter, at) = match chars.as_slice() {
        ['(', c, ')', ..] if c.is_ascii_alphabetic() => (c.to_ascii_uppercase(), 3),
        [c, n, ..] if c.is_ascii_uppercase() && matches!(n, ' ' | ',' | '(') => (*c, 1),
        _ => return None,
    };
    let i = (letter as u8 - b'A') as usize;
    let option = *choices.get(i)?;
    // the option's value after the letter (`(C) 27`, `C: 27`, `(B) = 5`); a relation sign is
    // the value itself (`(C) =`, `(B) \ge`)
    let after = t[at..].trim_start_matches([' ', ',']).trim();
    let rest = if relation_symbol(after).is_some() {
        after
    } else {
        after
            .trim_start_matches([' ', ',', ':', '.', ')', '='])
            .trim()
    };
    let value = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or(rest)
        .trim();
    (!value.is_empty() && matching(value, &[option]) == [0]).then_some(i)
}

/// The label a final line names with the word "choice" or "option", after any heading:
/// `Solution: Choice_D` → `D`, `Step 10: Solution: Choice D` → `D`, `Answer: Option (B)` →
/// `(B)` (MR-Ben's `Choice_X` also escaped, `Choice\_X`). Any other line is returned whole
/// (`D)Cannot be determined`), for [`letter_of`] to read.
fn named_choice(line: &str) -> &str {
    let tail = line
        .rsplit_once([':', '：'])
        .map_or(line, |(_, t)| t)
        .trim();
    for word in ["choice", "option"] {
        // `get`: the tail may open with a character of several bytes
        let starts = tail
            .get(..word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word));
        if tail.len() > word.len() && starts {
            let label = tail[word.len()..].trim_start_matches([' ', '_', '\\']);
            if label.len() < tail.len() - word.len() {
                return label.trim_end_matches('.');
            }
        }
    }
    line
}

/// The option index `answer` names by its letter (see the module docs).
pub fn letter_of(answer: &str, n: usize) -> Option<usize> {
    let mut t = super::normalize::clean_inline(answer);
    for cmd in ["\\text{", "\\textbf{", "\\mathrm{", "\\mathbf{"] {
        if let Some(inner) = t.strip_prefix(cmd).and_then(|x| x.strip_suffix('}')) {
            t = inner.trim().to_string();
        }
    }
    let t = t.trim().trim_matches('*').trim();
    let chars: Vec<char> = t.chars().take(4).collect();
    let (letter, rest_at) = match chars.as_slice() {
        ['(', c, ')', ..] => (c.to_ascii_uppercase(), 3),
        [c, ..] if c.is_ascii_uppercase() => (*c, 1),
        _ => return None,
    };
    if !letter.is_ascii_uppercase() {
        return None;
    }
    let rest = &t[rest_at..];
    // a lone letter, or a label `B)`, `B.`, `B:` or `(B)` before the option's text
    let label = rest.is_empty()
        || rest.starts_with([')', '.', ':'])
        || (rest_at == 3 && rest.starts_with(' '));
    let i = (letter as u8 - b'A') as usize;
    (label && i < n).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Vec<String> {
        ["3", "\\frac{1}{2}", "Paris", "7"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn letter_or_text_in_either_direction() {
        let o = opts();
        assert!(verify_with_choices("B", "The answer is (B).", &o).correct);
        assert!(verify_with_choices("B", "So the answer is $0.5$.", &o).correct);
        assert!(verify_with_choices("0.5", "\\boxed{B}", &o).correct);
        assert!(verify_with_choices("Paris", "Answer: C", &o).correct);
        assert!(verify_with_choices("(C)", "Answer: (C) Paris", &o).correct);
        assert!(verify_with_choices("\\frac12", "\\boxed{\\text{(B)}}", &o).correct);
        assert!(verify_with_choices("D", "So h = 80 m. The correct answer is 'D)80'.", &o).correct);
        let twice = ["6 kmph", "15 kmph", "6 kmph"].map(String::from);
        assert!(verify_with_choices("C", "The correct answer is A)6 kmph.", &twice).correct);
        let tf = ["False, True", "True, False"].map(String::from);
        assert!(!verify_with_choices("B", "The answer is False, True.", &tf).correct);
        let cbd = ["22", "Cannot be determined"].map(String::from);
        assert!(verify_with_choices("B", "Work...\nB)Cannot be determined", &cbd).correct);
    }

    #[test]
    fn a_final_line_naming_a_choice_after_a_heading() {
        // MR-Ben's answer line (Claude 2, GPT-3.5, mistral-medium), with and without the
        // underscore, its Markdown escape, a step heading before it
        let o = opts();
        for r in [
            "Step 3: 1/2 is the value.\nSolution: Choice_B",
            "Work.\nSolution: Choice\\_B",
            "Work.\nStep 10: Solution: Choice B",
            "Work.\nAnswer: Option (B).",
        ] {
            assert!(verify_with_choices("B", r, &o).correct, "{r}");
            assert!(!verify_with_choices("C", r, &o).correct, "{r}");
        }
        assert_eq!(named_choice("Solution: Choice_D"), "D");
        // words after the word are not a label: the line is read whole, and names nothing
        assert!(!verify_with_choices("B", "Work.\nSolution: Choices B and C", &o).correct);
        assert!(!verify_with_choices("B", "Work.\nSolution: Optionally B", &o).correct);
        // a declining line names no option
        assert!(!verify_with_choices("A", "Work.\nSolution: None of the choices", &o).correct);
    }

    #[test]
    fn anything_else_is_wrong() {
        let o = opts();
        assert!(!verify_with_choices("B", "The answer is (A).", &o).correct);
        assert!(!verify_with_choices("B", "The answer is A or B.", &o).correct);
        assert!(!verify_with_choices("B", "The answer is 0.25.", &o).correct);
        assert!(!verify_with_choices("B", "\\boxed{E}", &o).correct);
        assert!(!verify_with_choices("7", "\\boxed{3}", &o).correct);
    }

    #[test]
    fn options_labelled_with_their_own_letters_are_read_without_the_labels() {
        let aqua = ["A)21", "B)21.5", "C)22", "D)22.5", "E)23"];
        assert_eq!(strip_labels(&aqua), ["21", "21.5", "22", "22.5", "23"]);
        assert!(verify_with_choices("B", "So the answer is 21.5.", &aqua).correct);
        assert!(verify_with_choices("B", "The answer is B.", &aqua).correct);
        assert!(!verify_with_choices("B", "So the answer is 21.", &aqua).correct);
        assert!(!verify_with_choices("B", "The answer is A.", &aqua).correct);
        assert_eq!(
            strip_labels(&["(A) 1", "(B) two words"]),
            ["1", "two words"]
        );
        assert_eq!(strip_labels(&["A. x", "B: y"]), ["x", "y"]);
        // a label out of order, or on some options only, is text
        assert_eq!(strip_labels(&["B)1", "A)2"]), ["B)1", "A)2"]);
        assert_eq!(strip_labels(&["A)1", "2"]), ["A)1", "2"]);
        assert_eq!(strip_labels(&["Apple", "Banana"]), ["Apple", "Banana"]);
        assert!(gold_names_option("21.5", &aqua));
        assert!(gold_names_option("E", &aqua));
        assert!(!gold_names_option("F", &aqua));
        assert!(!gold_names_option("24", &aqua));
    }

    #[test]
    fn without_options_a_letter_is_a_letter() {
        let none: [&str; 0] = [];
        assert!(verify_with_choices("B", "\\boxed{B}", &none).correct);
        assert!(!verify_with_choices("B", "\\boxed{0.5}", &none).correct);
    }
}
