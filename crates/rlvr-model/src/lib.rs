//! rlvr-model: the decoder-only causal language models RLVR trains (Qwen2, Qwen2.5, Qwen3,
//! Llama), in candle.
//!
//! What it provides:
//! * [`Decoder`]: one implementation of the Qwen2 / Qwen2.5, Qwen3 and Llama (2; 3 with its rope
//!   scaling, [`RopeScaling`]; SmolLM2) decoders, driven by config.json ([`DecoderConfig`]), with
//!   one training forward and one sampling forward per device path over the same weights.
//! * [`Decoder::loss_and_grads`]: the training step in bounded memory (the trainer's, the warm
//!   start's entry point): a forward without graph, `loss_fn` on leaf log-probs, then a
//!   backward walk layer by layer with optional activation checkpointing
//!   ([`TrainForwardOptions`]); attention and the vocabulary projection in chunks recomputed in
//!   the backward on every device, so the memory of one sequence grows linearly with its
//!   length (docs/memory.md has the measurements). [`Decoder::response_logprobs_no_grad`] is the
//!   same forward for passes without gradient (old log-probs, evaluation, `rlvr score`).
//! * Hugging Face checkpoint I/O: [`load_model`] (a directory, or a hub id through the local
//!   cache), [`save_model`], and the seeded random [`init_random`].
//! * [`ChatTokenizer`]: tokenizer.json plus the Jinja chat template and special tokens.
//! * [`generate()`]: batched, seeded sampling of n responses per prompt through
//!   [`Decoder::forward_cached`] and one [`KvCache`]: on the CPU in f32 the training forward's row
//!   kernels on plain buffers without a tensor op per step (`cpu/decode.rs`), elsewhere the
//!   device-generic training layer reading the cache (`generic/decode.rs`).
//! * [`matmul`]: the f32 matrix product of both CPU paths, through a CBLAS loaded at run time
//!   or a built-in pure-Rust crate (gemm or matrixmultiply): by default whichever measures
//!   fastest on the machine ([`blas_choice`]), else the one `RLVR_BLAS` names ([`blas`]).
//!
//! What it leaves out: losses, optimizers and rewards (rlvr-core, rlvr-train), quantization,
//! GPU-specific kernels (candle's CUDA/Metal devices may work but are untested here).
//!
//! # Contract
//! * Training step: every trainable parameter gets a finite non-zero gradient; log-probs,
//!   entropies and gradients equal those of a plain autograd decoder (kept in the tests as
//!   the reference) on both device paths, and the gradients match finite differences in f64
//!   (tested). Log-probs agree with the sampling forward within 1e-4 in f32, and with
//!   transformers on tiny random Qwen2, Qwen3 and Llama checkpoints within 1e-4 (committed
//!   fixtures, made by scripts/model/make_fixtures.py).
//! * Precision: on real-vocabulary shapes (151,936 tokens, tied Qwen2.5 and untied Qwen3, bf16
//!   weights loaded in f32) every f32 log-prob and entropy (training and no-grad forwards on both
//!   device paths, both decodes, both samplers, either CPU matrix product) is within 1e-5 of the
//!   same model in f64 (tests/precision.rs): vocabulary-wide sums are blocked and taken in f64.
//! * Sampling log-probs are `log softmax(logits / T)[token]` before top-k / top-p, the value
//!   [`Decoder::response_logprobs_no_grad`] recomputes at the same temperature (tested within
//!   1e-4).
//! * Hub ids resolve through the local cache; an uncached id is downloaded into it by
//!   rlvr-hub ([`rlvr_hub::download_model`]: a ureq client that checks every name, size and
//!   hash a server sends; `HF_HUB_OFFLINE=1`: an error naming the files and the directory they
//!   must be in). Pickle weights (`pytorch_model.bin`, `*.pt`) are refused, never opened.
//! * Save then load reproduces log-probs bit for bit (tested).
//! * Tensor names in the [`candle_nn::VarMap`] are the Hugging Face names.

pub mod batch;
pub mod config;
pub mod cpu;
pub mod error;
pub mod generate;
mod generic;
pub mod io;
mod kv_cache;
pub mod mask;
pub mod model;
pub mod placement;
pub mod rope;
mod training;

pub use cpu::{blas, blas_choice, matmul};
pub use io::tokenizer;

/// The tensor and tokenizer crates of this API, re-exported so callers use the same versions.
pub use candle_core;
pub use candle_nn;
pub use tokenizers;

pub use batch::{Packing, ResponseLogProbs, TokenBatch};
/// candle's gradient store, the type of [`TrainStepOutput::grads`].
pub use candle_core::backprop::GradStore;
pub use config::{param_shapes, Architecture, DecoderConfig};
pub use error::{Error, Result};
pub use generate::sampler::{sample_logits, sample_logits_tensor, DrawParams};
pub use generate::spec::{Greedy, SamplingError, SamplingSetting, SamplingSpec};
pub use generate::{
    generate, generate_observed, generate_within, kv_cache_budget, DecodeProgress, Environment,
    FinishReason, Generation, NoEnvironment, SamplingParams,
};
pub use io::{init_random, load_model, save_model, save_model_with, GenerationConfig, LoadedModel};
pub use kv_cache::KvCache;
pub use model::Decoder;

/// The former name of [`Decoder`] (the decoder also runs Llama checkpoints), kept for a release.
#[deprecated(note = "renamed Decoder")]
pub type Qwen = Decoder;

/// The former name of [`DecoderConfig`], kept for a release.
#[deprecated(note = "renamed DecoderConfig")]
pub type QwenConfig = DecoderConfig;
pub use placement::{DeviceSpec, WeightDtype};
pub use rope::RopeScaling;
pub use tokenizer::{ChatMessage, ChatTokenizer, TemplateBudget};
pub use training::{TrainForwardOptions, TrainStepOutput};
