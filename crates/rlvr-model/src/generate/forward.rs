//! The sampling forward [`Decoder::forward_cached`]: checks its input, then runs the KV-cached
//! forward of the model's device path (the CPU decode of `cpu/decode.rs` for a CPU model in
//! f32, else the device-generic one of `generic/decode.rs`), both on the one [`KvCache`].

use candle_core::Tensor;

use crate::error::{Error, Result};
use crate::kv_cache::KvCache;
use crate::model::Decoder;

impl Decoder {
    /// The sampling forward: runs `input_ids` `[B, T]` (new tokens only) through the model with
    /// the KV cache, extending it, and returns the f32 logits `[B, vocab]` of the last position.
    ///
    /// `positions[b]` holds the T RoPE positions of row b; `key_ok[b]` one flag per new token,
    /// false for a padding key (left padding of prompts); the cache keeps them for the later
    /// steps. A query always sees its own key. Builds no autograd graph.
    pub fn forward_cached(
        &self,
        input_ids: &Tensor,
        positions: &[Vec<u32>],
        key_ok: &[Vec<bool>],
        cache: &mut KvCache,
    ) -> Result<Tensor> {
        let (b, t) = input_ids.dims2()?;
        let pos_ok = positions.len() == b && positions.iter().all(|r| r.len() == t);
        let flags_ok = key_ok.len() == b && key_ok.iter().all(|r| r.len() == t);
        if t == 0 || !pos_ok || !flags_ok {
            return Err(Error::InvalidArgument(format!(
                "forward_cached: input [{b}, {t}] needs {b} rows of {t} positions and key flags \
                 (t >= 1)"
            )));
        }
        cache.fit_layers(self.layers.len());
        cache.begin(key_ok)?;
        let logits = if self.uses_cpu_decode() {
            let ids = input_ids.flatten_all()?.to_vec1::<u32>()?;
            let vocab = self.cfg.vocab_size;
            if let Some(&bad) = ids.iter().find(|&&i| i as usize >= vocab) {
                return Err(Error::InvalidArgument(format!(
                    "token id {bad} >= vocab_size {vocab}"
                )));
            }
            crate::cpu::decode::forward(self, &ids, &positions.concat(), cache)?
        } else {
            crate::generic::decode::forward(self, input_ids, positions, cache)?
        };
        cache.advance(t);
        Ok(logits)
    }
}
