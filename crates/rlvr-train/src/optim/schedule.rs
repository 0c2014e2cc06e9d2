//! [`Schedule`]: the learning rate per optimizer step.

use crate::config::{LrScheduler, OptimConfig};

/// Learning rate per optimizer step: linear warmup from `lr/warmup` to `lr` over
/// `warmup` steps, then constant, or cosine down to `min_lr_ratio * lr` at `total` steps.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    pub lr: f64,
    pub warmup: usize,
    pub total: usize,
    pub kind: LrScheduler,
    pub min_lr_ratio: f64,
}

impl Schedule {
    pub fn new(c: &OptimConfig, total: usize) -> Self {
        Self {
            lr: c.lr,
            warmup: c.lr_warmup_steps,
            total,
            kind: c.lr_scheduler,
            min_lr_ratio: c.min_lr_ratio,
        }
    }

    /// The learning rate of optimizer step `step` (0-based).
    pub fn lr_at(&self, step: usize) -> f64 {
        if step < self.warmup {
            return self.lr * (step + 1) as f64 / self.warmup as f64;
        }
        match self.kind {
            LrScheduler::Constant => self.lr,
            LrScheduler::Cosine => {
                let span = self.total.saturating_sub(self.warmup).max(1) as f64;
                let progress = ((step - self.warmup) as f64 / span).min(1.0);
                let min = self.lr * self.min_lr_ratio;
                min + (self.lr - min) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
            }
        }
    }
}
