//! Every f32 path against float64 on real-vocabulary shapes: with Qwen's 151,936-token
//! vocabulary, the log-probs (and entropies) of the training forward, the no-grad forward
//! (`rlvr score`, old log-probs), the sampler (the CPU decode and the device-generic decode,
//! the CPU sampler and the tensor sampler the GPU runs) are within 1e-5 of the same model
//! computed in f64, on both device paths (the fused CPU kernels, the device-generic tensor ops),
//! on a tied-embedding Qwen2.5 shape (qkv bias) and an untied Qwen3 shape (q/k norms), weights
//! rounded to bf16 and loaded in f32, with either CPU matrix product (the process's backend,
//! and the gemm crate in a child process: `RLVR_BLAS=gemm`).
//!
//! The f64 reference is the same code in f64 (fused CPU path; the device-generic path in f64
//! is checked to agree with it within 1e-12): f64 rounding is ~1e-16, so whatever differs by
//! more is the f32 computation's. A running f32 sum of the 151,936 exponentials of a
//! log-sum-exp cost up to 1e-4 (measured 1.0e-5 to 3.2e-4 on these shapes before the sums
//! were blocked and taken in f64).

mod common;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarMap;
use common::*;
use rlvr_model::{
    generate, sample_logits_tensor, Decoder, DecoderConfig, DrawParams, KvCache, SamplingParams,
    TokenBatch, TrainForwardOptions,
};

const VOCAB: usize = 151_936;

/// The largest |f32 - f64| in log-prob (and entropy) allowed on any path.
const TOL: f64 = 1e-5;

/// Hidden 64, 2 layers, 4 / 2 heads of 16, the real vocabulary: Qwen2.5's switches (qkv bias,
/// tied embeddings) or Qwen3's (q/k norms, untied head).
fn shape(tied: bool) -> DecoderConfig {
    let mut c = small_config(if tied { "qwen2" } else { "qwen3" }, VOCAB);
    c.hidden_size = 64;
    c.intermediate_size = 128;
    c.head_dim = 16;
    c.rope_theta = 1_000_000.0;
    c
}

/// The f32 model and the f64 model over the same weights, rounded to bf16 (a bf16 checkpoint
/// loaded in f32): matrices `N(0, (0.02 scale)^2)`, biases and norm weights random
/// ([`every_weight_random`]'s). Scale 1 is transformers' initialization (near-uniform
/// next-token distributions, the hardest case for a running sum); scale 6 gives activations
/// of a few units and logits spread over several units.
fn models(cfg: &DecoderConfig, scale: f64) -> (Decoder, Decoder) {
    let vm = every_weight_random(cfg, 5, DType::F32).1;
    let (v32, v64) = (VarMap::new(), VarMap::new());
    for (name, var) in sorted_vars(&vm) {
        let mut t = var.as_tensor().clone();
        if !name.ends_with("norm.weight") && !name.ends_with(".bias") {
            // every_weight_random's matrices are init_random's times 15
            t = (t * (scale / 15.0)).unwrap();
        }
        let t = t
            .to_dtype(DType::BF16)
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap();
        let t64 = t.to_dtype(DType::F64).unwrap();
        let insert = |vm: &VarMap, t: &Tensor| {
            vm.data()
                .lock()
                .unwrap()
                .insert(name.clone(), candle_core::Var::from_tensor(t).unwrap())
        };
        insert(&v32, &t);
        insert(&v64, &t64);
    }
    let build = |vm: &VarMap, dtype| {
        Decoder::new(
            cfg,
            candle_nn::VarBuilder::from_varmap(vm, dtype, &Device::Cpu),
        )
        .unwrap()
    };
    (build(&v32, DType::F32), build(&v64, DType::F64))
}

/// Token ids spread over the whole vocabulary.
fn ids(n: usize, k: u64) -> Vec<u32> {
    (0..n as u64)
        .map(|i| ((i * 7919 + k * 104_729 + 3) % VOCAB as u64) as u32)
        .collect()
}

/// Three (prompt, response) pairs of mixed lengths (right padding in a batch).
fn pairs() -> Vec<(Vec<u32>, Vec<u32>)> {
    vec![
        (ids(3, 1), ids(6, 2)),
        (ids(7, 3), ids(3, 4)),
        (ids(1, 5), ids(8, 6)),
    ]
}

fn flat(t: &Tensor) -> Vec<f64> {
    t.to_dtype(DType::F64)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f64>()
        .unwrap()
}

/// The largest `|a_i - b_i|`, infinite where either is NaN.
fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let d = (x - y).abs();
            if d.is_nan() {
                f64::INFINITY
            } else {
                d
            }
        })
        .fold(0.0, f64::max)
}

/// The f64 model's log-probs of each pair's response tokens at temperature `t`.
fn reference(m64: &Decoder, pairs: &[(Vec<u32>, Vec<u32>)], t: f64) -> Vec<Vec<f64>> {
    let b = TokenBatch::new(pairs, 0, &Device::Cpu).unwrap();
    let lp = m64
        .response_logprobs_no_grad(&b, false, t)
        .unwrap()
        .logprobs;
    let lp = lp.to_vec2::<f64>().unwrap();
    pairs
        .iter()
        .zip(lp)
        .map(|((_, r), row)| row[..r.len()].to_vec())
        .collect()
}

/// `(path, largest |f32 - f64|)` for every f32 path of the model of `cfg` at `scale`.
fn errors(cfg: &DecoderConfig, scale: f64) -> Vec<(String, f64)> {
    let (mut m32, mut m64) = models(cfg, scale);
    let ps = pairs();
    let batch = TokenBatch::new(&ps, 0, &Device::Cpu).unwrap();
    let mut out = Vec::new();
    for t in [1.0, 0.7] {
        // the reference, and the f64 generic path agreeing with it
        let want = m64.response_logprobs_no_grad(&batch, true, t).unwrap();
        let (want_lp, want_h) = (flat(&want.logprobs), flat(&want.entropy.unwrap()));
        m64.set_force_generic(true);
        let again = m64.response_logprobs_no_grad(&batch, true, t).unwrap();
        m64.set_force_generic(false);
        let d = max_diff(&flat(&again.logprobs), &want_lp)
            .max(max_diff(&flat(&again.entropy.unwrap()), &want_h));
        assert!(d < 1e-12, "the f64 paths differ by {d:e} at T = {t}");

        for generic in [false, true] {
            m32.set_force_generic(generic);
            let path = if generic { "generic" } else { "fused" };
            let got = m32.response_logprobs_no_grad(&batch, true, t).unwrap();
            out.push((
                format!("{path} no-grad log-prob, T {t}"),
                max_diff(&flat(&got.logprobs), &want_lp),
            ));
            out.push((
                format!("{path} no-grad entropy, T {t}"),
                max_diff(&flat(&got.entropy.unwrap()), &want_h),
            ));
            let opts = TrainForwardOptions {
                temperature: t,
                with_entropy: true,
                gradient_checkpointing: false,
            };
            let step = m32
                .loss_and_grads::<rlvr_model::Error, _>(&batch, &opts, |o| {
                    Ok((o.logprobs.sum_all()? + o.entropy.as_ref().unwrap().sum_all()?)?)
                })
                .unwrap();
            out.push((
                format!("{path} training log-prob, T {t}"),
                max_diff(&flat(&step.out.logprobs), &want_lp),
            ));
            out.push((
                format!("{path} training entropy, T {t}"),
                max_diff(&flat(&step.out.entropy.unwrap()), &want_h),
            ));

            // sampling: the sampled tokens' log-probs against the reference's for them
            let prompts: Vec<Vec<u32>> = ps.iter().map(|(p, _)| p.clone()).collect();
            let params = SamplingParams {
                n: 2,
                temperature: t,
                max_new_tokens: 5,
                seed: 3,
                ..Default::default()
            };
            let gens = generate(&m32, None, &prompts, &params).unwrap();
            let sampled: Vec<_> = gens
                .iter()
                .map(|g| (prompts[g.prompt_index].clone(), g.tokens.clone()))
                .collect();
            let d = gens
                .iter()
                .zip(reference(&m64, &sampled, t))
                .map(|(g, r)| {
                    let got: Vec<f64> = g.logprobs.iter().map(|&x| x as f64).collect();
                    max_diff(&got, &r)
                })
                .fold(0.0, f64::max);
            let decode = if generic { "generic" } else { "CPU" };
            out.push((format!("{decode} decode + CPU sampler, T {t}"), d));

            // the tensor sampler (the GPU's) on the decode's logits of each prompt
            let mut d = 0f64;
            for (i, p) in prompts.iter().enumerate() {
                let mut cache = KvCache::with_capacity(cfg.num_hidden_layers, p.len());
                let input = Tensor::from_vec(p.clone(), (1, p.len()), &Device::Cpu).unwrap();
                let pos = vec![(0..p.len() as u32).collect::<Vec<_>>()];
                let logits = m32
                    .forward_cached(&input, &pos, &[vec![true; p.len()]], &mut cache)
                    .unwrap();
                let draw = DrawParams {
                    temperature: t,
                    top_k: None,
                    top_p: 1.0,
                };
                let u = Tensor::new(&[0.1 + 0.3 * i as f32], &Device::Cpu).unwrap();
                let (id, lp) = sample_logits_tensor(&logits, &u, &draw).unwrap();
                let id = id.to_vec1::<u32>().unwrap()[0];
                let r = reference(&m64, &[(p.clone(), vec![id])], t)[0][0];
                d = d.max(max_diff(&[lp.to_vec1::<f32>().unwrap()[0] as f64], &[r]));
            }
            out.push((format!("{decode} decode + tensor sampler, T {t}"), d));
        }
        m32.set_force_generic(false);
    }
    out
}

/// The test the child process of [`the_gemm_crate_is_as_precise`] runs.
const MAIN_TEST: &str = "every_f32_path_is_within_1e5_of_float64_on_real_vocabulary_shapes";

#[test]
fn every_f32_path_is_within_1e5_of_float64_on_real_vocabulary_shapes() {
    eprintln!(
        "matrix products: {}",
        rlvr_model::matmul::backend_description()
    );
    let mut failures = Vec::new();
    for tied in [true, false] {
        for scale in [1.0, 6.0] {
            let name = if tied { "tied Qwen2.5" } else { "untied Qwen3" };
            let errs = errors(&shape(tied), scale);
            let worst = errs.iter().map(|e| e.1).fold(0.0, f64::max);
            eprintln!("{name}, weights x{scale}: largest |f32 - f64| {worst:.2e}");
            for (path, e) in errs {
                eprintln!("  {path}: {e:.2e}");
                if e >= TOL {
                    failures.push(format!("{name} x{scale}, {path}: {e:e}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "differ from f64 by more than {TOL:e}:\n{}",
        failures.join("\n")
    );
}

/// The same bound with the gemm crate computing the f32 products (`RLVR_BLAS=gemm`, which
/// takes effect once per process: this test binary runs the test above in a child).
#[test]
fn the_gemm_crate_is_as_precise() {
    if std::env::var("RLVR_BLAS").as_deref() == Ok("gemm") {
        return; // this process already runs every test with the gemm crate
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", MAIN_TEST, "--nocapture", "--test-threads=1"])
        .env("RLVR_BLAS", "gemm")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("1 passed") && text.contains("gemm crate"),
        "with RLVR_BLAS=gemm:\n{text}"
    );
}
