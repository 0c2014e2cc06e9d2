//! The training configuration: a TOML file in sections, every key documented here.
//!
//! Sections: `[model]`, `[data]`, `[rollout]`, `[algorithm]`, `[reward]`, `[optim]`,
//! `[trainer]`, `[eval]`, `[logging]`. Every key has a default (the CPU testbed run, `configs/testbed.toml` spells
//! them all out), so a file only names what it changes. Names follow verl and TRL where those
//! have the option (`configs/README.md` maps them).
//!
//! Unknown keys are errors that name the section and the key, never silent defaults. Values can
//! be overridden from the command line with `section.key=value` (the value is TOML; a bare word
//! is taken as a string).

use std::path::{Path, PathBuf};

use rlvr_core::{AdvEstimator, AggRule};
use rlvr_tasks::testbed::NAME as TESTBED;
use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// An error in a configuration file or override; it names the file, section and key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("{}: invalid TOML: {message}", .path.display())]
    Syntax { path: PathBuf, message: String },
    /// A top-level table that is not one of the sections.
    #[error("{origin}: unknown section [{section}] (expected one of: {})", SECTIONS.join(", "))]
    UnknownSection { origin: String, section: String },
    /// A key that its section does not have, or a value of the wrong type.
    #[error("{origin}: config key `{section}.{key}`: {message}")]
    Key {
        origin: String,
        section: String,
        key: String,
        message: String,
    },
    /// An error in a section that could not be traced to one key.
    #[error("{origin}: section [{section}]: {message}")]
    Section {
        origin: String,
        section: String,
        message: String,
    },
    /// A `--set` override that is not `section.key=value`.
    #[error(
        "override `{0}`: expected section.key=value, for example algorithm.loss_agg_mode=balanced"
    )]
    BadOverride(String),
    /// Keys that parse but do not make sense together.
    #[error("config key `{key}`: {message}")]
    Invalid { key: String, message: String },
}

/// The section names, in file order.
pub const SECTIONS: [&str; 9] = [
    "model",
    "data",
    "rollout",
    "algorithm",
    "reward",
    "optim",
    "trainer",
    "eval",
    "logging",
];

/// The whole configuration of a training run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    pub model: ModelConfig,
    pub data: DataConfig,
    pub rollout: RolloutConfig,
    pub algorithm: AlgorithmConfig,
    pub reward: RewardSection,
    pub optim: OptimConfig,
    pub trainer: TrainerConfig,
    pub eval: EvalConfig,
    pub logging: LoggingConfig,
}

/// `[model]`: which policy to train and where it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// `"testbed"` (a tiny Qwen-shaped model with a tokenizer trained on the testbed task, built
    /// from scratch), a local directory in Hugging Face layout (config.json, *.safetensors,
    /// tokenizer.json), or a hub id found in the local Hugging Face cache.
    pub path: String,
    /// Parameter dtype: `f32`, `bf16` or `f16`. Optimizer moments are f32 whatever this is.
    pub dtype: String,
    /// `cpu`, or `cuda` / `cuda:N` (needs a build with candle's CUDA support).
    pub device: String,
    /// Memory of one device in GiB: `--dry-run` says whether the memory plan fits it
    /// (`memory_plan.rs`). 0 = not given (the plan is printed without a verdict).
    pub device_memory_gib: f64,
    /// Testbed model only: hidden size.
    pub hidden_size: usize,
    /// Testbed model only: number of transformer layers.
    pub num_hidden_layers: usize,
    /// Testbed model only: attention heads (key/value heads are the same number).
    pub num_attention_heads: usize,
    /// Testbed model only: MLP inner size.
    pub intermediate_size: usize,
    /// Testbed model only: context length (prompt plus response).
    pub max_position_embeddings: usize,
    /// Activation checkpointing per decoder layer (verl `enable_gradient_checkpointing`): the
    /// training step keeps only each layer's input and recomputes the layer in the backward.
    /// Same gradients, less activation memory, about one more forward of compute.
    pub gradient_checkpointing: bool,
    /// Keep the optimizer state (AdamW moments and f32 master weights) on the host and update
    /// there (verl `fsdp_config.optimizer_offload`, DeepSpeed ZeRO-Offload): the device holds
    /// only the weights and the f32 gradient accumulator. Same update, bit for bit on one
    /// device; each optimizer step copies the gradients to the host and the weights back.
    pub optimizer_offload: bool,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            path: TESTBED.into(),
            dtype: "f32".into(),
            device: "cpu".into(),
            device_memory_gib: 0.0,
            hidden_size: 128,
            num_hidden_layers: 4,
            num_attention_heads: 4,
            intermediate_size: 384,
            max_position_embeddings: 256,
            gradient_checkpointing: false,
            optimizer_offload: false,
        }
    }
}

/// `[data]`: training prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataConfig {
    /// `"testbed"` (generated arithmetic problems), an rlvr-tasks preset name
    /// (`dapo-math-17k`, `math500`, ...) or a file (.jsonl, .json, .parquet).
    pub train_files: String,
    /// Data directory holding local copies of presets; unset: `--data-dir`, else
    /// `RLVR_DATA_DIR`, else none (presets come from their pinned hub copies, docs/data.md).
    pub data_dir: Option<PathBuf>,
    /// Prompt template around the problem text: `dapo`, `qwen-boxed` or `raw`.
    pub prompt_template: String,
    /// Wrap the rendered prompt in the tokenizer's chat template (as a user turn; chat
    /// prompts from the data keep all their messages).
    pub apply_chat_template: bool,
    /// Extra variables for the chat template, verl's `apply_chat_template_kwargs`
    /// (`{ enable_thinking = false }` turns Qwen3's thinking off).
    pub chat_template_kwargs: serde_json::Map<String, serde_json::Value>,
    /// Prompts longer than this many tokens are dropped from training (verl `max_prompt_length`);
    /// 0 = no limit (the data loader still refuses prompts over 4 MiB).
    pub max_prompt_length: usize,
    /// Shuffle the training set each epoch (seeded by `trainer.seed`).
    pub shuffle: bool,
    /// Testbed only: problem difficulty (the largest number of terms in a sum).
    pub testbed_difficulty: usize,
    /// Testbed only: the smallest number of terms in a sum (2..=testbed_difficulty).
    pub testbed_min_terms: usize,
    /// Testbed only: 1 in this many term sequences is held out for evaluation (2..=1000).
    pub testbed_heldout_modulus: u64,
    /// Testbed only: the length regime: `length-variation`, `pos-neg-gap` (warm-start styles),
    /// or `wrong-long`, `right-long`, `high-variation`, `control`, `wrong-long-recheck` (the length of an error is
    /// tied to its kind); see `rlvr_tasks::testbed` and docs/regimes.md.
    pub testbed_regime: String,
    /// Testbed only: number of distinct training problems generated.
    pub testbed_train_size: usize,
}

impl Default for DataConfig {
    fn default() -> Self {
        Self {
            train_files: TESTBED.into(),
            data_dir: None,
            prompt_template: "raw".into(),
            apply_chat_template: false,
            chat_template_kwargs: serde_json::Map::new(),
            max_prompt_length: 64,
            shuffle: true,
            testbed_difficulty: 3,
            testbed_min_terms: 2,
            testbed_heldout_modulus: 8,
            testbed_regime: "pos-neg-gap".into(),
            testbed_train_size: 20_000,
        }
    }
}

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

/// `[algorithm]`: advantage, loss and its aggregation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AlgorithmConfig {
    /// Advantage estimator: `grpo`, `dr-grpo` (no std division) or `rloo`.
    pub adv_estimator: AdvEstimator,
    /// Divide advantages by the group's reward std (verl `norm_adv_by_std_in_grpo`).
    pub norm_adv_by_std_in_grpo: bool,
    /// How token losses become one scalar (verl `loss_agg_mode`): `token-mean`,
    /// `seq-mean-token-mean`, `seq-mean-token-sum`, `seq-mean-token-sum-norm`,
    /// `group-token-mean`, `balanced`, `balanced-mass`.
    pub loss_agg_mode: AggRule,
    /// Per-token policy loss (verl `policy_loss.loss_mode`): `vanilla` (PPO's clipped
    /// surrogate with clip-higher and optional dual clip), `gspo` (sequence-level ratio
    /// `exp(mean_t log r_t)` in every token, clipped; no dual clip) or `cispo` (REINFORCE with a
    /// clipped, stop-gradient ratio weight). Formulas: `rlvr_core::policy_loss`.
    pub policy_loss: PolicyLossMode,
    /// Lower PPO clip: the ratio is clipped at `1 - clip_ratio_low`.
    pub clip_ratio_low: f64,
    /// Upper PPO clip: at `1 + clip_ratio_high` (DAPO's clip-higher uses 0.28).
    pub clip_ratio_high: f64,
    /// Dual clip for negative advantages (verl `clip_ratio_c`, e.g. 3.0); unset = off.
    pub clip_ratio_c: Option<f64>,
    /// Add a KL penalty to a frozen copy of the initial policy (verl `use_kl_loss`).
    pub use_kl_loss: bool,
    /// Weight of the KL penalty (verl `kl_loss_coef`).
    pub kl_loss_coef: f64,
    /// KL estimator: `k1`, `k2` or `k3` (verl `kl_loss_type`; `low_var_kl` is k3).
    pub kl_loss_type: KlType,
    /// Entropy bonus weight (verl `entropy_coeff`); 0 skips computing the entropy's gradient.
    pub entropy_coeff: f64,
    /// Passes over each rollout batch (verl `ppo_epochs`, TRL `num_iterations`).
    pub ppo_epochs: usize,
    /// Prompts per optimizer step (verl `ppo_mini_batch_size`): the rollout batch of
    /// `trainer.train_batch_size` prompts is cut into mini-batches of this many prompts, each
    /// one optimizer step whose aggregation weights span all its responses.
    pub ppo_mini_batch_size: usize,
    /// Sequences per forward/backward pass (verl `ppo_micro_batch_size_per_gpu`); memory only,
    /// the gradient does not depend on it. Unused with `use_dynamic_bsz`.
    pub ppo_micro_batch_size: usize,
    /// Cut micro-batches by a token budget instead of a sequence count (verl
    /// `use_dynamic_bsz`): sequences are taken longest first and a micro-batch holds at most
    /// `ppo_max_token_len_per_gpu` padded tokens (`sequences x longest prompt+response`; one
    /// longer sequence gets a micro-batch of its own). Applies to the update and to the
    /// no-gradient passes (old and reference log-probs). Memory only: the gradient does not
    /// change (`rlvr_core::split::by_padded_tokens`).
    pub use_dynamic_bsz: bool,
    /// With `use_dynamic_bsz`: padded tokens per micro-batch (verl
    /// `ppo_max_token_len_per_gpu`). Also the token budget of the `--dry-run` memory plan.
    pub ppo_max_token_len_per_gpu: usize,
    /// Dynamic sampling (DAPO `filter_groups`): drop groups whose rewards are all equal and
    /// sample more prompts until the batch is full.
    pub filter_groups: bool,
    /// With `filter_groups`: most extra generation rounds per step (verl
    /// `max_num_gen_batches`); when reached, the step trains on what it has.
    pub max_num_gen_batches: usize,
    /// Give truncated responses no loss at all (DAPO overlong filtering).
    pub mask_truncated: bool,
    /// DAPO soft overlong punishment: responses longer than `max_response_length -
    /// overlong_buffer_len` lose up to `overlong_penalty_factor` reward, linearly. 0 = off.
    pub overlong_buffer_len: usize,
    /// Most reward lost by an overlong response.
    pub overlong_penalty_factor: f64,
}

impl Default for AlgorithmConfig {
    fn default() -> Self {
        Self {
            adv_estimator: AdvEstimator::Grpo,
            norm_adv_by_std_in_grpo: true,
            loss_agg_mode: AggRule::Balanced,
            policy_loss: PolicyLossMode::Vanilla,
            clip_ratio_low: 0.2,
            clip_ratio_high: 0.28,
            clip_ratio_c: None,
            use_kl_loss: false,
            kl_loss_coef: 0.001,
            kl_loss_type: KlType::K3,
            entropy_coeff: 0.0,
            ppo_epochs: 1,
            ppo_mini_batch_size: 16,
            ppo_micro_batch_size: 128,
            use_dynamic_bsz: false,
            ppo_max_token_len_per_gpu: 16384,
            filter_groups: false,
            max_num_gen_batches: 3,
            mask_truncated: false,
            overlong_buffer_len: 0,
            overlong_penalty_factor: 1.0,
        }
    }
}

/// The per-token policy-gradient loss (verl `actor.policy_loss.loss_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyLossMode {
    /// PPO's clipped surrogate (`rlvr_core::policy_loss::ppo_clip`).
    #[serde(alias = "ppo")]
    Vanilla,
    /// GSPO's token form (`rlvr_core::policy_loss::gspo`).
    Gspo,
    /// CISPO (`rlvr_core::policy_loss::cispo`).
    Cispo,
}

impl PolicyLossMode {
    /// The name the config file uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Vanilla => "vanilla",
            Self::Gspo => "gspo",
            Self::Cispo => "cispo",
        }
    }
}

/// KL estimators between the policy and the reference, per token, with `r = ref - logp`:
/// k1 = `-r`, k2 = `r^2 / 2`, k3 = `exp(r) - r - 1` (Schulman's unbiased low-variance form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KlType {
    K1,
    K2,
    #[serde(alias = "low_var_kl")]
    K3,
}

/// `[reward]`: which scorer rewards a response (`rlvr_tasks::reward`), for training and for
/// evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RewardSection {
    /// `auto` (per problem by data source, as verl's `default_compute_score`: `testbed` to the
    /// testbed verifier, code presets and code tests to the sandboxed code runner, the rest to
    /// the math checker), or `math`, `code`, `testbed` for every problem.
    pub kind: rlvr_tasks::RewardKind,
    /// Code rewards: `all-or-nothing` (1 when every test passes; rllm/DeepCoder's sparse
    /// reward) or `fraction` (passed / run tests; verl's `default_compute_score` passes
    /// `continuous=True`, which is `fraction` over at most 10 tests).
    pub code_mode: rlvr_tasks::code::RewardMode,
    /// Code rewards: run at most this many stdin/stdout tests per response (0 = all).
    pub code_max_tests: usize,
    /// Threads scoring a step's responses, and so the most sandboxes at once (0 = the number
    /// of cores).
    pub num_workers: usize,
    /// Code rewards: run programs even where the kernel refuses the sandbox's namespaces (not
    /// root and no unprivileged user namespaces), without isolation: a program can then read
    /// the data set (expected outputs included), write the user's files and reach the
    /// network. Default false: such a machine is an error before the first step.
    pub allow_unsandboxed: bool,
}

impl Default for RewardSection {
    fn default() -> Self {
        Self {
            kind: rlvr_tasks::RewardKind::Auto,
            code_mode: rlvr_tasks::code::RewardMode::AllOrNothing,
            code_max_tests: 0,
            num_workers: 0,
            allow_unsandboxed: false,
        }
    }
}

impl RewardSection {
    /// The reward function these settings describe (the sandbox from `RLVR_PYTHON`, else
    /// `/usr/bin/python3`).
    pub fn reward_fn(&self) -> Result<rlvr_tasks::RewardFn, rlvr_tasks::RewardError> {
        rlvr_tasks::RewardFn::new(rlvr_tasks::RewardConfig {
            kind: self.kind,
            code_mode: self.code_mode,
            code_max_tests: (self.code_max_tests > 0).then_some(self.code_max_tests),
            workers: self.num_workers,
            sandbox: rlvr_tasks::code::SandboxConfig {
                allow_unsandboxed: self.allow_unsandboxed,
                ..rlvr_tasks::code::SandboxConfig::default()
            },
        })
    }
}

/// `[optim]`: AdamW and the learning-rate schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OptimConfig {
    /// Peak learning rate.
    pub lr: f64,
    /// Decoupled weight decay (applied to matrices only, not to norms or biases).
    pub weight_decay: f64,
    /// AdamW beta1.
    pub beta1: f64,
    /// AdamW beta2.
    pub beta2: f64,
    /// AdamW epsilon.
    pub eps: f64,
    /// Clip the global gradient norm to this (verl `grad_clip`); 0 = off.
    pub grad_clip: f64,
    /// Linear warmup over this many optimizer steps (verl `lr_warmup_steps`).
    pub lr_warmup_steps: usize,
    /// After warmup: `constant` or `cosine` (verl `warmup_style`).
    pub lr_scheduler: LrScheduler,
    /// Cosine only: the final learning rate as a fraction of `lr`.
    pub min_lr_ratio: f64,
}

impl Default for OptimConfig {
    fn default() -> Self {
        Self {
            lr: 5e-5,
            weight_decay: 0.0,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            grad_clip: 1.0,
            lr_warmup_steps: 0,
            lr_scheduler: LrScheduler::Constant,
            min_lr_ratio: 0.0,
        }
    }
}

/// Learning-rate shape after warmup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LrScheduler {
    Constant,
    Cosine,
}

/// `[trainer]`: run length, batch, seed, checkpoints, the testbed's warm start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TrainerConfig {
    /// GRPO steps (rollout batches) to run (verl `total_training_steps`).
    pub total_training_steps: usize,
    /// Prompts per rollout batch (verl `data.train_batch_size`).
    pub train_batch_size: usize,
    /// Seed of everything random: initialization, data order, sampling.
    pub seed: u64,
    /// Run name; files go to `<runs_dir>/<name>`. Empty: `<task>-<rule>-s<seed>` (task: `testbed`,
    /// the preset, or the training file's stem), numbered when taken. One plain path component:
    /// no `/` or `\`, not `.` or `..`, not absolute, so a run stays inside `runs_dir`.
    pub run_name: String,
    /// Directory that holds the runs.
    pub runs_dir: PathBuf,
    /// Save a checkpoint every this many steps (and at the end); 0 = only at the end.
    pub save_freq: usize,
    /// Checkpoints kept: the newest is `checkpoint/`, older ones `checkpoint-step<N>/`; a
    /// resume that finds the newest damaged falls back to the next (`checkpoint.rs`).
    pub keep_checkpoints: usize,
    /// Testbed warm start: supervised steps on worked solutions before GRPO (0 = none).
    pub warm_start_steps: usize,
    /// Testbed warm start: sequences per supervised step.
    pub warm_start_batch_size: usize,
    /// Testbed warm start: learning rate (AdamW, cosine to 10%).
    pub warm_start_lr: f64,
    /// Directory of the warm-start cache (keyed by its settings); a second run reuses it.
    pub cache_dir: PathBuf,
    /// Write each step's training rollouts to `<dir>/<step>.jsonl` (verl's
    /// `trainer.rollout_data_dir` layout: `input`, `output`, `score`, `step`, plus `uid`,
    /// `advantage`, `length`, `acc`); unset: no dump. A relative path is under the run directory.
    pub rollout_data_dir: Option<PathBuf>,
}

impl Default for TrainerConfig {
    fn default() -> Self {
        Self {
            total_training_steps: 100,
            train_batch_size: 16,
            seed: 0,
            run_name: String::new(),
            runs_dir: "runs".into(),
            save_freq: 50,
            keep_checkpoints: 2,
            warm_start_steps: 450,
            warm_start_batch_size: 32,
            warm_start_lr: 3e-3,
            cache_dir: "runs/.cache".into(),
            rollout_data_dir: None,
        }
    }
}

/// `[eval]`: held-out evaluation at intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// Datasets: `"testbed"` (held-out testbed problems), preset names or files.
    pub datasets: Vec<String>,
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
            datasets: vec![TESTBED.into()],
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

/// `[logging]`: what is shown and kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoggingConfig {
    /// Progress bars on stderr (off automatically when stderr is not a terminal).
    pub progress: bool,
    /// Print a one-line summary every this many steps (0 = never).
    pub print_freq: usize,
}

impl Default for LoggingConfig {
    fn default() -> Self {
        Self {
            progress: true,
            print_freq: 10,
        }
    }
}

impl TrainConfig {
    /// Reads a config file and applies `section.key=value` overrides.
    pub fn load(path: Option<&Path>, overrides: &[String]) -> Result<Self, ConfigError> {
        let (mut table, origin) = match path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                    path: p.to_path_buf(),
                    source,
                })?;
                let table: toml::Table =
                    toml::from_str(&text).map_err(|e| ConfigError::Syntax {
                        path: p.to_path_buf(),
                        message: e.to_string(),
                    })?;
                (table, p.display().to_string())
            }
            None => (toml::Table::new(), "default config".to_string()),
        };
        let origin = if overrides.is_empty() {
            origin
        } else {
            format!("{origin} with overrides")
        };
        for o in overrides {
            apply_override(&mut table, o)?;
        }
        let cfg = Self::from_table(&table, &origin)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Parses a TOML string (with `origin` used in error messages).
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            path: origin.into(),
            message: e.to_string(),
        })?;
        let cfg = Self::from_table(&table, origin)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Builds the config section by section, so that an error names its section and key.
    fn from_table(table: &toml::Table, origin: &str) -> Result<Self, ConfigError> {
        for (name, value) in table {
            if !SECTIONS.contains(&name.as_str()) || !value.is_table() {
                return Err(ConfigError::UnknownSection {
                    origin: origin.into(),
                    section: name.clone(),
                });
            }
        }
        Ok(Self {
            model: section(table, "model", origin)?,
            data: section(table, "data", origin)?,
            rollout: section(table, "rollout", origin)?,
            algorithm: section(table, "algorithm", origin)?,
            reward: section(table, "reward", origin)?,
            optim: section(table, "optim", origin)?,
            trainer: section(table, "trainer", origin)?,
            eval: section(table, "eval", origin)?,
            logging: section(table, "logging", origin)?,
        })
    }

    /// The config as TOML (every key, as the run used it).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a TrainConfig always serializes")
    }

    /// Checks the combinations that parse but cannot run.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, message: String| {
            Err(ConfigError::Invalid {
                key: key.into(),
                message,
            })
        };
        // upper bounds first: a huge value is named by its own key, not by a combination
        self.validate_bounds()?;
        let (r, a, t, o, e) = (
            &self.rollout,
            &self.algorithm,
            &self.trainer,
            &self.optim,
            &self.eval,
        );
        if r.generation_batch_size < 1 {
            return bad("rollout.generation_batch_size", "must be at least 1".into());
        }
        if r.num_generations < 1 {
            return bad("rollout.num_generations", "must be at least 1".into());
        }
        if r.max_response_length < 1 {
            return bad("rollout.max_response_length", "must be at least 1".into());
        }
        if !(r.temperature > 0.0 && r.temperature.is_finite()) {
            return bad("rollout.temperature", "must be positive".into());
        }
        if !(r.top_p > 0.0 && r.top_p <= 1.0) {
            return bad("rollout.top_p", "must be in (0, 1]".into());
        }
        if t.train_batch_size < 1 {
            return bad("trainer.train_batch_size", "must be at least 1".into());
        }
        if a.ppo_mini_batch_size < 1 || t.train_batch_size % a.ppo_mini_batch_size != 0 {
            return bad(
                "algorithm.ppo_mini_batch_size",
                format!(
                    "must divide trainer.train_batch_size ({}), got {}",
                    t.train_batch_size, a.ppo_mini_batch_size
                ),
            );
        }
        if a.ppo_micro_batch_size < 1 {
            return bad(
                "algorithm.ppo_micro_batch_size",
                "must be at least 1".into(),
            );
        }
        if a.ppo_max_token_len_per_gpu < 1 {
            return bad(
                "algorithm.ppo_max_token_len_per_gpu",
                "must be at least 1".into(),
            );
        }
        if a.ppo_epochs < 1 {
            return bad("algorithm.ppo_epochs", "must be at least 1".into());
        }
        if !(a.clip_ratio_low >= 0.0 && a.clip_ratio_low < 1.0) {
            return bad("algorithm.clip_ratio_low", "must be in [0, 1)".into());
        }
        if !(a.clip_ratio_high >= 0.0 && a.clip_ratio_high.is_finite()) {
            return bad("algorithm.clip_ratio_high", "must be >= 0".into());
        }
        if let Some(c) = a.clip_ratio_c {
            if !(c > 1.0 && c.is_finite()) {
                return bad("algorithm.clip_ratio_c", format!("must be > 1, got {c}"));
            }
            if a.policy_loss != PolicyLossMode::Vanilla {
                return bad(
                    "algorithm.clip_ratio_c",
                    format!(
                        "dual clip applies to policy_loss = \"vanilla\" only, not \"{}\"; unset it",
                        a.policy_loss.name()
                    ),
                );
            }
        }
        if !(a.kl_loss_coef >= 0.0 && a.kl_loss_coef.is_finite()) {
            return bad(
                "algorithm.kl_loss_coef",
                format!("must be a finite number >= 0, got {}", a.kl_loss_coef),
            );
        }
        if !a.entropy_coeff.is_finite() {
            return bad(
                "algorithm.entropy_coeff",
                format!("must be a finite number, got {}", a.entropy_coeff),
            );
        }
        if !(a.overlong_penalty_factor >= 0.0 && a.overlong_penalty_factor.is_finite()) {
            return bad(
                "algorithm.overlong_penalty_factor",
                format!(
                    "must be a finite number >= 0, got {}",
                    a.overlong_penalty_factor
                ),
            );
        }
        if a.overlong_buffer_len >= r.max_response_length && a.overlong_buffer_len > 0 {
            return bad(
                "algorithm.overlong_buffer_len",
                "must be smaller than rollout.max_response_length".into(),
            );
        }
        if !(o.lr >= 0.0 && o.lr.is_finite()) {
            return bad("optim.lr", "must be a finite number >= 0".into());
        }
        // AdamW divides by sqrt(v) + eps: with eps = 0 a parameter whose gradient is zero
        // (every step whose rewards are all equal has them) gets 0/0
        if !(o.eps > 0.0 && o.eps.is_finite()) {
            return bad(
                "optim.eps",
                format!("must be a finite number > 0, got {}", o.eps),
            );
        }
        if !(o.weight_decay >= 0.0 && o.weight_decay.is_finite()) {
            return bad(
                "optim.weight_decay",
                format!("must be a finite number >= 0, got {}", o.weight_decay),
            );
        }
        if !(o.grad_clip >= 0.0 && o.grad_clip.is_finite()) {
            return bad(
                "optim.grad_clip",
                format!(
                    "must be a finite number >= 0 (0 = off), got {}",
                    o.grad_clip
                ),
            );
        }
        if !(0.0..1.0).contains(&o.beta1) {
            return bad("optim.beta1", format!("must be in [0, 1), got {}", o.beta1));
        }
        if !(0.0..1.0).contains(&o.beta2) {
            return bad("optim.beta2", format!("must be in [0, 1), got {}", o.beta2));
        }
        if !(0.0..=1.0).contains(&o.min_lr_ratio) {
            return bad("optim.min_lr_ratio", "must be in [0, 1]".into());
        }
        if e.k < 1 {
            return bad("eval.k", "must be at least 1".into());
        }
        if !(e.temperature > 0.0 && e.temperature.is_finite()) {
            return bad("eval.temperature", "must be a finite number > 0".into());
        }
        if !(e.top_p > 0.0 && e.top_p <= 1.0) {
            return bad("eval.top_p", "must be in (0, 1]".into());
        }
        if e.batch_size < 1 {
            return bad("eval.batch_size", "must be at least 1".into());
        }
        if !(self.model.device_memory_gib >= 0.0 && self.model.device_memory_gib.is_finite()) {
            return bad("model.device_memory_gib", "must be a number >= 0".into());
        }
        self.validate_sizes()?;
        validate_run_name(&t.run_name)?;
        if self.is_testbed() {
            // the testbed model is built from [model]: its context is known here
            self.check_context(
                self.model.max_position_embeddings,
                "model.max_position_embeddings of the testbed model",
            )?;
        }
        // the testbed model and the testbed task go together: either one alone would silently
        // ignore the other setting (the testbed set-up builds its own model and problems)
        match (self.model.path == TESTBED, self.data.train_files == TESTBED) {
            (true, false) => {
                return bad(
                    "data.train_files",
                    format!(
                        "`{}` with model.path = \"testbed\": the testbed model trains only on the \
                         testbed task (data.train_files = \"testbed\"); set model.path to a \
                         Hugging Face model to train on this data",
                        self.data.train_files
                    ),
                )
            }
            (false, true) => {
                return bad(
                    "model.path",
                    format!(
                        "`{}` with data.train_files = \"testbed\": the testbed task builds its \
                         own model; set model.path = \"testbed\", or data.train_files to a \
                         dataset for this model",
                        self.model.path
                    ),
                )
            }
            _ => {}
        }
        match self.model.dtype.as_str() {
            "f32" | "bf16" | "f16" => {}
            other => {
                return bad(
                    "model.dtype",
                    format!("`{other}`: expected f32, bf16 or f16"),
                )
            }
        }
        if !matches!(
            self.data.prompt_template.as_str(),
            "dapo" | "qwen-boxed" | "raw"
        ) {
            return bad(
                "data.prompt_template",
                format!(
                    "`{}`: expected dapo, qwen-boxed or raw",
                    self.data.prompt_template
                ),
            );
        }
        Ok(())
    }

    /// The sizes and counts that must be positive, and the worker count, which must fit the
    /// machine ([`max_reward_workers`]).
    fn validate_sizes(&self) -> Result<(), ConfigError> {
        let (m, d, t) = (&self.model, &self.data, &self.trainer);
        let positive: [(&str, usize); 8] = [
            ("model.hidden_size", m.hidden_size),
            ("model.num_hidden_layers", m.num_hidden_layers),
            ("model.num_attention_heads", m.num_attention_heads),
            ("model.intermediate_size", m.intermediate_size),
            ("model.max_position_embeddings", m.max_position_embeddings),
            ("data.testbed_train_size", d.testbed_train_size),
            ("trainer.keep_checkpoints", t.keep_checkpoints),
            ("trainer.warm_start_batch_size", t.warm_start_batch_size),
        ];
        for (key, v) in positive {
            if v == 0 {
                return Err(ConfigError::Invalid {
                    key: key.into(),
                    message: "must be at least 1".into(),
                });
            }
        }
        if m.hidden_size % m.num_attention_heads != 0
            || (m.hidden_size / m.num_attention_heads) % 2 != 0
        {
            return Err(ConfigError::Invalid {
                key: "model.num_attention_heads".into(),
                message: format!(
                    "must divide model.hidden_size ({}) into heads of an even size (RoPE), got {}",
                    m.hidden_size, m.num_attention_heads
                ),
            });
        }
        if !(t.warm_start_lr >= 0.0 && t.warm_start_lr.is_finite()) {
            return Err(ConfigError::Invalid {
                key: "trainer.warm_start_lr".into(),
                message: format!("must be a finite number >= 0, got {}", t.warm_start_lr),
            });
        }
        let most = max_reward_workers();
        if self.reward.num_workers > most {
            return Err(ConfigError::Invalid {
                key: "reward.num_workers".into(),
                message: format!(
                    "{} workers: at most {most} here (4 per core, at least 64; 0 = one per core)",
                    self.reward.num_workers
                ),
            });
        }
        Ok(())
    }

    /// The upper bounds of the integer settings ([`TrainConfig::bounded_integers`]), then the products that
    /// size host allocations against this machine's memory ([`host_memory_bytes`]): the
    /// rollouts of one step, the evaluation samples, the testbed's problems and model. An
    /// error names the key (and, for a product, the keys it multiplies), never a panic or an
    /// aborted allocation later.
    fn validate_bounds(&self) -> Result<(), ConfigError> {
        for (key, value, most, why) in self.bounded_integers() {
            if value > most {
                return Err(ConfigError::Invalid {
                    key: key.into(),
                    message: format!("{value}: at most {most} ({why})"),
                });
            }
        }
        let (m, d, r, a, t, e) = (
            &self.model,
            &self.data,
            &self.rollout,
            &self.algorithm,
            &self.trainer,
            &self.eval,
        );
        // every factor is bounded above, so these products fit in u128 without overflow
        let rounds = if a.filter_groups {
            a.max_num_gen_batches.max(1)
        } else {
            1
        } as u128;
        let train_tokens = (d.max_prompt_length + r.max_response_length) as u128;
        let eval_tokens = (d.max_prompt_length + self.eval_max_tokens()) as u128;
        let eval_n = if e.n_problems == 0 && self.is_testbed() {
            500
        } else {
            e.n_problems
        } as u128;
        let mut needs: Vec<(&str, String, u128)> = vec![
            (
                "trainer.train_batch_size",
                format!(
                    "the rollouts of one step: trainer.train_batch_size ({}) x \
                     rollout.num_generations ({}){} sequences of up to {train_tokens} tokens \
                     (data.max_prompt_length + rollout.max_response_length)",
                    t.train_batch_size,
                    r.num_generations,
                    if rounds > 1 {
                        format!(" x algorithm.max_num_gen_batches ({rounds})")
                    } else {
                        String::new()
                    }
                ),
                t.train_batch_size as u128
                    * r.num_generations as u128
                    * rounds
                    * (SEQUENCE_HOST_BYTES + TOKEN_HOST_BYTES * train_tokens),
            ),
            (
                "eval.n_problems",
                format!(
                    "the samples of one evaluation: eval.n_problems ({eval_n}) x eval.k ({}) \
                     responses of up to {eval_tokens} tokens",
                    e.k
                ),
                eval_n * e.k as u128 * (SEQUENCE_HOST_BYTES + TOKEN_HOST_BYTES * eval_tokens),
            ),
        ];
        if self.is_testbed() {
            needs.push((
                "data.testbed_train_size",
                format!(
                    "{} generated training problems of about {PROBLEM_HOST_BYTES} bytes each",
                    d.testbed_train_size
                ),
                d.testbed_train_size as u128 * PROBLEM_HOST_BYTES,
            ));
            let (h, f, l) = (
                m.hidden_size as u128,
                m.intermediate_size as u128,
                m.num_hidden_layers as u128,
            );
            needs.push((
                "model.hidden_size",
                format!(
                    "the testbed model (model.hidden_size {h}, model.intermediate_size {f}, \
                     model.num_hidden_layers {l}): about {} parameters, each held {} times \
                     in f32 (weights, gradients, two AdamW moments)",
                    l * (4 * h * h + 3 * h * f),
                    PARAM_HOST_COPIES
                ),
                l * (4 * h * h + 3 * h * f) * 4 * PARAM_HOST_COPIES,
            ));
        }
        if let Some(have) = host_memory_bytes() {
            for (key, what, bytes) in needs {
                if bytes > have as u128 {
                    return Err(ConfigError::Invalid {
                        key: key.into(),
                        message: format!(
                            "{what} need about {:.1} GiB of host memory, more than this \
                             machine's {:.1} GiB",
                            bytes as f64 / GIB,
                            have as f64 / GIB
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// `(key, value, upper bound, reason)` of every integer setting that sizes an allocation,
    /// a loop or a product. The bounds are generous against any real run; each stops a value
    /// that would overflow a product or size an allocation no machine holds (the products are
    /// checked against this machine's memory as well, [`TrainConfig::validate`]).
    pub fn bounded_integers(&self) -> Vec<(&'static str, usize, usize, &'static str)> {
        let (m, d, r, a, t, e) = (
            &self.model,
            &self.data,
            &self.rollout,
            &self.algorithm,
            &self.trainer,
            &self.eval,
        );
        vec![
            (
                "model.hidden_size",
                m.hidden_size,
                1 << 16,
                "testbed model width",
            ),
            (
                "model.num_hidden_layers",
                m.num_hidden_layers,
                1 << 10,
                "testbed model depth",
            ),
            (
                "model.num_attention_heads",
                m.num_attention_heads,
                1 << 10,
                "testbed model heads",
            ),
            (
                "model.intermediate_size",
                m.intermediate_size,
                1 << 18,
                "testbed model MLP width",
            ),
            (
                "model.max_position_embeddings",
                m.max_position_embeddings,
                1 << 20,
                "tokens of one sequence",
            ),
            (
                "data.max_prompt_length",
                d.max_prompt_length,
                1 << 20,
                "tokens of one sequence",
            ),
            (
                "data.testbed_train_size",
                d.testbed_train_size,
                1 << 24,
                "problems generated and held in memory",
            ),
            (
                "data.testbed_difficulty",
                d.testbed_difficulty,
                1 << 10,
                "terms of one testbed sum",
            ),
            (
                "rollout.num_generations",
                r.num_generations,
                1 << 16,
                "responses per prompt, held per step",
            ),
            (
                "rollout.max_response_length",
                r.max_response_length,
                1 << 20,
                "tokens of one sequence",
            ),
            (
                "rollout.generation_batch_size",
                r.generation_batch_size,
                1 << 20,
                "prompts per generation call",
            ),
            (
                "algorithm.ppo_epochs",
                a.ppo_epochs,
                1 << 16,
                "passes over one rollout batch",
            ),
            (
                "algorithm.ppo_micro_batch_size",
                a.ppo_micro_batch_size,
                1 << 30,
                "sequences per forward pass",
            ),
            (
                "algorithm.ppo_max_token_len_per_gpu",
                a.ppo_max_token_len_per_gpu,
                1 << 40,
                "padded tokens per forward pass",
            ),
            (
                "algorithm.max_num_gen_batches",
                a.max_num_gen_batches,
                1 << 10,
                "generation rounds per step, held together",
            ),
            (
                "trainer.total_training_steps",
                t.total_training_steps,
                1 << 32,
                "steps of one run",
            ),
            (
                "trainer.train_batch_size",
                t.train_batch_size,
                1 << 20,
                "prompts per step, held with their responses",
            ),
            (
                "trainer.warm_start_steps",
                t.warm_start_steps,
                1 << 24,
                "supervised steps, one loss kept per step",
            ),
            (
                "trainer.warm_start_batch_size",
                t.warm_start_batch_size,
                1 << 20,
                "sequences per supervised step",
            ),
            (
                "optim.lr_warmup_steps",
                self.optim.lr_warmup_steps,
                1 << 40,
                "optimizer steps",
            ),
            (
                "eval.n_problems",
                e.n_problems,
                1 << 24,
                "problems per evaluation, held with their samples",
            ),
            (
                "eval.k",
                e.k,
                1 << 16,
                "samples per problem, held per evaluation",
            ),
            (
                "eval.max_response_length",
                e.max_response_length,
                1 << 20,
                "tokens of one sequence",
            ),
            (
                "eval.batch_size",
                e.batch_size,
                1 << 20,
                "prompts per generation call",
            ),
        ]
    }

    /// Checks the samples of one evaluation of `problems` problems of `dataset` against this
    /// machine's memory (`eval.n_problems = 0` evaluates a whole dataset, whose size is known
    /// only once it is read): an error names `eval.k` and `eval.n_problems`.
    pub fn check_eval_size(&self, dataset: &str, problems: usize) -> Result<(), ConfigError> {
        let tokens = (self.data.max_prompt_length + self.eval_max_tokens()) as u128;
        let bytes = problems as u128
            * self.eval.k as u128
            * (SEQUENCE_HOST_BYTES + TOKEN_HOST_BYTES * tokens);
        match host_memory_bytes() {
            Some(have) if bytes > have as u128 => Err(ConfigError::Invalid {
                key: "eval.k".into(),
                message: format!(
                    "evaluating {dataset}: {problems} problems x eval.k ({}) responses of up to \
                     {tokens} tokens need about {:.1} GiB of host memory, more than this \
                     machine's {:.1} GiB; lower eval.k or set eval.n_problems",
                    self.eval.k,
                    bytes as f64 / GIB,
                    have as f64 / GIB
                ),
            }),
            _ => Ok(()),
        }
    }

    /// Checks the config a `--resume` resolved (`new`: the saved config, `self`, with the
    /// overrides) against the saved one: a key of [`FIXED_ON_RESUME`] whose value changed is
    /// an error naming it, since the resumed run cannot apply it and the saved config must
    /// not claim it did.
    pub fn check_resume_overrides(&self, new: &TrainConfig) -> Result<(), ConfigError> {
        let (Ok(toml::Value::Table(old_t)), Ok(toml::Value::Table(new_t))) =
            (toml::Value::try_from(self), toml::Value::try_from(new))
        else {
            return Ok(());
        };
        let get = |t: &toml::Table, sec: &str, key: &str| {
            t.get(sec)
                .and_then(|s| s.get(key))
                .map(|v| v.to_string())
                .unwrap_or_else(|| "unset".into())
        };
        for &(key, why) in FIXED_ON_RESUME {
            let (sec, name) = key.split_once('.').expect("section.key");
            let (was, now) = (get(&old_t, sec, name), get(&new_t, sec, name));
            if was != now {
                return Err(ConfigError::Invalid {
                    key: key.into(),
                    message: format!(
                        "cannot change on --resume ({why}): the run has {was}, the override \
                         asks for {now}; start a new run to change it"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The context length the run's tokens need against a model's `max_position_embeddings`
    /// (`limit`, read from `source`): `data.max_prompt_length` plus the longer of
    /// `rollout.max_response_length` and the evaluation's response length must fit. An error
    /// names the keys, their sum and the model's limit.
    pub fn check_context(&self, limit: usize, source: &str) -> Result<(), ConfigError> {
        let prompt = self.data.max_prompt_length;
        let (rkey, response) = if self.eval_max_tokens() > self.rollout.max_response_length {
            ("eval.max_response_length", self.eval_max_tokens())
        } else {
            (
                "rollout.max_response_length",
                self.rollout.max_response_length,
            )
        };
        if prompt + response <= limit {
            return Ok(());
        }
        let key = if prompt > 0 {
            format!("data.max_prompt_length + {rkey}")
        } else {
            rkey.to_string()
        };
        let sum = if prompt > 0 {
            format!("{prompt} + {response} = {} tokens", prompt + response)
        } else {
            format!("{response} tokens")
        };
        Err(ConfigError::Invalid {
            key,
            message: format!(
                "{sum}, beyond the model's context: max_position_embeddings = {limit} ({source}); \
                 lower them to fit"
            ),
        })
    }

    /// Optimizer steps over the whole run (for the cosine schedule).
    pub fn total_optimizer_steps(&self) -> usize {
        self.trainer
            .total_training_steps
            .saturating_mul(
                (self.trainer.train_batch_size / self.algorithm.ppo_mini_batch_size.max(1)).max(1),
            )
            .saturating_mul(self.algorithm.ppo_epochs)
    }

    /// Whether the run trains on the generated testbed task.
    pub fn is_testbed(&self) -> bool {
        self.data.train_files == TESTBED
    }

    /// Max tokens of an evaluation response.
    pub fn eval_max_tokens(&self) -> usize {
        if self.eval.max_response_length == 0 {
            self.rollout.max_response_length
        } else {
            self.eval.max_response_length
        }
    }
}

/// The most `reward.num_workers` allowed: [`rlvr_tasks::reward::max_workers`] (4 per core, at
/// least the sandbox slots), the count the scoring pool itself accepts.
pub fn max_reward_workers() -> usize {
    rlvr_tasks::reward::max_workers()
}

/// Host bytes counted per sequence held in a step (its problem, group, texts and bookkeeping).
pub const SEQUENCE_HOST_BYTES: u128 = 1024;
/// Host bytes counted per token of a held sequence (token id, old, reference and new
/// log-probabilities, mask, advantage weight and the decoded text).
pub const TOKEN_HOST_BYTES: u128 = 32;
/// Host bytes counted per generated testbed problem.
pub const PROBLEM_HOST_BYTES: u128 = 512;
/// f32 copies of each testbed parameter: weights, gradients, two AdamW moments.
pub const PARAM_HOST_COPIES: u128 = 4;
const GIB: f64 = (1u64 << 30) as f64;

/// This machine's memory (`MemTotal` of `/proc/meminfo`) in bytes; None where it cannot be
/// read (the memory products are then not checked, the per-key bounds still are).
pub fn host_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().next()?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The keys a `--resume` cannot change, with the reason ([`TrainConfig::check_resume_overrides`]).
pub const FIXED_ON_RESUME: &[(&str, &str)] = &[
    (
        "model.path",
        "the run continues from its checkpoint, not from model.path",
    ),
    (
        "model.hidden_size",
        "the checkpoint holds the model's shape",
    ),
    (
        "model.num_hidden_layers",
        "the checkpoint holds the model's shape",
    ),
    (
        "model.num_attention_heads",
        "the checkpoint holds the model's shape",
    ),
    (
        "model.intermediate_size",
        "the checkpoint holds the model's shape",
    ),
    (
        "model.max_position_embeddings",
        "the checkpoint holds the model's shape",
    ),
    (
        "trainer.seed",
        "the data order and every sample so far follow it",
    ),
    ("trainer.run_name", "the run stays in its directory"),
    ("trainer.runs_dir", "the run stays in its directory"),
    (
        "trainer.warm_start_steps",
        "the warm start happened before the first step",
    ),
    (
        "trainer.warm_start_batch_size",
        "the warm start happened before the first step",
    ),
    (
        "trainer.warm_start_lr",
        "the warm start happened before the first step",
    ),
    (
        "data.testbed_regime",
        "the testbed problems and the data order follow it",
    ),
    (
        "data.testbed_difficulty",
        "the testbed problems and the data order follow it",
    ),
    (
        "data.testbed_min_terms",
        "the testbed problems and the data order follow it",
    ),
    (
        "data.testbed_heldout_modulus",
        "the testbed problems and the data order follow it",
    ),
    (
        "data.testbed_train_size",
        "the testbed problems and the data order follow it",
    ),
];

/// `trainer.run_name`: empty (an automatic name) or one plain path component, so that
/// `<runs_dir>/<run_name>` stays inside `runs_dir`.
fn validate_run_name(name: &str) -> Result<(), ConfigError> {
    if name.is_empty() {
        return Ok(());
    }
    let mut parts = Path::new(name).components();
    let plain = matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(c)), None) if c == std::ffi::OsStr::new(name)
    );
    if !plain || name.contains(['/', '\\', '\0']) {
        return Err(ConfigError::Invalid {
            key: "trainer.run_name".into(),
            message: format!(
                "{name:?}: a run name is one plain directory name inside trainer.runs_dir (no \
                 `/` or `\\`, not `.` or `..`, not an absolute path); set trainer.runs_dir to \
                 put runs elsewhere"
            ),
        });
    }
    Ok(())
}

/// Deserializes one section; an error names the key it is about.
fn section<T: DeserializeOwned + Default>(
    table: &toml::Table,
    name: &str,
    origin: &str,
) -> Result<T, ConfigError> {
    let Some(value) = table.get(name) else {
        return Ok(T::default());
    };
    let Some(sub) = value.as_table() else {
        return Err(ConfigError::UnknownSection {
            origin: origin.into(),
            section: name.into(),
        });
    };
    // Serialize the section alone and parse it back: the parse error's span is on the line of
    // the offending key, so the error can name it.
    let text = toml::to_string(sub).map_err(|e| ConfigError::Section {
        origin: origin.into(),
        section: name.into(),
        message: e.to_string(),
    })?;
    toml::from_str::<T>(&text).map_err(|e| {
        let message = e.message().to_string();
        let key = e
            .span()
            .and_then(|span| key_at(&text, span.start))
            .or_else(|| unknown_field_name(&message));
        match key {
            Some(key) => ConfigError::Key {
                origin: origin.into(),
                section: name.into(),
                key,
                message,
            },
            None => ConfigError::Section {
                origin: origin.into(),
                section: name.into(),
                message,
            },
        }
    })
}

/// The key of the `key = value` line holding byte `pos` of `text`.
fn key_at(text: &str, pos: usize) -> Option<String> {
    let start = text[..pos.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let key = line.split('=').next()?.trim().trim_matches('"');
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

/// `unknown field `x`` -> `x`.
fn unknown_field_name(message: &str) -> Option<String> {
    let rest = message.split("unknown field `").nth(1)?;
    Some(rest.split('`').next()?.to_string())
}

/// Applies `section.key=value` to the raw table. The value is parsed as TOML; when that fails
/// (a bare word such as `balanced`), it is taken as a string.
pub fn apply_override(table: &mut toml::Table, o: &str) -> Result<(), ConfigError> {
    let (path, raw) = o
        .split_once('=')
        .ok_or_else(|| ConfigError::BadOverride(o.into()))?;
    let (sec, key) = path
        .trim()
        .split_once('.')
        .ok_or_else(|| ConfigError::BadOverride(o.into()))?;
    if sec.is_empty() || key.is_empty() || key.contains('.') {
        return Err(ConfigError::BadOverride(o.into()));
    }
    let raw = raw.trim();
    let value = toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let entry = table
        .entry(sec.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    match entry.as_table_mut() {
        Some(t) => {
            t.insert(key.to_string(), value);
            Ok(())
        }
        None => Err(ConfigError::UnknownSection {
            origin: format!("override `{o}`"),
            section: sec.into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_file(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(rel)
    }

    #[test]
    fn policy_loss_modes_parse_and_dual_clip_is_vanilla_only() {
        for (text, want) in [
            ("vanilla", PolicyLossMode::Vanilla),
            ("ppo", PolicyLossMode::Vanilla),
            ("gspo", PolicyLossMode::Gspo),
            ("cispo", PolicyLossMode::Cispo),
        ] {
            let cfg = TrainConfig::load(None, &[format!("algorithm.policy_loss={text}")]).unwrap();
            assert_eq!(cfg.algorithm.policy_loss, want);
        }
        let err = TrainConfig::load(None, &["algorithm.policy_loss=reinforce".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("policy_loss") && err.contains("reinforce"),
            "{err}"
        );
        let err = TrainConfig::load(
            None,
            &[
                "algorithm.policy_loss=gspo".into(),
                "algorithm.clip_ratio_c=3.0".into(),
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("algorithm.clip_ratio_c") && err.contains("gspo"),
            "{err}"
        );
    }

    #[test]
    fn testbed_toml_is_the_default() {
        let cfg = TrainConfig::load(Some(&repo_file("configs/testbed.toml")), &[]).unwrap();
        assert_eq!(cfg, TrainConfig::default());
    }

    #[test]
    fn shipped_configs_parse() {
        for f in [
            "configs/dapo17k-qwen2.5-math-7b.toml",
            "configs/dapo17k-qwen3-1.7b.toml",
        ] {
            let cfg = TrainConfig::load(Some(&repo_file(f)), &[]).unwrap();
            assert_eq!(cfg.rollout.num_generations, 16, "{f}");
            assert_eq!(cfg.algorithm.loss_agg_mode, AggRule::Balanced, "{f}");
            assert_eq!(cfg.algorithm.clip_ratio_high, 0.28, "{f}");
            assert_eq!(cfg.data.prompt_template, "dapo", "{f}");
        }
    }

    /// Every numeric setting outside its range is refused, naming the key (each of these
    /// was accepted before and either poisoned the weights, skipped every step, or panicked).
    #[test]
    fn numeric_settings_outside_their_range_are_refused_by_key() {
        let too_many = format!("reward.num_workers={}", max_reward_workers() + 1);
        let cases: Vec<(String, &str)> = [
            ("optim.eps=0", "optim.eps"),
            ("optim.eps=nan", "optim.eps"),
            ("optim.eps=-1e-8", "optim.eps"),
            ("optim.weight_decay=nan", "optim.weight_decay"),
            ("optim.weight_decay=inf", "optim.weight_decay"),
            ("optim.grad_clip=nan", "optim.grad_clip"),
            ("optim.beta2=nan", "optim.beta2"),
            ("optim.beta1=1.0", "optim.beta1"),
            ("algorithm.kl_loss_coef=nan", "algorithm.kl_loss_coef"),
            ("algorithm.kl_loss_coef=-1", "algorithm.kl_loss_coef"),
            ("algorithm.entropy_coeff=nan", "algorithm.entropy_coeff"),
            ("algorithm.entropy_coeff=inf", "algorithm.entropy_coeff"),
            (
                "algorithm.overlong_penalty_factor=nan",
                "algorithm.overlong_penalty_factor",
            ),
            ("model.hidden_size=0", "model.hidden_size"),
            ("model.intermediate_size=0", "model.intermediate_size"),
            ("model.num_hidden_layers=0", "model.num_hidden_layers"),
            ("model.num_attention_heads=0", "model.num_attention_heads"),
            ("model.num_attention_heads=3", "model.num_attention_heads"),
            (
                "model.max_position_embeddings=0",
                "model.max_position_embeddings",
            ),
            ("trainer.keep_checkpoints=0", "trainer.keep_checkpoints"),
            ("trainer.warm_start_lr=nan", "trainer.warm_start_lr"),
            (
                "trainer.warm_start_batch_size=0",
                "trainer.warm_start_batch_size",
            ),
            ("eval.temperature=0", "eval.temperature"),
            ("eval.top_p=nan", "eval.top_p"),
        ]
        .into_iter()
        .map(|(o, k)| (o.to_string(), k))
        .chain([(too_many, "reward.num_workers")])
        .collect();
        for (over, key) in cases {
            let err = TrainConfig::load(None, std::slice::from_ref(&over))
                .expect_err(&over)
                .to_string();
            assert!(err.contains(key), "{over}: {err}");
        }
        // the testbed model and task only together (each alone ignored the other)
        let err = TrainConfig::load(None, &["data.train_files=math500".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("data.train_files") && err.contains("testbed"),
            "{err}"
        );
        let err = TrainConfig::load(None, &["model.path=Qwen/Qwen2.5-0.5B".into()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("model.path") && err.contains("testbed"),
            "{err}"
        );
        // the edges that are allowed
        for ok in [
            "optim.weight_decay=0",
            "optim.grad_clip=0",
            "algorithm.entropy_coeff=-0.01",
            "reward.num_workers=0",
            "trainer.keep_checkpoints=1",
        ] {
            TrainConfig::load(None, &[ok.to_string()]).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        let most = format!("reward.num_workers={}", max_reward_workers());
        TrainConfig::load(None, &[most]).unwrap();
    }

    #[test]
    fn unknown_key_is_named_with_its_section() {
        let err = TrainConfig::from_toml_str("[algorithm]\nclip_ratio_hi = 0.3\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("algorithm.clip_ratio_hi"), "{err}");
        assert!(err.contains("x.toml"), "{err}");
    }

    #[test]
    fn wrong_type_is_named() {
        let err = TrainConfig::from_toml_str("[optim]\nlr = 1e-3\nbeta1 = \"high\"\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("optim.beta1"), "{err}");
        let err = TrainConfig::from_toml_str("[algorithm]\nloss_agg_mode = \"tokens\"\n", "x")
            .unwrap_err()
            .to_string();
        assert!(err.contains("algorithm.loss_agg_mode"), "{err}");
    }

    #[test]
    fn unknown_section_is_named() {
        let err = TrainConfig::from_toml_str("[optimizer]\nlr = 1\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("[optimizer]"), "{err}");
    }

    #[test]
    fn overrides_apply_and_are_checked() {
        let cfg = TrainConfig::load(
            None,
            &[
                "algorithm.loss_agg_mode=token-mean".into(),
                "optim.lr=1e-3".into(),
                "trainer.run_name=abc".into(),
                "eval.datasets=[\"testbed\", \"math500\"]".into(),
            ],
        )
        .unwrap();
        assert_eq!(cfg.algorithm.loss_agg_mode, AggRule::TokenMean);
        assert_eq!(cfg.optim.lr, 1e-3);
        assert_eq!(cfg.trainer.run_name, "abc");
        assert_eq!(cfg.eval.datasets.len(), 2);
        let err = TrainConfig::load(None, &["optim.learning_rate=1".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("optim.learning_rate"), "{err}");
        assert!(TrainConfig::load(None, &["lr=1".into()]).is_err());
    }

    #[test]
    fn invalid_combination_is_named() {
        let err = TrainConfig::load(None, &["algorithm.ppo_mini_batch_size=5".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("algorithm.ppo_mini_batch_size"), "{err}");
    }

    #[test]
    fn reward_kind_parses_and_unknown_is_named() {
        use rlvr_tasks::RewardKind;
        assert_eq!(TrainConfig::default().reward.kind, RewardKind::Auto);
        for name in RewardKind::NAMES {
            let cfg = TrainConfig::load(None, &[format!("reward.kind={name}")]).unwrap();
            assert_eq!(cfg.reward.kind.as_str(), name);
        }
        let err = TrainConfig::from_toml_str("[reward]\nkind = \"sandbox\"\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("reward.kind") && err.contains("sandbox") && err.contains("code"),
            "{err}"
        );
        let err = TrainConfig::from_toml_str("[reward]\nkinds = \"code\"\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("reward.kinds"), "{err}");
        let cfg = TrainConfig::load(
            None,
            &[
                "reward.code_mode=fraction".into(),
                "reward.num_workers=3".into(),
            ],
        )
        .unwrap();
        assert_eq!(cfg.reward.reward_fn().unwrap().workers(), 3);
        assert!(!cfg.reward.reward_fn().unwrap().sandbox().allow_unsandboxed);
        let cfg = TrainConfig::load(None, &["reward.allow_unsandboxed=true".into()]).unwrap();
        assert!(cfg.reward.reward_fn().unwrap().sandbox().allow_unsandboxed);
    }

    #[test]
    fn round_trips_through_toml() {
        let cfg = TrainConfig::default();
        let back = TrainConfig::from_toml_str(&cfg.to_toml(), "round trip").unwrap();
        assert_eq!(cfg, back);
    }
}
