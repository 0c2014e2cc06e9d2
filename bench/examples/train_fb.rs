//! Timing of the training forward + backward alone (not a test): `Qwen::loss_and_grads_into`
//! on TRL's bench shapes, 64 sequences x (12 prompt + 128 response) tokens, a token-mean
//! log-prob loss, the gradients dropped as they arrive (as the trainer's sink would take them).
//!
//!     cargo build --release -p rlvr-bench --example train_fb
//!     RAYON_NUM_THREADS=1 target/release/examples/train_fb bench-small [REPEATS]
//!
//! Prints per repeat the wall seconds and the process CPU seconds (user + system, all
//! threads), then the medians.

use std::time::Instant;

use candle_core::{DType, Device};
use rlvr_bench::median;
use rlvr_model::{init_random, QwenConfig, TokenBatch, TrainForwardOptions};

/// User + system CPU seconds of this process (/proc/self/stat, clock ticks of 10 ms).
fn cpu_seconds() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    // fields 14 and 15 of stat (utime, stime) are 11 and 12 after the command name
    (tick(11) + tick(12)) / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("bench-tiny");
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let cfg = match which {
        "bench-tiny" => QwenConfig::bench_tiny(),
        "bench-small" => QwenConfig::bench_small(),
        other => panic!("unknown model {other:?}: bench-tiny, bench-small"),
    };
    let dev = Device::Cpu;
    let (model, _varmap) = init_random(&cfg, 0, DType::F32, &dev).expect("init");
    let vocab = cfg.vocab_size as u32;
    let pairs: Vec<(Vec<u32>, Vec<u32>)> = (0..64u32)
        .map(|r| {
            let p = (0..12).map(|i| (r % 8 * 31 + i * 17 + 1) % vocab).collect();
            let resp = (0..128).map(|i| (r * 7 + i * 13 + 5) % vocab).collect();
            (p, resp)
        })
        .collect();
    let batch = TokenBatch::new(&pairs, 0, &dev).expect("batch");
    let opts = TrainForwardOptions::default();
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    for rep in 0..=repeats {
        let (t, c) = (Instant::now(), cpu_seconds());
        let out = model
            .loss_and_grads_into::<rlvr_model::Error, _, _>(
                &batch,
                &opts,
                |o| Ok((o.logprobs.sum_all()? / 8192.0)?.neg()?),
                |piece| {
                    drop(piece);
                    Ok(())
                },
            )
            .expect("step");
        let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
        println!(
            "rep {rep}: loss {:.6} wall {wall:.3} s cpu {cpu:.2} s",
            out.loss
        );
        if rep > 0 {
            walls.push(wall);
            cpus.push(cpu);
        }
    }
    println!(
        "{which}: forward+backward median wall {:.3} s, cpu {:.2} s",
        median(walls),
        median(cpus)
    );
}
