//! AdamW with f32 moments and decoupled weight decay, gradient accumulation over micro-batches,
//! global-norm clipping, and the learning-rate schedule.
//!
//! Our own rather than candle-nn's: its `AdamW` keeps moments in the parameter dtype and has
//! no way to save or restore its state, and exact resume needs both.
//!
//! Mixed precision: when the model computes in bf16 or f16, the optimizer keeps an f32 master
//! copy of every such parameter. Gradients are accumulated in f32 ([`GradAccum`]), the update
//! is applied to the master, and the master is cast to the compute dtype once per step
//! (`w_compute = round(w_master)`). An update smaller than half a bf16 step (2^-8 |w|: about
//! 6e-5 at |w| = 0.02, far above a typical lr of 1e-6) would round away if applied to the bf16
//! weight in place; on the master it accumulates until the rounded value moves. An f32 model
//! has no master copy (the parameter is its own master).
//!
//! Optimizer offload (`model.optimizer_offload`, verl's `fsdp_config.optimizer_offload`,
//! DeepSpeed's ZeRO-Offload): the moments and an f32 master of every parameter (f32 ones too)
//! live on the host; each step copies the f32 gradients there a chunk at a time, updates
//! there, and copies the new weights back cast to the compute dtype. The device then holds
//! only the weights and the gradient accumulator. Same arithmetic element by element, so on
//! one device the result is bit-identical to the step without offload; the saved state is
//! the same file either way (an f32 parameter's master equals the parameter and is not saved).

use candle_core::Tensor;

mod adamw;
mod fused_cpu;
mod grad_accum;
mod params;
mod schedule;
#[cfg(test)]
mod tests;

pub use adamw::{copy_into, deep_copy, AdamW, AdamWParams, StepOutcome, NON_FINITE_UPDATE};
pub use grad_accum::GradAccum;
pub use params::Params;
pub use schedule::Schedule;

/// Elements per chunk of the optimizer's in-place arithmetic ([`GradAccum::add`],
/// [`GradAccum::clip`], [`AdamW::step`]): the temporaries of a step are a few chunks, not a
/// copy of the largest parameter (the 545M-element embedding of a 7B model).
pub const STEP_CHUNK_ELEMS: usize = 1 << 22;

/// `(offset, len)` of the chunks of `n` elements.
fn chunks(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n)
        .step_by(STEP_CHUNK_ELEMS)
        .map(move |o| (o, STEP_CHUNK_ELEMS.min(n - o)))
}

/// A flat view of `t` over the same storage, for in-place writes (`slice_set`).
fn flat_view(t: &Tensor, what: &str) -> candle_core::Result<Tensor> {
    if !t.is_contiguous() {
        return Err(candle_core::Error::Msg(format!(
            "optimizer: {what} is not contiguous, cannot update it in place"
        )));
    }
    t.flatten_all()
}
