//! The `--dry-run` memory plan (`memory_plan.rs`) against the measured peak resident memory of
//! training on the CPU, on the device-generic path (the one CUDA takes).
//!
//! ```text
//! cargo build --release -p rlvr-bench --example mem_probe
//! target/release/examples/mem_probe              # the table: every default shape
//! target/release/examples/mem_probe VOCAB HIDDEN LAYERS HEADS KV_HEADS FFN SEQS TOKENS DTYPE CKPT
//! ```
//!
//! Without arguments it runs each shape of [`SHAPES`] in a fresh process (this binary again,
//! with the shape's arguments: the peak of resident memory, `VmHWM`, is per process) and
//! prints one table: the plan's training peak computed by [`MemoryPlan::train_peak`] for
//! the shape, the measured peak, their ratio, and whether it is within 25%.
//!
//! With a shape it measures that shape in this process. What it runs is what the trainer
//! (`grpo.rs`) holds, at the point the plan models:
//! 1. the model (random weights, tied embeddings), the AdamW state and an f32 gradient
//!    accumulator;
//! 2. one micro-batch (forward, the training walk's backward, each gradient piece added to
//!    the accumulator in place) and one AdamW step: after it, every page of the moments and of
//!    the accumulator has been written, as in a run after its first optimizer step (before
//!    it, `Tensor::zeros` memory is untouched and not resident: measuring then would leave
//!    out `3 P u` bytes the plan counts);
//! 3. a second micro-batch into the same, now full, accumulator (a mini-batch's second
//!    micro-batch), and a second AdamW step.
//!
//! The measured peak is `VmHWM` at the end minus `VmRSS` before the model exists (the binary
//! and its libraries); `heap` is the peak of live heap bytes over the same span (this
//! binary's counting allocator: what the code holds, whether or not its pages are resident,
//! free of the C allocator's caching). The loss is `sum(log-probs) + sum(entropies)` of the
//! response tokens (one prompt token per sequence), so the entropy's backward runs too.
//! `ATTN_ROWS=c` sets the attention's query rows per chunk (model and plan; default 256).
//! `STAGES=1` prints, at each gradient piece the walk hands out, the live heap and the peak
//! of live heap since the previous piece (MiB above the heap before the model): the peak of
//! each stage of the walk (forward and loss; vocabulary backward and final norm; each layer's
//! recompute and backward; the embedding).

use candle_core::{DType, Device};
use rlvr_bench::{peak_bytes, restart_peak, status_kib, CountingAlloc};
use rlvr_model::{init_random, DecoderConfig, TokenBatch, TrainForwardOptions};
use rlvr_train::memory_plan::{MemoryPlan, PlanInputs, ATTN_CHUNK_ROWS, LOGITS_CHUNK_ELEMS};
use rlvr_train::optim::{AdamW, AdamWParams, GradAccum, Params};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// The default shapes: `VOCAB HIDDEN LAYERS HEADS KV_HEADS FFN SEQS TOKENS DTYPE CKPT`.
/// Decoder-dominated (vocabulary 512, 8 layers) without and with checkpointing, two
/// sequences per micro-batch in f32 and in bf16 (f32 master weights), and
/// vocabulary-dominated (151,936, the Qwen2.5 / Qwen3 vocabulary) at two hidden sizes.
const SHAPES: &[&str] = &[
    "512 256 8 8 4 688 1 1024 f32 false",
    "512 256 8 8 4 688 1 1024 f32 true",
    "512 256 4 8 4 688 2 1024 f32 true",
    "512 256 4 8 4 688 2 1024 bf16 true",
    "151936 64 2 2 1 128 1 2048 f32 true",
    "151936 256 2 4 2 704 2 1024 f32 true",
];

const MIB: f64 = 1024.0 * 1024.0;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    match a.len() {
        0 => table(),
        10 => probe(&a),
        _ => Err(
            "usage: mem_probe [VOCAB HIDDEN LAYERS HEADS KV_HEADS FFN SEQS TOKENS DTYPE CKPT]"
                .into(),
        ),
    }
}

/// Every default shape in a fresh process, and the plan-vs-measured table.
fn table() -> Result<(), Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()?;
    println!("| shape (vocab, hidden, layers, heads/kv, MLP) | sequences x tokens | dtype | checkpointing | plan MiB | measured RSS MiB | heap MiB | plan / RSS | plan / heap | secs |");
    println!("|---|---|---|---|---:|---:|---:|---:|---:|---:|");
    let mut within = 0;
    for shape in SHAPES {
        let out = std::process::Command::new(&exe)
            .args(shape.split_whitespace())
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!(
                "mem_probe {shape} failed: {}{}",
                text,
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        let line = text
            .lines()
            .find(|l| l.starts_with("result "))
            .ok_or_else(|| format!("mem_probe {shape}: no result line in {text}"))?;
        let get = |k: &str| -> f64 {
            line.split_whitespace()
                .find_map(|kv| kv.strip_prefix(&format!("{k}="))?.parse().ok())
                .unwrap_or(f64::NAN)
        };
        let s: Vec<&str> = shape.split_whitespace().collect();
        let (plan, rss, heap) = (get("plan_mib"), get("rss_mib"), get("heap_mib"));
        let ratio = plan / rss;
        if (ratio - 1.0).abs() <= 0.25 {
            within += 1;
        }
        println!(
            "| {}, {}, {}, {}/{}, {} | {} x {} | {} | {} | {plan:.1} | {rss:.1} | {heap:.1} | {ratio:.2} | {:.2} | {:.0} |",
            s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8],
            if s[9] == "true" { "on" } else { "off" },
            plan / heap,
            get("secs"),
        );
    }
    println!(
        "{within} of {} shapes: plan within 25% of the measured peak RSS",
        SHAPES.len()
    );
    Ok(())
}

/// One shape, measured in this process (module docs).
fn probe(a: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let n = |i: usize| -> Result<usize, String> {
        a[i].parse()
            .map_err(|_| format!("argument {}: not a number: {}", i + 1, a[i]))
    };
    let baseline = status_kib("VmRSS:") as f64 / 1024.0;
    let (live0, _) = restart_peak();
    let mut cfg = DecoderConfig::tiny(n(0)?);
    cfg.hidden_size = n(1)?;
    cfg.num_hidden_layers = n(2)?;
    cfg.num_attention_heads = n(3)?;
    cfg.num_key_value_heads = n(4)?;
    cfg.head_dim = n(1)? / n(3)?;
    cfg.intermediate_size = n(5)?;
    cfg.max_position_embeddings = n(7)? + 1;
    cfg.tie_word_embeddings = true;
    let (seqs, tokens) = (n(6)?, n(7)?);
    let (dtype, bytes) = match a[8].as_str() {
        "bf16" => (DType::BF16, 2),
        "f32" => (DType::F32, 4),
        d => return Err(format!("dtype {d}: f32 or bf16").into()),
    };
    let ckpt = a[9] == "true";
    let attn_rows = match std::env::var("ATTN_ROWS") {
        Ok(v) => v
            .parse()
            .map_err(|_| format!("ATTN_ROWS={v}: not a number"))?,
        Err(_) => ATTN_CHUNK_ROWS,
    };
    let plan = MemoryPlan::new(
        &cfg,
        &PlanInputs {
            dtype_bytes: bytes,
            micro_tokens: seqs * tokens,
            seq_tokens: tokens,
            gen_seqs: 0,
            gen_tokens: 0,
            reference: false,
            logits_chunk_elems: LOGITS_CHUNK_ELEMS,
            attn_chunk_rows: attn_rows,
            rollback: false,
            offload: false,
        },
    );
    let (mut model, varmap) = init_random(&cfg, 7, dtype, &Device::Cpu)?;
    model.set_force_generic(true);
    model.set_attention_chunk_rows(attn_rows);
    let params = Params::from_varmap(&varmap);
    let mut opt = AdamW::new(
        &params,
        AdamWParams {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
        },
    )?;
    let opts = TrainForwardOptions {
        temperature: 1.0,
        with_entropy: true,
        gradient_checkpointing: ckpt,
    };
    let t = std::time::Instant::now();
    let mut acc = GradAccum::new(&params);
    let stages = std::env::var("STAGES").is_ok_and(|v| v == "1");
    let mut overall = 0;
    for micro in 0..2 {
        // one prompt token, the rest response, token ids spread over the vocabulary
        let pairs: Vec<(Vec<u32>, Vec<u32>)> = (0..seqs)
            .map(|s| {
                let ids: Vec<u32> = (0..tokens)
                    .map(|i| ((i * 7919 + s * 104729 + micro * 31) % cfg.vocab_size) as u32)
                    .collect();
                (ids[..1].to_vec(), ids[1..].to_vec())
            })
            .collect();
        let batch = TokenBatch::new(&pairs, 0, &Device::Cpu)?;
        let step = model.loss_and_grads_into::<rlvr_model::Error, _, _>(
            &batch,
            &opts,
            |lp| Ok((lp.logprobs.sum_all()? + lp.entropy.as_ref().expect("entropy").sum_all()?)?),
            |piece| {
                acc.add(&params, &piece)?;
                if stages {
                    let (live, peak) = restart_peak();
                    overall = overall.max(peak);
                    eprintln!(
                        "stage micro {micro} piece of {} tensors: live {:.1} MiB, stage peak {:.1} MiB",
                        params.vars.iter().filter(|v| piece.get(v.as_tensor()).is_some()).count(),
                        (live - live0) as f64 / MIB,
                        (peak - live0) as f64 / MIB
                    );
                }
                Ok(())
            },
        )?;
        drop(step);
        opt.step(&params, &acc, 1e-3)?;
    }
    let secs = t.elapsed().as_secs_f64();
    let missing = (0..params.len()).filter(|&i| acc.get(i).is_none()).count();
    if missing > 0 {
        return Err(format!("{missing} parameters got no gradient").into());
    }
    let rss = status_kib("VmHWM:") as f64 / 1024.0 - baseline;
    let heap = (peak_bytes().max(overall) - live0) as f64 / MIB;
    let act = if ckpt {
        plan.activations_checkpointed
    } else {
        plan.activations
    };
    println!(
        "shape vocab {} hidden {} layers {} heads {}/{} ffn {}; {} x {} tokens {} ckpt {}: params {} | plan MiB: weights {:.1} master {:.1} grads {:.1} optimizer {:.1} activations {:.1} logits {:.1} step {:.1}",
        cfg.vocab_size, cfg.hidden_size, cfg.num_hidden_layers, cfg.num_attention_heads,
        cfg.num_key_value_heads, cfg.intermediate_size, seqs, tokens, a[8], ckpt,
        plan.params, plan.weights / MIB, plan.master / MIB, plan.gradients / MIB,
        plan.optimizer / MIB, act / MIB, plan.logits_chunk / MIB, plan.optimizer_step / MIB,
    );
    println!(
        "result plan_mib={:.1} rss_mib={rss:.1} heap_mib={heap:.1} baseline_mib={baseline:.1} secs={secs:.1}",
        plan.train_peak(ckpt) / MIB
    );
    Ok(())
}
