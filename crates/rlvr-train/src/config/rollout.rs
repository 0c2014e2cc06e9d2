//! `[rollout]`.

use serde::{Deserialize, Serialize};

/// `[rollout]`: how responses are sampled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RolloutConfig {
    /// Responses sampled per prompt, G (TRL `num_generations`, verl `rollout.n`).
    pub num_generations: usize,
    /// Sampling temperature.
    pub temperature: f64,
    /// Nucleus sampling mass (1.0 = off).
    pub top_p: f64,
    /// Keep the k most likely tokens (0 = off).
    pub top_k: usize,
    /// Most tokens per response; longer ones are cut and marked truncated.
    pub max_response_length: usize,
    /// Extra strings that end a response (the tokenizer's end-of-sequence tokens always do).
    pub stop_strings: Vec<String>,
    /// Prompts per generation call (memory only). Sampling seeds are drawn per call, so it
    /// changes which samples are drawn, not their distribution.
    pub generation_batch_size: usize,
}

impl Default for RolloutConfig {
    fn default() -> Self {
        Self {
            num_generations: 8,
            temperature: 1.0,
            top_p: 1.0,
            top_k: 0,
            max_response_length: 96,
            stop_strings: Vec::new(),
            generation_batch_size: 64,
        }
    }
}
