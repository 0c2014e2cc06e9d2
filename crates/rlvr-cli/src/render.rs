//! `rlvr render`: the prompt a chat message list becomes, as text and token ids.
//!
//! `--messages FILE` is a JSON array of `{"role", "content"}` objects, an object with a
//! `messages` array (one chat), or verl's parquet-row layout `{"prompt": [...]}`. The model's
//! chat template renders every message (system, user and assistant turns) with the generation
//! prompt (unless `--no-generation-prompt`) and the `--kwargs` variables (e.g.
//! `'{"enable_thinking": false}'`, what `data.chat_template_kwargs` passes in training). Token
//! ids are the rendered text encoded without adding special tokens, as training encodes chat
//! prompts. Only the tokenizer is read: no weights are loaded.

use std::path::PathBuf;

use anyhow::Result;
use rlvr_model::{ChatMessage, ChatTokenizer};
use serde_json::Value;

use crate::output::{out, outln};
use crate::score::model_error;
use crate::BadInput;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Model directory in Hugging Face layout, or a hub id (owner/name; downloaded if not
    /// cached). Only the tokenizer files are used.
    #[arg(long)]
    pub model: String,
    /// JSON file: `[{"role": ..., "content": ...}, ...]`, `{"messages": [...]}` or
    /// `{"prompt": [...]}`.
    #[arg(long)]
    pub messages: PathBuf,
    /// Chat-template variables as a JSON object, e.g. '{"enable_thinking": false}'.
    #[arg(long)]
    pub kwargs: Option<String>,
    /// Leave out the generation prompt (the assistant header after the last message).
    #[arg(long)]
    pub no_generation_prompt: bool,
    /// Print one JSON object: prompt, token_ids, num_tokens.
    #[arg(long)]
    pub json: bool,
}

/// The chat messages of a `--messages` file (see the module doc).
pub fn read_messages(path: &std::path::Path) -> Result<Vec<ChatMessage>> {
    let bad = |why: String| BadInput(format!("{}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| bad(format!("invalid JSON: {e}")))?;
    let list = match &v {
        Value::Array(_) => v.clone(),
        Value::Object(o) => o
            .get("messages")
            .or_else(|| o.get("prompt"))
            .cloned()
            .ok_or_else(|| bad("expected a `messages` (or `prompt`) array".into()))?,
        _ => return Err(bad("expected a JSON array of messages".into()).into()),
    };
    let msgs: Vec<ChatMessage> = serde_json::from_value(list).map_err(|e| {
        bad(format!(
            "messages must be {{\"role\", \"content\"}} objects: {e}"
        ))
    })?;
    if msgs.is_empty() {
        return Err(bad("no messages".into()).into());
    }
    Ok(msgs)
}

/// Parses `--kwargs` (a JSON object).
pub fn parse_kwargs(s: Option<&str>) -> Result<serde_json::Map<String, Value>> {
    match s {
        None => Ok(serde_json::Map::new()),
        Some(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err(BadInput(format!(
                "--kwargs {s:?}: expected a JSON object, e.g. '{{\"enable_thinking\": false}}'"
            ))
            .into()),
        },
    }
}

pub fn run(args: Args) -> Result<()> {
    let messages = read_messages(&args.messages)?;
    let kwargs = parse_kwargs(args.kwargs.as_deref())?;
    let dir = rlvr_hub::resolve_model_dir(&args.model).map_err(|e| model_error(e.into()))?;
    let mut tok = ChatTokenizer::from_dir(&dir).map_err(model_error)?;
    tok.template_kwargs = kwargs;
    let prompt = tok
        .apply_chat_template(&messages, !args.no_generation_prompt)
        .map_err(model_error)?;
    let ids = tok.encode(&prompt, false).map_err(model_error)?;
    if args.json {
        let out = serde_json::json!({
            "prompt": prompt,
            "token_ids": ids,
            "num_tokens": ids.len(),
        });
        outln!("{out}")?;
    } else {
        out!("{prompt}")?;
        if !prompt.ends_with('\n') {
            outln!()?;
        }
        outln!("--- {} tokens", ids.len())?;
        outln!(
            "{}",
            ids.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
        )?;
    }
    Ok(())
}
