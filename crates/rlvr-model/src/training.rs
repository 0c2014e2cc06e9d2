//! The memory-bounded training step [`Decoder::loss_and_grads`] and the graph-free forward
//! [`Decoder::response_logprobs_no_grad`].
//!
//! candle has no activation checkpointing and no way to give a tensor op a hand-written
//! backward on every device, so the training step runs its own backward walk, piece by piece,
//! each piece a small autograd graph (or a hand-written backward) from a leaf [`Var`]:
//!
//! 1. forward without a graph (weights detached): embeddings, the decoder layers, the final
//!    norm, then the response log-probs (and entropies) from the vocabulary projection in
//!    chunks of at most [`Decoder::set_logits_chunk_elems`] logits, kept only as `[N]` vectors;
//! 2. the loss: `loss_fn` gets the log-probs (and entropies) as leaf variables; its backward
//!    gives `g_lp = dL/dlogp` and `g_ent = dL/dH`;
//! 3. the vocabulary backward, chunk by chunk, the logits recomputed (on the CPU fused path
//!    kept from step 1 instead when they are a single chunk): with `p = softmax(z)`,
//!    `z = h W^T / T`: `dL/dz = g_lp (1[j = target] - p) - g_ent p (log p + H)`,
//!    `dh = (dL/dz / T) W`, `dW += (dL/dz / T)^T h` (the entropy terms only when the loss
//!    depends on the entropy);
//! 4. the final norm, then each decoder layer in reverse: its input as a leaf variable `x`,
//!    its output `y` with a graph, and the backward of `sum(y * dL/dy)` gives the layer's
//!    parameter gradients and `dL/dx`, the next layer's upstream gradient (on the CPU fused
//!    path a hand-written backward instead, `cpu/layer.rs`, with the same contract);
//! 5. the embedding gradient from `dL/dx_0`.
//!
//! With `gradient_checkpointing` the forward of step 1 keeps only each layer's input and
//! step 4 recomputes the layer (verl's `enable_gradient_checkpointing`); without it, step 1
//! already builds each layer's graph and keeps it until step 4. The gradients are the same
//! computation either way (tested equal in f32 within 1e-5 relative).
//!
//! On the device-generic path (every device but the CPU in f32 / f64, or any device with
//! `Decoder::set_force_generic`, feature `test-hooks`) a layer's attention is `generic/attention.rs` (queries in chunks, only the
//! output and log-sum-exp stored, its own backward, masks built on the device): a layer's
//! stored activations and its working memory grow linearly with the sequence length. On the
//! CPU in f32 / f64 a layer is the fused kernels of `cpu/kernels.rs`, whose attention keeps the
//! `[heads, len, len]` probabilities of every block (a row, or one sequence of a packed row) of
//! the layer being differentiated (with checkpointing, of one layer at a time).
//!
//! A packed batch ([`TokenBatch::packed`]) holds several sequences per row; each attends only
//! to itself, with positions counted from its own start, so every result is the padded batch's.
//! On the fused path the attention runs per sequence; on the device-generic path a mask hides
//! the other sequences of the row.

use std::sync::Arc;

use candle_core::backprop::GradStore;
use candle_core::{DType, Tensor, Var};

use crate::batch::{Packing, ResponseLogProbs, TokenBatch};
use crate::cpu::kernels::{self, AttnSpec};
use crate::cpu::layer::{self, LayerTape};
use crate::cpu::matmul::matmul;
use crate::error::{Error, Result};
use crate::generic;
use crate::model::{row_sums_f64, upcast, Decoder, Layer};

/// Options of [`Decoder::loss_and_grads`].
#[derive(Debug, Clone, Copy)]
pub struct TrainForwardOptions {
    /// Sampling temperature the log-probs are taken at (`log softmax(logits / T)`).
    pub temperature: f64,
    /// Compute the entropies (given to `loss_fn` as `ResponseLogProbs::entropy`). Their
    /// backward terms run only when the loss depends on them.
    pub with_entropy: bool,
    /// Keep only each decoder layer's input in the forward and recompute the layer in the
    /// backward (`model.gradient_checkpointing`).
    pub gradient_checkpointing: bool,
}

impl Default for TrainForwardOptions {
    fn default() -> Self {
        Self {
            temperature: 1.0,
            with_entropy: false,
            gradient_checkpointing: false,
        }
    }
}

/// Result of [`Decoder::loss_and_grads`].
pub struct TrainStepOutput {
    /// The log-probs (and entropies) given to the loss, detached, `[B, R]`, 0 at padding.
    pub out: ResponseLogProbs,
    /// The loss value.
    pub loss: f64,
    /// `dL/dw` for every model weight the loss depends on, keyed by the weight tensors (the
    /// `VarMap` variables), in the weights' dtype, and nothing else; empty when the loss is
    /// not finite.
    pub grads: GradStore,
}

/// The vocabulary forward's per-token results, `[n]` each, in the upcast dtype.
struct VocabOut {
    logprobs: Tensor,
    /// Row log-sum-exp of `z = h W^T / T`.
    lse: Tensor,
    entropy: Option<Tensor>,
    /// The logits `z`, kept for the backward when they are a single chunk on the fused CPU
    /// path (so the backward does not recompute them; the backward then holds `z` and
    /// `dL/dz`, fewer `[rows, V]` blocks than its recomputing path).
    logits: Option<Tensor>,
}

/// Per-batch constants of one walk.
struct Walk {
    /// Rows of the batch (fewer than the sequences when packed).
    b: usize,
    t: usize,
    /// Sequences of the batch: the rows of the `[seqs, R]` results.
    seqs: usize,
    /// `[B*T]` u32 token ids.
    ids: Tensor,
    /// Fused CPU attention spec (fused path only).
    spec: Option<Arc<AttnSpec>>,
    /// `[1, 1, T, hd]` RoPE tables (generic path only).
    rope: Option<(Tensor, Tensor)>,
    /// `[B, T]` 1 = real key, 0 = padding, in the upcast dtype; `None` for a right-padded batch.
    key_ok: Option<Tensor>,
    /// `[B, T]` u32, the sequence of each position of a packed batch (generic path only).
    segments: Option<Tensor>,
    /// Indices into `[B*T]` of the positions that predict response tokens, `[n]` u32.
    rows: Tensor,
    /// `[n, 1]` u32 target tokens.
    targets: Tensor,
    /// Indices into `[seqs*R]` of those positions, `[n]` u32.
    slots: Tensor,
    n: usize,
    r: usize,
}

impl Walk {
    /// The generic layer's inputs (generic path only).
    fn inputs<'a>(&'a self, m: &'a Decoder) -> Result<generic::layer::Inputs<'a>> {
        let (cos, sin) = self.rope.as_ref().ok_or_else(|| {
            Error::InvalidArgument("training walk: no RoPE tables on the fused path".into())
        })?;
        Ok(generic::layer::Inputs {
            cos,
            sin,
            rot: &m.rot,
            key_ok: self.key_ok.as_ref(),
            segments: self.segments.as_ref(),
            chunk: m.attn_chunk_rows,
        })
    }
}

/// What a layer's backward needs (see the module docs, step 4).
enum Tape {
    Fused {
        out: Tensor,
        /// What the hand-written backward needs (`None` without a graph).
        tape: Option<LayerTape>,
    },
    Generic {
        /// The output `[B*T, H]`.
        out: Tensor,
        /// What the layer's backward needs (`None` without a graph).
        tape: Option<generic::layer::Tape>,
    },
}

impl Tape {
    fn out(&self) -> &Tensor {
        match self {
            Tape::Fused { out, .. } | Tape::Generic { out, .. } => out,
        }
    }
}

/// The gradients of `weights` in `st`, nothing else (candle's backward also returns gradients
/// of non-variable operands: broadcast tables, detached upstream gradients).
fn only(mut st: GradStore, weights: &[&Tensor]) -> GradStore {
    let mut out = GradStore::default();
    for w in weights {
        if let Some(g) = st.remove(w) {
            out.insert(w, g);
        }
    }
    out
}

/// [`kernels::vocab_rows`] in tensor ops (every device): per row of logits `z` `[rows, V]`,
/// `(log p[target], lse, H)` `[rows]` each in `z`'s dtype, from `m = max z`, `d = z - m`,
/// `e = exp(d)`, the sums `s = sum e` and `sum e d` taken in f64 ([`row_sums_f64`]):
/// `lse = m + log s`, `log p[target] = z[target] - lse`, `H = log s - sum(e d) / s`, each in f64
/// and rounded once. At most three `[rows, V]` tensors are alive at once (`d`, `e`, `e d`).
fn generic_vocab_rows(
    z: Tensor,
    targets: &Tensor,
    with_entropy: bool,
) -> Result<(Tensor, Tensor, Option<Tensor>)> {
    let dtype = z.dtype();
    let f64_ = |t: &Tensor| t.to_dtype(DType::F64);
    let m = z.max_keepdim(1)?;
    let zt = f64_(&z.gather(targets, 1)?)?;
    let d = z.broadcast_sub(&m)?;
    drop(z);
    let e = d.exp()?;
    let s = row_sums_f64(&e)?;
    let ln_s = s.log()?;
    let lse = (&ln_s + f64_(&m)?)?;
    let lp = (zt - &lse)?.squeeze(1)?.to_dtype(dtype)?;
    let ent = if with_entropy {
        let sd = row_sums_f64(&(e * d)?)?;
        Some((ln_s - (sd / s)?)?.squeeze(1)?.to_dtype(dtype)?)
    } else {
        None
    };
    Ok((lp, lse.squeeze(1)?.to_dtype(dtype)?, ent))
}

impl Decoder {
    /// The shapes, RoPE tables, key flags and (packed) sequence layout of the fused CPU
    /// attention for a `[B, T]` batch.
    fn fused_spec(
        &self,
        (b, t): (usize, usize),
        key_ok: Option<Vec<Vec<bool>>>,
        packing: Option<&Packing>,
    ) -> Arc<AttnSpec> {
        let hd = self.cfg.head_dim;
        let positions: Vec<u32> = match packing {
            Some(p) => p.positions.concat(),
            None => (0..t as u32).collect(),
        };
        let (cos, sin) = crate::rope::cos_sin(&self.inv_freq, &positions);
        Arc::new(AttnSpec {
            b,
            t,
            heads: self.cfg.num_attention_heads,
            kv_heads: self.cfg.num_key_value_heads,
            head_dim: hd,
            scale: 1.0 / (hd as f64).sqrt(),
            cos,
            sin,
            key_ok,
            segments: packing.map(|p| p.segments.clone()),
        })
    }

    /// Sets the query positions per chunk of the device-generic attention (default 256):
    /// one chunk's scores are `[B, heads, rows, <= T]`.
    pub fn set_attention_chunk_rows(&mut self, rows: usize) {
        self.attn_chunk_rows = rows.max(1);
    }

    /// Runs the training step on the device-generic path even on the CPU in f32 / f64 (the
    /// path CUDA takes: plain tensor ops, `generic/attention.rs` attention), and samples through
    /// the device-generic KV-cached forward (`generic/decode.rs`) instead of the CPU decode of
    /// `cpu/decode.rs`. For tests and measurements (feature `test-hooks`).
    #[cfg(feature = "test-hooks")]
    pub fn set_force_generic(&mut self, on: bool) {
        self.force_generic = on;
    }

    fn walk(&self, batch: &TokenBatch, temperature: f64) -> Result<Walk> {
        if !(temperature > 0.0 && temperature.is_finite()) {
            return Err(Error::InvalidArgument(format!(
                "temperature must be positive, got {temperature}"
            )));
        }
        let (b, t) = batch.input_ids.dims2()?;
        let packing = batch.packing.as_ref();
        let seqs = batch.len();
        let place: Vec<(usize, usize)> = match packing {
            Some(p) => p.place.clone(),
            None => (0..seqs).map(|i| (i, 0)).collect(),
        };
        let am = batch
            .attention_mask
            .to_dtype(DType::U32)?
            .to_vec2::<u32>()?;
        // a packed batch's padding is its own segment: the segments hide it
        let right_padded = packing.is_some()
            || am
                .iter()
                .all(|row| row.windows(2).all(|w| w[0] != 0 || w[1] == 0));
        let dev = &self.device;
        let (spec, rope, key_ok, segments) = if self.uses_fused() {
            let key_ok = (!right_padded).then(|| {
                am.iter()
                    .map(|r| r.iter().map(|&x| x != 0).collect())
                    .collect()
            });
            (
                Some(self.fused_spec((b, t), key_ok, packing)),
                None,
                None,
                None,
            )
        } else {
            let positions = match packing {
                Some(p) => p.positions.clone(),
                None => vec![(0..t as u32).collect::<Vec<_>>()],
            };
            let key_ok = if right_padded {
                None
            } else {
                Some(batch.attention_mask.to_dtype(upcast(self.dtype))?)
            };
            let segments = packing
                .map(|p| Tensor::from_vec(p.segments.concat(), (b, t), dev))
                .transpose()?;
            (None, Some(self.rope_tables(&positions)?), key_ok, segments)
        };
        let ids = batch.input_ids.to_vec2::<u32>()?;
        let r = batch.max_response_len();
        let (mut rows, mut targets, mut slots) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &(row, col)) in place.iter().enumerate() {
            let (start, len) = (batch.response_start[i], batch.response_len[i]);
            for k in 0..len {
                rows.push((row * t + col + start - 1 + k) as u32);
                targets.push(ids[row][col + start + k]);
                slots.push((i * r + k) as u32);
            }
        }
        let n = rows.len();
        Ok(Walk {
            b,
            t,
            seqs,
            ids: batch.input_ids.flatten_all()?,
            spec,
            rope,
            key_ok,
            segments,
            rows: Tensor::from_vec(rows, n, dev)?,
            targets: Tensor::from_vec(targets, (n, 1), dev)?,
            slots: Tensor::from_vec(slots, n, dev)?,
            n,
            r,
        })
    }

    /// Decoder layer `li` on `[B*T, H]` rows (`x` without a graph). With `graph`, what the
    /// backward needs: on the fused path the hand-written backward's tape (`cpu/layer.rs`); on
    /// the generic path the layer input and the attention output become leaf variables so
    /// their gradients can be read (the caller passes attached weights). Without, nothing is
    /// tracked (detached model).
    fn layer_pass(&self, li: usize, x: &Tensor, w: &Walk, graph: bool) -> Result<Tape> {
        let layer = &self.layers[li];
        if let Some(spec) = &w.spec {
            let (out, tape) = layer::forward(&self.cfg, layer, x, spec, graph)?;
            return Ok(Tape::Fused { out, tape });
        }
        let h = self.cfg.hidden_size;
        let xs = x.reshape((w.b, w.t, h))?;
        let (out, tape) =
            generic::layer::forward(&self.cfg, li, layer, &xs, &w.inputs(self)?, None, graph)?;
        Ok(Tape::Generic {
            out: out.reshape((w.b * w.t, h))?,
            tape,
        })
    }

    /// Backward of one layer: parameter gradients into `acc`, returns `dL/dx`.
    fn layer_backward(
        &self,
        li: usize,
        tape: Tape,
        g: &Tensor,
        w: &Walk,
        acc: &mut GradStore,
    ) -> Result<Tensor> {
        match tape {
            Tape::Fused { tape, .. } => {
                let tape = tape.expect("a layer tape for the backward has a graph");
                let spec = w.spec.as_ref().expect("fused walk has an attention spec");
                layer::backward(&self.cfg, &self.layers[li], tape, g, spec, acc)
            }
            Tape::Generic { tape, .. } => {
                let tape = tape.expect("a layer tape for the backward has a graph");
                let h = self.cfg.hidden_size;
                let dx = generic::layer::backward(
                    &self.cfg,
                    &self.layers[li],
                    tape,
                    &g.reshape((w.b, w.t, h))?,
                    &w.inputs(self)?,
                    acc,
                )?;
                Ok(dx.reshape((w.b * w.t, h))?)
            }
        }
    }

    /// The final RMSNorm on `[B*T, H]` rows (the same kernel as the rest of the path).
    fn final_norm(&self, x: &Tensor) -> Result<Tensor> {
        if self.uses_fused() {
            Ok(kernels::rms_norm(x, &self.norm, self.cfg.rms_norm_eps)?)
        } else {
            generic::layer::rms_norm(x, &self.norm, self.cfg.rms_norm_eps)
        }
    }

    fn chunk_rows(&self) -> usize {
        (self.logits_chunk_elems / self.cfg.vocab_size).max(1)
    }

    /// `z = h W^T / T` for rows `start..start+len`, in the upcast dtype.
    fn logits_chunk(
        &self,
        h: &Tensor,
        wt: &Tensor,
        start: usize,
        len: usize,
        temperature: f64,
    ) -> Result<Tensor> {
        let z = matmul(&h.narrow(0, start, len)?, wt)?.to_dtype(upcast(self.dtype))?;
        Ok(if temperature == 1.0 {
            z
        } else {
            (z / temperature)?
        })
    }

    /// Step 1's vocabulary part: `[n]` log-probs of `targets`, `[n]` row log-sum-exps of
    /// `z` (for the backward) and (optionally) `[n]` entropies, chunk by chunk, no graph
    /// (`h` and the weights detached). Per chunk, with `m = max z`, `d = z - m`, `e = exp(d)`,
    /// `s = sum e`: `lse = m + log s`, `log p[target] = z[target] - lse`,
    /// `H = log s - sum(e d) / s`, the sums over the vocabulary accumulated in f64 by blocks
    /// (`kernels::vocab_rows` on the fused CPU path, [`generic_vocab_rows`] elsewhere; one
    /// running f32 sum of 151,936 terms cost up to 1.8e-5 in log-prob and 2.8e-4 in entropy,
    /// tests/precision.rs). At most three `[rows, V]` f32 tensors are alive at once.
    fn vocab_forward(
        &self,
        h: &Tensor,
        w: &Walk,
        temperature: f64,
        with_entropy: bool,
        keep_logits: bool,
    ) -> Result<VocabOut> {
        if w.n == 0 {
            let z = Tensor::zeros(0, upcast(self.dtype), &self.device)?;
            return Ok(VocabOut {
                logprobs: z.clone(),
                lse: z.clone(),
                entropy: with_entropy.then_some(z),
                logits: None,
            });
        }
        let mut logits = None;
        let wt = self.lm_head.detach().t()?;
        let chunk = self.chunk_rows();
        let (mut lps, mut lses, mut ents) = (Vec::new(), Vec::new(), Vec::new());
        let targets = self.fused_targets(w)?;
        let mut start = 0;
        while start < w.n {
            let len = chunk.min(w.n - start);
            let z = self.logits_chunk(h, &wt, start, len, temperature)?;
            let (lp, lse, ent) = if let Some(t) = &targets {
                // CPU: one fused pass per row (cpu/kernels.rs), the same formulas
                let out = kernels::vocab_rows(&z, &t[start..start + len], with_entropy)?;
                if keep_logits && len == w.n {
                    logits = Some(z);
                }
                out
            } else {
                let targets = w.targets.narrow(0, start, len)?.contiguous()?;
                generic_vocab_rows(z, &targets, with_entropy)?
            };
            lps.push(lp);
            lses.push(lse);
            ents.extend(ent);
            start += len;
        }
        Ok(VocabOut {
            logprobs: Tensor::cat(&lps, 0)?,
            lse: Tensor::cat(&lses, 0)?,
            entropy: with_entropy.then(|| Tensor::cat(&ents, 0)).transpose()?,
            logits,
        })
    }

    /// Step 3: `(dL/dh [n, H], dL/dW [V, H])` in the weights' dtype, the logits recomputed
    /// (or taken from the forward when it kept them, one chunk on the fused CPU path) and
    /// `lse`, `H` taken from the forward. Per chunk, `a = g_lp / T`, `b = g_ent / T`:
    /// `dL/d(hW^T) = a 1[j = target] - p (a + b (log p + H))`. At most three `[rows, V]`
    /// f32 tensors alive at once, plus `dL/dW` (its f32 accumulator, one chunk's product and
    /// their sum: three `[V, H]` f32 tensors).
    fn vocab_backward(
        &self,
        h: &Tensor,
        w: &Walk,
        temperature: f64,
        fwd: &VocabOut,
        g_lp: &Tensor,
        g_ent: Option<&Tensor>,
    ) -> Result<(Tensor, Tensor)> {
        let up = upcast(self.dtype);
        let head = self.lm_head.detach();
        let wt = head.t()?;
        let chunk = self.chunk_rows();
        let inv_t = 1.0 / temperature;
        let mut dh = Vec::new();
        let mut dw = Tensor::zeros(head.shape(), up, &self.device)?;
        let targets = self.fused_targets(w)?;
        let mut start = 0;
        while start < w.n {
            let len = chunk.min(w.n - start);
            let rows =
                |x: &Tensor| -> Result<Tensor> { Ok(x.narrow(0, start, len)?.unsqueeze(1)?) };
            let a = (rows(g_lp)? * inv_t)?;
            let z = match &fwd.logits {
                Some(z) if len == w.n => z.clone(),
                _ => self.logits_chunk(h, &wt, start, len, temperature)?,
            };
            let dz = if let Some(t) = &targets {
                // CPU: one fused pass per row (cpu/kernels.rs), the same formulas
                let ent = match (g_ent, &fwd.entropy) {
                    (Some(ge), Some(ent)) => Some(((rows(ge)? * inv_t)?, rows(ent)?)),
                    _ => None,
                };
                let (lse, targets) = (rows(&fwd.lse)?, &t[start..start + len]);
                let dz =
                    kernels::vocab_grad(&z, targets, &lse, &a, ent.as_ref().map(|(b, h)| (b, h)))?;
                drop(z);
                dz
            } else {
                let mut logp = z.broadcast_sub(&rows(&fwd.lse)?)?;
                drop(z);
                let p = logp.exp()?;
                // coef = -(a + b (log p + H)), then dz = p coef + a 1[target]
                let coef = match (g_ent, &fwd.entropy) {
                    (Some(ge), Some(ent)) => {
                        logp = logp.broadcast_add(&rows(ent)?)?;
                        logp = logp.broadcast_mul(&(rows(ge)? * -inv_t)?)?;
                        logp.broadcast_sub(&a)?
                    }
                    _ => a.neg()?,
                };
                drop(logp);
                let dz = p.broadcast_mul(&coef)?;
                drop((p, coef));
                dz.scatter_add(&w.targets.narrow(0, start, len)?.contiguous()?, &a, 1)?
            };
            dh.push(matmul(&dz.to_dtype(self.dtype)?, &head)?);
            dw = (dw + matmul(&dz.t()?, &h.narrow(0, start, len)?.to_dtype(up)?)?)?;
            start += len;
        }
        Ok((Tensor::cat(&dh, 0)?, dw.to_dtype(self.dtype)?))
    }

    /// The target ids as a host vector on the fused CPU path (`None` elsewhere).
    fn fused_targets(&self, w: &Walk) -> Result<Option<Vec<u32>>> {
        if !self.uses_fused() {
            return Ok(None);
        }
        Ok(Some(w.targets.flatten_all()?.to_vec1::<u32>()?))
    }

    /// `[n]` values at `w.slots` scattered into a `[seqs, R]` tensor (0 elsewhere).
    fn to_slots(&self, x: &Tensor, w: &Walk) -> Result<Tensor> {
        let z = Tensor::zeros(w.seqs * w.r, x.dtype(), &self.device)?;
        let full = if w.n == 0 {
            z
        } else {
            z.index_add(&w.slots, x, 0)?
        };
        Ok(full.reshape((w.seqs, w.r))?)
    }

    /// The training forward without any autograd graph: the log-probs `log softmax(logits /
    /// temperature)[token]` of the response tokens of `batch` (and the entropies of those
    /// distributions, in nats, when asked), `[B, R]` with `R` the longest response, 0 at
    /// padding, f32 (f64 for an f64 model): the values [`Self::loss_and_grads`] hands its loss,
    /// for the old-log-prob, reference, evaluation and scoring passes. Memory: the
    /// activations of one layer at a time, the attention and vocabulary in chunks.
    pub fn response_logprobs_no_grad(
        &self,
        batch: &TokenBatch,
        with_entropy: bool,
        temperature: f64,
    ) -> Result<ResponseLogProbs> {
        let m = self.detached()?;
        let w = m.walk(batch, temperature)?;
        let mut x = m.embed_tokens.embedding(&w.ids)?;
        for li in 0..m.layers.len() {
            x = m.layer_pass(li, &x, &w, false)?.out().clone();
        }
        let h = m.final_norm(&x)?.index_select(&w.rows, 0)?;
        drop(x);
        let v = m.vocab_forward(&h, &w, temperature, with_entropy, false)?;
        Ok(ResponseLogProbs {
            logprobs: m.to_slots(&v.logprobs, &w)?,
            entropy: v.entropy.map(|e| m.to_slots(&e, &w)).transpose()?,
        })
    }

    /// One training forward and backward of `batch` in bounded memory (module docs).
    ///
    /// `loss_fn` receives the response log-probs (and entropies, with `with_entropy`) as
    /// `[B, R]` leaf tensors, 0 at padding, exactly the values of
    /// [`Self::response_logprobs_no_grad`], and returns a scalar loss built from them with
    /// candle ops. The result holds those values detached, the loss, and `dL/dw` for every
    /// weight, which equal the autograd gradients of the loss through a plain-op decoder
    /// (tested, and against finite differences in f64).
    /// When the loss is not finite, no backward runs and `grads` is empty.
    pub fn loss_and_grads<E, F>(
        &self,
        batch: &TokenBatch,
        opts: &TrainForwardOptions,
        loss_fn: F,
    ) -> std::result::Result<TrainStepOutput, E>
    where
        E: From<Error>,
        F: FnOnce(&ResponseLogProbs) -> std::result::Result<Tensor, E>,
    {
        let mut grads = GradStore::default();
        let mut out = self.loss_and_grads_into(batch, opts, loss_fn, |piece| {
            grads.extend(piece).map_err(|e| E::from(Error::from(e)))
        })?;
        out.grads = grads;
        Ok(out)
    }

    /// [`Self::loss_and_grads`] handing the gradients out piece by piece as the backward walk
    /// produces them, so that no full set of gradients in the weights' dtype is ever alive:
    /// `sink` receives, in order, the loss's own store, the vocabulary projection's (for an
    /// untied head), the final norm's, each decoder layer's (last layer first) and the
    /// embedding's (for tied embeddings together with the head's, summed in the weights'
    /// dtype exactly as [`Self::loss_and_grads`] sums them). Every weight appears in exactly
    /// one piece, so summing the pieces gives the store [`Self::loss_and_grads`] returns, bit
    /// for bit. The returned `grads` is empty; the sink is not called when the loss is not
    /// finite.
    pub fn loss_and_grads_into<E, F, S>(
        &self,
        batch: &TokenBatch,
        opts: &TrainForwardOptions,
        loss_fn: F,
        mut sink: S,
    ) -> std::result::Result<TrainStepOutput, E>
    where
        E: From<Error>,
        F: FnOnce(&ResponseLogProbs) -> std::result::Result<Tensor, E>,
        S: FnMut(GradStore) -> std::result::Result<(), E>,
    {
        let det = self.detached()?;
        let w = self.walk(batch, opts.temperature)?;
        let nl = self.layers.len();
        let ckpt = opts.gradient_checkpointing;
        // 1. forward: layer inputs (checkpointing) or layer graphs
        let mut x = det.embed_tokens.embedding(&w.ids).map_err(Error::from)?;
        let mut inputs = Vec::new();
        let mut tapes = Vec::new();
        for li in 0..nl {
            if ckpt {
                let out = det.layer_pass(li, &x, &w, false)?.out().clone();
                inputs.push(std::mem::replace(&mut x, out));
            } else {
                let tape = self.layer_pass(li, &x, &w, true)?;
                x = tape.out().detach();
                tapes.push(tape);
            }
        }
        let x_last = Var::from_tensor(&x).map_err(Error::from)?;
        drop(x);
        let h_graph = self
            .final_norm(x_last.as_tensor())?
            .index_select(&w.rows, 0)
            .map_err(Error::from)?;
        let h = h_graph.detach();
        let fwd = det.vocab_forward(&h, &w, opts.temperature, opts.with_entropy, true)?;
        // 2. the loss on leaf log-probs and entropies
        let lp_var = Var::from_tensor(&self.to_slots(&fwd.logprobs, &w)?).map_err(Error::from)?;
        let ent_var = match &fwd.entropy {
            Some(e) => Some(Var::from_tensor(&self.to_slots(e, &w)?).map_err(Error::from)?),
            None => None,
        };
        let out = ResponseLogProbs {
            logprobs: lp_var.as_tensor().clone(),
            entropy: ent_var.as_ref().map(|v| v.as_tensor().clone()),
        };
        let loss = loss_fn(&out)?;
        let out = ResponseLogProbs {
            logprobs: out.logprobs.detach(),
            entropy: out.entropy.map(|e| e.detach()),
        };
        let value = loss
            .to_dtype(DType::F64)
            .and_then(|l| l.to_scalar::<f64>())
            .map_err(Error::from)?;
        let done = |out| TrainStepOutput {
            out,
            loss: value,
            grads: GradStore::default(),
        };
        if !value.is_finite() {
            return Ok(done(out));
        }
        let mut st = loss.backward().map_err(Error::from)?;
        let g_lp = st.remove(lp_var.as_tensor());
        let g_ent = ent_var.as_ref().and_then(|v| st.remove(v.as_tensor()));
        // a loss that reads the weights directly (none of the trainer's do)
        let mut all = vec![&self.embed_tokens, &self.norm, &self.lm_head];
        all.extend(self.layers.iter().flat_map(Layer::weights));
        sink(only(st, &all))?;
        if w.n == 0 || (g_lp.is_none() && g_ent.is_none()) {
            return Ok(done(out));
        }
        let gather = |g: Tensor| -> Result<Tensor> {
            Ok(g.flatten_all()?
                .index_select(&w.slots, 0)?
                .to_dtype(upcast(self.dtype))?)
        };
        let g_lp = match g_lp {
            Some(g) => gather(g)?,
            None => Tensor::zeros(w.n, upcast(self.dtype), &self.device).map_err(Error::from)?,
        };
        let g_ent = g_ent.map(gather).transpose()?;
        // 3. vocabulary backward
        let (dh, dw) = det.vocab_backward(&h, &w, opts.temperature, &fwd, &g_lp, g_ent.as_ref())?;
        drop(fwd);
        drop(h);
        let mut head = GradStore::default();
        head.insert(&self.lm_head, dw);
        // tied embeddings: the head's piece is summed with the embedding's at step 5
        let tied = self.lm_head.id() == self.embed_tokens.id();
        if !tied {
            sink(std::mem::take(&mut head))?;
        }
        // 4. final norm, then the layers in reverse
        let mut st = (h_graph * dh)
            .and_then(|x| x.sum_all())
            .and_then(|x| x.backward())
            .map_err(Error::from)?;
        drop(lp_var);
        let mut g =
            generic::layer::take_grad(&mut st, x_last.as_tensor(), "the last hidden state")?;
        sink(only(st, &[&self.norm]))?;
        for li in (0..nl).rev() {
            let tape = if ckpt {
                let input = inputs.pop().expect("one input per layer");
                self.layer_pass(li, &input, &w, true)?
            } else {
                tapes.pop().expect("one tape per layer")
            };
            let mut piece = GradStore::default();
            g = self.layer_backward(li, tape, &g, &w, &mut piece)?;
            sink(piece)?;
        }
        // 5. embeddings; the row of `pad_token_id` gets nothing through the lookup, as in
        // transformers, whose decoders build `nn.Embedding(..., padding_idx=pad_token_id)`
        // (torch leaves that row's lookup gradient at zero): where the pad token is a real
        // one (SmolLM2's `<|im_end|>`), its occurrences in the text train it only through a
        // tied output head
        let g = match self.cfg.pad_token_id {
            Some(pad) => {
                let keep = w
                    .ids
                    .ne(pad)
                    .and_then(|k| k.to_dtype(g.dtype()))
                    .and_then(|k| k.unsqueeze(1))
                    .map_err(Error::from)?;
                g.broadcast_mul(&keep).map_err(Error::from)?
            }
            None => g,
        };
        let st = (self.embed_tokens.embedding(&w.ids))
            .and_then(|e| e * g)
            .and_then(|x| x.sum_all())
            .and_then(|x| x.backward())
            .map_err(Error::from)?;
        head.extend(only(st, &[&self.embed_tokens]))
            .map_err(Error::from)?;
        sink(head)?;
        Ok(done(out))
    }
}
