//! What the loop trains on: a [`Task`] (problems, their rendered and tokenized prompts, and the
//! verifier that scores responses), built by [`build_task`] with a [`PromptFormat`].

use std::sync::Arc;

use rlvr_model::{ChatMessage, ChatTokenizer};
use rlvr_tasks::{Problem, PromptTemplate, Verifier};

use crate::TrainError;

/// A set of problems ready for sampling: the rendered, tokenized prompt of each, and the
/// verifier that scores responses to them.
#[derive(Clone)]
pub struct Task {
    pub name: String,
    pub problems: Vec<Problem>,
    /// Token ids of each problem's prompt (same order as `problems`).
    pub prompts: Vec<Vec<u32>>,
    pub verifier: Arc<dyn Verifier>,
    /// What the environment writes into responses while they are sampled (None: nothing).
    pub environment: Option<Arc<dyn crate::environment::TaskEnvironment>>,
}

impl Task {
    pub fn len(&self) -> usize {
        self.problems.len()
    }

    pub fn is_empty(&self) -> bool {
        self.problems.is_empty()
    }
}

/// How a problem becomes prompt text: the template around the problem, then (optionally) the
/// tokenizer's chat template. A chat prompt from the data keeps every message (system, earlier
/// user and assistant turns); the template (`dapo`, `qwen-boxed`) wraps its last user message.
/// A text prompt becomes one user turn. A multiple-choice problem's options are part of the
/// problem text the template wraps ([`Problem::question`]: an `Options:` block after the
/// question unless it lists them already), so training, `rlvr eval` and the exported data all
/// show the model the same options.
#[derive(Debug, Clone, Copy)]
pub struct PromptFormat {
    pub template: PromptTemplate,
    pub chat: bool,
}

impl PromptFormat {
    /// The chat messages of `problem`: its chat prompt with the template around the last user
    /// message, or one user turn holding the templated text.
    pub fn messages(&self, problem: &Problem) -> Vec<ChatMessage> {
        let user = self.template.render(&problem.question());
        match &problem.prompt {
            rlvr_tasks::Prompt::Chat(msgs) if msgs.iter().any(|m| m.role == "user") => {
                let last_user = msgs.iter().rposition(|m| m.role == "user");
                msgs.iter()
                    .enumerate()
                    .map(|(i, m)| {
                        let content = if Some(i) == last_user {
                            user.clone()
                        } else {
                            m.content.clone()
                        };
                        ChatMessage::new(m.role.clone(), content)
                    })
                    .collect()
            }
            _ => vec![ChatMessage::new("user", user)],
        }
    }

    /// The prompt text of `problem`; without a tokenizer the chat template cannot be applied and
    /// the text is returned as the user message alone (what `--dry-run` shows without weights).
    pub fn render(
        &self,
        problem: &Problem,
        tokenizer: Option<&ChatTokenizer>,
    ) -> Result<String, TrainError> {
        match (self.chat, tokenizer) {
            (true, Some(tok)) => Ok(tok.apply_chat_template(&self.messages(problem), true)?),
            _ => Ok(self.template.render(&problem.question())),
        }
    }
}

/// Bytes per token of the cap [`build_task`] puts on a prompt's text before it renders or
/// tokenizes it: `max_prompt_len * PROMPT_BYTES_PER_TOKEN`. Text averages 3 to 5 bytes per
/// token (a few more for scripts outside ASCII), so a prompt over the cap cannot fit in
/// `max_prompt_len` tokens in practice; dropping it unseen keeps a huge record from costing
/// gigabytes in the tokenizer. (The data loader refuses prompts over
/// `rlvr_tasks::data::MAX_PROMPT_BYTES` whatever the limit, naming the file and line.)
pub const PROMPT_BYTES_PER_TOKEN: usize = 32;

/// The byte length of a problem's prompt text (a chat prompt: its roles and contents) and of
/// its options, the size [`build_task`] and [`build_eval_task`] check before rendering or
/// tokenizing it.
fn prompt_bytes(p: &Problem) -> usize {
    let options: usize = p.choices.iter().flatten().map(String::len).sum();
    options
        + match &p.prompt {
            rlvr_tasks::Prompt::Text(t) => t.len(),
            rlvr_tasks::Prompt::Chat(msgs) => {
                msgs.iter().map(|m| m.role.len() + m.content.len()).sum()
            }
        }
}

/// [`build_task`] for evaluation: every prompt must fit the model's context of `positions`
/// tokens with room for at least one generated token. A prompt that does not is an error
/// (naming `source`, the data file or preset, the problem's id and its place), never dropped
/// in silence and never generated from: its text is checked against `positions *`
/// [`PROMPT_BYTES_PER_TOKEN`] bytes before it is rendered or tokenized (so a 3 MB prompt
/// costs no tokenizer time), and its tokens against `positions - 1` after. Empty prompts are
/// dropped as in [`build_task`].
pub fn build_eval_task(
    source: &str,
    problems: Vec<Problem>,
    format: PromptFormat,
    tokenizer: &ChatTokenizer,
    positions: usize,
    verifier: Arc<dyn Verifier>,
) -> Result<Task, TrainError> {
    let refuse = |i: usize, p: &Problem, reason: String| {
        TrainError::Data(rlvr_tasks::DataError::BadRecord {
            path: source.into(),
            at: format!("problem {} (number {i})", p.id),
            reason,
        })
    };
    let max_bytes = positions.saturating_mul(PROMPT_BYTES_PER_TOKEN);
    for (i, p) in problems.iter().enumerate() {
        let bytes = prompt_bytes(p);
        if bytes > max_bytes {
            return Err(refuse(
                i,
                p,
                format!(
                    "the prompt's {bytes} bytes cannot fit the model's {positions} positions (more than {PROMPT_BYTES_PER_TOKEN} bytes per position; not tokenized)"
                ),
            ));
        }
    }
    let (task, _) = build_task(source, problems, format, tokenizer, 0, verifier)?;
    for (i, (p, ids)) in task.problems.iter().zip(&task.prompts).enumerate() {
        if ids.len() >= positions {
            return Err(refuse(
                i,
                p,
                format!(
                    "the prompt is {} tokens: it leaves no room to generate within the model's {positions} positions (max_position_embeddings)",
                    ids.len()
                ),
            ));
        }
    }
    Ok(task)
}

/// Renders and tokenizes every problem. Prompts longer than `max_prompt_len` tokens (or empty)
/// are dropped; so, before rendering and tokenizing, are prompts whose text (the messages'
/// roles and contents) is longer than `max_prompt_len *` [`PROMPT_BYTES_PER_TOKEN`] bytes.
/// `max_prompt_len` 0 means no limit. Returns the task and the number dropped.
pub fn build_task(
    name: &str,
    problems: Vec<Problem>,
    format: PromptFormat,
    tokenizer: &ChatTokenizer,
    max_prompt_len: usize,
    verifier: Arc<dyn Verifier>,
) -> Result<(Task, usize), TrainError> {
    let mut kept = Vec::with_capacity(problems.len());
    let mut prompts = Vec::with_capacity(problems.len());
    let mut dropped = 0;
    let max_bytes = max_prompt_len.saturating_mul(PROMPT_BYTES_PER_TOKEN);
    for p in problems {
        let bytes = prompt_bytes(&p);
        if max_prompt_len > 0 && bytes > max_bytes {
            dropped += 1;
            continue;
        }
        let text = format.render(&p, Some(tokenizer))?;
        let ids = tokenizer.encode(&text, !format.chat)?;
        if ids.is_empty() || (max_prompt_len > 0 && ids.len() > max_prompt_len) {
            dropped += 1;
            continue;
        }
        prompts.push(ids);
        kept.push(p);
    }
    Ok((
        Task {
            name: name.to_string(),
            problems: kept,
            prompts,
            verifier,
            environment: None,
        },
        dropped,
    ))
}
