//! `[eval]`: held-out evaluation at intervals, and the sets a run evaluates on.

use std::fmt;

use rlvr_model::{Greedy, SamplingError, SamplingSetting, SamplingSpec};
use serde::{Deserialize, Serialize};

use super::section::{Keys, Section};
use super::ConfigError;

/// `[eval]`: held-out evaluation at intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// Evaluation sets: `"testbed"` (the testbed's held-out problems, [`EvalSet::Testbed`]),
    /// preset names or files.
    pub datasets: Vec<EvalSet>,
    /// Evaluate every this many steps (verl `test_freq`); 0 = only before and after.
    pub test_freq: usize,
    /// Evaluate before the first GRPO step too.
    pub before_train: bool,
    /// Problems per dataset (0 = all).
    pub n_problems: usize,
    /// Samples per problem: mean@k and pass@k are reported for this k.
    pub k: usize,
    /// Sampling temperature for evaluation.
    pub temperature: f64,
    /// Nucleus mass for evaluation.
    pub top_p: f64,
    /// Most tokens per evaluation response; 0 = `rollout.max_response_length`.
    pub max_response_length: usize,
    /// Prompts per generation call (memory only).
    pub batch_size: usize,
}

impl Default for EvalConfig {
    fn default() -> Self {
        Self {
            datasets: vec![EvalSet::Testbed],
            test_freq: 50,
            before_train: true,
            n_problems: 400,
            k: 4,
            temperature: 1.0,
            top_p: 1.0,
            max_response_length: 0,
            batch_size: 64,
        }
    }
}

impl EvalConfig {
    /// How each evaluation response is drawn: this section's settings, checked, with
    /// `max_tokens` (`eval.max_response_length`, or the rollout's when that is 0:
    /// `TrainConfig::eval_max_tokens`). Greedy is refused as in training (mean@k samples).
    pub fn sampling(&self, max_tokens: usize) -> Result<SamplingSpec, SamplingError> {
        SamplingSpec::new(
            self.temperature,
            self.top_p,
            None,
            max_tokens,
            Vec::new(),
            Greedy::Refused,
        )
    }

    /// The key of this section that holds a sampler setting (`top_k` and stop strings are
    /// the rollout's own).
    pub fn key(setting: SamplingSetting) -> &'static str {
        match setting {
            SamplingSetting::Temperature => "eval.temperature",
            SamplingSetting::TopP => "eval.top_p",
            SamplingSetting::MaxNewTokens => "eval.max_response_length",
            SamplingSetting::TopK | SamplingSetting::StopStrings => "eval",
        }
    }
}

impl Section for EvalConfig {
    const NAME: &'static str = "eval";

    /// Positive `k` and batch size. The sampler is checked with the rollout's length by
    /// [`super::TrainConfig::validate`] (`eval.max_response_length` = 0 takes it).
    fn validate(&self) -> Result<(), ConfigError> {
        Keys::<Self>::at_least_one("k", self.k)?;
        Keys::<Self>::at_least_one("batch_size", self.batch_size)
    }
}

/// One evaluation set of `eval.datasets` (and of `rlvr eval --data`), parsed once from its
/// name: the testbed's held-out problems (`"testbed"`, settings from `[testbed]`), or a dataset
/// (a preset name or a file, read as the training data is).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum EvalSet {
    /// Held-out testbed problems: never in any run's training set, the same for every seed.
    Testbed,
    /// A preset name or a data file.
    Dataset(String),
}

impl EvalSet {
    /// The name in configs, logs and `metrics.jsonl`.
    pub fn name(&self) -> &str {
        match self {
            Self::Testbed => rlvr_tasks::testbed::NAME,
            Self::Dataset(name) => name,
        }
    }
}

impl From<String> for EvalSet {
    fn from(name: String) -> Self {
        if name == rlvr_tasks::testbed::NAME {
            Self::Testbed
        } else {
            Self::Dataset(name)
        }
    }
}

impl From<&str> for EvalSet {
    fn from(name: &str) -> Self {
        name.to_string().into()
    }
}

impl From<EvalSet> for String {
    fn from(set: EvalSet) -> String {
        set.name().to_string()
    }
}

impl fmt::Display for EvalSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
