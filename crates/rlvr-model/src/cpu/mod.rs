//! The CPU path in f32 / f64: the matrix product ([`matmul`], through a run-time CBLAS,
//! [`blas`], or the gemm crate), the fused kernels of a decoder layer with their backwards
//! (`kernels`), the decoder layer's forward and hand-written backward (`layer`), and the
//! KV-cached sampling forward on plain buffers from the same kernels (`decode`).

pub mod blas;
pub(crate) mod decode;
pub(crate) mod kernels;
pub(crate) mod layer;
pub mod matmul;
