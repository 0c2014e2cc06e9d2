//! The CPU path in f32 / f64: the matrix product ([`matmul`], through a run-time CBLAS,
//! [`blas`], or the built-in matrixmultiply or gemm crate), the fused kernels of a decoder layer with their backwards
//! (`kernels`), the decoder layer's forward and hand-written backward (`layer`), and the
//! KV-cached sampling forward on plain buffers from the same kernels (`decode`).

pub mod blas;
pub mod blas_choice;
pub(crate) mod decode;
pub(crate) mod kernels;
pub(crate) mod layer;
pub mod library;
pub mod matmul;
mod operand;
pub(crate) mod skinny;
pub(crate) mod skinny_bf16;

use candle_core::{Tensor, WithDType};

/// Calls `f` with the elements of CPU tensor `t` as `&[T]`, row-major (copied first only when
/// `t` is not contiguous); an error naming `what` for a tensor on another device, candle's for
/// another dtype.
pub(crate) fn with_cpu_slice<T: WithDType, R>(
    t: &Tensor,
    what: &str,
    f: impl FnOnce(&[T]) -> R,
) -> candle_core::Result<R> {
    let t = t.contiguous()?;
    let (storage, layout) = t.storage_and_layout();
    let candle_core::Storage::Cpu(cpu) = &*storage else {
        candle_core::bail!(
            "{what}: CPU tensors only, got one on {:?}",
            t.device().location()
        );
    };
    let all = cpu.as_slice::<T>()?;
    Ok(f(&all[layout.start_offset()..][..t.elem_count()]))
}
