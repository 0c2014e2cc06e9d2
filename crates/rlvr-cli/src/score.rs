//! `rlvr score`: the log-prob of each response token under a model.
//!
//! Prompt and response are each tokenized as raw text (no special tokens, no chat template);
//! the response ids follow the prompt ids, and each response token is scored given everything
//! before it, at temperature 1, in f32 (or `--dtype bf16`).

use anyhow::Result;
use rlvr_model::candle_core::{DType, Device};
use rlvr_model::{load_model, LoadedModel, TokenBatch};

use crate::output::outln;
use crate::BadInput;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Model directory in Hugging Face layout, or a hub id (owner/name) in the local cache.
    #[arg(long)]
    pub model: String,
    /// Prompt text (at least one token).
    #[arg(long)]
    pub prompt: String,
    /// Response text to score.
    #[arg(long)]
    pub response: String,
    /// Print `{"tokens": [ids], "logprobs": [numbers]}` instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Weight dtype: f32 or bf16.
    #[arg(long, default_value = "f32")]
    pub dtype: String,
}

/// Maps a model error to [`BadInput`] when the user's input caused it.
pub(crate) fn model_error(e: rlvr_model::Error) -> anyhow::Error {
    if e.is_user_input() {
        BadInput(e.to_string()).into()
    } else {
        e.into()
    }
}

/// `--dtype` (names as `rlvr_model::WeightDtype` reads them); scoring runs f32 or bf16.
pub(crate) fn parse_dtype(s: &str) -> Result<DType> {
    match s.parse::<rlvr_model::WeightDtype>() {
        Ok(d @ (rlvr_model::WeightDtype::F32 | rlvr_model::WeightDtype::Bf16)) => Ok(d.candle()),
        _ => Err(BadInput(format!("--dtype {s:?}: expected f32 or bf16")).into()),
    }
}

pub(crate) fn load(model: &str, dtype: &str) -> Result<LoadedModel> {
    load_model(model, parse_dtype(dtype)?, &Device::Cpu).map_err(model_error)
}

/// Refuses `prompt` tokens plus `more` (a response's, or `--max-tokens`) beyond the model's
/// `max_position_embeddings`, before any work: past them the rotary positions are ones the
/// model never saw, and the attention's memory grows with the square of the length.
pub(crate) fn check_positions(
    m: &LoadedModel,
    prompt: usize,
    more: usize,
    what: &str,
) -> Result<()> {
    let positions = m.config.max_position_embeddings;
    if prompt.saturating_add(more) > positions {
        return Err(BadInput(format!(
            "the prompt's {prompt} tokens plus {more} {what} exceed the model's \
             max_position_embeddings = {positions} ({}/config.json)",
            m.dir.display()
        ))
        .into());
    }
    Ok(())
}

/// The response ids and their log-probs.
pub(crate) fn score(m: &LoadedModel, prompt: &str, response: &str) -> Result<(Vec<u32>, Vec<f32>)> {
    let p = m.tokenizer.encode(prompt, false).map_err(model_error)?;
    let r = m.tokenizer.encode(response, false).map_err(model_error)?;
    if p.is_empty() {
        return Err(BadInput(
            "--prompt is empty: the first response token needs a prompt token".into(),
        )
        .into());
    }
    check_positions(m, p.len(), r.len(), "response tokens")?;
    if r.is_empty() {
        return Ok((r, Vec::new()));
    }
    let batch = TokenBatch::new(&[(p, r.clone())], m.tokenizer.pad_id(), &Device::Cpu)
        .map_err(model_error)?;
    let lp = m
        .model
        .response_logprobs_no_grad(&batch, false, 1.0)?
        .logprobs
        .to_dtype(DType::F32)?
        .to_vec2::<f32>()?;
    Ok((r, lp.into_iter().next().unwrap_or_default()))
}

pub fn run(args: Args) -> Result<()> {
    let m = load(&args.model, &args.dtype)?;
    let (tokens, logprobs) = score(&m, &args.prompt, &args.response)?;
    if args.json {
        outln!(
            "{}",
            serde_json::json!({"tokens": tokens, "logprobs": logprobs})
        )?;
        return Ok(());
    }
    outln!("{:>5}  {:>8}  {:>10}  token", "index", "id", "logprob")?;
    for (i, (&t, &lp)) in tokens.iter().zip(&logprobs).enumerate() {
        let text = m.tokenizer.decode(&[t], false).map_err(model_error)?;
        outln!("{i:>5}  {t:>8}  {lp:>10.5}  {text:?}")?;
    }
    let total: f64 = logprobs.iter().map(|&x| x as f64).sum();
    outln!("total {total:.5} over {} tokens", tokens.len())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../rlvr-model/tests/fixtures/qwen2-tiny");
        p.to_str().unwrap().to_string()
    }

    #[test]
    fn scores_follow_the_prompt_and_are_log_probs() {
        let m = load(&fixture(), "f32").unwrap();
        let (tokens, lps) = score(&m, "Compute 12+34=", "46").unwrap();
        assert_eq!(tokens, m.tokenizer.encode("46", false).unwrap());
        assert_eq!(lps.len(), tokens.len());
        assert!(lps.iter().all(|&x| x < 0.0 && x.is_finite()));
        // the response is scored given the prompt: another prompt gives other numbers
        assert_ne!(score(&m, "The", "46").unwrap().1, lps);
    }

    #[test]
    fn user_errors_are_bad_input() {
        let m = load(&fixture(), "f32").unwrap();
        let err = score(&m, "", "x").unwrap_err();
        assert!(err.is::<BadInput>(), "{err:#}");
        let err = load("/nonexistent/model", "f32").err().unwrap();
        assert!(
            err.is::<BadInput>() && format!("{err:#}").contains("/nonexistent/model"),
            "{err:#}"
        );
        assert!(load(&fixture(), "f8").err().unwrap().is::<BadInput>());
    }
}
