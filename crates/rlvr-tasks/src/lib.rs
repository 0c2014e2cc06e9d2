//! rlvr-tasks: the tasks an RLVR run trains and evaluates on: datasets of prompts with
//! references, and the verifiers that turn a sampled response into a reward.
//!
//! - [`data`]: loading problems from jsonl, json arrays and parquet (verl's layout), with
//!   configurable field names; the named presets, read from a local data directory
//!   ([`resolve_data_dir`]: `--data-dir`, `RLVR_DATA_DIR`) or from their pinned Hugging Face
//!   hub copies in those copies' own layouts (docs/data.md).
//! - [`livecodebench`]: LiveCodeBench's code-generation rows, with [`pickle`], a reader that
//!   accepts only a pickle of one `str` (never unpickling).
//! - [`math`]: answer extraction, normalization and equivalence for math answers
//!   ([`math::verify`]), and [`MathVerifier`].
//! - [`options`]: a multiple-choice problem's options shown after its question
//!   ([`Problem::question`]), unless the question already lists them.
//! - [`testbed`]: the generated arithmetic task that a small model learns on a CPU, with a
//!   difficulty knob, a seed, the two length regimes of the paper, and its own tokenizer.
//! - [`code`]: stdin/stdout programming problems and a sandboxed Python runner.
//! - [`reward`]: the reward function of a run, [`RewardFn`]: each problem routed to the math
//!   checker, the code runner or the testbed verifier by its data source (verl's
//!   `default_compute_score`), checks that fail loudly instead of scoring a dataset 0, and
//!   batch scoring across cores.
//!
//! Out of scope: sampling, models, tokenization of prompts for a model (rlvr-model), and the
//! training loop (rlvr-train).
//!
//! # Contract
//! - A [`Verifier`] never panics and returns in bounded time on any response (inputs are
//!   capped; see [`math`]). Its [`Score::reward`] is in `[0, 1]`; [`Score::correct`] is true
//!   exactly when the reward is 1 for binary verifiers.
//! - Loading never panics on user input; every [`DataError`] names the file and the line, row
//!   or field at fault.

pub mod arith;
pub mod code;
pub mod data;
pub mod livecodebench;
pub mod math;
pub mod options;
pub mod pickle;
pub mod reward;
pub mod testbed;
pub mod verl_format;

pub use data::{
    load_file, load_hub_files, load_preset, resolve_data_dir, AnswerSource, DataError, FieldMap,
    FileFormat, HubLayout, HubSource, Preset, PRESETS,
};
pub use reward::{RewardConfig, RewardError, RewardFn, RewardKind};

use serde::{Deserialize, Serialize};

/// One chat message (`role` is `system`, `user` or `assistant` in verl/TRL files).
pub use rlvr_core::ChatMessage;

/// A prompt as stored in the data: plain text, or chat messages (verl's `prompt` column).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Prompt {
    Text(String),
    Chat(Vec<ChatMessage>),
}

impl Prompt {
    /// The problem text: the text itself, or the content of the last `user` message (the
    /// last message when none has that role).
    pub fn text(&self) -> &str {
        match self {
            Prompt::Text(t) => t,
            Prompt::Chat(msgs) => last_user_message(msgs),
        }
    }
}

/// The content of the last `user` message of a conversation (of its last message when none has
/// that role; empty for no message): the question a chat prompt asks.
pub fn last_user_message(msgs: &[ChatMessage]) -> &str {
    msgs.iter()
        .rev()
        .find(|m| m.role == "user")
        .or(msgs.last())
        .map_or("", |m| m.content.as_str())
}

/// One problem: a prompt and its reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// Stable id: the file's id field when it has one, else `<file stem>-<row index>`.
    pub id: String,
    pub prompt: Prompt,
    /// The gold answer (for code problems: the tests, serialized as JSON; see [`code`]).
    pub answer: String,
    /// A worked reference solution when the data has one.
    #[serde(default)]
    pub solution: Option<String>,
    /// Where the problem comes from (verl's `data_source`, or the preset name).
    pub data_source: String,
    /// A multiple-choice problem's options in letter order (`choices[0]` is option A; at
    /// most [`math::MAX_CHOICES`]); None for any other problem. With options, the math
    /// checker accepts the right option's letter or its text ([`math::verify_with_choices`]),
    /// and the rendered prompt shows them after the question ([`Problem::question`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
}

impl Problem {
    /// The text the model is asked: the prompt text ([`Prompt::text`]) with the options block
    /// after it when the problem has [`Problem::choices`] that the text does not already list
    /// (`Options:\nA. ...\nB. ...`, MMLU-Pro's form; see [`options`]); else the prompt text.
    /// Every prompt template renders this text.
    pub fn question(&self) -> std::borrow::Cow<'_, str> {
        match &self.choices {
            Some(c) => options::with_options(self.prompt.text(), c),
            None => std::borrow::Cow::Borrowed(self.prompt.text()),
        }
    }
}

/// A named list of problems.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dataset {
    pub name: String,
    pub problems: Vec<Problem>,
    /// Records left out because their answer is null or empty, as `<location>: <reason>`
    /// (`element 886: field `answer` is null`), or because the task cannot score them
    /// (a LiveCodeBench row with no usable tests). Callers should report them.
    pub skipped: Vec<String>,
    /// Rows dropped as repeats of an earlier (prompt text, answer) pair (presets with
    /// [`Preset::dedup`]; 0 otherwise).
    pub duplicates: usize,
}

impl Dataset {
    /// Number of problems (skipped records not counted).
    pub fn len(&self) -> usize {
        self.problems.len()
    }

    pub fn is_empty(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Prompt templates that wrap a bare problem text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PromptTemplate {
    /// DAPO's template: the answer goes on a last line `Answer: $Answer`.
    Dapo,
    /// Qwen2.5-Math's: "Please reason step by step, and put your final answer within \boxed{}."
    QwenBoxed,
    /// The problem text unchanged.
    Raw,
}

impl PromptTemplate {
    /// Names accepted by [`PromptTemplate::from_str`](std::str::FromStr).
    pub const NAMES: [&'static str; 3] = ["dapo", "qwen-boxed", "raw"];

    pub fn as_str(&self) -> &'static str {
        match self {
            PromptTemplate::Dapo => "dapo",
            PromptTemplate::QwenBoxed => "qwen-boxed",
            PromptTemplate::Raw => "raw",
        }
    }

    /// The user message for `problem_text`.
    pub fn render(&self, problem_text: &str) -> String {
        match self {
            PromptTemplate::Dapo => format!(
                "Solve the following math problem step by step. The last line of your response \
                 should be of the form Answer: $Answer (without quotes) where $Answer is the \
                 answer to the problem.\n\n{problem_text}\n\nRemember to put your answer on its \
                 own line after \"Answer:\"."
            ),
            PromptTemplate::QwenBoxed => format!(
                "{problem_text}\nPlease reason step by step, and put your final answer within \\boxed{{}}."
            ),
            PromptTemplate::Raw => problem_text.to_string(),
        }
    }
}

impl std::str::FromStr for PromptTemplate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "dapo" => Ok(PromptTemplate::Dapo),
            "qwen-boxed" | "qwen_boxed" | "boxed" => Ok(PromptTemplate::QwenBoxed),
            "raw" => Ok(PromptTemplate::Raw),
            _ => Err(format!(
                "unknown prompt template {s:?} (expected one of {:?})",
                Self::NAMES
            )),
        }
    }
}

/// A verifier's verdict on one response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// In `[0, 1]`; 1 or 0 for binary verifiers.
    pub reward: f64,
    /// Whether the response counts as right (reward 1 for binary verifiers).
    pub correct: bool,
    /// The answer the verifier found in the response, if any.
    pub extracted: Option<String>,
    /// A short human-readable reason (`no answer found`, `numeric match`, ...).
    pub reason: String,
}

impl Score {
    /// A binary score: reward 1 when `correct`, else 0.
    pub fn binary(correct: bool, extracted: Option<String>, reason: impl Into<String>) -> Self {
        Score {
            reward: if correct { 1.0 } else { 0.0 },
            correct,
            extracted,
            reason: reason.into(),
        }
    }
}

/// Scores a response against a problem's reference. Implementations are cheap to share
/// across threads and never panic.
pub trait Verifier: Send + Sync {
    fn score(&self, response: &str, problem: &Problem) -> Score;

    /// Scores many `(response, problem)` pairs, in parallel, results in input order. `Err`
    /// only when the scorer itself failed (a sandbox that cannot run), never for a wrong
    /// response. Default: [`Verifier::score`] on rayon's global pool.
    fn score_batch(&self, items: &[(&str, &Problem)]) -> Result<Vec<Score>, RewardError> {
        use rayon::prelude::*;
        Ok(items.par_iter().map(|(r, p)| self.score(r, p)).collect())
    }

    /// Which scorer `problem` goes to, for reports (None: this verifier does not route).
    fn scorer(&self, _problem: &Problem) -> Option<RewardKind> {
        None
    }
}

/// The math verifier as a [`Verifier`]: [`math::verify`] against `problem.answer`, or
/// [`math::verify_with_choices`] with the problem's options when it has some.
#[derive(Debug, Clone, Copy, Default)]
pub struct MathVerifier;

impl Verifier for MathVerifier {
    fn score(&self, response: &str, problem: &Problem) -> Score {
        math::verify_problem(problem, response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_render_and_parse() {
        assert!(PromptTemplate::Dapo
            .render("1+1?")
            .contains("Answer: $Answer"));
        assert!(PromptTemplate::QwenBoxed
            .render("1+1?")
            .ends_with("within \\boxed{}."));
        assert_eq!(PromptTemplate::Raw.render("1+1?"), "1+1?");
        for name in PromptTemplate::NAMES {
            let t: PromptTemplate = name.parse().unwrap();
            assert_eq!(t.as_str(), name);
        }
        assert!("nope".parse::<PromptTemplate>().is_err());
    }

    #[test]
    fn chat_prompt_text_is_last_user_message() {
        let p = Prompt::Chat(vec![
            ChatMessage {
                role: "system".into(),
                content: "sys".into(),
            },
            ChatMessage {
                role: "user".into(),
                content: "q".into(),
            },
        ]);
        assert_eq!(p.text(), "q");
    }
}
