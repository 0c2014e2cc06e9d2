//! The training forward is differentiable: every parameter gets a gradient, and the gradient
//! of the log-probs matches finite differences in f64.

mod common;

use candle_core::{DType, Device, Tensor};
use common::*;

/// After one backward of `sum(logprobs) + sum(entropy)`, every trainable parameter has a
/// finite, non-zero gradient (candle's fused ops would leave some without one).
#[test]
fn every_parameter_gets_a_finite_nonzero_gradient() {
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, 50);
        let (model, varmap) = peaky_model(&cfg, 1, DType::F32);
        let out = model.response_logprobs(&batch(50), true).unwrap();
        let loss =
            (out.logprobs.sum_all().unwrap() + out.entropy.unwrap().sum_all().unwrap()).unwrap();
        let grads = loss.backward().unwrap();
        let data = varmap.data().lock().unwrap();
        assert_eq!(data.len(), rlvr_model::param_shapes(&cfg).len());
        for (name, var) in data.iter() {
            let g = grads
                .get(var.as_tensor())
                .unwrap_or_else(|| panic!("{arch} {name}: no gradient"));
            let norm = g
                .sqr()
                .unwrap()
                .sum_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert!(
                norm.is_finite() && norm > 0.0,
                "{arch} {name}: |grad|^2 = {norm}"
            );
        }
    }
}

fn weighted_loss(model: &rlvr_model::Qwen, batch: &rlvr_model::TokenBatch, w: &Tensor) -> Tensor {
    let out = model.response_logprobs_at(batch, true, 0.8).unwrap();
    let ent = out.entropy.unwrap();
    ((out.logprobs * w).unwrap().sum_all().unwrap() + (ent * 0.3).unwrap().sum_all().unwrap())
        .unwrap()
}

/// Central differences (f64, h = 1e-5) against autograd for three entries of every tensor,
/// on a weighted sum of tempered log-probs plus entropies.
#[test]
fn logprob_gradient_matches_finite_differences_in_f64() {
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, 30);
        let (model, varmap) = peaky_model(&cfg, 2, DType::F64);
        let batch = batch(30);
        let r = batch.max_response_len();
        let w: Vec<f64> = (0..batch.len() * r)
            .map(|i| ((i * 37 % 11) as f64 - 5.0) / 5.0)
            .collect();
        let w = Tensor::from_vec(w, (batch.len(), r), &Device::Cpu).unwrap();
        let grads = weighted_loss(&model, &batch, &w).backward().unwrap();
        assert_matches_central_differences(
            &varmap,
            |_, var| {
                grads
                    .get(var.as_tensor())
                    .unwrap()
                    .flatten_all()
                    .unwrap()
                    .to_vec1::<f64>()
                    .unwrap()
            },
            || {
                weighted_loss(&model, &batch, &w)
                    .to_scalar::<f64>()
                    .unwrap()
            },
            arch,
        );
    }
}

/// The chunked custom op (CPU default) and the plain-op reference give the same log-probs,
/// entropies and gradients, also when the vocabulary projection is split into many chunks.
#[test]
fn chunked_custom_op_matches_plain_ops() {
    let cfg = small_config("qwen3", 40);
    let (mut model, varmap) = peaky_model(&cfg, 3, DType::F32);
    model.set_logits_chunk_elems(3 * 40); // 3 rows per chunk: 28 response positions, 10 chunks
    let batch = batch(40);
    let r = batch.max_response_len();
    let w: Vec<f32> = (0..batch.len() * r)
        .map(|i| ((i * 5 % 7) as f32 - 3.0) / 3.0)
        .collect();
    let w = Tensor::from_vec(w, (batch.len(), r), &Device::Cpu).unwrap();
    let run = |plain: bool| {
        let out = if plain {
            model.response_logprobs_plain(&batch, true, 0.7).unwrap()
        } else {
            model.response_logprobs_at(&batch, true, 0.7).unwrap()
        };
        let ent = out.entropy.unwrap();
        let loss = ((&out.logprobs * &w).unwrap().sum_all().unwrap()
            + (&ent * 0.5).unwrap().sum_all().unwrap())
        .unwrap();
        let grads = loss.backward().unwrap();
        let data = varmap.data().lock().unwrap();
        let mut g: Vec<(String, Vec<f32>)> = data
            .iter()
            .map(|(n, v)| {
                (
                    n.clone(),
                    grads
                        .get(v.as_tensor())
                        .unwrap()
                        .flatten_all()
                        .unwrap()
                        .to_vec1::<f32>()
                        .unwrap(),
                )
            })
            .collect();
        g.sort_by(|a, b| a.0.cmp(&b.0));
        (
            out.logprobs.to_vec2::<f32>().unwrap(),
            ent.to_vec2::<f32>().unwrap(),
            g,
        )
    };
    let (lp_a, ent_a, g_a) = run(false);
    let (lp_b, ent_b, g_b) = run(true);
    for i in 0..lp_a.len() {
        assert!(max_abs_diff(&lp_a[i], &lp_b[i]) < 1e-5);
        assert!(max_abs_diff(&ent_a[i], &ent_b[i]) < 1e-5);
    }
    for ((name, a), (_, b)) in g_a.iter().zip(&g_b) {
        let scale = b.iter().map(|x| x.abs()).fold(0.0, f32::max).max(1e-3);
        assert!(
            max_abs_diff(a, b) < 1e-4 * scale,
            "{name}: {} vs scale {scale}",
            max_abs_diff(a, b)
        );
    }
}

/// A mask that is not right padding (pad keys inside or before the tokens) takes the
/// key-padding path of the training forward; its last-position logits equal the sampling
/// forward's with the same positions and key flags.
#[test]
fn training_forward_honours_key_padding() {
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, 40);
        let (model, _varmap) = peaky_model(&cfg, 3, DType::F32);
        let ids: Vec<Vec<u32>> = vec![vec![0, 0, 5, 9, 11, 3], vec![7, 0, 2, 8, 0, 4]];
        let mask: Vec<Vec<u32>> = vec![vec![0, 0, 1, 1, 1, 1], vec![1, 0, 1, 1, 0, 1]];
        let t = ids[0].len();
        let input = Tensor::new(ids.clone(), &Device::Cpu).unwrap();
        let am = Tensor::new(mask.clone(), &Device::Cpu).unwrap();
        let train = model
            .forward_logits(&input, &am)
            .unwrap()
            .narrow(1, t - 1, 1)
            .unwrap()
            .squeeze(1)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        let key_ok: Vec<Vec<bool>> = mask
            .iter()
            .map(|r| r.iter().map(|&x| x != 0).collect())
            .collect();
        let positions = vec![(0..t as u32).collect::<Vec<_>>(); 2];
        let mut cache = rlvr_model::KvCache::new(cfg.num_hidden_layers);
        let sample = model
            .forward_cached(&input, &positions, &key_ok, &mut cache)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        for (a, b) in train.iter().zip(&sample) {
            let d = max_abs_diff(a, b);
            assert!(
                d < 1e-3,
                "{arch}: training vs sampling logits differ by {d}"
            );
        }
    }
}
