//! Special tokens left in decoded text (`<|im_end|>`, `</s>`, ...), removed before extraction.
//!
//! A response decoded without `skip_special_tokens` keeps its chat and end-of-sequence
//! markers: `\boxed{5}<|im_end|>` or `The answer is 5.</s><s>`. [`strip_special_tokens`]
//! applies two rules:
//! - the response **ends at its first end-of-turn marker** ([`END_MARKERS`]) that follows
//!   some text: what a model writes after its turn ended (a new turn it hallucinated, another
//!   "assistant" answer) is not its answer
//!   (`\boxed{5}<|im_end|>\n<|im_start|>user ... \boxed{7}` has the answer 5); an
//!   end-of-answer token counts as one (GAOKAO-Bench's `<eoa>`: `【答案】D<eoa>` reads
//!   `【答案】D`);
//! - every other marker of [`OTHER_MARKERS`] (a beginning-of-sequence `<s>`, `<bos>`, an
//!   end-of-explanation `<eoe>` before the answer section) and an end marker before any text
//!   are removed (`</s><s>The answer is 3` reads `The answer is 3`; `...所以选D。<eoe>\n【答案】D`
//!   reads `...所以选D。\n【答案】D`). A marker glued to the text around it takes nothing
//!   with it: `x = 5<eoa>` reads `x = 5`.
//!
//! [`strip_tokens`] removes a given list of tokens (a tokenizer's own special tokens) the same
//! way. Both scan the text once per marker, so they run in linear time.
//!
//! [`cut_at_plain_turn`] ends a response where a base model, prompted with a chat written in
//! plain text, starts a new turn of its own: a line that opens with a role marker of
//! [`PLAIN_TURN_MARKERS`] (MathCAMPS's few-shot prompt writes its turns `|user| ...` and
//! `|assistant| ...`: `### Answer: 40.2\n|user| A car travels ...` reads `### Answer: 40.2`).
//! Only at the start of a line, after some text: `|user|` inside a sentence, or a Markdown
//! table's `| user |`, is not a turn.

use std::borrow::Cow;

/// End-of-turn / end-of-sequence markers of common chat models (Qwen, Llama 2 and 3,
/// DeepSeek, Mistral, Gemma, Phi, GPT-2, gpt-oss), end-of-answer tokens of evaluation prompts
/// (GAOKAO-Bench's `<eoa>`), and the markers that start a new turn.
pub const END_MARKERS: &[&str] = &[
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<|eom_id|>",
    "</s>",
    "<｜end▁of▁sentence｜>",
    "<|end▁of▁sentence|>",
    "<|end|>",
    "<end_of_turn>",
    "<eos>",
    "<|EOT|>",
    "<|return|>",
    // end of answer: GAOKAO-Bench's prompts end the answer section with it
    "<eoa>",
    // a new turn starting ends this one
    "<|im_start|>",
    "<start_of_turn>",
    "<|start_header_id|>",
];

/// Other special tokens removed wherever they are.
pub const OTHER_MARKERS: &[&str] = &[
    "<s>",
    "<|begin_of_text|>",
    "<｜begin▁of▁sentence｜>",
    "<|begin▁of▁sentence|>",
    "<bos>",
    "<|end_header_id|>",
    "<pad>",
    "<|pad|>",
    "<|assistant|>",
    // end of explanation: GAOKAO-Bench's prompts close the working with it, then the answer
    // section follows
    "<eoe>",
];

/// Role markers of chats written in plain text that open a new turn at the start of a line
/// (module docs).
pub const PLAIN_TURN_MARKERS: &[&str] = &["|user|", "|system|", "|human|"];

/// `text` up to the first line (after some text) that opens with one of
/// [`PLAIN_TURN_MARKERS`] (module docs); all of `text` when none does.
pub fn cut_at_plain_turn(text: &str) -> &str {
    // one pass: whether text came before is carried from line to line
    let (mut start, mut text_before) = (0, false);
    for line in text.split_inclusive('\n') {
        let head = line.trim_start_matches([' ', '\t', '#']);
        if text_before
            && PLAIN_TURN_MARKERS.iter().any(|m| {
                head.get(..m.len())
                    .is_some_and(|h| h.eq_ignore_ascii_case(m))
            })
        {
            return &text[..start];
        }
        text_before |= !line.trim().is_empty();
        start += line.len();
    }
    text
}

/// `text` without the common special tokens (rules in the module docs).
pub fn strip_special_tokens(text: &str) -> Cow<'_, str> {
    if !text.contains('<') {
        return Cow::Borrowed(text);
    }
    strip(
        text,
        END_MARKERS.iter().copied(),
        OTHER_MARKERS.iter().copied(),
    )
}

/// `text` without the given special tokens (a tokenizer's own list): cut at the first of
/// them that ends a turn (one of [`END_MARKERS`], or any token whose text names an end:
/// `eos`, `end`, `eot`), the others removed.
pub fn strip_tokens<S: AsRef<str>>(text: &str, tokens: &[S]) -> String {
    let is_end = |t: &str| {
        let l = t.to_ascii_lowercase();
        END_MARKERS.contains(&t) || l.contains("eos") || l.contains("end") || l.contains("eot")
    };
    let toks = || tokens.iter().map(AsRef::as_ref).filter(|t| !t.is_empty());
    strip(
        text,
        toks().filter(|t| is_end(t)),
        toks().filter(|t| !is_end(t)),
    )
    .into_owned()
}

fn strip<'a, 'b>(
    text: &'a str,
    ends: impl Iterator<Item = &'b str>,
    others: impl Iterator<Item = &'b str>,
) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(text);
    for m in others {
        if out.contains(m) {
            out = Cow::Owned(out.replace(m, ""));
        }
    }
    // cut at the first end marker preceded by text; end markers before any text go. Each
    // marker's next occurrence is searched again only once the scan has passed it, so this
    // stays linear however many markers lead the text.
    let ends: Vec<&str> = ends.collect();
    let mut next: Vec<Option<usize>> = ends.iter().map(|m| out.find(m)).collect();
    let mut start = 0;
    while let Some((p, k)) = next
        .iter()
        .enumerate()
        .filter_map(|(k, p)| p.map(|p| (p, k)))
        .min()
    {
        if !out[start..p].trim().is_empty() {
            return match out {
                Cow::Borrowed(s) => Cow::Borrowed(&s[start..p]),
                Cow::Owned(s) => Cow::Owned(s[start..p].to_string()),
            };
        }
        start = p + ends[k].len();
        for (k, m) in ends.iter().enumerate() {
            if next[k].is_some_and(|q| q < start) {
                next[k] = out[start..].find(m).map(|q| q + start);
            }
        }
    }
    match out {
        Cow::Borrowed(s) => Cow::Borrowed(&s[start..]),
        Cow::Owned(s) => Cow::Owned(s[start..].to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qwen_and_llama_markers() {
        assert_eq!(
            strip_special_tokens("so \\boxed{5}<|im_end|><|endoftext|>"),
            "so \\boxed{5}"
        );
        assert_eq!(
            strip_special_tokens(
                "\\boxed{5}<|im_end|>\n<|im_start|>user\nAnd 7?<|im_end|>\\boxed{7}"
            ),
            "\\boxed{5}"
        );
        assert_eq!(
            strip_special_tokens("</s><s>The answer is 3.</s><s>"),
            "The answer is 3."
        );
        assert_eq!(
            strip_special_tokens("Answer: 12<｜end▁of▁sentence｜>"),
            "Answer: 12"
        );
        assert_eq!(strip_special_tokens("x < 3 and y > 2"), "x < 3 and y > 2");
        assert_eq!(strip_special_tokens("Answer: 9<|EOT|>"), "Answer: 9");
        assert!(matches!(
            strip_special_tokens("no markers"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn end_of_answer_and_end_of_explanation_tokens() {
        // GAOKAO-Bench's layout: working, <eoe>, the answer section, <eoa>
        assert_eq!(
            strip_special_tokens("so x = 2.<eoe>\n【答案】$x=2$<eoa>"),
            "so x = 2.\n【答案】$x=2$"
        );
        // glued to a value, the token takes nothing of it
        assert_eq!(strip_special_tokens("x = 5<eoa>"), "x = 5");
        assert_eq!(
            strip_special_tokens("The answer is 12 <eoa>\n"),
            "The answer is 12 "
        );
        // what follows the end of the answer is not the answer
        assert_eq!(
            strip_special_tokens("【答案】A<eoa>\n【答案】B<eoa>"),
            "【答案】A"
        );
        // text that only looks like a token is kept
        assert_eq!(strip_special_tokens("a<eo b"), "a<eo b");
        assert_eq!(strip_special_tokens("so 3 <eoax> 4"), "so 3 <eoax> 4");
    }

    #[test]
    fn a_plain_text_turn_ends_the_response() {
        // a base model's new turns after its answer (MathCAMPS's prompt format)
        let r = "Reasoning: 23.0+17.2 = 40.2\n### Answer: 40.2\n###\n|user| A car travels 60 km/h.\n###|assistant| Reasoning: 150\n### Answer: 150";
        assert_eq!(
            cut_at_plain_turn(r),
            "Reasoning: 23.0+17.2 = 40.2\n### Answer: 40.2\n###\n"
        );
        let r = "### Answer: 35.321\n\nNow the next one.\n\n|system| Write \"### Answer: <<your final answer here.>>\".";
        assert_eq!(
            cut_at_plain_turn(r),
            "### Answer: 35.321\n\nNow the next one.\n\n"
        );
        // a marker before any text, inside a line, or a table's cells: no turn
        assert_eq!(cut_at_plain_turn("|user| 2 + 2?\n4"), "|user| 2 + 2?\n4");
        assert_eq!(
            cut_at_plain_turn("so |user| wins\nAnswer: 3"),
            "so |user| wins\nAnswer: 3"
        );
        let table = "| role | n |\n| user | 3 |\nAnswer: 3";
        assert_eq!(cut_at_plain_turn(table), table);
    }

    #[test]
    fn a_tokenizers_own_list() {
        let toks = ["<|my_eos|>", "<|tool|>"];
        assert_eq!(
            strip_tokens("<|tool|>\\boxed{4}<|my_eos|>junk \\boxed{9}", &toks),
            "\\boxed{4}"
        );
        assert_eq!(strip_tokens("a<|tool|>b", &[String::new()]), "a<|tool|>b");
    }
}
