//! `[rollout]`.

use rlvr_model::{Greedy, SamplingError, SamplingSetting, SamplingSpec};
use serde::{Deserialize, Serialize};

use super::section::{Keys, Section};
use super::ConfigError;

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

impl RolloutConfig {
    /// How each training response is drawn: this section's settings, checked (greedy refused:
    /// training needs a sampling distribution). [`TrainConfig::validate`](super::TrainConfig)
    /// names an error's key with [`Self::key`].
    pub fn sampling(&self) -> Result<SamplingSpec, SamplingError> {
        SamplingSpec::new(
            self.temperature,
            self.top_p,
            (self.top_k > 0).then_some(self.top_k),
            self.max_response_length,
            self.stop_strings.clone(),
            Greedy::Refused,
        )
    }

    /// The key of this section that holds a sampler setting.
    pub fn key(setting: SamplingSetting) -> &'static str {
        match setting {
            SamplingSetting::Temperature => "rollout.temperature",
            SamplingSetting::TopP => "rollout.top_p",
            SamplingSetting::TopK => "rollout.top_k",
            SamplingSetting::MaxNewTokens => "rollout.max_response_length",
            SamplingSetting::StopStrings => "rollout.stop_strings",
        }
    }
}

impl Section for RolloutConfig {
    const NAME: &'static str = "rollout";

    /// Positive counts, and a sampler [`Self::sampling`] accepts.
    fn validate(&self) -> Result<(), ConfigError> {
        type K = Keys<RolloutConfig>;
        K::at_least_one("generation_batch_size", self.generation_batch_size)?;
        K::at_least_one("num_generations", self.num_generations)?;
        self.sampling().map(drop).map_err(|e| ConfigError::Invalid {
            key: Self::key(e.setting).into(),
            message: e.reason,
        })
    }
}
