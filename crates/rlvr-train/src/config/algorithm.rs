//! `[algorithm]`.

use rlvr_core::kl::KlEstimator;
use rlvr_core::policy_loss::{ClipConfig, PolicyLossMode};
use rlvr_core::{AdvEstimator, AggRule};
use serde::{Deserialize, Serialize};

use super::section::{Keys, Section};
use super::ConfigError;

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
    /// KL estimator: `k1`, `k2` or `k3` (verl `kl_loss_type`: `kl`, `mse`, `low_var_kl`).
    pub kl_loss_type: KlEstimator,
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
    /// `ppo_max_token_len_per_gpu` computed tokens: the slots of its packed rows with
    /// `model.use_remove_padding` (`rlvr_core::split::by_packed_tokens`), else its padded
    /// tokens, `sequences x longest prompt+response` (`rlvr_core::split::by_padded_tokens`);
    /// one longer sequence gets a micro-batch of its own. Applies to the update and to the
    /// no-gradient passes (old and reference log-probs). Memory only: the gradient does not
    /// change.
    pub use_dynamic_bsz: bool,
    /// With `use_dynamic_bsz`: computed tokens per micro-batch (verl
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
            kl_loss_type: KlEstimator::K3,
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

impl AlgorithmConfig {
    /// The clipping settings of the policy loss (`rlvr_core::policy_loss::ClipConfig`; the
    /// log-ratio bound is verl's, [`ClipConfig::LOG_RATIO_CLAMP`]).
    pub fn clip(&self) -> ClipConfig {
        ClipConfig {
            clip_ratio_low: self.clip_ratio_low,
            clip_ratio_high: self.clip_ratio_high,
            clip_ratio_c: self.clip_ratio_c,
            log_ratio_clamp: ClipConfig::LOG_RATIO_CLAMP,
        }
    }
}

impl Section for AlgorithmConfig {
    const NAME: &'static str = "algorithm";

    /// Positive batch sizes and epochs; clip ratios in range, the dual clip only with the
    /// vanilla loss; finite coefficients (KL and overlong penalty `>= 0`).
    fn validate(&self) -> Result<(), ConfigError> {
        type K = Keys<AlgorithmConfig>;
        K::at_least_one("ppo_mini_batch_size", self.ppo_mini_batch_size)?;
        K::at_least_one("ppo_micro_batch_size", self.ppo_micro_batch_size)?;
        K::at_least_one("ppo_max_token_len_per_gpu", self.ppo_max_token_len_per_gpu)?;
        K::at_least_one("ppo_epochs", self.ppo_epochs)?;
        K::fraction("clip_ratio_low", self.clip_ratio_low, false)?;
        K::finite_at_least("clip_ratio_high", self.clip_ratio_high, 0.0)?;
        if let Some(c) = self.clip_ratio_c {
            if !(c > 1.0 && c.is_finite()) {
                return Err(K::invalid("clip_ratio_c", format!("must be > 1, got {c}")));
            }
            if self.policy_loss != PolicyLossMode::Vanilla {
                return Err(K::invalid(
                    "clip_ratio_c",
                    format!(
                        "dual clip applies to policy_loss = \"vanilla\" only, not \"{}\"; unset it",
                        self.policy_loss.name()
                    ),
                ));
            }
        }
        K::finite_at_least("kl_loss_coef", self.kl_loss_coef, 0.0)?;
        if !self.entropy_coeff.is_finite() {
            return Err(K::invalid(
                "entropy_coeff",
                format!("must be a finite number, got {}", self.entropy_coeff),
            ));
        }
        K::finite_at_least("overlong_penalty_factor", self.overlong_penalty_factor, 0.0)
    }
}
