//! Timing of the training forward + backward alone (not a test): `Decoder::loss_and_grads_into`
//! on TRL's bench shapes or a model directory (a real checkpoint), a token-mean log-prob loss, the gradients dropped as they arrive (as
//! the trainer's sink would take them). The work is 64 sequences x (12 prompt + 128 response)
//! tokens, or with `dapo N SEED MAX_RESPONSE` `N` sequences of DAPO-like lengths
//! (`rlvr_bench::dapo_lengths`) in one micro-batch, right-padded and packed
//! (`TokenBatch::packed`) alternately.
//!
//!     cargo build --release -p rlvr-bench --example train_fb
//!     RAYON_NUM_THREADS=1 target/release/examples/train_fb bench-small [REPEATS]
//!     target/release/examples/train_fb bench-small 3 dapo 32 1 256
//!     target/release/examples/train_fb "$(scripts/real-model.sh)" 2 rows 64 12 64
//!
//! `rows N PROMPT RESPONSE`: N sequences of PROMPT + RESPONSE tokens (the default work is
//! `rows 64 12 128`; `bench/compare_trl.sh`'s step with NEW_TOKENS=64 is `rows 64 12 64`).
//!
//! Prints per repeat the wall seconds and the process CPU seconds (user + system, all
//! threads), then the medians.

use std::time::Instant;

use candle_core::{DType, Device};
use rlvr_bench::median;
use rlvr_model::{init_random, DecoderConfig, TokenBatch, TrainForwardOptions};

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
    // as `rlvr` does (crates/rlvr-cli/src/main.rs, `pin_thread_count`): with RAYON_NUM_THREADS
    // unset, candle counts the cores again, from /proc/cpuinfo, on every CPU matmul
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let n = rlvr_model::candle_core::utils::get_num_threads();
        // SAFETY: first thing in `main`, before any other thread exists.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", n.to_string()) };
    }
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("bench-tiny");
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let dev = Device::Cpu;
    let model = match which {
        "bench-tiny" => {
            init_random(&DecoderConfig::bench_tiny(), 0, DType::F32, &dev)
                .expect("init")
                .0
        }
        "bench-small" => {
            init_random(&DecoderConfig::bench_small(), 0, DType::F32, &dev)
                .expect("init")
                .0
        }
        dir if std::path::Path::new(dir).is_dir() => {
            rlvr_model::load_model(dir, DType::F32, &dev)
                .expect("load")
                .model
        }
        other => panic!("unknown model {other:?}: bench-tiny, bench-small or a model directory"),
    };
    let vocab = model.config().vocab_size as u32;
    // the work's numeric arguments (4, 5, 6), named by `usage` when missing
    let arg = |i: usize, usage: &str| -> usize {
        args.get(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{usage}: argument {i}"))
    };
    let lengths: Vec<(usize, usize)> = match args.get(3).map(String::as_str) {
        Some("dapo") => {
            let arg = |i| arg(i, "dapo N SEED MAX_RESPONSE");
            rlvr_bench::dapo_lengths(arg(4), arg(5) as u64, arg(6))
        }
        Some("rows") => {
            let arg = |i| arg(i, "rows N PROMPT RESPONSE");
            vec![(arg(5), arg(6)); arg(4)]
        }
        None => vec![(12, 128); 64],
        Some(other) => {
            panic!("unknown work {other:?}: dapo N SEED MAX_RESPONSE, rows N PROMPT RESPONSE")
        }
    };
    let pairs: Vec<(Vec<u32>, Vec<u32>)> = lengths
        .iter()
        .zip(0u32..)
        .map(|(&(p, r), k)| {
            let p = (0..p as u32)
                .map(|i| (k % 8 * 31 + i * 17 + 1) % vocab)
                .collect();
            let resp = (0..r as u32)
                .map(|i| (k * 7 + i * 13 + 5) % vocab)
                .collect();
            (p, resp)
        })
        .collect();
    let mut batches = vec![("padded", TokenBatch::new(&pairs, 0, &dev).expect("batch"))];
    if args.get(3).map(String::as_str) == Some("dapo") {
        batches.push((
            "packed",
            TokenBatch::packed(&pairs, 0, &dev).expect("batch"),
        ));
    }
    let real: usize = lengths.iter().map(|(p, r)| p + r).sum();
    let response: usize = lengths.iter().map(|(_, r)| r).sum();
    println!(
        "{which}: {} sequences, {real} real tokens ({response} response)",
        pairs.len()
    );
    for (name, b) in &batches {
        let (rows, t) = b.input_ids.dims2().expect("2-d ids");
        println!(
            "{name}: {rows} rows x {t} = {} computed tokens ({:.1}% padding)",
            rows * t,
            100.0 * (rows * t - real) as f64 / (rows * t) as f64
        );
    }
    let opts = TrainForwardOptions::default();
    let mut times = vec![(Vec::new(), Vec::new(), 0.0); batches.len()];
    for rep in 0..=repeats {
        for ((name, batch), (walls, cpus, loss)) in batches.iter().zip(&mut times) {
            let (t, c) = (Instant::now(), cpu_seconds());
            let out = model
                .loss_and_grads_into::<rlvr_model::Error, _, _>(
                    batch,
                    &opts,
                    |o| Ok((o.logprobs.sum_all()? / response as f64)?.neg()?),
                    |piece| {
                        drop(piece);
                        Ok(())
                    },
                )
                .expect("step");
            let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
            println!(
                "rep {rep} {name}: loss {:.6} wall {wall:.3} s cpu {cpu:.2} s",
                out.loss
            );
            *loss = out.loss;
            if rep > 0 {
                walls.push(wall);
                cpus.push(cpu);
            }
        }
    }
    for ((name, _), (walls, cpus, loss)) in batches.iter().zip(times) {
        println!(
            "{which} {name}: forward+backward median wall {:.3} s, cpu {:.2} s (loss {loss:.6})",
            median(walls),
            median(cpus)
        );
    }
}
