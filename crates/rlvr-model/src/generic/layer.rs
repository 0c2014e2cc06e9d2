//! One decoder layer of the device-generic path, from tensor ops: its forward (the training
//! step's and the KV-cached sampling forward's) and its backward.
//!
//! Forward, on `x` `[B, T, H]`: RMSNorm (plain ops in f32, as transformers), the q/k/v
//! projections, Qwen3's per-head q/k norms, rotate-half RoPE at the given positions, the
//! chunked attention of `attention.rs` (over the cached keys too when a [`KvCache`] is given),
//! the output projection and residual, then RMSNorm, SwiGLU and the second residual.
//!
//! Backward ([`backward`], after a forward with `graph`): the layer input and the attention
//! output are leaf variables, so autograd through the layer's small graph gives the
//! parameter gradients, `dL/dx` and `dL/dO`; the attention's own backward turns `dL/dO` into
//! `dL/dq`, `dL/dk`, `dL/dv`, and a second autograd pass from the surrogate
//! `sum(q dq + k dk + v dv)` adds the projections' gradients and the rest of `dL/dx`.

use candle_core::backprop::GradStore;
use candle_core::{Tensor, Var, D};

use crate::config::DecoderConfig;
use crate::error::{Error, Result};
use crate::generic::attention::{Attention, FlashOut};
use crate::kv_cache::KvCache;
use crate::model::{upcast, Layer};

/// RMSNorm from plain ops (differentiable), computed in f32 as transformers does:
/// `weight * (x / sqrt(mean(x^2) + eps)).to(dtype)`.
pub(crate) fn rms_norm(xs: &Tensor, weight: &Tensor, eps: f64) -> Result<Tensor> {
    let dtype = xs.dtype();
    let x = xs.to_dtype(upcast(dtype))?;
    let ms = x.sqr()?.mean_keepdim(D::Minus1)?;
    let normed = x.broadcast_div(&(ms + eps)?.sqrt()?)?.to_dtype(dtype)?;
    Ok(normed.broadcast_mul(weight)?)
}

/// `x * cos + rotate_half(x) * sin` with `rotate_half(x) = cat(-x2, x1)`, the rotation done as
/// a matmul with the fixed signed permutation `rot` (exact, differentiable, and faster in candle
/// than narrow + cat). `xs` is `[.., d]`, `cos`/`sin` broadcast against it.
fn apply_rope(xs: &Tensor, cos: &Tensor, sin: &Tensor, rot: &Tensor) -> Result<Tensor> {
    let dims = xs.dims().to_vec();
    let d = dims[dims.len() - 1];
    let rotated = xs.reshape(((), d))?.matmul(rot)?.reshape(dims)?;
    Ok((xs.broadcast_mul(cos)? + rotated.broadcast_mul(sin)?)?)
}

/// What one layer call shares with the others of a forward.
pub(crate) struct Inputs<'a> {
    /// RoPE cos and sin `[B or 1, 1, T, head_dim]` (rotate-half layout) of the new positions.
    pub cos: &'a Tensor,
    pub sin: &'a Tensor,
    /// The rotate-half matrix of [`apply_rope`].
    pub rot: &'a Tensor,
    /// `[B, past + T]` 1 for a real key, 0 for padding, in the upcast dtype; `None` when
    /// every key is real.
    pub key_ok: Option<&'a Tensor>,
    /// `[B, past + T]` u32, the sequence of each position of a packed batch; `None`: one
    /// sequence per row.
    pub segments: Option<&'a Tensor>,
    /// Query rows per attention chunk.
    pub chunk: usize,
}

impl Inputs<'_> {
    /// The attention call of a layer on these inputs: rotated queries `q` and keys `k`,
    /// values `v` (`generic/attention.rs` has the shapes), scores scaled by `1 / sqrt(head_dim)`.
    fn attention<'b>(
        &'b self,
        q: &'b Tensor,
        k: &'b Tensor,
        v: &'b Tensor,
        head_dim: usize,
    ) -> Attention<'b> {
        Attention {
            qkv: [q, k, v],
            key_ok: self.key_ok,
            segments: self.segments,
            scale: 1.0 / (head_dim as f64).sqrt(),
            chunk: self.chunk,
        }
    }
}

/// What [`backward`] needs, kept by a [`forward`] with `graph`.
pub(crate) struct Tape {
    /// The layer input as a leaf variable.
    x: Var,
    /// RoPE'd q `[B, heads, T, hd]`, k, v `[B, kv_heads, T, hd]`, attached to the graph.
    qkv: [Tensor; 3],
    /// The same, detached, for the attention backward.
    qkv_d: [Tensor; 3],
    flash: FlashOut,
    /// The attention output as a leaf variable.
    o_var: Var,
    /// The layer output, attached to the graph.
    out: Tensor,
}

/// Decoder layer `li` (`layer`) on `x` `[B, T, H]`, returning its output `[B, T, H]`. With
/// `cache`, the new keys and values are written to it and attention reads every cached
/// position (sampling); with `graph`, the layer input and the attention output become leaf
/// variables and the tape for [`backward`] is kept (the caller passes attached weights).
pub(crate) fn forward(
    cfg: &DecoderConfig,
    li: usize,
    layer: &Layer,
    x: &Tensor,
    inputs: &Inputs,
    cache: Option<&mut KvCache>,
    graph: bool,
) -> Result<(Tensor, Option<Tape>)> {
    let xv = graph.then(|| Var::from_tensor(x)).transpose()?;
    let x = xv.as_ref().map_or(x, |v| v.as_tensor());
    let (b, t, _) = x.dims3()?;
    let eps = cfg.rms_norm_eps;
    let (nh, kvh, hd) = (
        cfg.num_attention_heads,
        cfg.num_key_value_heads,
        cfg.head_dim,
    );
    let at = &layer.self_attn;
    let xn = rms_norm(x, &layer.input_layernorm, eps)?;
    let q = at.q_proj.forward(&xn)?.reshape((b, t, nh, hd))?;
    let k = at.k_proj.forward(&xn)?.reshape((b, t, kvh, hd))?;
    let v = at.v_proj.forward(&xn)?.reshape((b, t, kvh, hd))?;
    let (q, k) = match (&at.q_norm, &at.k_norm) {
        (Some(qn), Some(kn)) => (rms_norm(&q, qn, eps)?, rms_norm(&k, kn, eps)?),
        _ => (q, k),
    };
    let (cos, sin, rot) = (inputs.cos, inputs.sin, inputs.rot);
    let q = apply_rope(&q.transpose(1, 2)?.contiguous()?, cos, sin, rot)?;
    let k = apply_rope(&k.transpose(1, 2)?.contiguous()?, cos, sin, rot)?;
    let v = v.transpose(1, 2)?.contiguous()?;
    let qkv_d = [q.detach(), k.detach(), v.detach()];
    let (k_all, v_all) = match cache {
        Some(c) => c.write(li, &qkv_d[1], &qkv_d[2])?,
        None => (qkv_d[1].clone(), qkv_d[2].clone()),
    };
    let mut flash = inputs.attention(&qkv_d[0], &k_all, &v_all, hd).forward()?;
    let (o, o_var) = if graph {
        let var = Var::from_tensor(&flash.o)?;
        // the variable's copy serves the backward too: one stored copy of O
        flash.o = var.as_tensor().detach();
        (var.as_tensor().clone(), Some(var))
    } else {
        (flash.o.clone(), None)
    };
    let attn = o.transpose(1, 2)?.reshape((b, t, nh * hd))?;
    let xs = (x + at.o_proj.forward(&attn)?)?;
    let xn = rms_norm(&xs, &layer.post_attention_layernorm, eps)?;
    let m = &layer.mlp;
    let gate = m.gate_proj.forward(&xn)?.silu()?;
    let up = m.up_proj.forward(&xn)?;
    let out = (&xs + m.down_proj.forward(&(gate * up)?)?)?;
    let tape = match (xv, o_var) {
        (Some(x), Some(o_var)) => Some(Tape {
            x,
            qkv: [q, k, v],
            qkv_d,
            flash,
            o_var,
            out: out.clone(),
        }),
        _ => None,
    };
    Ok((out, tape))
}

/// Adds the gradients of `weights` found in `st` to `acc` and drops the rest of `st`.
///
/// candle's backward also returns gradients of operands that are not variables (the
/// broadcast RoPE tables, the detached upstream gradients of the surrogate losses: tensors
/// as large as a layer's activations); merging them into `acc` would keep them until the
/// step ends, several per layer.
fn absorb(acc: &mut GradStore, mut st: GradStore, weights: &[&Tensor]) -> Result<()> {
    for w in weights {
        if let Some(g) = st.remove(w) {
            let g = match acc.remove(w) {
                Some(prev) => (prev + g)?,
                None => g,
            };
            acc.insert(w, g);
        }
    }
    Ok(())
}

/// `store`'s gradient of `t`, an error naming `what` when there is none.
pub(crate) fn take_grad(store: &mut GradStore, t: &Tensor, what: &str) -> Result<Tensor> {
    store
        .remove(t)
        .ok_or_else(|| Error::InvalidArgument(format!("training walk: no gradient for {what}")))
}

/// The backward of [`forward`] (module docs): the parameter gradients of `layer` into `acc`,
/// returns `dL/dx` for `g = dL/dy` (`[B, T, H]`). `inputs` are the forward's.
pub(crate) fn backward(
    cfg: &DecoderConfig,
    layer: &Layer,
    tape: Tape,
    g: &Tensor,
    inputs: &Inputs,
    acc: &mut GradStore,
) -> Result<Tensor> {
    let weights = layer.weights();
    let Tape {
        x,
        qkv,
        qkv_d,
        flash,
        o_var,
        out,
    } = tape;
    let mut st = (out * g)?.sum_all()?.backward()?;
    let d_o = take_grad(&mut st, o_var.as_tensor(), "the attention output")?;
    let dx1 = take_grad(&mut st, x.as_tensor(), "a layer input")?;
    absorb(acc, st, &weights)?;
    let (dq, dk, dv) = inputs
        .attention(&qkv_d[0], &qkv_d[1], &qkv_d[2], cfg.head_dim)
        .backward(&flash, &d_o)?;
    drop((qkv_d, flash, d_o));
    let [q, k, v] = qkv;
    let surrogate = ((q * dq)?.sum_all()? + (k * dk)?.sum_all()?)?;
    let surrogate = (surrogate + (v * dv)?.sum_all()?)?;
    let mut st = surrogate.backward()?;
    let dx2 = take_grad(&mut st, x.as_tensor(), "a layer input")?;
    absorb(acc, st, &weights)?;
    Ok((dx1 + dx2)?)
}
