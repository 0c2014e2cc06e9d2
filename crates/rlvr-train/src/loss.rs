//! The per-token policy loss on tensors, weighted by the aggregation weights.
//!
//! Mirrors rlvr-core's scalar formulas (`rlvr_core::policy_loss`), which the tests check it
//! against token by token, value and gradient. For token `t` of sequence `i`, with
//! `ratio = exp(clamp(logp - old_logp, -20, 20))` and advantage `A_i`:
//!
//! - PPO clip (clip-higher): `max(-A ratio, -A clip(ratio, 1 - low, 1 + high))`;
//! - dual clip (`clip_ratio_c = c`): for `A < 0`, `min(that, -A c)`;
//! - GSPO (`policy_loss = "gspo"`): the same clipped surrogate with the sequence's ratio
//!   `s_i = exp(mean_t (logp - old_logp))` as every token's ratio value and the gradient passed
//!   straight through to the token's log-prob (`ratio_t = sg[s_i] exp(logp_t - sg[logp_t])`);
//! - CISPO (`policy_loss = "cispo"`): `-sg[clip(ratio, 1 - low, 1 + high)] A logp`;
//! - KL to the reference (`d = logp - ref_logp`): k1 `d`, k2 `d^2/2`, k3 `exp(-d) + d - 1`
//!   clamped to at most 10 (verl's `low_var_kl`);
//! - entropy bonus: `- entropy_coeff * H_t`.
//!
//! `l_it = pg_it + kl_coef * kl_it - entropy_coeff * H_it`, and the micro-batch's loss is
//! `sum_i sum_t w_i * mask_it * l_it`: the weights come from the whole mini-batch, so summing
//! micro-batch losses gives the mini-batch's loss under any split.
//!
//! Clipping is written with masks rather than `max`/`min`: candle's max/min backward splits
//! the gradient in half at ties, and at `ratio = 1` the two PPO branches tie exactly.

use candle_core::{DType, Result, Tensor};

use rlvr_core::kl::K3_CLAMP;

use rlvr_core::kl::KlEstimator;
use rlvr_core::policy_loss::{ClipConfig, PolicyLossMode};

/// Coefficients of the loss terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossSpec {
    /// Which per-token policy-gradient term.
    pub mode: PolicyLossMode,
    /// The clip bounds and the log-ratio clamp.
    pub clip: ClipConfig,
    /// `Some((estimator, coef))` adds the KL penalty; needs `ref_logp`.
    pub kl: Option<(KlEstimator, f64)>,
    pub entropy_coeff: f64,
}

/// Tensors of one micro-batch: `[B, R]` per token, `[B]` per sequence.
pub struct LossInputs<'a> {
    /// Log-probs of the response tokens under the current policy (differentiable).
    pub logp: &'a Tensor,
    /// Log-probs under the policy that sampled (no gradient).
    pub old_logp: &'a Tensor,
    /// Log-probs under the frozen reference (no gradient), when KL is on.
    pub ref_logp: Option<&'a Tensor>,
    /// Per-token entropy of the current policy (differentiable), when available.
    pub entropy: Option<&'a Tensor>,
    /// Advantage per sequence.
    pub adv: &'a Tensor,
    /// Aggregation weight per sequence (from the whole mini-batch).
    pub weight: &'a Tensor,
    /// 1 for loss tokens, 0 for padding and masked responses.
    pub mask: &'a Tensor,
}

/// The loss of one micro-batch and its statistics (sums over its loss tokens, so that
/// micro-batches add up).
pub struct LossOutput {
    /// `sum w_i mask_it l_it`: backpropagate this.
    pub loss: Tensor,
    /// The policy-gradient part of `loss` (same weighting).
    pub pg_loss: f64,
    /// Sum of the KL estimate over loss tokens (0 when KL is off).
    pub kl_sum: f64,
    /// Sum of the entropy over loss tokens (0 when not given).
    pub entropy_sum: f64,
    /// Loss tokens with `A > 0` whose ratio was clipped above (`> 1 + high`).
    pub clipped_high: f64,
    /// Loss tokens with `A < 0` whose ratio was clipped below (`< 1 - low`), dual clip included.
    pub clipped_low: f64,
    /// Number of loss tokens.
    pub tokens: f64,
}

fn sum(t: &Tensor) -> Result<f64> {
    t.sum_all()?.to_dtype(DType::F64)?.to_scalar::<f64>()
}

/// The per-token KL estimate for `d = logp - ref_logp` (differentiable in `logp`), as
/// `rlvr_core::kl::kl`.
pub fn kl_term(kind: KlEstimator, logp: &Tensor, ref_logp: &Tensor) -> Result<Tensor> {
    let d = (logp - ref_logp)?;
    match kind {
        KlEstimator::K1 => Ok(d),
        KlEstimator::K2 => d.sqr()? * 0.5,
        KlEstimator::K3 => {
            let v = ((d.neg()?.exp()? + &d)? - 1.0)?;
            // clamp the value at K3_CLAMP with zero gradient there, without max/min ties
            let over = v.detach().gt(K3_CLAMP)?.to_dtype(DType::F32)?;
            (v * (1.0 - &over)?)? + (over * K3_CLAMP)?
        }
    }
}

/// A per-token policy-gradient term and where it was clipped (1.0 / 0.0 per token).
struct Surrogate {
    pg: Tensor,
    /// `A > 0` tokens clipped above (CISPO: any token whose ratio is above the bound).
    clip_high: Tensor,
    /// `A < 0` tokens clipped below or by the dual clip (CISPO: any ratio below the bound).
    clip_low: Tensor,
}

/// `max(-A ratio, -A clip(ratio, lo, hi))`, then for `A < 0` `min(that, -A c)` when the dual
/// clip `c` is given. `ratio` is differentiable; the clipped branches are constant in it.
fn clipped_surrogate(
    ratio: &Tensor,
    adv: &Tensor,
    lo: f64,
    hi: f64,
    dual_clip: Option<f64>,
) -> Result<Surrogate> {
    let r = ratio.detach();
    let pos = adv.gt(0f32)?.to_dtype(DType::F32)?;
    let neg = adv.lt(0f32)?.to_dtype(DType::F32)?;
    let clip_high = (&pos * r.gt(hi)?.to_dtype(DType::F32)?)?;
    let clip_low = (&neg * r.lt(lo)?.to_dtype(DType::F32)?)?;
    let (clip_dual, c) = match dual_clip {
        Some(c) => ((&neg * r.gt(c)?.to_dtype(DType::F32)?)?, c),
        None => (r.zeros_like()?, 0.0),
    };
    let clipped = ((&clip_high + &clip_low)? + &clip_dual)?;
    let free = (1.0 - &clipped)?;
    let neg_adv = adv.neg()?;
    // value of the clipped branches: -A times the clip bound, constant in the log-prob
    let bound = (((&clip_high * hi)? + (&clip_low * lo)?)? + (&clip_dual * c)?)?;
    let pg = ((&neg_adv * ratio)?.mul(&free)? + (&neg_adv * &bound)?)?;
    Ok(Surrogate {
        pg,
        clip_high,
        clip_low: (clip_low + clip_dual)?,
    })
}

/// The weighted loss of one micro-batch.
pub fn policy_loss(spec: &LossSpec, x: &LossInputs) -> Result<LossOutput> {
    let shape = x.logp.shape().clone();
    let f32s = |t: &Tensor| t.to_dtype(DType::F32);
    let logp = f32s(x.logp)?;
    let old = f32s(x.old_logp)?.detach();
    let mask = f32s(x.mask)?;
    let adv = f32s(x.adv)?
        .unsqueeze(1)?
        .broadcast_as(&shape)?
        .contiguous()?;
    let weight = f32s(x.weight)?.unsqueeze(1)?.broadcast_as(&shape)?;
    let wmask = (weight * &mask)?;

    let hi = 1.0 + spec.clip.clip_ratio_high;
    let lo = 1.0 - spec.clip.clip_ratio_low;
    let clamp = spec.clip.log_ratio_clamp as f32;
    let log_ratio = (&logp - &old)?;
    let Surrogate {
        pg,
        clip_high,
        clip_low,
    } = match spec.mode {
        PolicyLossMode::Vanilla => {
            // ALGO LOGIC: PPO clipped surrogate with clip-higher and optional dual clip.
            let ratio = log_ratio.clamp(-clamp, clamp)?.exp()?;
            clipped_surrogate(&ratio, &adv, lo, hi, spec.clip.clip_ratio_c)?
        }
        PolicyLossMode::Gspo => {
            // ALGO LOGIC: GSPO: value s_i = exp(mean_t log r_t) in every token of sequence i,
            // gradient straight through to the token's own log-prob (d r_t / d logp_t = s_i).
            let tokens = mask.sum_keepdim(1)?.clamp(1f32, f32::MAX)?;
            let seq_log_ratio = (log_ratio.detach() * &mask)?
                .sum_keepdim(1)?
                .div(&tokens)?
                .clamp(-clamp, clamp)?;
            let seq_ratio = seq_log_ratio.exp()?.broadcast_as(&shape)?;
            let straight_through = (&logp - logp.detach())?.exp()?;
            let ratio = (seq_ratio * straight_through)?;
            clipped_surrogate(&ratio, &adv, lo, hi, None)?
        }
        PolicyLossMode::Cispo => {
            // ALGO LOGIC: CISPO: -sg[clip(r, lo, hi)] * A * logp; clipped tokens keep gradient.
            let r = log_ratio.detach().clamp(-clamp, clamp)?.exp()?;
            let weight = r.clamp(lo as f32, hi as f32)?;
            Surrogate {
                pg: (weight * &adv)?.neg()?.mul(&logp)?,
                clip_high: r.gt(hi)?.to_dtype(DType::F32)?,
                clip_low: r.lt(lo)?.to_dtype(DType::F32)?,
            }
        }
    };
    let mut per_token = pg.clone();

    let mut kl_sum = 0.0;
    if let Some((kind, coef)) = spec.kl {
        let reference = x.ref_logp.ok_or_else(|| {
            candle_core::Error::Msg("KL loss is on but no reference log-probs were given".into())
        })?;
        let kl = kl_term(kind, &logp, &f32s(reference)?.detach())?;
        kl_sum = sum(&(kl.detach() * &mask)?)?;
        per_token = (per_token + (kl * coef)?)?;
    }
    let mut entropy_sum = 0.0;
    if let Some(h) = x.entropy {
        let h = f32s(h)?;
        entropy_sum = sum(&(h.detach() * &mask)?)?;
        if spec.entropy_coeff != 0.0 {
            per_token = (per_token - (h * spec.entropy_coeff)?)?;
        }
    }
    let loss = (per_token * &wmask)?.sum_all()?;
    Ok(LossOutput {
        pg_loss: sum(&(pg.detach() * &wmask)?)?,
        kl_sum,
        entropy_sum,
        clipped_high: sum(&(clip_high * &mask)?)?,
        clipped_low: sum(&(clip_low * &mask)?)?,
        tokens: sum(&mask)?,
        loss,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var};

    use rlvr_core::kl::{kl, KlEstimator};
    use rlvr_core::policy_loss::{cispo, gspo, ppo_clip, ClipConfig};

    /// `policy_loss` on two sequences of four tokens (no KL, no entropy) and the gradient of
    /// its loss with respect to `logp`, flattened.
    fn loss_and_grad(
        spec: &LossSpec,
        logp: &[f32],
        old: &[f32],
        adv: [f32; 2],
        w: [f32; 2],
        mask: &[f32],
    ) -> (LossOutput, Vec<f32>) {
        let dev = Device::Cpu;
        let t = |v: &[f32]| Tensor::from_vec(v.to_vec(), (2, 4), &dev).unwrap();
        let logp_v = Var::from_tensor(&t(logp)).unwrap();
        let out = policy_loss(
            spec,
            &LossInputs {
                logp: logp_v.as_tensor(),
                old_logp: &t(old),
                ref_logp: None,
                entropy: None,
                adv: &Tensor::new(&adv, &dev).unwrap(),
                weight: &Tensor::new(&w, &dev).unwrap(),
                mask: &t(mask),
            },
        )
        .unwrap();
        let g = out
            .loss
            .backward()
            .unwrap()
            .get(logp_v.as_tensor())
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        (out, g)
    }

    /// Checks `out` and its gradient `g` against rlvr-core's per-token terms `core(i)` for the
    /// eight tokens of [`loss_and_grad`] (weight `w[i / 4]` where `mask[i] = 1`): each
    /// gradient entry, the loss and the clip counts (dual clips count as low). Returns the
    /// counted (clipped high, clipped low) tokens.
    fn assert_matches_core(
        label: &str,
        out: &LossOutput,
        g: &[f32],
        w: [f32; 2],
        mask: &[f32],
        core: impl Fn(usize) -> rlvr_core::policy_loss::TokenLoss,
    ) -> (f64, f64) {
        let (mut want, mut high, mut low) = (0.0, 0.0, 0.0);
        for i in 0..8 {
            let t = core(i);
            let m = f64::from(w[i / 4] * mask[i]);
            want += m * t.loss;
            let dl = m * t.dloss_dlogp;
            assert!(
                (g[i] as f64 - dl).abs() < 1e-5,
                "{label} token {i}: grad {} vs {dl}",
                g[i]
            );
            if mask[i] > 0.0 {
                high += f64::from(u8::from(t.clipped_high));
                low += f64::from(u8::from(t.clipped_low || t.dual_clipped));
            }
        }
        let got = out.loss.to_scalar::<f32>().unwrap() as f64;
        assert!((got - want).abs() < 1e-5, "{label}: {got} vs {want}");
        assert!((out.pg_loss - want).abs() < 1e-5, "{label}: pg_loss");
        assert_eq!((out.clipped_high, out.clipped_low), (high, low), "{label}");
        (high, low)
    }

    #[test]
    fn matches_scalar_formula_value_and_gradient() {
        let old: Vec<f32> = vec![-1.0, -1.0, -1.0, -1.0, -2.0, -2.0, -0.5, -0.5];
        let delta = [0.0f32, 0.5, -0.5, 0.1, 1.5, -0.4, 0.3, 0.0];
        let logp: Vec<f32> = old.iter().zip(delta).map(|(o, d)| o + d).collect();
        let adv = [1.0f32, -1.0];
        let w = [0.1f32, 0.3];
        let spec = LossSpec {
            mode: PolicyLossMode::Vanilla,
            clip: ClipConfig {
                clip_ratio_low: 0.2,
                clip_ratio_high: 0.28,
                clip_ratio_c: Some(3.0),
                log_ratio_clamp: 20.0,
            },
            kl: None,
            entropy_coeff: 0.0,
        };
        let mask = [1f32, 1., 1., 1., 1., 1., 1., 0.];
        let (out, g) = loss_and_grad(&spec, &logp, &old, adv, w, &mask);
        let core_cfg = ClipConfig {
            clip_ratio_low: 0.2,
            clip_ratio_high: 0.28,
            clip_ratio_c: Some(3.0),
            log_ratio_clamp: 20.0,
        };
        assert_matches_core("ppo", &out, &g, w, &mask, |i| {
            ppo_clip(logp[i] as f64, old[i] as f64, adv[i / 4] as f64, &core_cfg)
        });
        assert_eq!(out.tokens, 7.0);
        // token 4 (A<0, ratio e^1.5 > 3) hits the dual clip; token 1 (A>0, e^0.5) clips high;
        // token 5 (A<0, e^-0.4 < 0.8) clips low.
        assert_eq!(out.clipped_high, 1.0);
        assert_eq!(out.clipped_low, 2.0);
    }

    #[test]
    fn gspo_and_cispo_match_scalar_formulas_value_and_gradient() {
        // sequence 0: A > 0, mean log-ratio (0 + 0.5 - 0.2 + 0.1)/4 = 0.1 inside the clip;
        // sequence 1: A < 0, live tokens -0.6, -0.4, 0.3 (mean -0.2333, ratio 0.79 < 0.8: clipped
        // low under GSPO); its last token is padding and must not enter the mean.
        let old: Vec<f32> = vec![-1.0, -1.0, -1.0, -1.0, -2.0, -2.0, -0.5, -0.5];
        let delta = [0.0f32, 0.5, -0.2, 0.1, -0.6, -0.4, 0.3, 5.0];
        let logp: Vec<f32> = old.iter().zip(delta).map(|(o, d)| o + d).collect();
        let adv = [1.5f32, -0.7];
        let w = [0.2f32, 0.3];
        let live = [true, true, true, true, true, true, true, false];
        let core_cfg = ClipConfig {
            clip_ratio_low: 0.2,
            clip_ratio_high: 0.28,
            clip_ratio_c: None,
            log_ratio_clamp: 20.0,
        };
        let seq_mean = |seq: usize| {
            let live_deltas: Vec<f64> = (0..4)
                .map(|t| seq * 4 + t)
                .filter(|&i| live[i])
                .map(|i| logp[i] as f64 - old[i] as f64)
                .collect();
            live_deltas.iter().sum::<f64>() / live_deltas.len() as f64
        };
        for mode in [PolicyLossMode::Gspo, PolicyLossMode::Cispo] {
            let spec = LossSpec {
                mode,
                clip: ClipConfig {
                    clip_ratio_low: 0.2,
                    clip_ratio_high: 0.28,
                    clip_ratio_c: None,
                    log_ratio_clamp: 20.0,
                },
                kl: None,
                entropy_coeff: 0.0,
            };
            let mask: Vec<f32> = live.iter().map(|&l| f32::from(u8::from(l))).collect();
            let (out, g) = loss_and_grad(&spec, &logp, &old, adv, w, &mask);
            let (high, low) = assert_matches_core(&format!("{mode:?}"), &out, &g, w, &mask, |i| {
                let seq = i / 4;
                match mode {
                    PolicyLossMode::Gspo => gspo(seq_mean(seq), adv[seq] as f64, &core_cfg),
                    _ => cispo(logp[i] as f64, old[i] as f64, adv[seq] as f64, &core_cfg),
                }
            });
            match mode {
                // sequence 1's three live tokens share the clipped-low sequence ratio: no gradient
                PolicyLossMode::Gspo => {
                    assert_eq!((high, low), (0.0, 3.0));
                    assert!(g[4..7].iter().all(|&x| x == 0.0), "{g:?}");
                }
                // tokens 1 (e^0.5) and 6 (e^0.3, A<0: CISPO clips either sign) above 1.28;
                // tokens 4 (e^-0.6) and 5 (e^-0.4) below 0.8; CISPO keeps their gradient,
                // scaled by the clipped weight
                _ => {
                    assert_eq!((high, low), (2.0, 2.0));
                    assert!((g[1] as f64 + 0.2 * 1.28 * 1.5).abs() < 1e-5, "{}", g[1]);
                    assert!((g[4] as f64 - 0.3 * 0.8 * 0.7).abs() < 1e-5, "{}", g[4]);
                }
            }
        }
    }

    #[test]
    fn on_policy_gradient_is_minus_weighted_advantage() {
        // At ratio 1 the gradient of l wrt logp is -A (no halving at the clip tie).
        let dev = Device::Cpu;
        let lp = Var::from_tensor(&Tensor::new(&[[-1.0f32, -2.0]], &dev).unwrap()).unwrap();
        let old = lp.as_tensor().detach();
        let spec = LossSpec {
            mode: PolicyLossMode::Vanilla,
            clip: ClipConfig {
                clip_ratio_low: 0.2,
                clip_ratio_high: 0.2,
                clip_ratio_c: None,
                log_ratio_clamp: 20.0,
            },
            kl: None,
            entropy_coeff: 0.0,
        };
        let out = policy_loss(
            &spec,
            &LossInputs {
                logp: lp.as_tensor(),
                old_logp: &old,
                ref_logp: None,
                entropy: None,
                adv: &Tensor::new(&[2.0f32], &dev).unwrap(),
                weight: &Tensor::new(&[0.5f32], &dev).unwrap(),
                mask: &Tensor::new(&[[1f32, 1.]], &dev).unwrap(),
            },
        )
        .unwrap();
        let g: Vec<Vec<f32>> = out
            .loss
            .backward()
            .unwrap()
            .get(lp.as_tensor())
            .unwrap()
            .to_vec2()
            .unwrap();
        assert_eq!(g, vec![vec![-1.0f32, -1.0]]);
    }

    #[test]
    fn kl_matches_core_value_and_gradient() {
        let dev = Device::Cpu;
        let lp = [-1.0f32, -3.0, -0.2, -12.5];
        let rf = [-1.5f32, -1.0, -0.2, -0.5];
        for kind in [KlEstimator::K1, KlEstimator::K2, KlEstimator::K3] {
            let core_kind = kind;
            let v = Var::from_tensor(&Tensor::new(&lp, &dev).unwrap()).unwrap();
            let reference = Tensor::new(&rf, &dev).unwrap();
            let k = kl_term(kind, v.as_tensor(), &reference).unwrap();
            let g: Vec<f32> = k
                .sum_all()
                .unwrap()
                .backward()
                .unwrap()
                .get(v.as_tensor())
                .unwrap()
                .to_vec1()
                .unwrap();
            let k: Vec<f32> = k.to_vec1().unwrap();
            for i in 0..lp.len() {
                let (want, dwant) = kl(core_kind, lp[i] as f64, rf[i] as f64);
                assert!(
                    (k[i] as f64 - want).abs() < 1e-4 * want.abs().max(1.0),
                    "{kind:?} {i}: {} vs {want}",
                    k[i]
                );
                assert!(
                    (g[i] as f64 - dwant).abs() < 1e-4 * dwant.abs().max(1.0),
                    "{kind:?} {i}: d {} vs {dwant}",
                    g[i]
                );
            }
        }
    }
}
