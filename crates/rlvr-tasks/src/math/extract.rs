//! Extraction: the final answer of a model response (and of a gold answer).
//!
//! [`extract_with_rule`] reads a response as a careful grader does. First, special tokens
//! left in decoded text are handled ([`super::special_tokens`]: the response ends at its
//! first end-of-turn or end-of-answer marker, `\boxed{5}<|im_end|>` reads `\boxed{5}`,
//! `【答案】D<eoa>` reads `【答案】D`), clock times are written one way
//! ([`super::normalize::clock_times`]), and the dollar signs of currency amounts are dropped
//! so that they are not read as math delimiters ([`super::normalize::currency_signs`]:
//! `$25/$5 = 5 hours` reads `25/5 = 5 hours`; `$x = 5$` stays math); a base model's
//! plain-text chat turn ends the response ([`super::special_tokens::cut_at_plain_turn`]: a line
//! opening `|user|` or `|system|`), GSM8K's calculator annotations are dropped
//! ([`super::normalize::calculator_annotations`]: `= <<83-49=34>>34` reads `= 34`), and a
//! repeating decimal written with an ellipsis is its exact fraction
//! ([`super::normalize::repeating_decimals`]: `0.333...` reads `\frac{1}{3}`). Then the
//! first rule that finds something wins ([`Rule`] names it; `rlvr verify --explain` prints it):
//! 0. **answer tags**: the content of the last `<answer>...</answer>` pair, read as a response
//!    of its own, whatever comes before it (`<think>... \boxed{6}? no</think><answer>5</answer>`
//!    → `5`);
//! 1. **the last box**: `\boxed{...}` / `\fbox{...}` (nested braces, `\{ \}` escapes;
//!    `\boxed 5` too); boxes right before it separated only by `,`/`and`/`or`/`\quad` are
//!    joined as list items (`\boxed{2} and \boxed{3}` → `2, 3`: several answers, or a hedge
//!    between different answers, which the comparison refuses against a single gold);
//!    but a final answer statement after the last box ("the answer is", "the final answer
//!    is", "Final Answer:", `答案是`) that holds an expression overrides it: the model boxed
//!    a value, went on, and committed to another (`\boxed{10}. Wait, ... So the final answer
//!    is 12.` → `12`); a tentative, declining or empty statement, or a verification ("check
//!    the answer: 36/3 = 12"), leaves the box standing;
//! 2. **the last answer marker**, whichever comes last in the text:
//!    - an answer statement: "the answer is", "the final answer is", "answer would be",
//!      "the answer to this question is", "the correct option is", "the best choice is",
//!      `Answer:`, `**Final Answer:**`, `Answer =`, the word followed by math (`Answer $9$`),
//!      a JSON field `"answer": "200"`, a final line `A: 26` (question-answer format)
//!      (`Therefore, the answer is $\frac{3}{4}$.` → `\frac{3}{4}`); the same in the
//!      languages models answer in: `答案是`, `答案：`, the `【答案】` heading (GAOKAO-Bench's
//!      answer section), "la respuesta es", "a resposta é", "la risposta è", "la réponse
//!      est", "die Antwort ist/lautet", "Ответ:";
//!    - GSM8K's `#### 42` (`#### 1,234` → `1,234`);
//!    - a Markdown answer block: a line that is only a header `# Answer`, `## Final Answer`,
//!      `**Answer**` or `Answer:`, the answer on the next non-empty lines (PRM800K's
//!      "...\n\n# Answer\n\n15" → `15`);
//!
//!    an **answer section** (such a header, `【答案】` wherever it sits, `答案：` opening a
//!    line) is read as a block: its next paragraph, or for `【答案】`/`答案：` the rest of the
//!    line and the lines after it up to a blank line. A block that holds working commits to
//!    the value it ends on ([`super::final_line::block_end_value`]), not to its first line
//!    (`Final Answer:\nx + 3x = 20\n4x = 20\nx = 5` → `x = 5`; `【答案】解方程得 $x=2$。`
//!    → `x=2`): it holds working when it has two or more lines, or when its line holds no
//!    expression at its start, and its first line is not itself an answer (a value, or a
//!    label and its value: `15`, `x = 5`, `f(2) = 14`; `x + 3x = 20` and `4x = 20` are
//!    steps). A first line that answers, followed by a check (`Final Answer:\n5\n5 + 15 =
//!    20`), keeps its answer; a block whose last line is prose (`Check: 5 + 15 = 20`) keeps
//!    its first line;
//!
//!    a tentative statement ("the answer should be 6", "would be", "might be") does not
//!    count in a truncated response ([`super::final_line::looks_truncated`]): the model
//!    went on checking and was cut before it committed;
//!
//!    the answer is then cut out of the statement at the end of its mathematical
//!    expression, not of its sentence ([`super::span::statement_answer`]: "the answer is
//!    that there are 125 trees on 5 labeled vertices" → `125`); a marker whose statement
//!    declines ("the answer is not 5", "... cannot be determined": [`super::span`]) means
//!    no answer; one whose statement holds no expression gives way to the one before it
//!    (at most [`MAX_MARKERS`] tried: "the answer is 42. ... so the answer is correct." →
//!    `42`); when none holds one, the words of the last marker are the answer
//!    (`Answer: east` → `east`);
//! 3. **a bare response**: one line of at most [`BARE_ANSWER_CHARS`] characters, no `$`,
//!    not prose, is the answer itself (`x = 3`);
//! 4. **the final line** of a finished response ([`super::final_line`]: a truncated or
//!    looping response, or one whose final line declines to answer, has no answer).
//!
//! A response is searched whole, in linear scans; one longer than [`MAX_RESPONSE_BYTES`] is not
//! searched at all and has no answer (so it scores wrong: an answer the verifier did not read
//! in full could hide a different final answer before the part it read).

use super::final_line::{final_line_answer, NoFinal};
use super::normalize::clean_inline;
use super::span::{Statement, MAX_STATEMENT};
use super::text::{head, is_prose, non_empty, regex_cached};

/// The longest response searched for an answer: 1 MiB, far beyond any generation budget
/// (about 250,000 tokens of text). A longer response has no answer ([`extract_answer`] returns
/// `None`) and is scored wrong, never judged on a part of it.
pub const MAX_RESPONSE_BYTES: usize = 1 << 20;
/// A response of one line with at most this many characters and no other answer marker is
/// taken as the answer itself.
pub const BARE_ANSWER_CHARS: usize = 80;
/// Answer markers tried, from the last one back.
pub const MAX_MARKERS: usize = 8;
const MAX_ITEMS: usize = 64;

/// The extraction rule that found an answer (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The content of the last `<answer>...</answer>` pair.
    AnswerTag,
    Boxed,
    /// A final answer statement after the last box, which it overrides.
    AnswerAfterBox,
    AnswerStatement,
    Hashes,
    AnswerBlock,
    BareResponse,
    FinalLine,
}

impl Rule {
    /// How `rlvr verify --explain` names the rule.
    pub fn describe(self) -> &'static str {
        match self {
            Rule::AnswerTag => "answer tags (<answer>...</answer>, <final>...</final>)",
            Rule::Boxed => "last \\boxed{}",
            Rule::AnswerAfterBox => "final answer statement after the last \\boxed{}",
            Rule::AnswerStatement => "answer statement (\"the answer is\", \"Answer:\")",
            Rule::Hashes => "GSM8K #### line",
            Rule::AnswerBlock => "markdown answer block",
            Rule::BareResponse => "the whole (one-line) response",
            Rule::FinalLine => "final line",
        }
    }
}

/// Why a response has no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoAnswer {
    TooLong,
    NotFound,
    /// The response loops or stops mid-line: no committed final answer.
    Truncated,
    Refusal,
    /// The final line restates how the question wants its answer coded
    /// ([`super::instruction`]).
    Instruction,
    /// The response opens its thinking (`<think>`) and never closes it: cut while working,
    /// before any final answer.
    InThinking,
}

impl NoAnswer {
    pub fn describe(self) -> String {
        match self {
            NoAnswer::TooLong => {
                format!("response longer than {MAX_RESPONSE_BYTES} bytes: not read, scored wrong")
            }
            NoAnswer::NotFound => "no answer found".into(),
            NoAnswer::Truncated => {
                "no answer found: no marker, and the response looks truncated (it repeats \
                 itself or its final line is unfinished)"
                    .into()
            }
            NoAnswer::Refusal => "no answer found: the response declines to answer".into(),
            NoAnswer::Instruction => {
                "no answer found: the final line restates the question's instruction".into()
            }
            NoAnswer::InThinking => {
                "no answer found: the response ends inside its thinking (`<think>` never closed)"
                    .into()
            }
        }
    }
}

/// An extracted answer and the rule that found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub answer: String,
    pub rule: Rule,
}

/// Extracts the final answer from a model response (rules in the module docs).
pub fn extract_answer(response: &str) -> Option<String> {
    extract_with_rule(response).ok().map(|e| e.answer)
}

/// The final answer of a response with the rule that found it, or why there is none.
pub fn extract_with_rule(response: &str) -> Result<Extracted, NoAnswer> {
    if response.len() > MAX_RESPONSE_BYTES {
        return Err(NoAnswer::TooLong);
    }
    let text = super::special_tokens::strip_special_tokens(response);
    let text = super::special_tokens::cut_at_plain_turn(text.as_ref());
    let text = super::normalize::calculator_annotations(text);
    let text = super::normalize::repeating_decimals(text.as_ref());
    let text = super::normalize::clock_times(text.as_ref());
    let text = super::normalize::currency_signs(text.as_ref());
    let text = super::normalize::unicode_math(text.as_ref());
    let text = text.as_ref();
    if ends_in_thinking(text) {
        return Err(NoAnswer::InThinking);
    }
    if let Some(tagged) = tagged_answer(text) {
        return tagged;
    }
    let found =
        |answer: String, rule: Rule| non_empty(answer).map(|answer| Extracted { answer, rule });
    let mut found_markers = None;
    if let Some((b, box_end)) = boxed_answer(text) {
        // a committed statement after the last box is the final answer: the model boxed a
        // value, then went on and stated another ("\boxed{10}. Wait, ... So the final answer
        // is 12." → 12); a statement that declines, hedges ("should be") or holds no
        // expression leaves the box standing. Markers are looked for only when the text after
        // the box names an answer (most boxed responses end at their box).
        let tail = &text[box_end..];
        if tail.contains("答案") || tail.to_ascii_lowercase().contains("answer") {
            let after_box = found_markers.insert(markers(text));
            for &(pos, kind) in after_box.iter().take_while(|&&(p, _)| p > box_end) {
                if kind != Rule::AnswerStatement || !final_statement(text, pos) {
                    continue;
                }
                if let Ok(Some(a)) = marker_answer(text, pos, kind, false) {
                    if let Some(a) = found(a, Rule::AnswerAfterBox) {
                        return Ok(a);
                    }
                }
            }
        }
        if let Some(b) = found(b, Rule::Boxed) {
            return Ok(b);
        }
    }
    let mut markers = found_markers.unwrap_or_else(|| markers(text));
    // a tentative statement ("the answer should be 6") in a truncated response is not a
    // committed answer: the model went on checking and was cut
    if markers.iter().any(|&(p, _)| tentative(text, p)) && super::final_line::looks_truncated(text)
    {
        markers.retain(|&(p, _)| !tentative(text, p));
    }
    for (i, &(pos, kind)) in markers.iter().enumerate() {
        match marker_answer(text, pos, kind, false) {
            Err(()) => return Err(NoAnswer::Refusal),
            Ok(Some(a)) => {
                // two answer lines in a row commit to both: different values are a hedge
                // (`### Answer: 5/9 (simplified)` then `### Answer: 75/54`), which the
                // comparison refuses; the same value twice is one answer
                let above = (kind == Rule::AnswerStatement)
                    .then(|| stacked_answer(text, pos, markers.get(i + 1).copied()))
                    .flatten();
                let a = match above {
                    Some(before) if before != a => format!("{before}, {a}"),
                    _ => a,
                };
                if let Some(a) = found(a, kind) {
                    return Ok(a);
                }
            }
            Ok(None) => {}
        }
    }
    // no marker holds an expression: the words of the last one (`Answer: east`)
    if let Some(&(pos, kind)) = markers.first() {
        if let Some(a) = marker_answer(text, pos, kind, true)
            .ok()
            .flatten()
            .and_then(|a| found(a, kind))
        {
            return Ok(a);
        }
    }
    // a closing template line (`Final Answer: [Numeric result]`) is not the final line
    let text = without_closing_templates(text);
    let trimmed = text.trim();
    if !trimmed.is_empty()
        && !trimmed.contains('\n')
        && !trimmed.contains('$')
        && trimmed.chars().count() <= BARE_ANSWER_CHARS
        && !is_prose(trimmed)
    {
        if super::refusal::is_refusal(trimmed) {
            return Err(NoAnswer::Refusal); // `条件不足，无法确定答案。`
        }
        // a computation and its value joined by "is" or "equals" (`5/6 of 30 is 25.`, `x is 5`):
        // the value after the last such word
        let copula = regex_cached(&BARE_COPULA_RE, r"(?i)\s(?:is|equals|are)\s");
        if let Some(m) = copula.find_iter(trimmed).last() {
            let stated = super::span::statement_answer(&trimmed[m.end()..]);
            if let Some(a) = found(stated, Rule::BareResponse) {
                return Ok(a);
            }
        }
        if let Some(a) = found(clean_inline(trimmed), Rule::BareResponse) {
            return Ok(a);
        }
    }
    match final_line_answer(text) {
        Ok(a) => found(a, Rule::FinalLine).ok_or(NoAnswer::NotFound),
        Err(NoFinal::Nothing) => Err(NoAnswer::NotFound),
        Err(NoFinal::Looping | NoFinal::Unfinished) => Err(NoAnswer::Truncated),
        Err(NoFinal::Refusal) => Err(NoAnswer::Refusal),
        Err(NoFinal::Instruction) => Err(NoAnswer::Instruction),
    }
}

/// The answer of the answer line right above the answer line of the marker ending at `pos`
/// (no other line between them but blank ones), when `previous` (the marker before it) opens
/// that line: `### Answer: 5/9` above `### Answer: 75/54` gives `5/9`. Both lines must open
/// with their marker (after `#`, `*`, `>`, `-` and blanks), so an answer stated in working
/// ("... so the answer is 4.") does not count.
fn stacked_answer(text: &str, pos: usize, previous: Option<(usize, Rule)>) -> Option<String> {
    let (prev_pos, prev_kind) = previous?;
    if prev_kind != Rule::AnswerStatement {
        return None;
    }
    let line_start = |p: usize| text[..p].rfind('\n').map_or(0, |n| n + 1);
    let opens_line = |p: usize| {
        let lead = text[line_start(p)..p]
            .trim_start_matches(['#', '*', '>', '-', ' ', '\t'])
            .to_ascii_lowercase();
        lead.starts_with("answer") || lead.starts_with("final answer")
    };
    let this_line = line_start(pos);
    let between = text.get(prev_pos..this_line)?;
    // the previous marker's line ends before this one starts, with only blank lines between
    let (_, after_prev_line) = between.split_once('\n')?;
    if !after_prev_line.trim().is_empty() || !opens_line(pos) || !opens_line(prev_pos) {
        return None;
    }
    marker_answer(text, prev_pos, prev_kind, false)
        .ok()
        .flatten()
}

/// The answer held in answer tags (`<answer>5</answer>`: DeepSeek-R1-Zero's format, and the
/// prompts of Reasoning Gym and most RLVR recipes that ask for it; `<final>...</final>` and
/// `<final_answer>...</final_answer>`, [`ANSWER_TAGS`], as other prompts name them): the content
/// of the last such tag (any case) up to its closing tag, read as a response of its own (a box, a
/// statement or a bare value inside it), whatever the text before it holds. A closed pair
/// decides: a content with no answer in it is the content itself when it is one short line,
/// else no answer (a refusal stays a refusal). An unclosed tag (the response ends inside it)
/// decides only when an answer is found in it. None when there is no tag, or the last pair is
/// empty (an instruction echoed: "put it in <answer> </answer> tags").
fn tagged_answer(text: &str) -> Option<Result<Extracted, NoAnswer>> {
    // no tag without a `<` (one fast scan before the per-name searches)
    if !text.contains('<') {
        return None;
    }
    // the last opening tag of any of the names, and its own closing tag after it
    let Some((open, name)) = last_answer_tag(text, "<") else {
        return unopened_tag(text);
    };
    let start = open + name.len() + 2;
    let close_tag = format!("</{name}>");
    // case-insensitive search over the bytes (no lowercased copy of the response)
    let close = text.as_bytes()[start..]
        .windows(close_tag.len())
        .position(|w| w.eq_ignore_ascii_case(close_tag.as_bytes()))
        .map(|e| start + e);
    let inner = text[start..close.unwrap_or(text.len())].trim();
    if inner.is_empty() {
        return None;
    }
    let tagged = |answer: String| Extracted {
        answer,
        rule: Rule::AnswerTag,
    };
    match extract_with_rule(inner) {
        Ok(e) => Some(Ok(tagged(e.answer))),
        Err(_) if close.is_none() => None,
        Err(NoAnswer::Refusal) => Some(Err(NoAnswer::Refusal)),
        Err(why) => {
            let line = !inner.contains('\n') && inner.chars().count() <= BARE_ANSWER_CHARS;
            Some(
                non_empty(clean_inline(inner))
                    .filter(|_| line)
                    .map(tagged)
                    .ok_or(why),
            )
        }
    }
}

/// Whether `text` opens a thinking block (`<think>`, any case) and does not close it after its
/// last opening: a reasoning model cut at its token budget while thinking has committed to no
/// final answer (policy rule 6), whatever values its working holds.
fn ends_in_thinking(text: &str) -> bool {
    // no tag without a `<` (one fast scan, as in `tagged_answer`)
    if !text.contains('<') {
        return false;
    }
    let bytes = text.as_bytes();
    let last = |tag: &[u8]| {
        bytes
            .windows(tag.len())
            .rposition(|w| w.eq_ignore_ascii_case(tag))
    };
    match last(b"<think>") {
        Some(open) => last(b"</think>").is_none_or(|close| close < open),
        None => false,
    }
}

/// The names of the tags that hold an answer (the last such tag's content is read as a
/// response of its own): `<answer>`, and `<final>` and `<final_answer>` as other prompts ask
/// for them.
pub const ANSWER_TAGS: [&str; 3] = ["answer", "final_answer", "final"];

/// The byte offset and name of the last tag of [`ANSWER_TAGS`] that `lead` opens (`<` for an
/// opening tag `<answer>`, `</` for a closing one), any case, searched over the bytes (no
/// lowercased copy of the response).
fn last_answer_tag(text: &str, lead: &str) -> Option<(usize, &'static str)> {
    let bytes = text.as_bytes();
    ANSWER_TAGS
        .iter()
        .filter_map(|name| {
            let tag = format!("{lead}{name}>");
            bytes
                .windows(tag.len())
                .rposition(|w| w.eq_ignore_ascii_case(tag.as_bytes()))
                .map(|p| (p, *name))
        })
        .max_by_key(|(p, _)| *p)
}

/// A closing answer tag with no opening tag (`9</final>`: the model dropped the opening one):
/// the answer is the rest of the closing tag's line before it, when that holds an answer.
fn unopened_tag(text: &str) -> Option<Result<Extracted, NoAnswer>> {
    let (end, _) = last_answer_tag(text, "</")?;
    let line_start = text[..end].rfind('\n').map_or(0, |n| n + 1);
    let line = text[line_start..end].trim();
    if line.is_empty() || line.chars().count() > BARE_ANSWER_CHARS {
        return None;
    }
    extract_with_rule(line).ok().map(|e| {
        Ok(Extracted {
            answer: e.answer,
            rule: Rule::AnswerTag,
        })
    })
}

/// Answer markers of `text` (byte offset after the marker, kind), the last one first.
fn markers(text: &str) -> Vec<(usize, Rule)> {
    let statement = regex_cached(
        &STATEMENT_RE,
        r#"(?i)\b(?:answers?|(?:correct|best|right)[ \t]+(?:option|choice|answer[ \t]+choice)|my[ \t]+(?:final[ \t]+)?(?:response|reply)|final[ \t]+(?:response|reply))(?:[ \t]+(?:to|for|of)[ \t]+(?:this|the)[ \t]+(?:question|problem))?(?:\*\*|")?[ \t]*(?:(?:is|are|would be|will be|should be|might be|could be|may be)(?:[ \t]+just)?\b|[:：=])"#,
    );
    let header = regex_cached(
        &HEADER_RE,
        r"(?im)^[ \t>]*(?:#{1,6}[ \t]*|\*\*)?(?:final[ \t]+)?answer[ \t]*(?:\*\*)?[ \t]*:?[ \t]*(?:\*\*)?[ \t]*$",
    );
    let mut out: Vec<(usize, Rule)> = Vec::new();
    let keep_last = |v: &mut Vec<(usize, Rule)>, pos: usize, rule: Rule| {
        v.push((pos, rule));
        if v.len() > 4 * MAX_MARKERS {
            v.drain(..v.len() - MAX_MARKERS);
        }
    };
    let mut stmts = Vec::new();
    for m in statement.find_iter(text) {
        if scores_answers(text, m.start(), m.end()) {
            continue;
        }
        keep_last(&mut stmts, m.end(), Rule::AnswerStatement);
    }
    // the same statement in the languages models answer in: Chinese `答案是` / `答案：` and
    // the `【答案】` heading, Spanish, Portuguese, Italian, French, German, Russian; and, with
    // a colon or the language's "is", Japanese, Korean, Hindi, Bengali, Arabic, Turkish,
    // Finnish, Lithuanian, Kazakh, Ukrainian, Dutch, Polish, Indonesian, Vietnamese, Thai,
    // Swahili
    let foreign = regex_cached(
        &FOREIGN_STATEMENT_RE,
        r"(?i)(?:【\s*(?:最终)?答案\s*】|答案\s*(?:是|为|為|[:：])|(?:respuesta|resposta|risposta|réponse|reponse)(?:\s+(?:final|finale|correcta|correcte|correta|corretta))?\s*(?:(?:est|es)(?-u:\b)|[éè]\s|[:：])|antwort\s*(?:ist|lautet|[:：])|ответ\s*(?:[:：]|—|-|равен|будет)|答え\s*(?:は|[:：])|정답\s*(?:은|는)?\s*[:：]|답\s*[:：]|(?:उत्तर|উত্তর)\s*(?:है\s*)?[:：]|(?:الإجابة|الجواب)\s*(?:هي|هو|[:：])|(?-u:\b)(?:cevap|yanıt)\s*[:：]|(?-u:\b)vastaus\s*(?:on(?-u:\b)|[:：])|(?-u:\b)atsakymas\s*(?:yra(?-u:\b)|[:：])|жауап\s*[:：]|відповідь\s*[:：]|(?-u:\b)antwoord\s*(?:is(?-u:\b)|[:：])|(?-u:\b)odpowied[źz]\s*(?:to(?-u:\b)|[:：])|(?-u:\b)jawaban(?:nya)?\s*(?:adalah(?-u:\b)|[:：])|đáp án\s*(?:là|[:：])|คำตอบ\s*(?:คือ|[:：])|(?-u:\b)jibu\s*(?:ni(?-u:\b)|[:：]))",
    );
    for m in foreign.find_iter(text) {
        keep_last(&mut stmts, m.end(), Rule::AnswerStatement);
    }
    // `Answer $9$`: the word followed by math, no colon
    let before_math = regex_cached(&ANSWER_MATH_RE, r"(?i)\banswers?[ \t]*(?:\$|\\\(|\\\[)");
    for m in before_math.find_iter(text) {
        let opener = if text[..m.end()].ends_with('$') { 1 } else { 2 };
        keep_last(&mut stmts, m.end() - opener, Rule::AnswerStatement);
    }
    let mut blocks = Vec::new();
    for m in header.find_iter(text) {
        keep_last(&mut blocks, m.end(), Rule::AnswerBlock);
    }
    out.extend(stmts);
    out.extend(blocks);
    if let Some(p) = text.rfind("####") {
        out.push((p + 4, Rule::Hashes));
    }
    // a final `A: 26` line (question-answer format)
    let end = text.trim_end();
    let last_line = end.rfind('\n').map_or(0, |p| p + 1);
    if end[last_line..].trim_start().starts_with("A:") {
        let at = last_line + end[last_line..].find("A:").unwrap_or(0) + 2;
        out.push((at, Rule::AnswerStatement));
    }
    out.retain(|&(p, _)| !placeholder_after(text, p));
    out.sort_by_key(|&(p, r)| (std::cmp::Reverse(p), r == Rule::AnswerStatement));
    out.dedup_by_key(|(p, _)| *p);
    out.truncate(MAX_MARKERS);
    out
}

/// `text` without the lines at its end that are an answer marker and a placeholder only
/// ([`placeholder_after`]: `**"Answer: [num]"**`, `Final Answer: [Numeric result]`): a
/// prompt's template copied after the working, whose last line is then the final line.
fn without_closing_templates(mut text: &str) -> &str {
    loop {
        let end = text.trim_end();
        let start = end.rfind('\n').map_or(0, |n| n + 1);
        let line = &end[start..];
        let template =
            markers(line).is_empty() && line.contains(['<', '[', '{']) && placeholder_line(line);
        if !template || start == 0 {
            return text;
        }
        text = &end[..start];
    }
}

/// Whether `line` is an answer marker followed by a placeholder and nothing else but
/// emphasis, quotes and punctuation.
fn placeholder_line(line: &str) -> bool {
    let marker = regex_cached(
        &TEMPLATE_LINE_RE,
        r#"(?i)^[ \t*"'`#>-]*(?:final[ \t]+)?(?:answer|####)[ \t*"'`]*[:：=]?"#,
    );
    let Some(m) = marker.find(line) else {
        return false;
    };
    if !placeholder_after(line, m.end()) {
        return false;
    }
    let rest = &line[m.end()..];
    let close = rest.find(['>', ']', '}']).map_or(rest.len(), |i| i + 1);
    rest[close..]
        .chars()
        .all(|c| matches!(c, ' ' | '\t' | '*' | '"' | '\'' | '`' | '.' | '。'))
}

/// Whether the marker ending at `pos` is followed by a template's placeholder, not an answer:
/// a prompt's format line echoed or copied (`#### <number>`, `Answer: [num]`, `Final Answer:
/// [Numeric result]` on the next line, `the answer is {your answer}`, `the final answer is
/// "Answer: [num]"`): a bracketed run of at most 40 letters, spaces, `_` and `-` naming what
/// goes there (a word such as "number", "answer", "result", "value", "your"). A bracketed
/// answer (`[Yes]`, `<5>`) is no placeholder.
fn placeholder_after(text: &str, pos: usize) -> bool {
    let placeholder = regex_cached(
        &PLACEHOLDER_RE,
        r#"(?i)^[\s*"'`]*(?:(?:final[ \t]+)?answer[ \t*"'`]*[:：=][\s*"'`]*)?[<\[{]([a-z][a-z _-]{0,39})[>\]}]"#,
    );
    let names = regex_cached(
        &PLACEHOLDER_NAME_RE,
        r"(?i)\b(?:numbers?|num|answer|result|value|your|final|integer|digits?|expression|letter|option|choice|here|placeholder)\b",
    );
    let rest = text.get(pos..).unwrap_or("");
    // the next 64 characters at most
    let head = rest
        .char_indices()
        .nth(64)
        .map_or(rest, |(i, _)| &rest[..i]);
    placeholder
        .captures(head)
        .is_some_and(|c| names.is_match(&c[1]))
}

/// Whether the answer statement at `start..end` speaks of answers in general, as a problem's
/// scoring does, not of the response's own: "each incorrect answer is worth -2 points", "a
/// correct answer is worth 5", "every answer is": the word after a quantifier (`each`,
/// `every`, `per`, `any`, `a`, `an`, with `correct`, `incorrect`, `wrong`, `right` between), or
/// followed by "worth".
fn scores_answers(text: &str, start: usize, end: usize) -> bool {
    let quantified = regex_cached(
        &QUANTIFIED_RE,
        r"(?i)\b(?:each|every|per|any|an?)[ \t]+(?:(?:in)?correct[ \t]+|wrong[ \t]+|right[ \t]+)?$",
    );
    let from = text[..start]
        .char_indices()
        .rev()
        .nth(24)
        .map_or(0, |(i, _)| i);
    quantified.is_match(&text[from..start])
        || text[end..]
            .trim_start()
            .get(..5)
            .is_some_and(|w| w.eq_ignore_ascii_case("worth"))
}

/// Whether the answer statement ending at `pos` commits to a final answer: "the answer is",
/// "the final answer is", "Final Answer:", `答案是`, `答案为` (not "the answer should be", nor
/// "check the answer:", which introduces a verification).
fn final_statement(text: &str, pos: usize) -> bool {
    let mut start = pos.saturating_sub(32);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let before = text[start..pos].replace(['*', '"'], "");
    regex_cached(
        &FINAL_STATEMENT_RE,
        r"(?i)(?:\bthe[ \t]+(?:final[ \t]+)?answer[ \t]+is|\bfinal[ \t]+answer[ \t]*(?:is|:)|答案\s*(?:是|为|為))[ \t]*$",
    )
    .is_match(&before)
}

/// Whether the marker ending at `pos` is tentative (`should be`, `would be`, `might be`,
/// `could be`, `may be`).
fn tentative(text: &str, pos: usize) -> bool {
    let start = pos.saturating_sub(12);
    let before = text.get(start..pos).unwrap_or("").to_ascii_lowercase();
    ["should be", "would be", "might be", "could be", "may be"]
        .iter()
        .any(|t| before.ends_with(t))
}

/// The answer after the marker ending at `pos`: the rest of its line, or the next paragraph
/// when the line holds nothing more (a header); an answer section that holds working gives
/// the value it ends on (the module docs); Err when the statement declines.
fn marker_answer(text: &str, pos: usize, kind: Rule, words: bool) -> Result<Option<String>, ()> {
    let rest = &text[pos..];
    let rest = rest.trim_start_matches(['#', ' ', '\t']);
    let line = rest.split('\n').next().unwrap_or("");
    let bare_line = line.trim().trim_matches(['*', ':', '：', ' ']);
    let header_words = bare_line.to_ascii_lowercase();
    let empty = bare_line.is_empty()
        || (kind == Rule::Hashes && matches!(header_words.as_str(), "answer" | "final answer"));
    let paragraph = |s: &'_ str| -> usize { s.find("\n\n").unwrap_or(s.len()) };
    let (body, block) =
        if empty && !rest.trim_start().starts_with("$$") && !rest.trim_start().starts_with("\\[") {
            // the next paragraph (a block's answer)
            let after = rest.get(line.len()..).unwrap_or("");
            let after = after.trim_start();
            let b = &after[..paragraph(after)];
            (head(b, MAX_STATEMENT), Some(b))
        } else if cjk_heading(text, pos) {
            let b = &rest[..paragraph(rest)];
            (head(rest, MAX_STATEMENT), Some(b))
        } else {
            (head(rest, MAX_STATEMENT), None)
        };
    let a = if words {
        super::span::statement_words(body)
    } else {
        let first = super::span::read_statement(body);
        let working = |b: &str| {
            let lines = b.lines().filter(|l| !l.trim().is_empty()).take(2).count();
            match &first {
                Statement::Answer(a) => lines >= 2 && !plain_answer(a),
                Statement::Nothing => true,
                Statement::Declines => false,
            }
        };
        match block
            .filter(|b| working(b))
            .and_then(super::final_line::block_end_value)
        {
            Some(v) => v,
            None => match first {
                Statement::Answer(a) => a,
                Statement::Declines => return Err(()),
                Statement::Nothing => String::new(),
            },
        }
    };
    Ok((!a.trim().is_empty()).then_some(a))
}

/// Whether the marker ending at `pos` is a Chinese answer heading: `【答案】` wherever it sits,
/// or `答案：` / `答案:` / `最终答案：` opening its line.
fn cjk_heading(text: &str, pos: usize) -> bool {
    let before = &text[..pos];
    if before.trim_end().ends_with('】') {
        return true;
    }
    let line = &before[before.rfind('\n').map_or(0, |p| p + 1)..];
    let line = line.trim().trim_matches(['*', '#', ' ']);
    matches!(
        line,
        "答案:" | "答案：" | "最终答案:" | "最终答案：" | "答案 :" | "答案 ："
    )
}

/// Whether an answer read from the first line of an answer section is itself an answer, not a
/// step of working: a value or expression with no `=` (`15`, `\frac{7}{2}`, `x > 3`), or a
/// label and its value (`x = 5`, `f(2) = 14`, `S_{10} = 100`, `P(X > 2) = 0.45`: a left side
/// that is one name, with subscripts or arguments). `x + 3x = 20` and `4x = 20` are steps.
fn plain_answer(a: &str) -> bool {
    let a = a.trim();
    let Some(eq) = a.find('=') else {
        return true;
    };
    // the left side without its brace and parenthesis groups
    let mut lhs = String::new();
    let mut depth = 0i32;
    for c in a[..eq].trim().chars() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => depth -= 1,
            _ if depth == 0 => lhs.push(c),
            _ => {}
        }
    }
    let lhs = lhs.trim();
    lhs.starts_with(|c: char| c.is_ascii_alphabetic() || c == '\\')
        && lhs
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '\\' | '\'' | ' '))
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
    boxed_answer(s).map(|(answer, _)| answer)
}

/// [`extract_boxed`] and the byte offset where the last box ends.
fn boxed_answer(s: &str) -> Option<(String, usize)> {
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
    let (mut first, last_end, last) = *boxes.last()?;
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
    Some((parts.join(", "), last_end))
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
        .replace(['$', ',', ';', '{', '}', '(', ')', '[', ']', '\\'], " ");
    // "and", "or", spacing, display delimiters (`\]` or `\[` between two displays), and the
    // variable each box solves for (`x=\boxed{2}` or
    // `x=\boxed{3}`: the roots 2 and 3)
    let restated_variable = |w: &str| {
        let name = w.trim_end_matches('=');
        w == "=" || (name.len() == 1 && name.chars().all(|c| c.is_ascii_alphabetic()))
    };
    // between two displays only "or" joins: the boxes are alternatives (a hedge), where "and"
    // after a display more often opens another part's answer (`\boxed{\epsilon y^{10} + y^7 +
    // 1}` and `\boxed{\epsilon = ...}`), which the last box answers
    let displays = between.contains("\\]") || between.contains("\\[");
    let words: Vec<String> = t.split_whitespace().map(str::to_ascii_lowercase).collect();
    if displays && !words.iter().any(|w| w == "or") {
        return false;
    }
    words.iter().all(|w| {
        matches!(w.as_str(), "and" | "or" | "&" | "quad" | "qquad") || restated_variable(w)
    })
}

static BOX_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static FINAL_STATEMENT_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static STATEMENT_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static QUANTIFIED_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static PLACEHOLDER_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static TEMPLATE_LINE_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static BARE_COPULA_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static PLACEHOLDER_NAME_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static HEADER_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static ANSWER_MATH_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
static FOREIGN_STATEMENT_RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
