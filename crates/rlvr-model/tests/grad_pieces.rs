//! `Decoder::loss_and_grads_into` hands the gradients out piece by piece (the trainer adds each
//! piece to its f32 accumulator at once, so no full set of gradients in the weights' dtype is
//! ever alive): every weight is in exactly one piece, and that piece holds, bit for bit, the
//! gradient `Decoder::loss_and_grads` returns. Tied (Qwen2 config) and untied (Qwen3) heads,
//! f32 and bf16, both model paths, with and without activation checkpointing.

mod common;

use candle_core::{DType, Tensor};
use common::*;
use rlvr_model::{GradStore, TrainForwardOptions};

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

#[test]
fn every_weight_is_in_exactly_one_piece_with_the_whole_walks_gradient() {
    for arch in ["qwen2", "qwen3"] {
        for dtype in [DType::F32, DType::BF16] {
            for generic in [false, true] {
                for ckpt in [false, true] {
                    let what = format!("{arch} {dtype:?} generic {generic} ckpt {ckpt}");
                    let cfg = small_config(arch, 40);
                    let (mut model, varmap) = peaky_model(&cfg, 3, dtype);
                    model.set_force_generic(generic);
                    model.set_attention_chunk_rows(3);
                    let b = batch(40);
                    let r = b.max_response_len();
                    let w: Vec<f32> = (0..b.len() * r)
                        .map(|i| ((i * 5 % 7) as f32 - 3.0) / 3.0)
                        .collect();
                    let w = Tensor::from_vec(w, (b.len(), r), &candle_core::Device::Cpu).unwrap();
                    let opts = TrainForwardOptions {
                        temperature: 0.8,
                        with_entropy: true,
                        gradient_checkpointing: ckpt,
                    };
                    let loss = |out: &rlvr_model::ResponseLogProbs| {
                        let ent = out.entropy.as_ref().unwrap();
                        let lp = out
                            .logprobs
                            .broadcast_mul(&w.to_dtype(out.logprobs.dtype())?)?;
                        Ok::<_, rlvr_model::Error>((lp.sum_all()? + (ent * 0.3)?.sum_all()?)?)
                    };
                    let whole = model.loss_and_grads(&b, &opts, loss).unwrap();
                    let mut pieces: Vec<GradStore> = Vec::new();
                    let step = model
                        .loss_and_grads_into(&b, &opts, loss, |p| {
                            pieces.push(p);
                            Ok::<_, rlvr_model::Error>(())
                        })
                        .unwrap();
                    assert_eq!(step.loss.to_bits(), whole.loss.to_bits(), "{what}");
                    assert!(
                        pieces.len() >= cfg.num_hidden_layers + 2,
                        "{what}: {} pieces",
                        pieces.len()
                    );
                    for (name, var) in varmap.data().lock().unwrap().iter() {
                        let found: Vec<&Tensor> = pieces
                            .iter()
                            .filter_map(|p| p.get(var.as_tensor()))
                            .collect();
                        assert_eq!(
                            found.len(),
                            1,
                            "{what}: {name} is in {} pieces",
                            found.len()
                        );
                        let want = whole
                            .grads
                            .get(var.as_tensor())
                            .unwrap_or_else(|| panic!("{what}: {name} has no gradient"));
                        assert_eq!(found[0].dtype(), dtype, "{what}: {name}");
                        assert_eq!(bits(found[0]), bits(want), "{what}: {name}");
                    }
                }
            }
        }
    }
}

#[test]
fn no_piece_when_the_loss_is_not_finite() {
    let cfg = small_config("qwen3", 40);
    let (model, _) = peaky_model(&cfg, 3, DType::F32);
    let mut calls = 0;
    let step = model
        .loss_and_grads_into(
            &batch(40),
            &TrainForwardOptions::default(),
            |out| Ok::<_, rlvr_model::Error>((out.logprobs.sum_all()? * f64::NAN)?),
            |_| {
                calls += 1;
                Ok(())
            },
        )
        .unwrap();
    assert!(step.loss.is_nan());
    assert_eq!(calls, 0);
}
