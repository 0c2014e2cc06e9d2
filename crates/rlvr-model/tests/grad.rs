//! The reference decoder of the tests (tests/common/reference.rs) is a correct gradient
//! source: its autograd gradient matches finite differences in f64, and it agrees with the
//! sampling forward under key padding. The training step gives every parameter a gradient.

mod common;

use candle_core::{DType, Device, Tensor};
use common::*;
use rlvr_model::TrainForwardOptions;

/// After one training step on `sum(logprobs) + sum(entropy)`, every trainable parameter has a
/// finite, non-zero gradient, on both device paths.
#[test]
fn every_parameter_gets_a_finite_nonzero_gradient() {
    for arch in ["qwen2", "qwen3"] {
        for generic in [false, true] {
            let cfg = small_config(arch, 50);
            let (mut model, varmap) = peaky_model(&cfg, 1, DType::F32);
            model.set_force_generic(generic);
            let opts = TrainForwardOptions {
                with_entropy: true,
                ..Default::default()
            };
            let grads = model
                .loss_and_grads::<rlvr_model::Error, _>(&batch(50), &opts, |out| {
                    let ent = out.entropy.as_ref().unwrap();
                    Ok((out.logprobs.sum_all()? + ent.sum_all()?)?)
                })
                .unwrap()
                .grads;
            let data = varmap.data().lock().unwrap();
            assert_eq!(data.len(), rlvr_model::param_shapes(&cfg).len());
            for (name, var) in data.iter() {
                let g = grads
                    .get(var.as_tensor())
                    .unwrap_or_else(|| panic!("{arch} generic={generic} {name}: no gradient"));
                let norm = g
                    .sqr()
                    .unwrap()
                    .sum_all()
                    .unwrap()
                    .to_scalar::<f32>()
                    .unwrap();
                assert!(
                    norm.is_finite() && norm > 0.0,
                    "{arch} generic={generic} {name}: |grad|^2 = {norm}"
                );
            }
        }
    }
}

fn weighted_loss(model: &Reference, batch: &rlvr_model::TokenBatch, w: &Tensor) -> Tensor {
    let out = model.response_logprobs(batch, 0.8);
    let ent = out.entropy.unwrap();
    ((out.logprobs * w).unwrap().sum_all().unwrap() + (ent * 0.3).unwrap().sum_all().unwrap())
        .unwrap()
}

/// Central differences (f64, h = 1e-5) against the reference's autograd for three entries of
/// every tensor, on a weighted sum of tempered log-probs plus entropies.
#[test]
fn logprob_gradient_matches_finite_differences_in_f64() {
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, 30);
        let (_, varmap) = peaky_model(&cfg, 2, DType::F64);
        let model = Reference::new(&cfg, &varmap);
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

/// With a mask that is not right padding (pad keys inside or before the tokens), the
/// reference's last-position logits equal the sampling forward's with the same positions and
/// key flags.
#[test]
fn training_forward_honours_key_padding() {
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, 40);
        let (model, varmap) = peaky_model(&cfg, 3, DType::F32);
        let reference = Reference::new(&cfg, &varmap);
        let ids: Vec<Vec<u32>> = vec![vec![0, 0, 5, 9, 11, 3], vec![7, 0, 2, 8, 0, 4]];
        let mask: Vec<Vec<u32>> = vec![vec![0, 0, 1, 1, 1, 1], vec![1, 0, 1, 1, 0, 1]];
        let t = ids[0].len();
        let input = Tensor::new(ids.clone(), &Device::Cpu).unwrap();
        let am = Tensor::new(mask.clone(), &Device::Cpu).unwrap();
        let train = reference
            .logits(&input, &am)
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
