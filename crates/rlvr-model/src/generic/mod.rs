//! The device-generic path (every device, every dtype; the CPU's in bf16 / f16): a decoder
//! layer from tensor ops with its backward (`layer`), its chunked attention (`attention`), and
//! the KV-cached sampling forward built from the same layer (`decode`).

pub(crate) mod attention;
pub(crate) mod decode;
pub(crate) mod layer;
