//! Throughput benchmark (not a test): sampling tokens/s and training forward+backward tokens/s,
//! with peak resident memory (VmHWM), on random-weight models.
//!
//!     cargo build --release -p rlvr-bench --example model_bench
//!     target/release/examples/model_bench tiny          # DecoderConfig::tiny(512)
//!     target/release/examples/model_bench bench-tiny    # TRL's bench-tiny shape (BENCHMARKS.md)
//!     target/release/examples/model_bench bench-small   # and its bench-small shape
//!     target/release/examples/model_bench testbed       # tiny(256), 128 x 44 tokens (the GRPO testbed)
//!     target/release/examples/model_bench qwen2.5-0.5b [LAYERS]
//!
//! Work, as in BENCHMARKS.md (the TRL reference harness): sampling 8 prompts x 8 responses x 128 new tokens
//! (12-token prompts, no eos, temperature 1); training 64 sequences x 140 tokens (12 prompt +
//! 128 response), log-probs + entropy, backward. The 0.5B shape uses less work (printed).
//! Each phase: one warm-up, then the median of `REPEATS` timed runs (`BENCH_PHASES=sample`:
//! sampling only, e.g. under `perf record`). Run one model per process
//! (VmHWM is the process peak).

use std::time::Instant;

use candle_core::{DType, Device};
use rlvr_bench::{median, vm_hwm_mib};
use rlvr_model::{
    generate, init_random, DecoderConfig, SamplingParams, TokenBatch, TrainForwardOptions,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("tiny");
    let repeats: usize = std::env::var("REPEATS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    // (config, prompts, n, new tokens, train rows)
    let (cfg, prompts, n, new_tokens, train_rows) = match which {
        "tiny" => (DecoderConfig::tiny(512), 8, 8, 128, 64),
        "bench-tiny" => (DecoderConfig::bench_tiny(), 8, 8, 128, 64),
        "bench-small" => (DecoderConfig::bench_small(), 8, 8, 128, 64),
        // the GRPO testbed's shape: 16 prompts x G=8, short responses
        "testbed" => (DecoderConfig::tiny(256), 16, 8, 32, 128),
        "qwen2.5-0.5b" => {
            let layers = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(24);
            (DecoderConfig::qwen25_05b_shaped(layers), 4, 4, 32, 4)
        }
        other => {
            panic!("unknown model {other:?}: tiny, bench-tiny, bench-small, testbed, qwen2.5-0.5b [LAYERS]")
        }
    };
    let dev = Device::Cpu;
    let t0 = Instant::now();
    let (model, _varmap) = init_random(&cfg, 0, DType::F32, &dev).expect("init");
    println!(
        "model {which}: {} layers, {:.2}M parameters, init {:.1}s, VmHWM {:.0} MiB",
        cfg.num_hidden_layers,
        cfg.num_parameters() as f64 / 1e6,
        t0.elapsed().as_secs_f64(),
        vm_hwm_mib()
    );
    let vocab = cfg.vocab_size as u32;
    let prompt_ids: Vec<Vec<u32>> = (0..prompts)
        .map(|p| {
            (0..12u32)
                .map(|i| (p as u32 * 31 + i * 17 + 1) % vocab)
                .collect()
        })
        .collect();

    // sampling
    let params = SamplingParams {
        n,
        temperature: 1.0,
        max_new_tokens: new_tokens,
        seed: 1,
        ..Default::default()
    };
    let mut times = Vec::new();
    for rep in 0..=repeats {
        let t = Instant::now();
        let gens = generate(&model, None, &prompt_ids, &params).expect("generate");
        let dt = t.elapsed().as_secs_f64();
        assert!(gens.iter().all(|g| g.tokens.len() == new_tokens));
        if rep > 0 {
            times.push(dt);
        }
    }
    let sample_tokens = (prompts * n * new_tokens) as f64;
    let med = median(times.clone());
    println!(
        "sampling {prompts} prompts x {n} x {new_tokens} tokens: median {med:.3}s (min {:.3}s) = {:.0} tokens/s, VmHWM {:.0} MiB",
        times.iter().copied().fold(f64::INFINITY, f64::min),
        sample_tokens / med,
        vm_hwm_mib()
    );

    if std::env::var("BENCH_PHASES").is_ok_and(|p| p == "sample") {
        return;
    }
    // training forward + backward
    let pairs: Vec<(Vec<u32>, Vec<u32>)> = (0..train_rows)
        .map(|r| {
            let p = prompt_ids[r % prompts].clone();
            let resp = (0..new_tokens as u32)
                .map(|i| (r as u32 * 7 + i * 13 + 5) % vocab)
                .collect();
            (p, resp)
        })
        .collect();
    let batch = TokenBatch::new(&pairs, 0, &dev).expect("batch");
    let mut times = Vec::new();
    for rep in 0..=repeats {
        let t = Instant::now();
        let opts = TrainForwardOptions {
            with_entropy: true,
            ..Default::default()
        };
        let step = model
            .loss_and_grads::<rlvr_model::Error, _>(&batch, &opts, |out| {
                Ok((out.logprobs.sum_all()? + out.entropy.as_ref().unwrap().sum_all()?)?)
            })
            .expect("training step");
        drop(step);
        let dt = t.elapsed().as_secs_f64();
        if rep > 0 {
            times.push(dt);
        }
    }
    let train_tokens = (train_rows * (12 + new_tokens)) as f64;
    let med = median(times.clone());
    println!(
        "train fwd+bwd {train_rows} x {} tokens: median {med:.3}s (min {:.3}s) = {:.0} tokens/s, VmHWM {:.0} MiB",
        12 + new_tokens,
        times.iter().copied().fold(f64::INFINITY, f64::min),
        train_tokens / med,
        vm_hwm_mib()
    );
}
