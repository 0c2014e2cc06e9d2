//! Sampling-step throughput on the CPU at Qwen's vocabulary (151,936): tokens drawn per second
//! from `[rows, vocab]` f32 logits, the old host sampler (`sample_one_reference`: logits copied
//! to a Vec, two f64 exp passes, a sort of the whole vocabulary for top-p) against the new one
//! (`sample_logits`, see generate/sampler.rs), and the tensor-op path (the GPU's) run on the CPU.
//!
//!     cargo run --release -p rlvr-bench --example sampler_bench [ROWS] [REPEATS]
//!
//! Logits: "peaked" rows are N(0, 3^2) (a trained model's top-heavy distribution), "flat" rows
//! N(0, 0.5^2) (a random-weight model: top-p keeps most of the vocabulary). One thread.

use std::time::Instant;

use candle_core::{Device, Tensor};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rlvr_bench::median;
use rlvr_model::{sample_logits, sample_logits_tensor, DrawParams, SamplingParams};

const VOCAB: usize = 151_936;

fn logits(rows: usize, sd: f32, seed: u64) -> Tensor {
    let mut rng = StdRng::seed_from_u64(seed);
    let v: Vec<f32> = (0..rows * VOCAB)
        .map(|_| {
            let (a, b) = (rng.random::<f64>().max(1e-300), rng.random::<f64>());
            ((-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()) as f32 * sd
        })
        .collect();
    Tensor::from_vec(v, (rows, VOCAB), &Device::Cpu).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rows: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(32);
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let with_tensor = std::env::var("TENSOR_PATH").is_ok();
    println!("vocab {VOCAB}, {rows} rows per step, median of {repeats} steps; tokens/s");
    println!(
        "{:<8} {:<22} {:>10} {:>10} {:>7} {:>12}",
        "logits", "params", "before", "after", "x", "tensor-ops"
    );
    for (name, sd) in [("peaked", 3.0f32), ("flat", 0.5)] {
        let x = logits(rows, sd, 1);
        for (label, t, k, p) in [
            ("T=1", 1.0, None, 1.0),
            ("T=1 top-p 0.7", 1.0, None, 0.7),
            ("T=0.6 top-p 0.95", 0.6, None, 0.95),
            ("T=1 top-k 50", 1.0, Some(50), 1.0),
            ("T=1 top-k 50 top-p .9", 1.0, Some(50), 0.9),
            ("greedy", 0.0, None, 1.0),
        ] {
            let sp = SamplingParams {
                temperature: t,
                top_k: k,
                top_p: p,
                ..Default::default()
            };
            let dp = DrawParams {
                temperature: t,
                top_k: k,
                top_p: p,
            };
            let mut rng = StdRng::seed_from_u64(7);
            let mut scratch = Vec::new();
            let before = median(
                (0..repeats)
                    .map(|_| {
                        let t0 = Instant::now();
                        let flat = x.to_vec2::<f32>().unwrap();
                        for row in &flat {
                            std::hint::black_box(sample_one_reference(
                                row,
                                &sp,
                                &mut rng,
                                &mut scratch,
                            ));
                        }
                        rows as f64 / t0.elapsed().as_secs_f64()
                    })
                    .collect(),
            );
            let after = median(
                (0..repeats)
                    .map(|_| {
                        let u: Vec<f64> = (0..rows).map(|_| rng.random::<f64>()).collect();
                        let t0 = Instant::now();
                        std::hint::black_box(sample_logits(&x, &u, &dp).unwrap());
                        rows as f64 / t0.elapsed().as_secs_f64()
                    })
                    .collect(),
            );
            let tensor = if with_tensor {
                let u: Vec<f32> = (0..rows).map(|_| rng.random::<f32>()).collect();
                let u = Tensor::from_vec(u, rows, &Device::Cpu).unwrap();
                let t0 = Instant::now();
                let (ids, _) = sample_logits_tensor(&x, &u, &dp).unwrap();
                std::hint::black_box(ids.to_vec1::<u32>().unwrap());
                format!("{:.0}", rows as f64 / t0.elapsed().as_secs_f64())
            } else {
                "-".into()
            };
            println!(
                "{name:<8} {label:<22} {before:>10.0} {after:>10.0} {:>6.1}x {tensor:>12}",
                after / before
            );
        }
    }
}

/// The sampler of rlvr <= 0.1 (the baseline this benchmark measures against): one row of
/// host logits, two f64 exp passes over the vocabulary, a sort of the whole vocabulary for
/// top-p; tokens ordered by weight, not by id, for the inverse CDF. Same distribution as
/// `sample_logits`, another random stream.
fn sample_one_reference(
    logits: &[f32],
    params: &SamplingParams,
    rng: &mut StdRng,
    scratch: &mut Vec<(f32, u32)>,
) -> (u32, f32) {
    let greedy = params.temperature == 0.0;
    let inv_t = if greedy {
        1.0
    } else {
        1.0 / params.temperature
    };
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let sum: f64 = logits
        .iter()
        .map(|&x| ((x as f64 - max) * inv_t).exp())
        .sum();
    let log_z = sum.ln();
    let logprob = |i: usize| ((logits[i] as f64 - max) * inv_t - log_z) as f32;
    if greedy {
        let best = (0..logits.len()).fold(0, |b, i| if logits[i] > logits[b] { i } else { b });
        return (best as u32, logprob(best));
    }
    let top_k = params.top_k.filter(|&k| k < logits.len());
    if top_k.is_none() && params.top_p >= 1.0 {
        // plain sampling: inverse CDF over the unnormalized weights
        let mut u = rng.random::<f64>() * sum;
        for (i, &x) in logits.iter().enumerate() {
            u -= ((x as f64 - max) * inv_t).exp();
            if u <= 0.0 {
                return (i as u32, logprob(i));
            }
        }
        let last = logits.len() - 1;
        return (last as u32, logprob(last));
    }
    scratch.clear();
    scratch.extend(logits.iter().enumerate().map(|(i, &x)| (x, i as u32)));
    let desc = |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if let Some(k) = top_k {
        scratch.select_nth_unstable_by(k - 1, desc);
        scratch.truncate(k);
    }
    scratch.sort_unstable_by(desc);
    let weights: Vec<f64> = scratch
        .iter()
        .map(|&(x, _)| ((x as f64 - max) * inv_t).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let mut keep = weights.len();
    if params.top_p < 1.0 {
        let mut acc = 0.0;
        for (i, w) in weights.iter().enumerate() {
            acc += w / total;
            if acc >= params.top_p {
                keep = i + 1;
                break;
            }
        }
    }
    let mass: f64 = weights[..keep].iter().sum();
    let mut u = rng.random::<f64>() * mass;
    for i in 0..keep {
        u -= weights[i];
        if u <= 0.0 {
            let tok = scratch[i].1 as usize;
            return (tok as u32, logprob(tok));
        }
    }
    let tok = scratch[keep - 1].1 as usize;
    (tok as u32, logprob(tok))
}
