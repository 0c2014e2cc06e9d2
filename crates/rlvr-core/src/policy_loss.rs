//! Per-token policy-gradient loss terms on scalars, each with its derivative with respect to
//! the token's current log-prob `logp`.
//!
//! Why here, though training computes these on tensors (rlvr-train's `loss.rs`): they are the
//! formulas in their plainest form, the reference the tensor version is tested against, and
//! what a user of another trainer reads or calls to check their own loss term by term.
//!
//! Notation: `logp` = log π_θ(o_t | ·) now, `old` = the same under the policy that sampled
//! (or the last recomputation), `A` = the sequence's advantage, `r = exp(logp - old)`.
//! The log-ratio is clamped to `[-log_ratio_clamp, log_ratio_clamp]` before `exp` (verl: ±20);
//! where the clamp is active the derivative is 0.
//!
//! The aggregated loss is `Σ_i w_i Σ_t l_{i,t}` (see [`crate::aggregation`]).

use crate::CoreError;

/// The per-token policy-gradient loss (verl `actor.policy_loss.loss_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyLossMode {
    /// PPO's clipped surrogate ([`ppo_clip`]).
    #[serde(alias = "ppo")]
    Vanilla,
    /// GSPO's token form ([`gspo`]).
    Gspo,
    /// CISPO ([`cispo`]).
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

/// Clipping settings, named as in verl.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipConfig {
    /// `ε_low`: the ratio is clipped below at `1 - ε_low`.
    pub clip_ratio_low: f64,
    /// `ε_high`: the ratio is clipped above at `1 + ε_high` (DAPO's clip-higher: 0.28).
    pub clip_ratio_high: f64,
    /// Dual-clip bound `c > 1` for negative advantages (Ye et al. 2020), or none.
    pub clip_ratio_c: Option<f64>,
    /// Bound on `|logp - old|` before `exp`.
    pub log_ratio_clamp: f64,
}

impl Default for ClipConfig {
    /// verl's defaults: `ε_low = ε_high = 0.2`, `c = 3`, clamp 20.
    fn default() -> Self {
        Self {
            clip_ratio_low: 0.2,
            clip_ratio_high: 0.2,
            clip_ratio_c: Some(3.0),
            log_ratio_clamp: Self::LOG_RATIO_CLAMP,
        }
    }
}

impl ClipConfig {
    /// verl's bound on `|logp - old|` before `exp`.
    pub const LOG_RATIO_CLAMP: f64 = 20.0;

    /// Checks `0 <= ε_low < 1`, `ε_high >= 0`, `c > 1`, clamp > 0, all finite.
    pub fn validate(&self) -> Result<(), CoreError> {
        let bad = |name, reason: &str| {
            Err(CoreError::InvalidParameter {
                name,
                reason: reason.into(),
            })
        };
        if !(self.clip_ratio_low >= 0.0 && self.clip_ratio_low < 1.0) {
            return bad("clip_ratio_low", "must be in [0, 1)");
        }
        if !(self.clip_ratio_high >= 0.0 && self.clip_ratio_high.is_finite()) {
            return bad("clip_ratio_high", "must be finite and >= 0");
        }
        if let Some(c) = self.clip_ratio_c {
            if !(c > 1.0 && c.is_finite()) {
                return bad("clip_ratio_c", "must be finite and > 1");
            }
        }
        if !(self.log_ratio_clamp > 0.0 && self.log_ratio_clamp.is_finite()) {
            return bad("log_ratio_clamp", "must be finite and > 0");
        }
        Ok(())
    }
}

/// One token's loss term and what the clipping did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TokenLoss {
    /// `l_t`.
    pub loss: f64,
    /// `∂l_t / ∂logp`.
    pub dloss_dlogp: f64,
    /// The lower clip bound was active (`A < 0`, `r < 1 - ε_low`): the token gives no gradient.
    pub clipped_low: bool,
    /// The upper clip bound was active (`A > 0`, `r > 1 + ε_high`): the token gives no gradient.
    pub clipped_high: bool,
    /// The dual clip was active (`A < 0`, `max(r, clip(r)) > c`): the loss is the constant `-A·c`.
    pub dual_clipped: bool,
}

/// `exp(clamp(x, -c, c))` and its derivative with respect to `x`.
fn clamped_exp(x: f64, c: f64) -> (f64, f64) {
    let y = x.clamp(-c, c);
    let e = y.exp();
    (e, if x.abs() <= c { e } else { 0.0 })
}

/// The clipped surrogate given the ratio `r` and `∂r/∂logp`.
fn clipped_surrogate(r: f64, dr: f64, adv: f64, cfg: &ClipConfig, dual: bool) -> TokenLoss {
    let (lo, hi) = (1.0 - cfg.clip_ratio_low, 1.0 + cfg.clip_ratio_high);
    let (l1, d1) = (-adv * r, -adv * dr);
    let rc = r.clamp(lo, hi);
    let (l2, d2) = (
        -adv * rc,
        if (lo..=hi).contains(&r) {
            -adv * dr
        } else {
            0.0
        },
    );
    let clipped = l2 > l1;
    let (loss, dloss_dlogp) = if clipped { (l2, d2) } else { (l1, d1) };
    let mut out = TokenLoss {
        loss,
        dloss_dlogp,
        clipped_low: clipped && adv < 0.0,
        clipped_high: clipped && adv > 0.0,
        dual_clipped: false,
    };
    if let (true, Some(c)) = (dual && adv < 0.0, cfg.clip_ratio_c) {
        let l3 = -adv * c;
        if out.loss > l3 {
            out.loss = l3;
            out.dloss_dlogp = 0.0;
            out.dual_clipped = true;
        }
    }
    out
}

/// PPO clipped surrogate with clip-higher and (optional) dual clip, as verl's `vanilla` loss:
///
/// ```text
/// r   = exp(clamp(logp - old, ±log_ratio_clamp))
/// l   = max(-A·r, -A·clip(r, 1 - ε_low, 1 + ε_high))
/// l   = min(l, -A·c)        if A < 0 and clip_ratio_c = Some(c)      (dual clip)
/// ∂l/∂logp = -A·r where the unclipped branch is active, else 0
/// ```
pub fn ppo_clip(logp: f64, old: f64, adv: f64, cfg: &ClipConfig) -> TokenLoss {
    let (r, dr) = clamped_exp(logp - old, cfg.log_ratio_clamp);
    clipped_surrogate(r, dr, adv, cfg, true)
}

/// GSPO's token form (Zheng et al. 2025, verl `gspo`): every token of sequence `i` uses the
/// sequence-level ratio `s_i = exp(mean_t(logp_t - old_t))` as its value, with a
/// straight-through gradient to its own log-prob:
///
/// ```text
/// r_t = sg[s_i] · exp(logp_t - sg[logp_t])      (value s_i, ∂r_t/∂logp_t = s_i)
/// l_t = max(-A·r_t, -A·clip(r_t, 1 - ε_low, 1 + ε_high))      (no dual clip)
/// ```
///
/// `seq_mean_log_ratio` = `mean_t(logp_t - old_t)` over the sequence (treated as a constant),
/// clamped like a log-ratio. GSPO's paper uses tiny clip ranges (ε_low 3e-4, ε_high 4e-4) and
/// sequence-mean aggregation.
pub fn gspo(seq_mean_log_ratio: f64, adv: f64, cfg: &ClipConfig) -> TokenLoss {
    let (r, dr) = clamped_exp(seq_mean_log_ratio, cfg.log_ratio_clamp);
    clipped_surrogate(r, dr, adv, cfg, false)
}

/// CISPO (MiniMax-M1, 2025): REINFORCE on the log-prob with a clipped, stop-gradient
/// importance weight, so clipped tokens still give gradient:
///
/// ```text
/// l = -sg[clip(r, 1 - ε_low, 1 + ε_high)] · A · logp,    ∂l/∂logp = -clip(r, ...)·A
/// ```
///
/// `clipped_low` / `clipped_high` report where the weight was clipped (for either sign of A).
pub fn cispo(logp: f64, old: f64, adv: f64, cfg: &ClipConfig) -> TokenLoss {
    let (r, _) = clamped_exp(logp - old, cfg.log_ratio_clamp);
    let (lo, hi) = (1.0 - cfg.clip_ratio_low, 1.0 + cfg.clip_ratio_high);
    let rc = r.clamp(lo, hi);
    TokenLoss {
        loss: -rc * adv * logp,
        dloss_dlogp: -rc * adv,
        clipped_low: r < lo,
        clipped_high: r > hi,
        dual_clipped: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DAPO: ClipConfig = ClipConfig {
        clip_ratio_low: 0.2,
        clip_ratio_high: 0.28,
        clip_ratio_c: Some(3.0),
        log_ratio_clamp: 20.0,
    };

    /// Central finite difference of `f` at `x`.
    fn fd(f: impl Fn(f64) -> f64, x: f64) -> f64 {
        let h = 1e-6;
        (f(x + h) - f(x - h)) / (2.0 * h)
    }

    /// True when `x` is within `margin` of a kink of the clipped surrogate.
    fn near_kink(log_ratio: f64, cfg: &ClipConfig, margin: f64) -> bool {
        let r = log_ratio.exp();
        let mut kinks = vec![1.0 - cfg.clip_ratio_low, 1.0 + cfg.clip_ratio_high];
        kinks.extend(cfg.clip_ratio_c);
        kinks.iter().any(|k| (r - k).abs() < margin)
            || (log_ratio.abs() - cfg.log_ratio_clamp).abs() < margin
    }

    #[test]
    fn ppo_clip_by_hand() {
        let old = -1.0;
        // A > 0, r = 1.5 > 1.28: clipped high, loss = -1.28·A, no gradient.
        let t = ppo_clip(old + 1.5f64.ln(), old, 2.0, &DAPO);
        assert!(
            (t.loss + 2.56).abs() < 1e-12
                && t.dloss_dlogp == 0.0
                && t.clipped_high
                && !t.clipped_low
        );
        // A > 0, r = 1.1: unclipped, loss = -1.1·A, gradient -A·r.
        let t = ppo_clip(old + 1.1f64.ln(), old, 2.0, &DAPO);
        assert!(
            (t.loss + 2.2).abs() < 1e-12 && (t.dloss_dlogp + 2.2).abs() < 1e-12 && !t.clipped_high
        );
        // A < 0, r = 0.5 < 0.8: clipped low, loss = 0.8·|A|.
        let t = ppo_clip(old + 0.5f64.ln(), old, -1.0, &DAPO);
        assert!((t.loss - 0.8).abs() < 1e-12 && t.dloss_dlogp == 0.0 && t.clipped_low);
        // A < 0, r = 5 > c = 3: dual clip, loss = 3·|A|, no gradient.
        let t = ppo_clip(old + 5f64.ln(), old, -1.0, &DAPO);
        assert!((t.loss - 3.0).abs() < 1e-12 && t.dloss_dlogp == 0.0 && t.dual_clipped);
        // Same without dual clip: loss = 5·|A|, gradient |A|·r.
        let nodual = ClipConfig {
            clip_ratio_c: None,
            ..DAPO
        };
        let t = ppo_clip(old + 5f64.ln(), old, -1.0, &nodual);
        assert!(
            (t.loss - 5.0).abs() < 1e-12 && (t.dloss_dlogp - 5.0).abs() < 1e-12 && !t.dual_clipped
        );
        // A = 0: nothing.
        assert_eq!(ppo_clip(0.3, old, 0.0, &DAPO).dloss_dlogp, 0.0);
    }

    #[test]
    fn log_ratio_clamp_stops_the_gradient() {
        let t = ppo_clip(
            30.0,
            0.0,
            -1.0,
            &ClipConfig {
                clip_ratio_c: None,
                ..DAPO
            },
        );
        assert_eq!(t.loss, 20f64.exp());
        assert_eq!(t.dloss_dlogp, 0.0);
    }

    #[test]
    fn cispo_by_hand() {
        // r = 2 clipped to 1.28; l = -1.28·A·logp; gradient -1.28·A even though clipped.
        let logp = -0.5;
        let t = cispo(logp, logp - 2f64.ln(), 3.0, &DAPO);
        assert!((t.loss - 1.28 * 3.0 * 0.5).abs() < 1e-12);
        assert!((t.dloss_dlogp + 1.28 * 3.0).abs() < 1e-12 && t.clipped_high);
    }

    #[test]
    fn config_validation_names_the_key() {
        let bad = ClipConfig {
            clip_ratio_c: Some(0.5),
            ..DAPO
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("clip_ratio_c"));
        assert!(ClipConfig {
            clip_ratio_low: 1.0,
            ..DAPO
        }
        .validate()
        .is_err());
        assert!(DAPO.validate().is_ok());
    }

    proptest! {
        #[test]
        fn ppo_clip_derivative_matches_finite_difference(
            logp in -8.0f64..0.0, delta in -2.5f64..2.5, adv in -3.0f64..3.0, dual in any::<bool>()
        ) {
            let cfg = ClipConfig { clip_ratio_c: dual.then_some(3.0), ..DAPO };
            prop_assume!(!near_kink(delta, &cfg, 1e-4));
            let old = logp - delta;
            let num = fd(|x| ppo_clip(x, old, adv, &cfg).loss, logp);
            let ana = ppo_clip(logp, old, adv, &cfg).dloss_dlogp;
            prop_assert!((num - ana).abs() < 1e-6 * (1.0 + ana.abs()), "fd {num} vs {ana}");
        }

        #[test]
        fn gspo_derivative_matches_finite_difference(
            logp in -8.0f64..0.0, seq_mean in -0.5f64..0.5, adv in -3.0f64..3.0
        ) {
            let cfg = ClipConfig { clip_ratio_low: 3e-2, clip_ratio_high: 4e-2, clip_ratio_c: None, log_ratio_clamp: 10.0 };
            prop_assume!(!near_kink(seq_mean, &cfg, 1e-4));
            // The token's own log-prob enters as logp_t - sg[logp_t]: perturb that term.
            let f = |x: f64| gspo(seq_mean + (x - logp), adv, &cfg).loss;
            let num = fd(f, logp);
            let ana = gspo(seq_mean, adv, &cfg).dloss_dlogp;
            prop_assert!((num - ana).abs() < 1e-6 * (1.0 + ana.abs()), "fd {num} vs {ana}");
        }

        #[test]
        fn cispo_derivative_matches_finite_difference(
            logp in -8.0f64..-0.01, old in -8.0f64..-0.01, adv in -3.0f64..3.0
        ) {
            // The importance weight is stop-gradient: only the explicit logp factor is
            // differentiated, so the weight is held at its value for `logp`.
            let weight = (logp - old).exp().clamp(1.0 - DAPO.clip_ratio_low, 1.0 + DAPO.clip_ratio_high);
            let num = fd(|x| -weight * adv * x, logp);
            let t = cispo(logp, old, adv, &DAPO);
            prop_assert!((num - t.dloss_dlogp).abs() < 1e-6 * (1.0 + num.abs()), "fd {num} vs {}", t.dloss_dlogp);
            prop_assert!((t.loss - t.dloss_dlogp * logp).abs() < 1e-9 * (1.0 + t.loss.abs()));
        }
    }
}
