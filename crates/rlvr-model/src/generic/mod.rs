//! The device-generic path (every device, every dtype; the CPU's in bf16 / f16): tensor-op
//! kernels that run wherever candle does.

pub(crate) mod attention;
