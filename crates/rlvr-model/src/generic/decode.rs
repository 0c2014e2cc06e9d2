//! The device-generic KV-cached sampling forward: the decoder layers of `layer.rs` (the
//! training step's, with the attention reading the cache), the final norm and the vocabulary
//! projection of the last position.

use candle_core::{DType, Tensor};

use crate::cpu::matmul::matmul;
use crate::error::Result;
use crate::generic::layer::{self, Inputs};
use crate::kv_cache::KvCache;
use crate::model::{upcast, Decoder};

/// Runs `input_ids` `[B, T]` (new tokens only, their key flags already in the cache: see
/// [`KvCache::begin`]) through the model, writing the cache's new positions, and returns the
/// f32 logits `[B, vocab]` of the last position. Builds no autograd graph.
pub(crate) fn forward(
    model: &Decoder,
    input_ids: &Tensor,
    positions: &[Vec<u32>],
    cache: &mut KvCache,
) -> Result<Tensor> {
    let (b, t) = input_ids.dims2()?;
    let key_ok = cache.key_ok();
    let key_ok = if key_ok.iter().all(|r| r.iter().all(|&x| x)) {
        None
    } else {
        let l = cache.len() + t;
        let flat: Vec<f32> = key_ok
            .iter()
            .flat_map(|r| r.iter().map(|&ok| if ok { 1f32 } else { 0f32 }))
            .collect();
        let ok = Tensor::from_vec(flat, (b, l), model.device())?;
        Some(ok.to_dtype(upcast(model.dtype()))?)
    };
    let (cos, sin) = model.rope_tables(positions)?;
    // detached weights: sampling builds no autograd graph
    let m = model.detached()?;
    let inputs = Inputs {
        cos: &cos,
        sin: &sin,
        rot: &m.rot,
        key_ok: key_ok.as_ref(),
        segments: None,
        chunk: m.attn_chunk_rows,
    };
    let mut xs = m
        .embed_tokens
        .embedding(&input_ids.flatten_all()?)?
        .reshape((b, t, m.cfg.hidden_size))?;
    for (li, lay) in m.layers.iter().enumerate() {
        xs = layer::forward(&m.cfg, li, lay, &xs, &inputs, Some(&mut *cache), false)?.0;
    }
    let last = xs.narrow(1, t - 1, 1)?.squeeze(1)?;
    let h = layer::rms_norm(&last, &m.norm, m.cfg.rms_norm_eps)?;
    Ok(matmul(&h, &m.lm_head.t()?)?.to_dtype(DType::F32)?)
}
