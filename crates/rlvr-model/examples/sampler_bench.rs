//! Sampling-step throughput on the CPU at Qwen's vocabulary (151,936): tokens drawn per second
//! from `[rows, vocab]` f32 logits, the old host sampler (`sample_one_reference`: logits copied
//! to a Vec, two f64 exp passes, a sort of the whole vocabulary for top-p) against the new one
//! (`sample_logits`, see draw.rs), and the tensor-op path (the GPU's) run on the CPU.
//!
//!     cargo run --release -p rlvr-model --example sampler_bench [ROWS] [REPEATS]
//!
//! Logits: "peaked" rows are N(0, 3^2) (a trained model's top-heavy distribution), "flat" rows
//! N(0, 0.5^2) (a random-weight model: top-p keeps most of the vocabulary). One thread.

use std::time::Instant;

use candle_core::{Device, Tensor};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rlvr_model::sample::sample_one_reference;
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
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
