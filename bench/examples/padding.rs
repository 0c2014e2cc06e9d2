//! Padded tokens of count-based micro-batches against token-budget ones (`use_dynamic_bsz`),
//! on real rollout dumps or on DAPO-like lengths.
//!
//! ```text
//! cargo run --release -p rlvr-bench --example padding -- dump DUMP_DIR TOKENIZER_DIR MICRO BUDGET
//! cargo run --release -p rlvr-bench --example padding -- dapo N SEED MAX_RESPONSE MICRO BUDGET
//! ```
//!
//! `dump`: every `<step>.jsonl` of a `trainer.rollout_data_dir` (one optimizer batch per file;
//! prompt tokens from the run's tokenizer, response tokens from `length`). `dapo`: `N`
//! sequences with a prompt of 60-260 tokens and a response drawn log-normally (median
//! `MAX_RESPONSE / 4`, sigma 0.8, cut at `MAX_RESPONSE`), a seeded stand-in for a DAPO batch.
//! Each batch is split by count (`ppo_micro_batch_size = MICRO`, in order) and by a budget of
//! padded tokens (`ppo_max_token_len_per_gpu = BUDGET`, longest first); the padded tokens of a
//! micro-batch are its sequences times its longest (`rlvr_core::split::padded_tokens`).

use std::path::Path;

use rlvr_core::split;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().collect();
    let batches: Vec<Vec<usize>> = match a.get(1).map(String::as_str) {
        Some("dump") => dump(Path::new(&a[2]), Path::new(&a[3]))?,
        Some("dapo") => vec![dapo(a[2].parse()?, a[3].parse()?, a[4].parse()?)],
        _ => {
            return Err(
                "usage: padding dump DIR TOKENIZER MICRO BUDGET | dapo N SEED MAX MICRO BUDGET"
                    .into(),
            )
        }
    };
    let k = if a[1] == "dump" { 4 } else { 5 };
    let (micro, budget): (usize, usize) = (a[k].parse()?, a[k + 1].parse()?);
    let (mut real, mut count, mut tok, mut n_count, mut n_tok) = (0, 0, 0, 0, 0);
    for lens in &batches {
        real += lens.iter().sum::<usize>();
        let c = split::by_count(lens.len(), 1, micro)?;
        let t = split::by_padded_tokens(lens, 1, budget)?;
        count += split::padded_tokens(&c, lens);
        tok += split::padded_tokens(&t, lens);
        n_count += c[0].len();
        n_tok += t[0].len();
    }
    let seqs: usize = batches.iter().map(Vec::len).sum();
    println!(
        "{} batches, {seqs} sequences, {real} real tokens (prompt + response)",
        batches.len()
    );
    println!(
        "by count ({micro} sequences): {n_count} micro-batches, {count} padded tokens ({} padding, {:.1}%)",
        count - real,
        100.0 * (count - real) as f64 / count as f64
    );
    println!(
        "by token budget ({budget} padded tokens): {n_tok} micro-batches, {tok} padded tokens ({} padding, {:.1}%)",
        tok - real,
        100.0 * (tok - real) as f64 / tok as f64
    );
    println!(
        "saved: {} padded tokens ({:.1}% of count-based)",
        count as i64 - tok as i64,
        100.0 * (count as f64 - tok as f64) / count as f64
    );
    Ok(())
}

/// Prompt + response tokens of every row, one batch per dump file, in step order.
fn dump(dir: &Path, tokenizer: &Path) -> Result<Vec<Vec<usize>>, Box<dyn std::error::Error>> {
    let tok = rlvr_model::ChatTokenizer::from_dir(tokenizer)?;
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let mut lens = Vec::new();
        for line in std::fs::read_to_string(&f)?.lines() {
            let row: serde_json::Value = serde_json::from_str(line)?;
            let prompt = tok
                .encode(row["input"].as_str().unwrap_or(""), false)?
                .len();
            let response = row["length"].as_u64().unwrap_or(0) as usize;
            lens.push(prompt + response);
        }
        out.push(lens);
    }
    Ok(out)
}

/// `n` DAPO-like sequence lengths (module docs), from a small seeded generator.
fn dapo(n: usize, seed: u64, max_response: usize) -> Vec<usize> {
    let mut s = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut uniform = move || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let prompt = 60 + (uniform() * 200.0) as usize;
            // Box-Muller normal, log-normal response length
            let z = (-2.0 * uniform().ln()).sqrt() * (std::f64::consts::TAU * uniform()).cos();
            let median = max_response as f64 / 4.0;
            let response = (median * (0.8 * z).exp()).clamp(1.0, max_response as f64) as usize;
            prompt + response
        })
        .collect()
}
