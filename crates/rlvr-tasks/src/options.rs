//! The options of a multiple-choice problem, shown to the model.
//!
//! A problem with [`Problem::choices`](crate::Problem::choices) whose text does not already
//! list them gets an options block after the question, in the form of MMLU-Pro's official
//! evaluation (`format_cot_example` in TIGER-AI-Lab/MMLU-Pro's `evaluate_from_local.py`,
//! which lm-evaluation-harness's `mmlu_pro` task copies):
//!
//! ```text
//! <question>
//! Options:
//! A. <option A>
//! B. <option B>
//! ```
//!
//! Option texts are shown without labels they carry themselves (AQuA's `A)21` is shown as
//! `A. 21`, [`strip_labels`]) and trimmed. The block has no trailing newline: the prompt
//! template puts its own text after it.
//!
//! The text **already lists** the options ([`lists_options`]) when, for every option in
//! order, the text holds that option's letter label (`(B)`, `B)`, `B.` or `B:`, not preceded
//! by a letter or digit), then the option's text, then an end, a space or punctuation
//! (runs of whitespace count as one space on both sides). Requiring the labels keeps short
//! options that the question happens to contain (`2`, `True`) from counting as listed: a
//! model that never saw the letters could not answer with one. A question that lists its
//! options without letters gets the block too (the options are then shown twice).

use std::borrow::Cow;

use crate::math::{strip_labels, MAX_CHOICES};

/// `text` followed by the options block, or `text` unchanged when it already lists the
/// options or there are none (see the module docs).
pub fn with_options<'a, S: AsRef<str>>(text: &'a str, choices: &[S]) -> Cow<'a, str> {
    if choices.is_empty() || lists_options(text, choices) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(format!("{}\n{}", text.trim_end(), options_block(choices)))
}

/// The block `Options:\nA. <text>\nB. <text>...` (no trailing newline) for at most
/// [`MAX_CHOICES`] options, their own labels removed.
pub fn options_block<S: AsRef<str>>(choices: &[S]) -> String {
    let texts = strip_labels(&choices[..choices.len().min(MAX_CHOICES)]);
    let mut out = String::from("Options:");
    for (i, t) in texts.iter().enumerate() {
        out.push('\n');
        out.push(letter(i));
        out.push_str(". ");
        out.push_str(t.trim());
    }
    out
}

/// Whether `text` lists every option with its letter label, in the forms the module docs
/// name. No options: false.
pub fn lists_options<S: AsRef<str>>(text: &str, choices: &[S]) -> bool {
    if choices.is_empty() {
        return false;
    }
    let text = squeeze(text);
    let texts = strip_labels(&choices[..choices.len().min(MAX_CHOICES)]);
    texts
        .iter()
        .enumerate()
        .all(|(i, option)| labelled_in(&text, letter(i), &squeeze(option)))
}

fn letter(i: usize) -> char {
    char::from(b'A' + i as u8)
}

/// Runs of whitespace made one space, the ends trimmed.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `text` holds a label of `letter` followed by `option` (see [`lists_options`]).
///
/// Each label followed by the option (directly or after one space: both are squeezed) is
/// searched for as one string (the standard library's two-way search, linear in the text), so
/// that a long option against a text full of labels costs a pass over the text, not a
/// comparison with the option at every label (a 3 MB record took 20.9 s that way).
fn labelled_in(text: &str, letter: char, option: &str) -> bool {
    let labels = [
        format!("({letter})"),
        format!("{letter})"),
        format!("{letter}."),
        format!("{letter}:"),
    ];
    labels.iter().any(|label| {
        [format!("{label}{option}"), format!("{label} {option}")]
            .iter()
            .any(|needle| {
                text.match_indices(needle.as_str()).any(|(at, _)| {
                    let before_ok = text[..at]
                        .chars()
                        .next_back()
                        .is_none_or(|c| !c.is_alphanumeric());
                    let mut after = &text[at + needle.len()..];
                    if option.is_empty() {
                        // an empty option: the label's own space is not the option's end
                        after = after.strip_prefix(' ').unwrap_or(after);
                    }
                    let after_ok = after.chars().next().is_none_or(|c| !c.is_alphanumeric());
                    before_ok && after_ok
                })
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long option against a text full of labels: one pass over the text (a 3 MB record
    /// took 20.9 s when the option was compared at every label).
    #[test]
    fn a_long_option_in_a_text_full_of_labels_is_linear() {
        let text = "A. ".repeat(500_000);
        let option = "A. ".repeat(250_000) + "z";
        let t = std::time::Instant::now();
        assert!(!lists_options(&text, &[option.as_str()]));
        assert!(t.elapsed().as_secs_f64() < 2.0, "{:?}", t.elapsed());
    }

    #[test]
    fn block_follows_the_question() {
        let got = with_options("Which is prime?\n", &["4", "5", "6"]);
        assert_eq!(got, "Which is prime?\nOptions:\nA. 4\nB. 5\nC. 6");
        // own labels are not shown twice
        assert_eq!(
            options_block(&["A)21", "B)21.5"]),
            "Options:\nA. 21\nB. 21.5"
        );
    }

    #[test]
    fn listed_options_are_recognized() {
        let choices = ["21", "21.5", "22"];
        for text in [
            "How far? Answer Choices: (A) 21 (B) 21.5 (C) 22",
            "How far?\nA. 21\nB.  21.5\nC.\n22",
            "How far?\nA) 21, B) 21.5, C) 22.",
            "How far? A: 21 B: 21.5 C: 22",
        ] {
            assert!(lists_options(text, &choices), "{text}");
            assert_eq!(with_options(text, &choices), text);
        }
        for text in [
            // the texts alone, without letters
            "Is it 21, 21.5 or 22?",
            // one option missing
            "(A) 21 (B) 21.5",
            // the wrong letters
            "(A) 21 (C) 21.5 (B) 22",
            // a label inside a word, an option inside a number
            "DATA. 21 (B) 21.5 (C) 22",
            "(A) 215 (B) 21.5 (C) 22",
        ] {
            assert!(!lists_options(text, &choices), "{text}");
        }
        assert!(!lists_options::<&str>("anything", &[]));
        // an empty option after its label
        assert!(lists_options("(A) (B) x", &["", "x"]));
        assert!(!lists_options("(A) x (B) x", &["", "y"]));
        assert_eq!(with_options::<&str>("q", &[]), "q");
    }
}
