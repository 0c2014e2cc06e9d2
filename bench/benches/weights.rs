//! Weights of every rule plus the full diagnostics for a batch of 512 prompts x 16 responses
//! (the paper's batch shape), with binary rewards and GRPO advantages.
//!
//! Run: `cargo bench -p rlvr-bench --bench weights`.

use criterion::{criterion_group, criterion_main, Criterion};
use rlvr_core::{advantage, aggregation, diagnostics, AdvantageConfig, AggRule, Sequence};

/// A deterministic batch: lengths 50..4096, about 40% correct (a tiny LCG, no rand dependency).
fn batch(prompts: usize, g: usize) -> Vec<Sequence> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    let groups: Vec<usize> = (0..prompts * g).map(|i| i / g).collect();
    let lens: Vec<usize> = groups.iter().map(|_| 50 + next() % 4046).collect();
    let rewards: Vec<f64> = groups
        .iter()
        .map(|_| if next() % 10 < 4 { 1.0 } else { 0.0 })
        .collect();
    let adv = advantage::compute(&AdvantageConfig::default(), &groups, &rewards).unwrap();
    groups
        .iter()
        .zip(&adv)
        .zip(&lens)
        .map(|((&gr, &a), &l)| Sequence::new(gr, a, l))
        .collect()
}

fn bench(c: &mut Criterion) {
    let seqs = batch(512, 16);
    c.bench_function("balanced weights, 512x16", |b| {
        b.iter(|| aggregation::weights(AggRule::Balanced, &seqs, 4096).unwrap())
    });
    c.bench_function("all 7 rules' weights, 512x16", |b| {
        b.iter(|| aggregation::all_weights(&seqs, 4096).unwrap())
    });
    c.bench_function("all weights + diagnostics, 512x16", |b| {
        b.iter(|| diagnostics::batch_diagnostics(&seqs, 4096).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
