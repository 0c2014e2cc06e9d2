//! Peak-memory probe for the `--dry-run` memory plan (`memory_plan.rs`): one training
//! micro-batch (forward, backward, f32 gradient accumulation, one AdamW step) of a randomly
//! initialized Qwen-shaped model on the CPU, on the device-generic path (the one CUDA takes),
//! in a fresh process. Prints the plan's training peak for the same shape and the process's
//! resident memory before the model exists (the baseline to subtract from the peak that
//! `/usr/bin/time -v` reports as "Maximum resident set size").
//!
//! ```text
//! /usr/bin/time -v target/release/examples/mem_probe VOCAB HIDDEN LAYERS HEADS KV_HEADS FFN \
//!     SEQS TOKENS_PER_SEQ DTYPE CHECKPOINTING
//! ```

use candle_core::{DType, Device};
use rlvr_model::{init_random, QwenConfig, TokenBatch, TrainForwardOptions};
use rlvr_train::memory_plan::{MemoryPlan, PlanInputs, ATTN_CHUNK_ROWS, LOGITS_CHUNK_ELEMS};
use rlvr_train::optim::{AdamW, AdamWParams, GradAccum, Params};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() != 10 {
        return Err(
            "usage: mem_probe VOCAB HIDDEN LAYERS HEADS KV_HEADS FFN SEQS TOKENS DTYPE CKPT".into(),
        );
    }
    let n = |i: usize| -> usize { a[i].parse().expect("a number") };
    let baseline = rss_kib();
    let mut cfg = QwenConfig::tiny(n(0));
    cfg.hidden_size = n(1);
    cfg.num_hidden_layers = n(2);
    cfg.num_attention_heads = n(3);
    cfg.num_key_value_heads = n(4);
    cfg.head_dim = n(1) / n(3);
    cfg.intermediate_size = n(5);
    cfg.max_position_embeddings = n(7) + 1;
    cfg.tie_word_embeddings = true;
    let (seqs, tokens) = (n(6), n(7));
    let (dtype, bytes) = match a[8].as_str() {
        "bf16" => (DType::BF16, 2),
        _ => (DType::F32, 4),
    };
    let ckpt = a[9] == "true";
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
            attn_chunk_rows: ATTN_CHUNK_ROWS,
            rollback: false,
            offload: false,
        },
    );
    let (mut model, varmap) = init_random(&cfg, 7, dtype, &Device::Cpu)?;
    model.set_force_generic(true);
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
    // one prompt token, the rest response, token ids spread over the vocabulary
    let pairs: Vec<(Vec<u32>, Vec<u32>)> = (0..seqs)
        .map(|s| {
            let ids: Vec<u32> = (0..tokens)
                .map(|i| ((i * 7919 + s * 104729) % cfg.vocab_size) as u32)
                .collect();
            (ids[..1].to_vec(), ids[1..].to_vec())
        })
        .collect();
    let batch = TokenBatch::new(&pairs, 0, &Device::Cpu)?;
    let opts = TrainForwardOptions {
        temperature: 1.0,
        with_entropy: true,
        gradient_checkpointing: ckpt,
    };
    let t = std::time::Instant::now();
    // as the trainer does: each piece of the walk's gradients into the f32 accumulator
    let mut acc = GradAccum::new(&params);
    let step = model.loss_and_grads_into::<rlvr_model::Error, _, _>(
        &batch,
        &opts,
        |lp| Ok((lp.logprobs.sum_all()? + lp.entropy.as_ref().expect("entropy").sum_all()?)?),
        |piece| Ok(acc.add(&params, &piece)?),
    )?;
    drop(step);
    opt.step(&params, &acc, 1e-3)?;
    let secs = t.elapsed().as_secs_f64();
    let mib = |x: f64| x / (1024.0 * 1024.0);
    let act = if ckpt {
        plan.activations_checkpointed
    } else {
        plan.activations
    };
    println!(
        "shape vocab {} hidden {} layers {} heads {}/{} ffn {}; {} x {} tokens {} ckpt {}: params {} | plan MiB: weights {:.1} master {:.1} grads {:.1} optimizer {:.1} activations {:.1} logits {:.1} train_peak {:.1} | baseline_rss_mib {:.1} | {:.1}s",
        cfg.vocab_size, cfg.hidden_size, cfg.num_hidden_layers, cfg.num_attention_heads,
        cfg.num_key_value_heads, cfg.intermediate_size, seqs, tokens, a[8], ckpt,
        plan.params, mib(plan.weights), mib(plan.master), mib(plan.gradients), mib(plan.optimizer),
        mib(act), mib(plan.logits_chunk), mib(plan.train_peak(ckpt)), baseline as f64 / 1024.0, secs
    );
    Ok(())
}
