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
