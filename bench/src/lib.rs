//! rlvr-bench: every benchmark and probe of rlvr in one place (none of it is part of the
//! product, and the library crates hold no benchmark-only code). BENCHMARKS.md and
//! docs/memory.md hold the results and how each was run.
//!
//! | what | where | run |
//! |---|---|---|
//! | a GRPO step on TRL's reference work, matmul GFLOP/s | `rlvr bench grpo`, `rlvr bench matmul` (crates/rlvr-cli/src/bench.rs) | `rlvr bench grpo --shape bench-tiny` |
//! | rlvr against TRL, alternating | `bench/compare_trl.sh` | `RLVR_BIN=... bench/compare_trl.sh` |
//! | sampling and training tokens/s, peak memory | `examples/model_bench.rs` | `cargo run --release -p rlvr-bench --example model_bench bench-tiny` |
//! | the training forward + backward alone | `examples/train_fb.rs` | `--example train_fb bench-small` |
//! | the sampler's draw step at Qwen's vocabulary | `examples/sampler_bench.rs` | `--example sampler_bench` |
//! | peak memory of one sequence's step | `examples/memory.rs`, `bench/memory.sh` (the fits) | `bench/memory.sh` |
//! | the memory plan against measured memory | `examples/mem_probe.rs` | `--example mem_probe` |
//! | the memory plans table of docs/memory.md | `examples/plan_table.rs` | `--example plan_table -- CONFIG` |
//! | padded tokens of micro-batch splits | `examples/padding.rs` | `--example padding -- dapo ...` |
//! | GRPO steps of a 0.5B shape on a GPU | `examples/grpo_smoke.rs` (scripts/gpu-smoke.sh) | `--features cuda --example grpo_smoke` |
//! | aggregation weights and diagnostics (criterion) | `benches/weights.rs` | `cargo bench -p rlvr-bench` |
//! | OpenBLAS's row and column splits | `bench/probe_openblas_split.c` | see its header |
//!
//! The measuring pieces the examples share: [`CountingAlloc`] (live heap bytes and their
//! peak), [`status_kib`] (`VmRSS`, `VmHWM` of this process), [`median`] and [`dapo_lengths`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The system allocator, counting live heap bytes and their peak: what the code holds,
/// whether or not its pages are resident, free of the C allocator's caching. An example
/// installs it with `#[global_allocator] static ALLOC: CountingAlloc = CountingAlloc;`.
pub struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    PEAK.fetch_max(LIVE.fetch_add(n, Relaxed) + n, Relaxed);
}

// SAFETY: every call goes to the system allocator unchanged; only the counters are added.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                grew(new - l.size());
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

/// Live heap bytes now (0 unless [`CountingAlloc`] is the global allocator).
pub fn live_bytes() -> usize {
    LIVE.load(Relaxed)
}

/// The peak of live heap bytes since the last [`restart_peak`].
pub fn peak_bytes() -> usize {
    PEAK.load(Relaxed)
}

/// Starts a new peak at the live bytes now; returns `(live now, the peak that ended)`.
pub fn restart_peak() -> (usize, usize) {
    let live = LIVE.load(Relaxed);
    (live, PEAK.swap(live, Relaxed))
}

/// A `/proc/self/status` field in KiB (`"VmRSS:"`, `"VmHWM:"`), 0 where it cannot be read.
pub fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// The peak resident memory of this process so far (`VmHWM`), MiB; NaN where it cannot be read.
pub fn vm_hwm_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// The median (the upper one of an even count); `v` must not be empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `n` DAPO-like `(prompt, response)` token counts from a small seeded generator: a prompt of
/// 60-260 tokens (uniform) and a response drawn log-normally, median `max_response / 4`,
/// sigma 0.8, cut to `1..=max_response` (a length CV of about 0.8 before the cut, as RLVR
/// responses of a math recipe spread).
pub fn dapo_lengths(n: usize, seed: u64, max_response: usize) -> Vec<(usize, usize)> {
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
            (prompt, response)
        })
        .collect()
}
