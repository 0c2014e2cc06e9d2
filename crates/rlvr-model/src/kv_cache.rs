//! The key/value cache of the sampling forward, one type for both device paths.
//!
//! Per layer a `[B, kv_heads, capacity, head_dim]` key and value buffer, of which positions
//! `0..len()` are filled, and per row one flag per cached position (false for the left padding
//! of a prompt). Buffers are allocated once, for `capacity` positions
//! ([`KvCache::with_capacity`]; sampling sizes them for the longest prompt plus
//! `max_new_tokens`), and every step writes its new keys and values in place (`slice_set`):
//! the device-generic attention reads the filled prefix as a view, the CPU decode the buffers'
//! elements. A cache from [`KvCache::new`] has no capacity yet and grows by doubling
//! (amortized O(1) copies per position). Dropping or repeating batch rows
//! ([`KvCache::select_rows`]) is an index-select on the device.

use candle_core::{DType, Tensor};

use crate::config::DecoderConfig;
use crate::error::{Error, Result};

/// The key/value cache of [`crate::Decoder::forward_cached`] (module docs).
#[derive(Clone, Default)]
pub struct KvCache {
    layers: Vec<Option<(Tensor, Tensor)>>,
    len: usize,
    capacity: usize,
    /// Per row, one flag per cached position: false for a padding key.
    key_ok: Vec<Vec<bool>>,
    /// Buffers the CPU decode reuses from step to step (kept here so that one generation
    /// allocates them once).
    pub(crate) scratch: Vec<Vec<f32>>,
    /// The weights rounded to bf16 for the CPU decode's bf16 products (`cpu/decode.rs`), made
    /// at the first decode step that uses them and handed from one batch's cache to the next
    /// of the same `generate` call: one generation's weights do not change.
    pub(crate) bf16_weights: DecodeWeights,
}

/// The CPU decode's bf16 weights of one generation, once made ([`KvCache::bf16_weights`]).
pub(crate) type DecodeWeights = Option<std::sync::Arc<crate::cpu::skinny_bf16::Bf16Weights>>;

impl KvCache {
    /// An empty cache for `num_layers` layers that grows on demand.
    pub fn new(num_layers: usize) -> Self {
        Self::with_capacity(num_layers, 0)
    }

    /// An empty cache for `num_layers` layers whose buffers, allocated at the first write, hold
    /// `capacity` positions (more only by growing, i.e. copying).
    pub fn with_capacity(num_layers: usize, capacity: usize) -> Self {
        Self {
            layers: vec![None; num_layers],
            capacity,
            ..Self::default()
        }
    }

    /// Bytes of keys and values one batch row holds for `positions` positions:
    /// `layers * 2 * kv_heads * head_dim * positions * dtype size`.
    pub fn bytes_per_row(cfg: &DecoderConfig, dtype: DType, positions: usize) -> usize {
        cfg.num_hidden_layers
            * 2
            * cfg.num_key_value_heads
            * cfg.head_dim
            * positions
            * dtype.size_in_bytes()
    }

    /// Cached sequence length (0 when empty).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Positions the allocated buffers hold (0 before the first write).
    pub fn capacity(&self) -> usize {
        self.layers
            .iter()
            .flatten()
            .next()
            .map_or(0, |(k, _)| k.dim(2).unwrap_or(0))
    }

    /// Keeps (and reorders, or repeats) batch rows: row `i` of the result is row `rows[i]`.
    pub fn select_rows(&mut self, rows: &[usize]) -> Result<()> {
        if let Some(&bad) = rows.iter().find(|&&r| r >= self.key_ok.len()) {
            return Err(Error::InvalidArgument(format!(
                "KV cache row {bad} of {}",
                self.key_ok.len()
            )));
        }
        if let Some((k, _)) = self.layers.iter().flatten().next() {
            let idx: Vec<u32> = rows.iter().map(|&r| r as u32).collect();
            let idx = Tensor::from_vec(idx, rows.len(), k.device())?;
            for (k, v) in self.layers.iter_mut().flatten() {
                *k = k.index_select(&idx, 0)?;
                *v = v.index_select(&idx, 0)?;
            }
        }
        self.key_ok = rows.iter().map(|&r| self.key_ok[r].clone()).collect();
        Ok(())
    }

    /// The key flags of every row (module docs): `len()` cached positions, plus the new ones
    /// of a forward in progress.
    pub(crate) fn key_ok(&self) -> &[Vec<bool>] {
        &self.key_ok
    }

    /// Starts a forward of `new_ok[b].len()` new positions per row: appends their key flags
    /// (on an empty cache they set the number of rows). Every layer then [`Self::write`]s, and
    /// [`Self::advance`] ends the forward.
    pub(crate) fn begin(&mut self, new_ok: &[Vec<bool>]) -> Result<()> {
        let t = new_ok.first().map_or(0, Vec::len);
        if new_ok.iter().any(|r| r.len() != t) {
            return Err(Error::InvalidArgument(
                "key flags: rows of different lengths".into(),
            ));
        }
        if self.key_ok.is_empty() && self.len == 0 {
            self.key_ok = vec![Vec::with_capacity(self.capacity.max(t)); new_ok.len()];
        }
        if self.key_ok.len() != new_ok.len() {
            return Err(Error::InvalidArgument(format!(
                "key flags for {} rows, the KV cache holds {}",
                new_ok.len(),
                self.key_ok.len()
            )));
        }
        for (all, new) in self.key_ok.iter_mut().zip(new_ok) {
            all.truncate(self.len);
            all.extend_from_slice(new);
        }
        Ok(())
    }

    /// Writes layer `li`'s new keys and values `[B, kv_heads, T, head_dim]` at positions
    /// `len()..len() + T` and returns views of positions `0..len() + T`.
    pub(crate) fn write(&mut self, li: usize, k: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> {
        let (b, kvh, t, hd) = k.dims4()?;
        let need = self.len + t;
        let grow = |old: Option<&Tensor>, new: &Tensor| -> Result<Tensor> {
            let cap = match old {
                Some(o) if o.dim(2)? >= need => return Ok(o.clone()),
                Some(o) => (2 * o.dim(2)?).max(need),
                None if self.capacity >= need => self.capacity,
                None => need.max(self.capacity),
            };
            let buf = Tensor::zeros((b, kvh, cap, hd), new.dtype(), new.device())?;
            if let Some(o) = old {
                if self.len > 0 {
                    buf.slice_set(&o.narrow(2, 0, self.len)?.contiguous()?, 2, 0)?;
                }
            }
            Ok(buf)
        };
        let old = self.layers[li].as_ref();
        let (kb, vb) = (grow(old.map(|o| &o.0), k)?, grow(old.map(|o| &o.1), v)?);
        kb.slice_set(&k.contiguous()?, 2, self.len)?;
        vb.slice_set(&v.contiguous()?, 2, self.len)?;
        let views = (kb.narrow(2, 0, need)?, vb.narrow(2, 0, need)?);
        self.layers[li] = Some((kb, vb));
        Ok(views)
    }

    /// Layer `li`'s whole key and value buffers `[B, kv_heads, capacity, head_dim]` (after its
    /// [`Self::write`]).
    pub(crate) fn buffers(&self, li: usize) -> Result<&(Tensor, Tensor)> {
        self.layers
            .get(li)
            .and_then(Option::as_ref)
            .ok_or_else(|| Error::InvalidArgument(format!("KV cache layer {li} not written")))
    }

    /// Ends a forward of `t` new positions (after every layer's [`Self::write`]).
    pub(crate) fn advance(&mut self, t: usize) {
        self.len += t;
    }

    /// Makes the cache fit a model of `num_layers` layers (a cache built for another model
    /// starts over, keeping its capacity).
    pub(crate) fn fit_layers(&mut self, num_layers: usize) {
        if self.layers.len() != num_layers {
            *self = Self::with_capacity(num_layers, self.capacity);
        }
    }
}
