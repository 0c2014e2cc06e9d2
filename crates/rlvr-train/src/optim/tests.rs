use std::collections::HashMap;

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::VarMap;

use super::adamw::f32_rounded;
use super::grad_accum::sum_of_squares;
use super::*;
use crate::config::LrScheduler;

/// AdamW with torch's defaults (betas 0.9, 0.999, eps 1e-8) and this weight decay.
fn adam(weight_decay: f64) -> AdamWParams {
    AdamWParams {
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay,
    }
}

fn one_param(values: &[f32]) -> (VarMap, Params) {
    one_param_as(values, DType::F32)
}

/// One parameter `w` holding `values` in `dtype`.
fn one_param_as(values: &[f32], dtype: DType) -> (VarMap, Params) {
    let varmap = VarMap::new();
    let t = Tensor::new(values, &Device::Cpu)
        .unwrap()
        .to_dtype(dtype)
        .unwrap();
    varmap
        .data()
        .lock()
        .unwrap()
        .insert("w".into(), Var::from_tensor(&t).unwrap());
    let params = Params::from_varmap(&varmap);
    (varmap, params)
}

/// An update that would overflow is detected before anything is written; a normal one is
/// not, and the check leaves the state bit for bit as it was.
#[test]
fn step_stays_finite_flags_an_overflowing_update_and_writes_nothing() {
    let (_vm, params) = one_param(&[1.0, -2.0]);
    let hp = adam(0.0);
    let mut opt = AdamW::new(&params, hp).unwrap();
    let mut acc = GradAccum::new(&params);
    acc.set(0, Some(Tensor::new(&[0.5f32, -3.0], &Device::Cpu).unwrap()));
    assert!(opt.step_stays_finite(&params, &acc, 0.01).unwrap());
    // the first Adam step moves each weight by about lr: 1e39 overflows f32
    assert!(!opt.step_stays_finite(&params, &acc, 1e39).unwrap());
    let p: Vec<f32> = params.vars[0].as_tensor().to_vec1().unwrap();
    assert_eq!(p, [1.0, -2.0]);
    assert_eq!(opt.t, 0);
    assert_eq!(params.first_non_finite().unwrap(), None);
    // eps = 0 (refused by the config) with a zero gradient: 0/0
    let mut zero = GradAccum::new(&params);
    zero.set(0, Some(Tensor::new(&[0.0f32, 1.0], &Device::Cpu).unwrap()));
    opt.hp.eps = 0.0;
    assert!(!opt.step_stays_finite(&params, &zero, 0.01).unwrap());
    // applied anyway, it is exactly the NaN the check predicted
    opt.step(&params, &zero, 0.01).unwrap();
    assert_eq!(params.first_non_finite().unwrap(), Some("w"));
}

#[test]
fn adamw_matches_hand_computation() {
    // First step of Adam: update = g/|g| (bias-corrected), so p moves by lr*sign(g)
    // (up to eps); rank-1 parameters get no weight decay.
    let (_vm, params) = one_param(&[1.0, -2.0]);
    let hp = adam(0.1);
    let mut opt = AdamW::new(&params, hp).unwrap();
    let mut acc = GradAccum::new(&params);
    acc.set(0, Some(Tensor::new(&[0.5f32, -3.0], &Device::Cpu).unwrap()));
    opt.step(&params, &acc, 0.01).unwrap();
    let p: Vec<f32> = params.vars[0].as_tensor().to_vec1().unwrap();
    assert!((p[0] - 0.99).abs() < 1e-6, "{p:?}");
    assert!((p[1] + 1.99).abs() < 1e-6, "{p:?}");
    // Second step, by hand.
    acc.set(0, Some(Tensor::new(&[1.0f32, 1.0], &Device::Cpu).unwrap()));
    opt.step(&params, &acc, 0.01).unwrap();
    let p2: Vec<f32> = params.vars[0].as_tensor().to_vec1().unwrap();
    for (i, (g1, g2)) in [(0.5f64, 1.0f64), (-3.0, 1.0)].into_iter().enumerate() {
        let m = 0.9 * (0.1 * g1) + 0.1 * g2;
        let v = 0.999 * (0.001 * g1 * g1) + 0.001 * g2 * g2;
        let upd = (m / (1.0 - 0.81)) / ((v / (1.0 - 0.999f64.powi(2))).sqrt() + 1e-8);
        let want = p[i] as f64 - 0.01 * upd;
        assert!(
            (p2[i] as f64 - want).abs() < 1e-6,
            "{i}: {} vs {want}",
            p2[i]
        );
    }
}

/// A bf16 weight at 1.0 (bf16 spacing just above 1 is 2^-7 = 0.0078125, so half a step is
/// 0.00390625) pushed up by Adam steps of lr = 0.001 each (a constant gradient makes the
/// bias-corrected update g/|g| = 1 exactly, up to eps). By hand: the master weight reads
/// 1.001, 1.002, 1.003 while the bf16 weight stays 1.0 (each update alone rounds away), and
/// at 1.004 > 1 + 2^-8 the bf16 weight rounds up to 1.0078125. Without the master, every
/// step would compute round(1.0 + 0.001) = 1.0 and the weight would never move.
#[test]
fn bf16_updates_below_half_a_step_accumulate_in_the_master() {
    let (_varmap, params) = one_param_as(&[1.0f32, 0.5], DType::BF16);
    let hp = AdamWParams {
        eps: 1e-12,
        ..adam(0.0)
    };
    let mut opt = AdamW::new(&params, hp).unwrap();
    let bf16 = |p: &Params| -> Vec<f32> {
        p.vars[0]
            .as_tensor()
            .to_dtype(DType::F32)
            .unwrap()
            .to_vec1()
            .unwrap()
    };
    for k in 1..=4 {
        let mut acc = GradAccum::new(&params);
        // f32 gradients whatever the parameter dtype; the second entry gets none (0)
        acc.set(0, Some(Tensor::new(&[-1.0f32, 0.0], &Device::Cpu).unwrap()));
        opt.step(&params, &acc, 0.001).unwrap();
        let master: Vec<f32> = opt.master(0).unwrap().to_vec1().unwrap();
        assert!(
            (master[0] as f64 - (1.0 + 0.001 * k as f64)).abs() < 1e-6,
            "step {k}: master {master:?}"
        );
        assert_eq!(master[1], 0.5, "a zero gradient leaves the master alone");
        let w = bf16(&params);
        let want = if k < 4 { 1.0 } else { 1.0078125 };
        assert_eq!(w[0], want, "step {k}: bf16 weight {w:?}, master {master:?}");
    }
    assert_eq!(
        params.vars[0].dtype(),
        DType::BF16,
        "the compute dtype is kept"
    );
    // f32 parameters have no master copy
    let (_vm, p32) = one_param(&[1.0]);
    assert!(AdamW::new(&p32, hp).unwrap().master(0).is_none());
}

/// The master weights are part of the saved state: a bf16 run saved and restored after
/// 3 steps continues bit for bit (restoring from the bf16 weights alone would lose the
/// 0.003 accumulated below the rounding step, and the weight would not move at step 4).
#[test]
fn bf16_state_with_master_round_trips_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let hp = AdamWParams {
        eps: 1e-12,
        ..adam(0.0)
    };
    let run = |save_at: Option<usize>| {
        let (_varmap, params) = one_param_as(&[1.0f32, -0.3], DType::BF16);
        let mut opt = AdamW::new(&params, hp).unwrap();
        for s in 0..5 {
            if Some(s) == save_at {
                let path = dir.path().join("opt.safetensors");
                opt.save(&params, &path).unwrap();
                let mut fresh = AdamW::new(&params, hp).unwrap();
                fresh.load(&params, &path, opt.t).unwrap();
                opt = fresh;
            }
            let mut acc = GradAccum::new(&params);
            acc.set(0, Some(Tensor::new(&[-1.0f32, 1.0], &Device::Cpu).unwrap()));
            opt.step(&params, &acc, 0.001).unwrap();
        }
        params.vars[0]
            .as_tensor()
            .to_dtype(DType::F32)
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
    };
    let whole = run(None);
    assert_eq!(whole[0], 1.0078125);
    assert_eq!(whole, run(Some(3)));
}

/// The out-of-place AdamW this crate used before the in-place chunked step, kept as the
/// reference: `(m, v, master_or_param)` after one step.
#[allow(clippy::too_many_arguments)]
fn reference_step(
    hp: AdamWParams,
    t: u64,
    m: &Tensor,
    v: &Tensor,
    p: &Tensor,
    g: &Tensor,
    lr: f64,
    rank: usize,
) -> (Tensor, Tensor, Tensor) {
    let (b1, b2) = (f32_rounded(hp.beta1), f32_rounded(hp.beta2));
    let bc1 = 1.0 - b1.powi(t as i32);
    let bc2 = 1.0 - b2.powi(t as i32);
    let m = ((m * b1).unwrap() + (g * (1.0 - b1)).unwrap()).unwrap();
    let v = ((v * b2).unwrap() + (g.sqr().unwrap() * (1.0 - b2)).unwrap()).unwrap();
    let update =
        ((&m / bc1).unwrap() / ((&v / bc2).unwrap().sqrt().unwrap() + hp.eps).unwrap()).unwrap();
    let decay = if rank >= 2 { hp.weight_decay } else { 0.0 };
    let p = ((p - (p * (lr * decay)).unwrap()).unwrap() - (update * lr).unwrap()).unwrap();
    (m, v, p)
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_dtype(DType::F32)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap()
        .into_iter()
        .map(f32::to_bits)
        .collect()
}

/// Deterministic values in about [-scale, scale] with varied exponents.
fn values(n: usize, seed: u32, scale: f32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| {
            let x = (i
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(97)))
                % 20_011;
            scale * ((x as f32 / 10_005.5) - 1.0) * (1.0 + (i % 7) as f32)
        })
        .collect()
}

/// Over many steps, with clipping and weight decay, the optimizer's step
/// ([`AdamW::clip_and_step`], by its fused host pass and the tensor path alike) stays
/// within 1e-6 (absolute up to 1, relative above) of AdamW computed in float64 from the same gradients (torch's `clip_grad_norm_` then
/// `AdamW`, written out in f64).
#[test]
fn many_steps_track_a_float64_adamw_within_1e_6() {
    let (rows, cols) = (300, 257); // several threaded pieces, an odd tail
    let hp = adam(0.01);
    let max_norm = 1.0;
    for fused in [true, false] {
        let w0 = values(rows * cols, 3, 0.02);
        let b0 = values(cols, 4, 0.5);
        let varmap = VarMap::new();
        {
            let mut d = varmap.data().lock().unwrap();
            let w = Tensor::from_vec(w0.clone(), (rows, cols), &Device::Cpu).unwrap();
            let b = Tensor::from_vec(b0.clone(), cols, &Device::Cpu).unwrap();
            d.insert("a.w".into(), Var::from_tensor(&w).unwrap());
            d.insert("b.bias".into(), Var::from_tensor(&b).unwrap());
        }
        let params = Params::from_varmap(&varmap);
        let mut opt = AdamW::new(&params, hp).unwrap();
        opt.fused_host = fused;
        // f64 reference state per parameter
        struct Reference {
            w: Vec<f64>,
            m: Vec<f64>,
            v: Vec<f64>,
            rank: usize,
        }
        let mut refs: Vec<Reference> = [(&w0, 2), (&b0, 1)]
            .iter()
            .map(|(w, rank)| Reference {
                w: w.iter().map(|&x| x as f64).collect(),
                m: vec![0.0; w.len()],
                v: vec![0.0; w.len()],
                rank: *rank,
            })
            .collect();
        for step in 1..=200u64 {
            let lr = 1e-3 * (1.0 + (step % 5) as f64) / 3.0;
            // large enough gradients that clipping acts on most steps
            let gs: Vec<Vec<f32>> = params
                .vars
                .iter()
                .map(|v| values(v.elem_count(), 100 + step as u32, 0.01))
                .collect();
            let mut acc = GradAccum::new(&params);
            for ((slot, g), var) in acc.grads.iter_mut().zip(&gs).zip(&params.vars) {
                *slot = Some(Tensor::from_vec(g.clone(), var.shape(), &Device::Cpu).unwrap());
            }
            let out = opt.clip_and_step(&params, &mut acc, max_norm, lr).unwrap();
            assert_eq!(out.skipped, None);
            let norm = gs
                .iter()
                .flatten()
                .map(|&g| (g as f64) * (g as f64))
                .sum::<f64>()
                .sqrt();
            let coef = (max_norm / (norm + 1e-6)).min(1.0);
            let bc1 = 1.0 - hp.beta1.powi(step as i32);
            let bc2 = 1.0 - hp.beta2.powi(step as i32);
            for (Reference { w, m, v, rank }, g) in refs.iter_mut().zip(&gs) {
                let decay = if *rank >= 2 { hp.weight_decay } else { 0.0 };
                for k in 0..w.len() {
                    let g = g[k] as f64 * coef;
                    m[k] = hp.beta1 * m[k] + (1.0 - hp.beta1) * g;
                    v[k] = hp.beta2 * v[k] + (1.0 - hp.beta2) * g * g;
                    let u = (m[k] / bc1) / ((v[k] / bc2).sqrt() + hp.eps);
                    w[k] = w[k] * (1.0 - lr * decay) - lr * u;
                }
            }
        }
        for (var, Reference { w, .. }) in params.vars.iter().zip(&refs) {
            let got = var
                .as_tensor()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap();
            // |a - b| <= 1e-6 max(1, |b|): absolute for weights up to 1 (an f32 weight of
            // 3.5 has an ulp of 2.4e-7, so larger ones are held relative)
            let worst = got
                .iter()
                .zip(w)
                .map(|(&a, &b)| (a as f64 - b).abs() / b.abs().max(1.0))
                .fold(0.0, f64::max);
            assert!(
                worst < 1e-6,
                "fused {fused}: weights off float64 AdamW by {worst:e}"
            );
        }
    }
}

/// The in-place chunked step against the out-of-place reference, bit for bit, over three
/// steps, on a matrix that spans more than one chunk (f32: the parameter is its own
/// master; bf16: the f32 master and its one cast per step), with weight decay, together
/// with a rank-1 parameter (no decay).
#[test]
fn chunked_in_place_step_is_bit_identical_to_the_out_of_place_formula() {
    let rows = 3;
    let cols = STEP_CHUNK_ELEMS / 2 + 7; // 3 rows: one full chunk and a partial one
    let hp = AdamWParams {
        beta1: 0.9,
        beta2: 0.95,
        eps: 1e-8,
        weight_decay: 0.1,
    };
    for (dtype, fused) in [
        (DType::F32, true),
        (DType::BF16, true),
        (DType::F16, true),
        (DType::F32, false),
        (DType::BF16, false),
    ] {
        let varmap = VarMap::new();
        let w0 = Tensor::from_vec(values(rows * cols, 1, 0.02), (rows, cols), &Device::Cpu)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        let b0 = Tensor::from_vec(values(5, 2, 1.0), 5, &Device::Cpu)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        {
            let mut d = varmap.data().lock().unwrap();
            d.insert("a.w".into(), Var::from_tensor(&w0).unwrap());
            d.insert("b.bias".into(), Var::from_tensor(&b0).unwrap());
        }
        let params = Params::from_varmap(&varmap);
        let mut opt = AdamW::new(&params, hp).unwrap();
        opt.fused_host = fused;
        // the reference state: (m, v, f32 master) per parameter
        let mut refs: Vec<(Tensor, Tensor, Tensor)> = params
            .vars
            .iter()
            .map(|v| {
                let z = Tensor::zeros(v.shape(), DType::F32, &Device::Cpu).unwrap();
                let p = v.as_tensor().to_dtype(DType::F32).unwrap().copy().unwrap();
                (z.clone(), z, p)
            })
            .collect();
        for step in 1..=3u32 {
            let lr = 1e-3 * step as f64;
            let mut acc = GradAccum::new(&params);
            let gs: Vec<Tensor> = params
                .vars
                .iter()
                .map(|v| {
                    Tensor::from_vec(
                        values(v.elem_count(), 10 + step, 0.5),
                        v.shape(),
                        &Device::Cpu,
                    )
                    .unwrap()
                })
                .collect();
            for (slot, g) in acc.grads.iter_mut().zip(&gs) {
                *slot = Some(g.copy().unwrap());
            }
            opt.step(&params, &acc, lr).unwrap();
            for (i, var) in params.vars.iter().enumerate() {
                let (m, v, p) = &refs[i];
                let next = reference_step(hp, step as u64, m, v, p, &gs[i], lr, var.rank());
                let what = format!("{dtype:?} fused {fused} {} step {step}", params.names[i]);
                assert_eq!(bits(&opt.m[i]), bits(&next.0), "{what}: m");
                assert_eq!(bits(&opt.v[i]), bits(&next.1), "{what}: v");
                let want_w = next.2.to_dtype(dtype).unwrap();
                assert_eq!(bits(var.as_tensor()), bits(&want_w), "{what}: weight");
                if dtype != DType::F32 {
                    assert_eq!(
                        bits(opt.master(i).unwrap()),
                        bits(&next.2),
                        "{what}: master"
                    );
                }
                refs[i] = next;
            }
        }
    }
}

/// Gradients of any float dtype accumulate (an f64 one rounded to f32 first, as the
/// accumulator holds f32), with their sums of squares recorded; a gradient whose length is
/// not its parameter's is an error saying both.
#[test]
fn gradients_of_every_dtype_accumulate_and_a_wrong_length_is_an_error() {
    let varmap = VarMap::new();
    varmap
        .data()
        .lock()
        .unwrap()
        .insert("w".into(), Var::zeros(5, DType::F32, &Device::Cpu).unwrap());
    let params = Params::from_varmap(&varmap);
    let g = Tensor::new(&[0.1f64, -2.5, 1e-40, 3.0, -0.0], &Device::Cpu).unwrap();
    for dtype in [DType::F64, DType::F32, DType::BF16, DType::F16] {
        let mut acc = GradAccum::new(&params);
        let gd = g.to_dtype(dtype).unwrap();
        acc.add_one(0, &params.vars[0], &gd).unwrap();
        acc.add_one(0, &params.vars[0], &gd).unwrap();
        let once = gd.to_dtype(DType::F32).unwrap();
        let want = (&once + &once).unwrap();
        assert_eq!(bits(acc.get(0).unwrap()), bits(&want), "{dtype:?}");
        let computed = sum_of_squares(acc.get(0).unwrap()).unwrap();
        assert_eq!(acc.squares[0].map(f64::to_bits), Some(computed.to_bits()));
    }
    let mut acc = GradAccum::new(&params);
    let short = Tensor::new(&[1f32, 2.0], &Device::Cpu).unwrap();
    let err = acc
        .add_one(0, &params.vars[0], &short)
        .unwrap_err()
        .to_string();
    assert!(err.contains("2 elements") && err.contains("of 5"), "{err}");
    assert!(acc.get(0).is_none());
}

/// Accumulating in place, chunk by chunk, equals the out-of-place `acc + f32(g)` bit for
/// bit (bf16 pieces cast to f32; a parameter spanning more than one chunk; -0.0 kept); a
/// parameter absent from every piece stays `None`; clipping in place equals `affine`.
#[test]
fn in_place_accumulation_and_clipping_equal_the_out_of_place_ones() {
    let n = STEP_CHUNK_ELEMS + 11;
    let varmap = VarMap::new();
    let zeros = |n: usize| Tensor::zeros(n, DType::BF16, &Device::Cpu).unwrap();
    {
        let mut d = varmap.data().lock().unwrap();
        d.insert("big".into(), Var::from_tensor(&zeros(n)).unwrap());
        d.insert("none".into(), Var::from_tensor(&zeros(3)).unwrap());
    }
    let params = Params::from_varmap(&varmap);
    let mut acc = GradAccum::new(&params);
    let mut want: Option<Tensor> = None;
    for k in 0..3u32 {
        let mut v = values(n, k, 1e-3);
        v[0] = -0.0;
        let g = Tensor::new(v.as_slice(), &Device::Cpu)
            .unwrap()
            .to_dtype(DType::BF16)
            .unwrap();
        let mut store = candle_core::backprop::GradStore::default();
        store.insert(params.vars[0].as_tensor(), g.clone());
        acc.add(&params, &store).unwrap();
        let g32 = g.to_dtype(DType::F32).unwrap();
        want = Some(match want {
            None => g32,
            Some(w) => (w + g32).unwrap(),
        });
        assert_eq!(
            bits(acc.grads[0].as_ref().unwrap()),
            bits(want.as_ref().unwrap())
        );
        // the sum of squares taken on the way is the one a separate pass computes
        let recorded = acc.squares[0].expect("recorded on the host");
        let computed = sum_of_squares(acc.grads[0].as_ref().unwrap()).unwrap();
        assert_eq!(recorded.to_bits(), computed.to_bits(), "micro-batch {k}");
    }
    assert!(acc.grads[1].is_none());
    let kept = acc.copies().unwrap();
    let norm = acc.clip(1e-3).unwrap();
    assert_eq!(
        acc.squares[0], None,
        "scaled in place: the recorded sum is gone"
    );
    let w = want.unwrap();
    let scaled = w.affine(1e-3 / (norm + 1e-6), 0.0).unwrap();
    assert_eq!(bits(acc.grads[0].as_ref().unwrap()), bits(&scaled));
    assert_eq!(
        bits(kept[0].as_ref().unwrap()),
        bits(&w),
        "copies are not clipped"
    );
}

/// Two parameters in `dtype`: a matrix spanning several threaded pieces with an odd tail,
/// and a bias.
fn two_params(dtype: DType) -> (VarMap, Params) {
    let varmap = VarMap::new();
    {
        let mut d = varmap.data().lock().unwrap();
        let (rows, cols) = (5, 20_011);
        let w = Tensor::from_vec(values(rows * cols, 1, 0.02), (rows, cols), &Device::Cpu);
        let b = Tensor::from_vec(values(33, 2, 0.5), 33, &Device::Cpu);
        for (name, t) in [("a.w", w), ("b.bias", b)] {
            let t = t.unwrap().to_dtype(dtype).unwrap();
            d.insert(name.into(), Var::from_tensor(&t).unwrap());
        }
    }
    let params = Params::from_varmap(&varmap);
    (varmap, params)
}

/// Two micro-batches' gradients for every parameter, set as one sum computed out of place
/// (nothing recorded) and accumulated in two adds (the sums of squares recorded).
fn grads_set_and_accumulated(params: &Params, step: u32) -> (GradAccum, GradAccum) {
    let mut set = GradAccum::new(params);
    let mut accumulated = GradAccum::new(params);
    for (i, var) in params.vars.iter().enumerate() {
        let piece = |seed| {
            let g = values(var.elem_count(), seed, 0.3);
            Tensor::from_vec(g, var.shape(), &Device::Cpu).unwrap()
        };
        let (a, b) = (piece(50 + step), piece(90 + step));
        set.set(i, Some((&a + &b).unwrap()));
        accumulated.add_one(i, var, &a).unwrap();
        accumulated.add_one(i, var, &b).unwrap();
        assert!(accumulated.squares[i].is_some());
    }
    (set, accumulated)
}

/// The optimizer's state, bit for bit: weights, masters, moments, t.
fn state_bits(opt: &AdamW, params: &Params) -> Vec<Vec<u32>> {
    let mut out = vec![vec![opt.t as u32]];
    for (i, var) in params.vars.iter().enumerate() {
        out.push(bits(var.as_tensor()));
        out.push(bits(&opt.m[i]));
        out.push(bits(&opt.v[i]));
        if let Some(master) = opt.master(i) {
            out.push(bits(master));
        }
    }
    out
}

/// `clip_and_step` (the norm pass, the clip scale folded into the update, the finiteness
/// proof) writes the same bits as clipping in place, checking and stepping as three calls,
/// and returns the same norm: f32, bf16 and f16 weights, the fused host pass and the
/// tensor-op path, clipping that scales, that does not, and none, the gradients'
/// sums of squares recorded by the accumulation on one side and computed on the other; the
/// moments' peaks it records are their largest entries.
#[test]
fn clip_and_step_gives_the_bits_of_clipping_checking_and_stepping_apart() {
    let hp = adam(0.1);
    for dtype in [DType::F32, DType::BF16, DType::F16] {
        for fused in [true, false] {
            for max_norm in [1e-2, 1e9, 0.0] {
                let what = format!("{dtype:?} fused {fused} max_norm {max_norm}");
                let (_a, pa) = two_params(dtype);
                let (_b, pb) = two_params(dtype);
                let mut apart = AdamW::new(&pa, hp).unwrap();
                let mut folded = AdamW::new(&pb, hp).unwrap();
                (apart.fused_host, folded.fused_host) = (fused, fused);
                for step in 1..=4u32 {
                    let lr = 1e-3 * f64::from(step);
                    let (mut ga, _) = grads_set_and_accumulated(&pa, step);
                    let norm = ga.clip(max_norm).unwrap();
                    assert!(apart.step_stays_finite(&pa, &ga, lr).unwrap());
                    apart.step(&pa, &ga, lr).unwrap();
                    let (_, mut gb) = grads_set_and_accumulated(&pb, step);
                    let out = folded.clip_and_step(&pb, &mut gb, max_norm, lr).unwrap();
                    assert_eq!(out.skipped, None, "{what}");
                    assert_eq!(out.grad_norm.to_bits(), norm.to_bits(), "{what}: norm");
                    assert!(
                        state_bits(&folded, &pb) == state_bits(&apart, &pa),
                        "{what}: step {step}: the states differ"
                    );
                    for i in 0..pb.len() {
                        let peak = |t: &Tensor| {
                            let v = t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                            v.iter().fold(0f32, |a, x| a.max(x.abs()))
                        };
                        let want = fused.then(|| fused_cpu::Peaks {
                            m: peak(&folded.m[i]),
                            v: peak(&folded.v[i]),
                        });
                        assert_eq!(folded.peaks[i], want, "{what}: peaks of {i}");
                    }
                }
            }
        }
    }
}

/// An update that cannot be applied leaves the weights, masters, moments and `t` bit for
/// bit as they were, and says why: a non-finite gradient; a learning rate that overflows
/// f32; an f16 weight whose f32 master stays finite but rounds to infinity in f16 (which
/// the f32 check alone let through); and a loaded state the optimizer did not write (a
/// negative second moment: its peaks are unknown, so the exact check runs and sees the
/// square root of a negative number). Both the fused host pass and the tensor-op path.
#[test]
fn clip_and_step_refuses_what_would_not_be_finite_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for fused in [true, false] {
        let check = |dtype: DType,
                     w: &[f32],
                     g: &[f32],
                     lr: f64,
                     prep: &dyn Fn(&mut AdamW, &Params),
                     why: &str| {
            let (_vm, params) = one_param_as(w, dtype);
            let mut opt = AdamW::new(&params, adam(0.0)).unwrap();
            opt.fused_host = fused;
            prep(&mut opt, &params);
            let before = state_bits(&opt, &params);
            let mut acc = GradAccum::new(&params);
            acc.set(0, Some(Tensor::new(g, &Device::Cpu).unwrap()));
            let out = opt.clip_and_step(&params, &mut acc, 1.0, lr).unwrap();
            let what = format!("fused {fused} {dtype:?} {w:?} {g:?} lr {lr}");
            assert!(
                out.skipped.as_deref().is_some_and(|s| s.contains(why)),
                "{what}: {out:?}"
            );
            assert!(
                state_bits(&opt, &params) == before,
                "{what}: the state changed"
            );
        };
        let none = |_: &mut AdamW, _: &Params| {};
        let gradient = "non-finite gradient norm";
        // (weight dtype, weights, gradients, lr, why): the last, an f16 weight of 65504 (the
        // largest) moved up by 100: its master is 65604, finite in f32, infinite in f16
        type Case<'a> = (DType, [f32; 2], [f32; 2], f64, &'a str);
        let cases: [Case; 5] = [
            (DType::F32, [1.0, 2.0], [f32::NAN, 1.0], 1e-3, gradient),
            (DType::F32, [1.0, 2.0], [f32::INFINITY, 1.0], 1e-3, gradient),
            (DType::F32, [1.0, 2.0], [0.5, -3.0], 1e39, NON_FINITE_UPDATE),
            (
                DType::BF16,
                [1.0, 2.0],
                [0.5, -3.0],
                1e39,
                NON_FINITE_UPDATE,
            ),
            (
                DType::F16,
                [65504.0, 1.0],
                [-1.0, 1.0],
                100.0,
                NON_FINITE_UPDATE,
            ),
        ];
        for (dtype, w, g, lr, why) in cases {
            check(dtype, &w, &g, lr, &none, why);
        }
        let hostile = |opt: &mut AdamW, params: &Params| {
            let path = dir.path().join(format!("hostile-{fused}.safetensors"));
            let m = Tensor::new(&[0.0f32, 0.0], &Device::Cpu).unwrap();
            let v = Tensor::new(&[-1.0f32, 0.0], &Device::Cpu).unwrap();
            let map: HashMap<String, Tensor> =
                [("m.w".to_string(), m), ("v.w".to_string(), v)].into();
            candle_core::safetensors::save(&map, &path).unwrap();
            opt.load(params, &path, 3).unwrap();
        };
        check(
            DType::F32,
            &[1.0, 2.0],
            &[0.0, 1.0],
            1e-3,
            &hostile,
            NON_FINITE_UPDATE,
        );
    }
    // and a normal step right after is applied
    let (_vm, params) = one_param(&[1.0, 2.0]);
    let mut opt = AdamW::new(&params, adam(0.0)).unwrap();
    let mut acc = GradAccum::new(&params);
    acc.set(0, Some(Tensor::new(&[3.0f32, 4.0], &Device::Cpu).unwrap()));
    let out = opt.clip_and_step(&params, &mut acc, 1.0, 1e-3).unwrap();
    assert_eq!(
        out,
        StepOutcome {
            grad_norm: 5.0,
            skipped: None
        }
    );
    assert_eq!(opt.t, 1);
}

/// A snapshot on the host restored in place gives back the state bit for bit, and the
/// snapshot is not changed by the steps taken after it.
#[test]
fn snapshot_and_restore_are_exact() {
    let (_varmap, params) = one_param_as(&[0.5f32, -0.25, 0.125], DType::BF16);
    let hp = adam(0.0);
    let mut opt = AdamW::new(&params, hp).unwrap();
    let step = |opt: &mut AdamW| {
        let mut acc = GradAccum::new(&params);
        acc.set(
            0,
            Some(Tensor::new(&[1.0f32, -2.0, 0.5], &Device::Cpu).unwrap()),
        );
        opt.step(&params, &acc, 0.01).unwrap();
    };
    step(&mut opt);
    let snap = opt.snapshot(&Device::Cpu).unwrap();
    let state = |o: &AdamW| {
        (
            bits(&o.m[0]),
            bits(&o.v[0]),
            bits(o.master(0).unwrap()),
            o.t,
        )
    };
    let before = state(&opt);
    step(&mut opt);
    step(&mut opt);
    assert_ne!(state(&opt), before);
    assert_eq!(state(&snap), before, "the snapshot is a copy");
    opt.restore(&snap).unwrap();
    assert_eq!(state(&opt), before);
}

#[test]
fn weight_decay_is_decoupled_and_only_on_matrices() {
    let varmap = VarMap::new();
    let t = Tensor::new(&[[2.0f32]], &Device::Cpu).unwrap();
    varmap
        .data()
        .lock()
        .unwrap()
        .insert("m".into(), Var::from_tensor(&t).unwrap());
    let params = Params::from_varmap(&varmap);
    let hp = adam(0.5);
    let mut opt = AdamW::new(&params, hp).unwrap();
    let mut acc = GradAccum::new(&params);
    acc.set(0, Some(Tensor::new(&[[0.0f32]], &Device::Cpu).unwrap()));
    opt.step(&params, &acc, 0.1).unwrap();
    let p: Vec<Vec<f32>> = params.vars[0].as_tensor().to_vec2().unwrap();
    assert!((p[0][0] - 2.0 * (1.0 - 0.05)).abs() < 1e-6, "{p:?}");
}

#[test]
fn state_round_trips_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let run = |save_at: Option<usize>| {
        let (_vm, params) = one_param(&[0.3, -0.7, 1.1]);
        let hp = AdamWParams {
            beta1: 0.9,
            beta2: 0.95,
            eps: 1e-8,
            weight_decay: 0.0,
        };
        let mut opt = AdamW::new(&params, hp).unwrap();
        for s in 0..6 {
            if Some(s) == save_at {
                let path = dir.path().join("opt.safetensors");
                opt.save(&params, &path).unwrap();
                let mut fresh = AdamW::new(&params, hp).unwrap();
                fresh.load(&params, &path, opt.t).unwrap();
                opt = fresh;
            }
            let mut acc = GradAccum::new(&params);
            let g = params.vars[0].as_tensor().sin().unwrap();
            acc.set(0, Some(g));
            opt.step(&params, &acc, 0.05).unwrap();
        }
        params.vars[0].as_tensor().to_vec1::<f32>().unwrap()
    };
    assert_eq!(run(None), run(Some(3)));
}

#[test]
fn clipping_scales_to_max_norm() {
    let (_vm, params) = one_param(&[0.0, 0.0]);
    let mut acc = GradAccum::new(&params);
    acc.set(0, Some(Tensor::new(&[3.0f32, 4.0], &Device::Cpu).unwrap()));
    let norm = acc.clip(1.0).unwrap();
    assert!((norm - 5.0).abs() < 1e-6);
    assert!((acc.global_norm().unwrap() - 1.0).abs() < 1e-5);
}

#[test]
fn schedule_warmup_then_cosine() {
    let s = Schedule {
        lr: 1.0,
        warmup: 4,
        total: 14,
        kind: LrScheduler::Cosine,
        min_lr_ratio: 0.1,
    };
    assert_eq!(s.lr_at(0), 0.25);
    assert_eq!(s.lr_at(3), 1.0);
    assert!((s.lr_at(4) - 1.0).abs() < 1e-12);
    assert!((s.lr_at(9) - 0.55).abs() < 1e-12);
    assert!((s.lr_at(14) - 0.1).abs() < 1e-12);
    assert!((s.lr_at(100) - 0.1).abs() < 1e-12);
    let c = Schedule {
        kind: LrScheduler::Constant,
        ..s
    };
    assert_eq!(c.lr_at(50), 1.0);
}
