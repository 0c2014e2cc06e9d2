//! The device-generic KV-cached sampling forward [`Qwen::forward_cached`]: the decoder layers
//! of `layer.rs` (the training step's, with the attention reading the cache), the final norm
//! and the vocabulary projection of the last position.

use candle_core::{DType, Tensor};

use crate::cpu::matmul::matmul;
use crate::error::Result;
use crate::generic::layer::{self, Inputs};
use crate::model::{upcast, KvCache, Qwen};

impl Qwen {
    /// The sampling forward: runs `input_ids` `[B, T]` (new tokens only) through the model with
    /// the KV cache, extending it, and returns the f32 logits `[B, vocab]` of the last position.
    ///
    /// `positions[b]` holds the T RoPE positions of row b; `key_ok[b]` has one flag per cached
    /// plus new key (`cache.len() + T`), false for padding keys (left padding of prompts).
    /// Builds no autograd graph.
    pub fn forward_cached(
        &self,
        input_ids: &Tensor,
        positions: &[Vec<u32>],
        key_ok: &[Vec<bool>],
        cache: &mut KvCache,
    ) -> Result<Tensor> {
        let (b, t) = input_ids.dims2()?;
        if cache.layers.len() != self.layers.len() {
            *cache = KvCache::with_capacity(self.layers.len(), cache.capacity);
        }
        let l = cache.len() + t;
        let key_ok = if key_ok.iter().all(|r| r.iter().all(|&x| x)) {
            None
        } else {
            let flat: Vec<f32> = key_ok
                .iter()
                .flat_map(|r| r.iter().map(|&ok| if ok { 1f32 } else { 0f32 }))
                .collect();
            let ok = Tensor::from_vec(flat, (b, l), &self.device)?;
            Some(ok.to_dtype(upcast(self.dtype))?)
        };
        let (cos, sin) = self.rope_tables(positions)?;
        // detached weights: sampling builds no autograd graph
        let m = self.detached()?;
        let inputs = Inputs {
            cos: &cos,
            sin: &sin,
            rot: &m.rot,
            key_ok: key_ok.as_ref(),
            chunk: m.attn_chunk_rows,
        };
        let mut xs = m
            .embed_tokens
            .embedding(&input_ids.flatten_all()?)?
            .reshape((b, t, self.cfg.hidden_size))?;
        for (li, lay) in m.layers.iter().enumerate() {
            xs = layer::forward(&m.cfg, li, lay, &xs, &inputs, Some(&mut *cache), false)?.0;
        }
        cache.advance(t);
        let last = xs.narrow(1, t - 1, 1)?.squeeze(1)?;
        let h = layer::rms_norm(&last, &m.norm, m.cfg.rms_norm_eps)?;
        Ok(matmul(&h, &m.lm_head.t()?)?.to_dtype(DType::F32)?)
    }
}
