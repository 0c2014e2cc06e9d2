//! `[optim]`.

use serde::{Deserialize, Serialize};

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
