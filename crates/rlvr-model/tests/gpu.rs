//! GPU checks: built with the `cuda` feature and ignored by a plain `cargo test` (they need a
//! CUDA device, and fail without one when run). scripts/gpu-smoke.sh runs them with
//! `--ignored`. Tolerances: f32 on the GPU within 1e-4 of the CPU's log-probs; bf16 within 0.1
//! nats at any token and 0.02 on average (bf16 keeps 8 significant bits: about 0.4% of each
//! logit); gradients within 1e-3 of the largest CPU gradient entry of each tensor.
#![cfg(feature = "cuda")]

mod common;

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::{VarBuilder, VarMap};
use common::*;
use rlvr_model::{
    generate, load_model, sample_logits, Decoder, DrawParams, SamplingParams, TokenBatch,
};

const FIXTURES: [&str; 4] = ["qwen2-tiny", "qwen3-tiny", "llama-tiny", "llama3-tiny"];

fn gpu() -> Device {
    Device::new_cuda(0).expect("the GPU tests need CUDA device 0")
}

fn logprobs(model: &Decoder, pairs: &[(Vec<u32>, Vec<u32>)], dev: &Device) -> Vec<Vec<f32>> {
    let batch = TokenBatch::new(pairs, 0, dev).unwrap();
    model
        .response_logprobs_no_grad(&batch, false, 0.9)
        .unwrap()
        .logprobs
        .to_dtype(DType::F32)
        .unwrap()
        .to_vec2::<f32>()
        .unwrap()
}

/// A packed batch on the GPU (device-generic path: the segment mask, per-row positions) gives
/// the CPU's right-padded log-probs within 1e-4 in f32.
#[test]
#[ignore = "needs a CUDA device: scripts/gpu-smoke.sh runs it (--ignored)"]
fn packed_logprobs_on_the_gpu_match_padded_ones_on_the_cpu() {
    let dev = gpu();
    for name in FIXTURES {
        let dir = fixture(name);
        let cpu = load_model(dir.to_str().unwrap(), DType::F32, &Device::Cpu).unwrap();
        let vocab = cpu.config.vocab_size as u32;
        // 12, 3 + 5, 6 + 2, 2 + 1, 1 + 1: several sequences share a row of 12
        let pairs: Vec<(Vec<u32>, Vec<u32>)> = [(4, 8), (3, 5), (6, 2), (2, 1), (1, 1)]
            .iter()
            .enumerate()
            .map(|(k, &(p, r))| {
                let ids = |n: usize, o: u32| (0..n as u32).map(|i| (i * 7 + o) % vocab).collect();
                (ids(p, k as u32 * 5 + 1), ids(r, k as u32 * 11 + 3))
            })
            .collect();
        let want = logprobs(&cpu.model, &pairs, &Device::Cpu);
        let m = load_model(dir.to_str().unwrap(), DType::F32, &dev).unwrap();
        let packed = TokenBatch::packed(&pairs, 0, &dev).unwrap();
        assert!(packed.input_ids.dims()[0] < pairs.len(), "{name}: packs");
        let got = m
            .model
            .response_logprobs_no_grad(&packed, false, 0.9)
            .unwrap()
            .logprobs
            .to_vec2::<f32>()
            .unwrap();
        let max = want
            .iter()
            .flatten()
            .zip(got.iter().flatten())
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max);
        println!("{name} packed on the GPU: max |diff| {max:.2e}");
        assert!(max <= 1e-4, "{name}: {max}");
    }
}

#[test]
#[ignore = "needs a CUDA device: scripts/gpu-smoke.sh runs it (--ignored)"]
fn logprobs_match_the_cpu_in_f32_and_bf16() {
    let dev = gpu();
    for name in FIXTURES {
        let dir = fixture(name);
        let cpu = load_model(dir.to_str().unwrap(), DType::F32, &Device::Cpu).unwrap();
        let pairs = pairs(cpu.config.vocab_size as u32);
        let want = logprobs(&cpu.model, &pairs, &Device::Cpu);
        for (dtype, max_tol, mean_tol) in [(DType::F32, 1e-4, 1e-4), (DType::BF16, 0.1, 0.02)] {
            let m = load_model(dir.to_str().unwrap(), dtype, &dev).unwrap();
            let got = logprobs(&m.model, &pairs, &dev);
            let (mut max, mut sum, mut n) = (0f32, 0f32, 0usize);
            for (a, b) in want.iter().zip(&got) {
                for (x, y) in a.iter().zip(b) {
                    max = max.max((x - y).abs());
                    sum += (x - y).abs();
                    n += 1;
                }
            }
            let mean = sum / n.max(1) as f32;
            println!("{name} {dtype:?}: max |diff| {max:.2e}, mean {mean:.2e}");
            assert!(max <= max_tol && mean <= mean_tol, "{name} {dtype:?}");
        }
    }
}

/// The GPU's training step (the device-generic path) gives the CPU's gradients (the fused
/// kernels, checked against finite differences in train_step.rs) for the same weights.
#[test]
#[ignore = "needs a CUDA device: scripts/gpu-smoke.sh runs it (--ignored)"]
fn gradients_match_the_cpu() {
    let dev = gpu();
    for arch in ["qwen2", "qwen3"] {
        let cfg = small_config(arch, 50);
        let (cpu_model, cpu_vars) = peaky_model(&cfg, 1, DType::F32);
        let gpu_vars = VarMap::new();
        for (name, var) in cpu_vars.data().lock().unwrap().iter() {
            let t = var.as_tensor().to_device(&dev).unwrap();
            gpu_vars
                .data()
                .lock()
                .unwrap()
                .insert(name.clone(), Var::from_tensor(&t).unwrap());
        }
        let gpu_model =
            Decoder::new(&cfg, VarBuilder::from_varmap(&gpu_vars, DType::F32, &dev)).unwrap();
        let grads = |model: &Decoder, vars: &VarMap, d: &Device| {
            let b = TokenBatch::new(&pairs(50), 0, d).unwrap();
            let r = b.max_response_len();
            let w: Vec<f32> = (0..b.len() * r)
                .map(|i| ((i * 37 % 11) as f32 - 5.0) / 5.0)
                .collect();
            let w = Tensor::from_vec(w, (b.len(), r), d).unwrap();
            let opts = rlvr_model::TrainForwardOptions {
                temperature: 0.8,
                with_entropy: true,
                gradient_checkpointing: false,
            };
            let g = model
                .loss_and_grads::<rlvr_model::Error, _>(&b, &opts, |out| {
                    let ent = out.entropy.as_ref().unwrap();
                    Ok(((&out.logprobs * &w)?.sum_all()? + (ent * 0.3)?.sum_all()?)?)
                })
                .unwrap()
                .grads;
            let data = vars.data().lock().unwrap();
            let mut v: Vec<(String, Vec<f32>)> = data
                .iter()
                .map(|(n, var)| {
                    let t = g.get(var.as_tensor()).unwrap();
                    (
                        n.clone(),
                        t.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
                    )
                })
                .collect();
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        let a = grads(&cpu_model, &cpu_vars, &Device::Cpu);
        let b = grads(&gpu_model, &gpu_vars, &dev);
        for ((name, x), (_, y)) in a.iter().zip(&b) {
            let scale = x.iter().map(|v| v.abs()).fold(0.0, f32::max).max(1e-3);
            let d = max_abs_diff(x, y);
            assert!(d <= 1e-3 * scale, "{arch} {name}: {d} vs scale {scale}");
        }
    }
}

/// Sampling on the GPU (KV cache and the tensor-op sampler there): log-probs equal the GPU's
/// training forward within 1e-4, and with the same uniforms the GPU sampler draws the CPU's
/// tokens from the same logits.
#[test]
#[ignore = "needs a CUDA device: scripts/gpu-smoke.sh runs it (--ignored)"]
fn gpu_sampling_matches_the_training_forward_and_the_cpu_sampler() {
    let dev = gpu();
    let m = load_model(fixture("qwen2-tiny").to_str().unwrap(), DType::F32, &dev).unwrap();
    let ps: Vec<Vec<u32>> = ["Compute 12+34=", "Add: 7 9 5 =", "The"]
        .iter()
        .map(|p| m.tokenizer.encode(p, false).unwrap())
        .collect();
    for (t, top_p, top_k) in [(1.0, 1.0, None), (0.7, 0.9, Some(20)), (1.0, 0.7, None)] {
        let p = SamplingParams {
            n: 4,
            temperature: t,
            top_p,
            top_k,
            max_new_tokens: 24,
            eos_token_ids: vec![5, 9, 11],
            seed: 3,
            ..Default::default()
        };
        let gens = generate(&m.model, None, &ps, &p).unwrap();
        let pairs: Vec<_> = gens
            .iter()
            .map(|g| (ps[g.prompt_index].clone(), g.tokens.clone()))
            .collect();
        let lp = logprobs_at(&m.model, &pairs, &dev, t);
        for (i, g) in gens.iter().enumerate() {
            let d = max_abs_diff(&lp[i][..g.tokens.len()], &g.logprobs);
            assert!(d < 1e-4, "T={t}: row {i} differs by {d}");
        }
    }
    let vocab = 151_936;
    let rows = 8;
    let x: Vec<f32> = (0..rows * vocab)
        .map(|i| ((i as f32 * 0.618_034).fract() - 0.5) * 12.0)
        .collect();
    let cpu = Tensor::from_vec(x, (rows, vocab), &Device::Cpu).unwrap();
    let on_gpu = cpu.to_device(&dev).unwrap();
    for d in [
        DrawParams {
            temperature: 1.0,
            top_k: None,
            top_p: 1.0,
        },
        DrawParams {
            temperature: 1.0,
            top_k: None,
            top_p: 0.7,
        },
        DrawParams {
            temperature: 0.8,
            top_k: Some(50),
            top_p: 0.9,
        },
    ] {
        let u: Vec<f64> = (0..rows).map(|i| (i as f64 + 0.37) / rows as f64).collect();
        let (a, _) = sample_logits(&cpu, &u, &d).unwrap();
        let (b, _) = sample_logits(&on_gpu, &u, &d).unwrap();
        let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        assert!(same + 1 >= rows, "{d:?}: cpu {a:?} vs gpu {b:?}");
    }
}

fn logprobs_at(
    model: &Decoder,
    pairs: &[(Vec<u32>, Vec<u32>)],
    dev: &Device,
    t: f64,
) -> Vec<Vec<f32>> {
    let batch = TokenBatch::new(pairs, 0, dev).unwrap();
    model
        .response_logprobs_no_grad(&batch, false, t)
        .unwrap()
        .logprobs
        .to_vec2::<f32>()
        .unwrap()
}
