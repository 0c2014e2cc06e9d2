//! `rlvr generate`: sample responses from a model.
//!
//! Without `--chat` the prompt is raw text (no special tokens); with `--chat` it becomes one
//! user message rendered by the tokenizer's chat template with the generation prompt.
//! Generation ends at the model's eos ids (tokenizer_config.json, config.json and
//! generation_config.json together) or after `--max-tokens`.

use anyhow::Result;
use rlvr_model::{
    generate, ChatMessage, Generation, Greedy, LoadedModel, SamplingSetting, SamplingSpec,
};

use crate::output::outln;
use crate::score::{check_positions, load, model_error};
use crate::BadInput;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Model directory in Hugging Face layout, or a hub id (owner/name) in the local cache.
    #[arg(long)]
    pub model: String,
    /// Prompt text.
    #[arg(long)]
    pub prompt: String,
    /// Render the prompt as a user message with the model's chat template.
    #[arg(long)]
    pub chat: bool,
    /// Number of responses.
    #[arg(long, default_value_t = 1)]
    pub n: usize,
    /// Maximum new tokens per response.
    #[arg(long, default_value_t = 256)]
    pub max_tokens: usize,
    /// Sampling temperature (0 = greedy).
    #[arg(long, default_value_t = 1.0)]
    pub temperature: f64,
    /// Nucleus sampling mass (1 = off).
    #[arg(long, default_value_t = 1.0)]
    pub top_p: f64,
    /// Keep only the k most likely tokens.
    #[arg(long)]
    pub top_k: Option<usize>,
    /// Random seed (the same seed gives the same responses).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print one JSON object per response: text, tokens, logprobs, truncated, finish_reason.
    #[arg(long)]
    pub json: bool,
    /// Weight dtype: f32 or bf16.
    #[arg(long, default_value = "f32")]
    pub dtype: String,
}

/// Prompt ids for `args` (raw text, or the chat template with a generation prompt).
pub(crate) fn prompt_ids(m: &LoadedModel, prompt: &str, chat: bool) -> Result<Vec<u32>> {
    let text = if chat {
        m.tokenizer
            .apply_chat_template(&[ChatMessage::new("user", prompt)], true)
            .map_err(model_error)?
    } else {
        prompt.to_string()
    };
    let ids = m.tokenizer.encode(&text, false).map_err(model_error)?;
    if ids.is_empty() {
        return Err(BadInput("--prompt is empty".into()).into());
    }
    Ok(ids)
}

/// The command-line flag of a sampler setting (`rlvr generate`, `rlvr eval`).
pub(crate) fn flag(setting: SamplingSetting) -> &'static str {
    match setting {
        SamplingSetting::Temperature => "--temperature",
        SamplingSetting::TopP => "--top-p",
        SamplingSetting::TopK => "--top-k",
        SamplingSetting::MaxNewTokens => "--max-tokens",
        SamplingSetting::StopStrings => "--stop",
    }
}

/// A [`SamplingSpec`] from command-line values (greedy allowed: `--temperature 0`), an error
/// naming the flag.
pub(crate) fn sampling_spec(
    temperature: f64,
    top_p: f64,
    top_k: Option<usize>,
    max_tokens: usize,
) -> Result<SamplingSpec> {
    SamplingSpec::new(
        temperature,
        top_p,
        top_k,
        max_tokens,
        Vec::new(),
        Greedy::Allowed,
    )
    .map_err(|e| BadInput(format!("{}: {e}", flag(e.setting))).into())
}

pub(crate) fn sample(m: &LoadedModel, args: &Args) -> Result<Vec<Generation>> {
    if args.n == 0 {
        return Err(BadInput("--n must be at least 1".into()).into());
    }
    let spec = sampling_spec(args.temperature, args.top_p, args.top_k, args.max_tokens)?;
    let ids = prompt_ids(m, &args.prompt, args.chat)?;
    check_positions(m, ids.len(), args.max_tokens, "new tokens (--max-tokens)")?;
    let params = spec.params(args.n, &m.tokenizer.eos_token_ids, args.seed);
    generate(&m.model, Some(&m.tokenizer.tokenizer), &[ids], &params).map_err(model_error)
}

pub fn run(args: Args) -> Result<()> {
    let m = load(&args.model, &args.dtype)?;
    let gens = sample(&m, &args)?;
    for (i, g) in gens.iter().enumerate() {
        let text = m.tokenizer.decode(&g.tokens, true).map_err(model_error)?;
        if args.json {
            let finish = format!("{:?}", g.finish_reason).to_lowercase();
            outln!(
                "{}",
                serde_json::json!({"index": i, "text": text, "tokens": g.tokens, "logprobs": g.logprobs,
                    "truncated": g.truncated, "finish_reason": finish})
            )?;
        } else {
            let finish = format!("{:?}", g.finish_reason).to_lowercase();
            outln!(
                "--- response {i} ({} tokens, finish: {finish})",
                g.tokens.len()
            )?;
            outln!("{text}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(chat: bool) -> Args {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../rlvr-model/tests/fixtures/qwen2-tiny");
        Args {
            model: p.to_str().unwrap().to_string(),
            prompt: "Compute 1+2=".into(),
            chat,
            n: 3,
            max_tokens: 5,
            temperature: 1.0,
            top_p: 1.0,
            top_k: None,
            seed: 4,
            json: false,
            dtype: "f32".into(),
        }
    }

    #[test]
    fn samples_n_reproducible_responses() {
        let a = args(false);
        let m = load(&a.model, &a.dtype).unwrap();
        let g = sample(&m, &a).unwrap();
        assert_eq!(g.len(), 3);
        assert!(g
            .iter()
            .all(|g| !g.tokens.is_empty() && g.tokens.len() <= 5));
        assert_eq!(sample(&m, &a).unwrap(), g);
    }

    #[test]
    fn chat_mode_uses_the_template() {
        let a = args(true);
        let m = load(&a.model, &a.dtype).unwrap();
        let ids = prompt_ids(&m, "hi", true).unwrap();
        let text = m.tokenizer.decode(&ids, false).unwrap();
        assert_eq!(
            text,
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
        // a model without a chat template: --chat is a user error
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../rlvr-model/tests/fixtures/qwen3-tiny");
        let m = load(p.to_str().unwrap(), "f32").unwrap();
        assert!(prompt_ids(&m, "hi", true).unwrap_err().is::<BadInput>());
    }

    #[test]
    fn bad_sampling_parameters_are_bad_input_naming_the_flag() {
        let m = load(&args(false).model, "f32").unwrap();
        type Set = fn(&mut Args);
        let cases: [(Set, &str); 6] = [
            (|a| a.top_p = 0.0, "--top-p"),
            (|a| a.top_p = f64::NAN, "--top-p"),
            (|a| a.temperature = -0.1, "--temperature"),
            (|a| a.top_k = Some(0), "--top-k"),
            (|a| a.max_tokens = 0, "--max-tokens"),
            (|a| a.n = 0, "--n"),
        ];
        for (set, flag) in cases {
            let mut a = args(false);
            set(&mut a);
            let err = sample(&m, &a).unwrap_err();
            assert!(err.is::<BadInput>(), "{flag}: {err}");
            assert!(err.to_string().starts_with(flag), "{flag}: {err}");
        }
        // greedy decoding is a setting here
        let mut a = args(false);
        a.temperature = 0.0;
        let g = sample(&m, &a).unwrap();
        assert!(g.windows(2).all(|w| w[0].tokens == w[1].tokens));
    }
}
