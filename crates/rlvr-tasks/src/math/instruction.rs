//! Restated instructions: a sentence that repeats how the question wants its answer coded
//! ("Return 1 for finite dimension and 0 for infinite.") names values, but it answers none of
//! them.
//!
//! A sentence restates an instruction when it holds an instruction verb (`return`, `output`,
//! `print`, `respond`, `reply`, `answer with`, `write`, `enter`) and, after it, two or more
//! codes: a number or a lone letter followed by `for`, `if`, `when` or `otherwise` ("1 if the
//! statement is true, 0 otherwise", "return 1 for yes and 0 for no"). Extraction takes no
//! answer from such a sentence ([`super::final_line`], [`super::span`]), so a response that
//! ends on it has committed to nothing. A statement of one value with its condition ("we
//! return 0 for this space", "the answer is 5 for the first part and 7 for the second") has no
//! instruction verb before two codes, and is read as before.

use super::text::regex_cached;

/// Whether `sentence` restates an answer-coding instruction (module docs).
pub fn restates_instruction(sentence: &str) -> bool {
    let verb = regex_cached(
        &VERB_RE,
        r"(?i)\b(?:return|returns|output|outputs|print|respond|reply|answer with|write|enter)\b",
    );
    let Some(v) = verb.find(sentence) else {
        return false;
    };
    let code = regex_cached(
        &CODE_RE,
        r"(?i)(?:^|[\s(])(-?\d+(?:\.\d+)?|[A-Za-z])\s+(?:for|if|when|otherwise)\b",
    );
    let codes: Vec<&str> = code
        .captures_iter(&sentence[v.end()..])
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .take(4)
        .collect();
    codes.len() >= 2 && codes.iter().skip(1).any(|c| *c != codes[0])
}

static VERB_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static CODE_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_restated() {
        for s in [
            "Return 1 for finite dimension and 0 for infinite.",
            "We need to output 1 if the statement is true, 0 otherwise.",
            "The task says: answer with 1 for yes and 0 for no",
            "print A if the triangle is acute and B if it is obtuse",
            "Respond with -1 when it diverges, 1 when it converges.",
        ] {
            assert!(restates_instruction(s), "{s}");
        }
    }

    #[test]
    fn answers_with_conditions_are_not_instructions() {
        for s in [
            // one code: a committed answer with its reason
            "Since the space is infinite-dimensional, we return 0 for this space.",
            // two values with conditions but no instruction verb: a two-part answer
            "The answer is 5 for the first part and 7 for the second part.",
            // a piecewise answer
            "So f(x) = 5 if x > 0 and -5 otherwise.",
            // the verb after the codes
            "1 for finite, 0 for infinite: so we write 0.",
            // the same code twice
            "Return 1 for finite and 1 for bounded.",
            "The answer is 0.",
        ] {
            assert!(!restates_instruction(s), "{s}");
        }
    }
}
