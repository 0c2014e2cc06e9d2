//! Computed token slots (real tokens plus padding) of the micro-batch plans: right-padded or
//! packed (`model.use_remove_padding`), by count or by a token budget (`use_dynamic_bsz`), on
//! real rollout dumps or on DAPO-like lengths.
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
//! Each batch is split by count (`ppo_micro_batch_size = MICRO`, in order) and by a budget
//! (`ppo_max_token_len_per_gpu = BUDGET`, longest first: of padded tokens when padded, of
//! packed token slots when packed). A padded micro-batch computes its sequences times its
//! longest (`rlvr_core::split::padded_tokens`), a packed one its rows times its longest
//! (`rlvr_core::split::packed_tokens`).

use std::path::Path;

use rlvr_bench::dapo_lengths;
use rlvr_core::split;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().collect();
    let batches: Vec<Vec<usize>> = match a.get(1).map(String::as_str) {
        Some("dump") => dump(Path::new(&a[2]), Path::new(&a[3]))?,
        Some("dapo") => vec![dapo_lengths(a[2].parse()?, a[3].parse()?, a[4].parse()?)
            .into_iter()
            .map(|(p, r)| p + r)
            .collect()],
        _ => {
            return Err(
                "usage: padding dump DIR TOKENIZER MICRO BUDGET | dapo N SEED MAX MICRO BUDGET"
                    .into(),
            )
        }
    };
    let k = if a[1] == "dump" { 4 } else { 5 };
    let (micro, budget): (usize, usize) = (a[k].parse()?, a[k + 1].parse()?);
    // computed token slots of the four plans: (micro-batches, tokens)
    let mut plans = [(0, 0); 4];
    let mut real = 0;
    for lens in &batches {
        real += lens.iter().sum::<usize>();
        let c = split::by_count(lens.len(), 1, micro)?;
        let t = split::by_padded_tokens(lens, 1, budget)?;
        let r = split::by_packed_tokens(lens, 1, budget)?;
        let add = |p: &mut (usize, usize), plan: &split::SplitPlan, tokens: usize| {
            p.0 += plan[0].len();
            p.1 += tokens;
        };
        add(&mut plans[0], &c, split::padded_tokens(&c, lens));
        add(&mut plans[1], &t, split::padded_tokens(&t, lens));
        add(&mut plans[2], &c, split::packed_tokens(&c, lens));
        add(&mut plans[3], &r, split::packed_tokens(&r, lens));
    }
    let seqs: usize = batches.iter().map(Vec::len).sum();
    println!(
        "{} batches, {seqs} sequences, {real} real tokens (prompt + response)",
        batches.len()
    );
    let names = [
        format!("padded, by count ({micro} sequences)"),
        format!("padded, by padded-token budget ({budget})"),
        format!("packed, by count ({micro} sequences)"),
        format!("packed, by packed-token budget ({budget})"),
    ];
    let base = plans[0].1;
    for (name, (n, tokens)) in names.iter().zip(plans) {
        println!(
            "{name}: {n} micro-batches, {tokens} computed tokens ({} padding, {:.1}%; {:.2}x the padded count-based plan's)",
            tokens - real,
            100.0 * (tokens - real) as f64 / tokens as f64,
            tokens as f64 / base as f64
        );
    }
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
