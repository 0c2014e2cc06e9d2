//! Peak resident memory of one training forward + backward of one sequence (not a test).
//! Run one shape per process: VmHWM is the process peak.
//!
//!     cargo build --release -p rlvr-bench --example memory
//!     for t in 1024 2048 4096 8192; do
//!         target/release/examples/memory attn $t generic ckpt
//!     done
//!
//! Arguments: `attn | vocab`, `T` (tokens; 1 prompt token, T - 1 response tokens), the path
//! (`generic`: `Decoder::loss_and_grads` forced onto the device-generic path, the one CUDA
//! takes; `fused`: the same on the CPU custom ops), and `ckpt | nockpt`.
//!
//! * `attn`: 2 layers, hidden 256, 8 heads on 4 kv heads (head_dim 32), MLP 688, vocab 512:
//!   the decoder dominates.
//! * `vocab`: 2 layers, hidden 64, 2 heads on 1 kv head, MLP 128, vocab 151,936 (Qwen2.5 /
//!   Qwen3): the vocabulary projection dominates.
//!
//! Prints one line: `mode T path ckpt base_mib peak_mib step_mib heap_mib secs`, where `base`
//! is VmHWM after building the model and the batch, `step = peak - base`, and `heap` the peak
//! of live heap bytes during the step minus those live before it (counted by this binary's
//! allocator: what the step really holds, free of the C allocator's caching).

use std::time::Instant;

use candle_core::{DType, Device, Tensor};
use rlvr_bench::{restart_peak, vm_hwm_mib, CountingAlloc};
use rlvr_model::{init_random, DecoderConfig, TokenBatch, TrainForwardOptions};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: memory <attn|vocab> <T> <generic|fused> <ckpt|nockpt>";
    let mode = args.get(1).map(String::as_str).expect(usage);
    let t: usize = args.get(2).and_then(|s| s.parse().ok()).expect(usage);
    let path = args.get(3).map(String::as_str).unwrap_or("generic");
    let ckpt = args.get(4).map(String::as_str).unwrap_or("ckpt") == "ckpt";
    let mut cfg = match mode {
        "attn" => {
            let mut c = DecoderConfig::tiny(512);
            c.hidden_size = 256;
            c.num_attention_heads = 8;
            c.num_key_value_heads = 4;
            c.head_dim = 32;
            c.intermediate_size = 688;
            c
        }
        "vocab" => {
            let mut c = DecoderConfig::tiny(151_936);
            c.hidden_size = 64;
            c.num_attention_heads = 2;
            c.num_key_value_heads = 1;
            c.head_dim = 32;
            c.intermediate_size = 128;
            c
        }
        _ => panic!("{usage}"),
    };
    // LAYERS=n overrides the 2 decoder layers (checkpointing pays off with depth)
    cfg.num_hidden_layers = std::env::var("LAYERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    cfg.max_position_embeddings = t.max(cfg.max_position_embeddings);
    let dev = Device::Cpu;
    let (mut model, varmap) = init_random(&cfg, 0, DType::F32, &dev).expect("init");
    model.set_force_generic(path != "fused");
    let vocab = cfg.vocab_size as u32;
    let ids: Vec<u32> = (0..t as u32).map(|i| (i * 7919 + 13) % vocab).collect();
    let batch = TokenBatch::new(&[(ids[..1].to_vec(), ids[1..].to_vec())], 0, &dev).unwrap();
    let w = Tensor::ones((1, t - 1), DType::F32, &dev).unwrap();
    let base = vm_hwm_mib();
    let (live0, _) = restart_peak();
    let start = Instant::now();
    let opts = TrainForwardOptions {
        temperature: 1.0,
        with_entropy: true,
        gradient_checkpointing: ckpt,
    };
    let grads = model
        .loss_and_grads::<rlvr_model::Error, _>(&batch, &opts, |out| {
            Ok(((&out.logprobs * &w)?.sum_all()? + out.entropy.as_ref().unwrap().sum_all()?)?)
        })
        .unwrap()
        .grads;
    let secs = start.elapsed().as_secs_f64();
    // every parameter got a gradient (a check that the step really ran)
    let missing = varmap
        .data()
        .lock()
        .unwrap()
        .values()
        .filter(|v| grads.get(v.as_tensor()).is_none())
        .count();
    assert_eq!(missing, 0, "parameters without a gradient");
    let peak = vm_hwm_mib();
    let heap = (rlvr_bench::peak_bytes() - live0) as f64 / (1024.0 * 1024.0);
    println!(
        "{mode} {t} {path} {} {base:.0} {peak:.0} {:.0} {heap:.0} {secs:.1}",
        if ckpt { "ckpt" } else { "nockpt" },
        peak - base
    );
}
