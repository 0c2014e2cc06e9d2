//! `[optim]`.

use serde::{Deserialize, Serialize};

use super::section::{Keys, Section};
use super::ConfigError;

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

impl Section for OptimConfig {
    const NAME: &'static str = "optim";

    /// A finite rate, decay and clip `>= 0`, AdamW's `eps > 0` (AdamW divides by
    /// `sqrt(v) + eps`: with 0, a parameter whose gradient is zero, as on every step whose
    /// rewards are all equal, gets 0/0), betas in `[0, 1)`, `min_lr_ratio` in `[0, 1]`.
    fn validate(&self) -> Result<(), ConfigError> {
        type K = Keys<OptimConfig>;
        K::finite_at_least("lr", self.lr, 0.0)?;
        if !(self.eps > 0.0 && self.eps.is_finite()) {
            return Err(K::invalid(
                "eps",
                format!("must be a finite number > 0, got {}", self.eps),
            ));
        }
        K::finite_at_least("weight_decay", self.weight_decay, 0.0)?;
        K::finite_at_least("grad_clip", self.grad_clip, 0.0)?;
        K::fraction("beta1", self.beta1, false)?;
        K::fraction("beta2", self.beta2, false)?;
        K::fraction("min_lr_ratio", self.min_lr_ratio, true)
    }
}
