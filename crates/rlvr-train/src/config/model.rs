//! `[model]`: which policy to train and where it runs.

use rlvr_model::matmul::ProductDtype;
use rlvr_model::{DeviceSpec, WeightDtype};
use serde::{Deserialize, Serialize};

use super::section::{Keys, Section};
use super::ConfigError;

/// `[model]`: which policy to train and where it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// A local directory in Hugging Face layout (config.json, *.safetensors, tokenizer.json) or
    /// a hub id (found in the local Hugging Face cache, else downloaded). Unset: the testbed
    /// model, built from `[testbed]` (a tiny Qwen-shaped model with a tokenizer trained on the
    /// testbed task).
    pub path: Option<String>,
    /// Parameter dtype: `f32`, `bf16` or `f16`. Optimizer moments are f32 whatever this is.
    pub dtype: WeightDtype,
    /// The dtype of the CPU matrix products' operands (TRL's `bf16=True` on a CPU: torch's
    /// autocast): `f32`, or `bf16`, every product's operands rounded to bf16 and their products
    /// summed in f32 (`rlvr_model::matmul::bf16`), the weights, optimizer and every other op in
    /// f32. For CPUs with bf16 products (AMX, AVX512-BF16) and a library that runs them (MKL).
    /// Needs `dtype = "f32"` on the CPU.
    pub matmul_dtype: ProductDtype,
    /// `cpu`, or `cuda` / `cuda:N` (needs a build with candle's CUDA support).
    pub device: DeviceSpec,
    /// Memory of one device in GiB: `--dry-run` says whether the memory plan fits it
    /// (`memory_plan.rs`). 0 = not given (the plan is printed without a verdict).
    pub device_memory_gib: f64,
    /// Activation checkpointing per decoder layer (verl `enable_gradient_checkpointing`): the
    /// training step keeps only each layer's input and recomputes the layer in the backward.
    /// Same gradients, less activation memory, about one more forward of compute.
    pub gradient_checkpointing: bool,
    /// Keep the optimizer state (AdamW moments and f32 master weights) on the host and update
    /// there (verl `fsdp_config.optimizer_offload`, DeepSpeed ZeRO-Offload): the device holds
    /// only the weights and the f32 gradient accumulator. Same update, bit for bit on one
    /// device; each optimizer step copies the gradients to the host and the weights back.
    pub optimizer_offload: bool,
    /// Pack several sequences into each row of a micro-batch instead of padding every row to
    /// the longest sequence (verl `use_remove_padding`): each sequence attends only to itself
    /// and its positions restart, so every log-prob, loss and gradient is the padded one
    /// (tested within 1e-5); the forward computes fewer padding tokens. With
    /// `algorithm.use_dynamic_bsz` the token budget then counts the packed rows' slots (real
    /// tokens plus what packing leaves; `rlvr_core::split::by_packed_tokens`).
    pub use_remove_padding: bool,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            path: None,
            dtype: WeightDtype::default(),
            matmul_dtype: ProductDtype::default(),
            device: DeviceSpec::default(),
            device_memory_gib: 0.0,
            gradient_checkpointing: false,
            optimizer_offload: false,
            use_remove_padding: true,
        }
    }
}

impl Section for ModelConfig {
    const NAME: &'static str = "model";

    /// A finite device memory `>= 0` (0: not given).
    fn validate(&self) -> Result<(), ConfigError> {
        Keys::<Self>::finite_at_least("device_memory_gib", self.device_memory_gib, 0.0)?;
        if self.matmul_dtype == ProductDtype::Bf16 {
            if !self.device.is_cpu() {
                return Err(Keys::<Self>::invalid(
                    "matmul_dtype",
                    format!(
                        "bf16 is the CPU products' setting; on {} set model.dtype = \"bf16\"",
                        self.device
                    ),
                ));
            }
            if self.dtype != WeightDtype::F32 {
                return Err(Keys::<Self>::invalid(
                    "matmul_dtype",
                    format!(
                        "bf16 products take f32 weights (model.dtype = \"f32\", not \"{}\")",
                        self.dtype
                    ),
                ));
            }
        }
        Ok(())
    }
}
