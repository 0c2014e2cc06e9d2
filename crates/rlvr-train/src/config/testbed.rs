//! `[testbed]`: the CPU testbed task and its model, used when `model.path` and
//! `data.train_files` are unset (`rlvr train` with no arguments).

use std::path::PathBuf;

use rlvr_tasks::testbed::Regime;
use serde::{Deserialize, Serialize};

use super::section::{Keys, Section};
use super::ConfigError;

/// `[testbed]`: the generated arithmetic task (multi-term sums solved step by step,
/// `rlvr_tasks::testbed`), the tiny Qwen-shaped model that learns it, and the supervised warm
/// start that gives the model its length regime. Read only by a testbed run (and by an
/// evaluation on the testbed's held-out problems); a run of a Hugging Face model refuses any
/// key here that differs from its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TestbedSection {
    /// The length regime: `length-variation`, `pos-neg-gap` (warm-start styles), or
    /// `wrong-long`, `right-long`, `high-variation`, `control`, `wrong-long-recheck`, ... (the
    /// length of an error is tied to its kind); see `rlvr_tasks::testbed` and docs/regimes.md.
    pub regime: Regime,
    /// Problem difficulty: the largest number of terms in a sum.
    pub difficulty: usize,
    /// The smallest number of terms in a sum (2..=difficulty).
    pub min_terms: usize,
    /// 1 in this many term sequences is held out for evaluation (2..=1000).
    pub heldout_modulus: u64,
    /// Number of distinct training problems generated.
    pub train_size: usize,
    /// Model hidden size.
    pub hidden_size: usize,
    /// Number of transformer layers.
    pub num_hidden_layers: usize,
    /// Attention heads (key/value heads are the same number).
    pub num_attention_heads: usize,
    /// MLP inner size.
    pub intermediate_size: usize,
    /// Context length (prompt plus response).
    pub max_position_embeddings: usize,
    /// Supervised steps on worked solutions before GRPO (0 = none).
    pub warm_start_steps: usize,
    /// Sequences per supervised step.
    pub warm_start_batch_size: usize,
    /// Warm-start learning rate (AdamW, cosine to 10%).
    pub warm_start_lr: f64,
    /// Directory of the warm-start cache (keyed by every setting the warm start depends on); a
    /// second run with the same settings loads it.
    pub cache_dir: PathBuf,
}

impl Default for TestbedSection {
    fn default() -> Self {
        Self {
            regime: Regime::PosNegGap,
            difficulty: 3,
            min_terms: 2,
            heldout_modulus: 8,
            train_size: 20_000,
            hidden_size: 128,
            num_hidden_layers: 4,
            num_attention_heads: 4,
            intermediate_size: 384,
            max_position_embeddings: 256,
            warm_start_steps: 450,
            warm_start_batch_size: 32,
            warm_start_lr: 3e-3,
            cache_dir: "runs/.cache".into(),
        }
    }
}

/// Keys that moved into `[testbed]`: `(old section.key, new key in [testbed])`. A config or
/// override that still names one is refused with an error naming the new key
/// (`config::parse::moved_key`).
pub const MOVED_KEYS: &[(&str, &str)] = &[
    ("model.hidden_size", "hidden_size"),
    ("model.num_hidden_layers", "num_hidden_layers"),
    ("model.num_attention_heads", "num_attention_heads"),
    ("model.intermediate_size", "intermediate_size"),
    ("model.max_position_embeddings", "max_position_embeddings"),
    ("data.testbed_difficulty", "difficulty"),
    ("data.testbed_min_terms", "min_terms"),
    ("data.testbed_heldout_modulus", "heldout_modulus"),
    ("data.testbed_regime", "regime"),
    ("data.testbed_train_size", "train_size"),
    ("trainer.warm_start_steps", "warm_start_steps"),
    ("trainer.warm_start_batch_size", "warm_start_batch_size"),
    ("trainer.warm_start_lr", "warm_start_lr"),
    ("trainer.cache_dir", "cache_dir"),
];

impl TestbedSection {
    /// The keys of this section a `--resume` may change: where the warm-start cache lives.
    /// Every other key is fixed at the run's start (a key added later too, until it is named
    /// here).
    pub const CHANGEABLE_ON_RESUME: [&'static str; 1] = ["cache_dir"];

    /// Why a `--resume` cannot change `key` of this section, or `None` when it can
    /// ([`Self::CHANGEABLE_ON_RESUME`]).
    pub fn fixed_on_resume(key: &str) -> Option<&'static str> {
        if Self::CHANGEABLE_ON_RESUME.contains(&key) {
            return None;
        }
        Some(match key {
            "hidden_size"
            | "num_hidden_layers"
            | "num_attention_heads"
            | "intermediate_size"
            | "max_position_embeddings" => "the checkpoint holds the model's shape",
            "warm_start_steps" | "warm_start_batch_size" | "warm_start_lr" => {
                "the warm start happened before the first step"
            }
            "regime" | "difficulty" | "min_terms" | "heldout_modulus" | "train_size" => {
                "the testbed problems and the data order follow it"
            }
            _ => "the testbed's task and model are fixed when the run starts",
        })
    }

    /// The rlvr-tasks problem settings, the training problems seeded by `seed`
    /// (`trainer.seed`); terms are single digits.
    pub fn task_config(&self, seed: u64) -> rlvr_tasks::testbed::TestbedConfig {
        rlvr_tasks::testbed::TestbedConfig {
            regime: self.regime,
            difficulty: self.difficulty,
            min_terms: self.min_terms,
            max_operand: 9,
            heldout_modulus: self.heldout_modulus,
            seed,
        }
    }

    /// The keys whose value differs from the default, in file order.
    pub fn changed_keys(&self) -> Vec<String> {
        let (Ok(toml::Value::Table(now)), Ok(toml::Value::Table(default))) = (
            toml::Value::try_from(self),
            toml::Value::try_from(Self::default()),
        ) else {
            return Vec::new();
        };
        now.iter()
            .filter(|(k, v)| default.get(*k) != Some(v))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

impl Section for TestbedSection {
    const NAME: &'static str = "testbed";

    /// The ranges of the section: positive sizes, heads that cut the hidden size into an even
    /// head size (RoPE), a finite warm-start rate, and the problem space's own rules
    /// (`rlvr_tasks::testbed::TestbedConfig::validate`). An error names the key.
    fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, message: String| Err(Keys::<Self>::invalid(key, message));
        for (key, v) in [
            ("hidden_size", self.hidden_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("intermediate_size", self.intermediate_size),
            ("max_position_embeddings", self.max_position_embeddings),
            ("train_size", self.train_size),
            ("warm_start_batch_size", self.warm_start_batch_size),
        ] {
            Keys::<Self>::at_least_one(key, v)?;
        }
        if !self.hidden_size.is_multiple_of(self.num_attention_heads)
            || !(self.hidden_size / self.num_attention_heads).is_multiple_of(2)
        {
            return bad(
                "num_attention_heads",
                format!(
                    "must divide testbed.hidden_size ({}) into heads of an even size (RoPE), got {}",
                    self.hidden_size, self.num_attention_heads
                ),
            );
        }
        Keys::<Self>::finite_at_least("warm_start_lr", self.warm_start_lr, 0.0)?;
        self.task_config(0)
            .validate()
            .or_else(|e| bad(e.knob, e.to_string()))
    }
}
