//! One decoder layer of the CPU fused path with a hand-written backward (the training walk's
//! step 4 in `training.rs`).
//!
//! Through candle's autograd, every node of a layer's graph costs a zero-filled gradient
//! buffer and an `add` into it, the surrogate `sum(y * dL/dy)` costs two more passes, and the
//! concatenated projections' gradients are copied out of their concatenation. Here the
//! forward keeps the activations the backward needs and the backward computes, with
//! `g = dL/dy` and the layer
//!
//! ```text
//! a = rms(x) w_in                 qkv = a Wqkv^T + b_qkv       (q/k norms: per head)
//! o = attention(qkv)              h = x + o Wo^T
//! c = rms(h) w_post               u = c Wgu^T                  s = silu(u_g) * u_u
//! y = h + s Wd^T
//! ```
//!
//! `dWd = g^T s`, `ds = g Wd`, `du = swiglu'(u, ds)`, `dWgu = du^T c`, `dc = du Wgu`,
//! `dh = g + rms'(h, w_post; dc)`, `dWo = dh^T o`, `do = dh Wo`, `dqkv = attention'(do)`,
//! `db_qkv = sum_rows dqkv`, `dWqkv = dqkv^T a`, `da = dqkv Wqkv`,
//! `dx = dh + rms'(x, w_in; da)`: each product is one matmul written straight into the
//! weight's `[out, in]` layout, each residual sum fused into the RMSNorm backward kernel.
//! Tests check both against the plain autograd decoder and against finite differences.

use candle_core::backprop::GradStore;
use candle_core::Tensor;

use crate::config::DecoderConfig;
use crate::cpu::kernels::{self, AttnSpec, AttnTape};
use crate::cpu::matmul::matmul;
use crate::error::Result;
use crate::model::{Layer, Linear};

/// What [`backward`] needs, kept by [`forward`].
pub(crate) struct LayerTape {
    /// The layer input `x`, `[N, H]`.
    x: Tensor,
    /// `rms(x) w_in`.
    a: Tensor,
    /// `[q; k; v]` weights, `[(heads + 2 kv_heads) hd, H]`.
    w_qkv: Tensor,
    /// The projection before the q/k norms (Qwen3 only).
    qkv_pre: Option<Tensor>,
    attn: AttnTape,
    /// The attention output, `[N, heads hd]`.
    o: Tensor,
    /// `x + o Wo^T`.
    h: Tensor,
    /// `rms(h) w_post`.
    c: Tensor,
    /// `[gate; up]` weights, `[2F, H]`.
    w_gu: Tensor,
    /// `c Wgu^T`, `[N, 2F]`.
    u: Tensor,
    /// `silu(u_g) * u_u`, `[N, F]`.
    s: Tensor,
}

/// `x W^T (+ b)` with the weights (and biases, when every part has one) of `parts`
/// concatenated along the output dimension (one matmul instead of several); also returns the
/// concatenated weight. No graph (the weights are detached).
fn project(parts: &[&Linear], x: &Tensor) -> Result<(Tensor, Tensor)> {
    let w = Tensor::cat(
        &parts.iter().map(|l| l.weight.detach()).collect::<Vec<_>>(),
        0,
    )?;
    let y = matmul(x, &w.t()?)?;
    let y = if parts.iter().all(|l| l.bias.is_some()) {
        let b = Tensor::cat(
            &parts
                .iter()
                .filter_map(|l| l.bias.as_ref().map(Tensor::detach))
                .collect::<Vec<_>>(),
            0,
        )?;
        kernels::add_bias(&y, &b)?
    } else {
        y
    };
    Ok((y, w))
}

/// The weight (and bias) gradients of the concatenated projection [`project`] of `x` by
/// `parts`, given its output gradient `dy`: `dW = dy^T x` and, when every part has a bias,
/// `db = sum over rows of dy`; each part gets its own rows of them.
fn project_grads_into(
    acc: &mut GradStore,
    parts: &[&Linear],
    dy: &Tensor,
    x: &Tensor,
) -> Result<()> {
    let dw = matmul(&dy.t()?, x)?;
    let db = parts
        .iter()
        .all(|l| l.bias.is_some())
        .then(|| kernels::column_sum(dy))
        .transpose()?;
    let mut start = 0;
    for l in parts {
        let rows = l.weight.dim(0)?;
        acc.insert(&l.weight, dw.narrow(0, start, rows)?);
        if let (Some(b), Some(db)) = (&l.bias, &db) {
            acc.insert(b, db.narrow(0, start, rows)?);
        }
        start += rows;
    }
    Ok(())
}

/// Decoder layer `layer` on `[B*T, H]` rows without a graph; with `keep`, also what its
/// backward needs.
pub(crate) fn forward(
    cfg: &DecoderConfig,
    layer: &Layer,
    x: &Tensor,
    spec: &AttnSpec,
    keep: bool,
) -> Result<(Tensor, Option<LayerTape>)> {
    let eps = cfg.rms_norm_eps;
    let (nh, kvh, hd) = (
        cfg.num_attention_heads,
        cfg.num_key_value_heads,
        cfg.head_dim,
    );
    let x = x.detach();
    let n = x.dim(0)?;
    let at = &layer.self_attn;
    let a = kernels::rms_norm(&x, &layer.input_layernorm.detach(), eps)?;
    let (qkv_pre, w_qkv) = project(&[&at.q_proj, &at.k_proj, &at.v_proj], &a)?;
    let (qkv, qkv_pre) = match (&at.q_norm, &at.k_norm) {
        (Some(qn), Some(kn)) => {
            let (qd, kvd) = (nh * hd, kvh * hd);
            let q = qkv_pre.narrow(1, 0, qd)?.reshape((n * nh, hd))?;
            let k = qkv_pre.narrow(1, qd, kvd)?.reshape((n * kvh, hd))?;
            let q = kernels::rms_norm(&q, &qn.detach(), eps)?.reshape((n, qd))?;
            let k = kernels::rms_norm(&k, &kn.detach(), eps)?.reshape((n, kvd))?;
            let qkv = Tensor::cat(&[&q, &k, &qkv_pre.narrow(1, qd + kvd, kvd)?], 1)?;
            (qkv, Some(qkv_pre))
        }
        _ => (qkv_pre, None),
    };
    let (o, attn) = kernels::attention_forward(&qkv, spec)?;
    drop(qkv);
    let h = (&x + matmul(&o, &at.o_proj.weight_t.detach())?)?;
    let c = kernels::rms_norm(&h, &layer.post_attention_layernorm.detach(), eps)?;
    let m = &layer.mlp;
    let (u, w_gu) = project(&[&m.gate_proj, &m.up_proj], &c)?;
    let s = kernels::swiglu(&u)?;
    let y = (&h + matmul(&s, &m.down_proj.weight_t.detach())?)?;
    let tape = keep.then_some(LayerTape {
        x,
        a,
        w_qkv,
        qkv_pre,
        attn,
        o,
        h,
        c,
        w_gu,
        u,
        s,
    });
    Ok((y, tape))
}

/// The backward of [`forward`] (module docs): the parameter gradients of `layer` (keyed by
/// its weight tensors) into `acc`, returns `dL/dx` for `g = dL/dy`.
pub(crate) fn backward(
    cfg: &DecoderConfig,
    layer: &Layer,
    tape: LayerTape,
    g: &Tensor,
    spec: &AttnSpec,
    acc: &mut GradStore,
) -> Result<Tensor> {
    let eps = cfg.rms_norm_eps;
    let (nh, kvh, hd) = (
        cfg.num_attention_heads,
        cfg.num_key_value_heads,
        cfg.head_dim,
    );
    let LayerTape {
        x,
        a,
        w_qkv,
        qkv_pre,
        attn,
        o,
        h,
        c,
        w_gu,
        u,
        s,
    } = tape;
    let n = x.dim(0)?;
    let g = g.contiguous()?;
    let (at, m) = (&layer.self_attn, &layer.mlp);
    // MLP
    acc.insert(&m.down_proj.weight, matmul(&g.t()?, &s)?);
    drop(s);
    let ds = matmul(&g, &m.down_proj.weight.detach())?;
    let du = kernels::swiglu_backward(&u, &ds)?;
    drop((u, ds));
    let post = (&layer.post_attention_layernorm, &h, c);
    let dh =
        norm_and_projections_backward(acc, post, (&[&m.gate_proj, &m.up_proj], w_gu), du, &g, eps)?;
    drop((h, g));
    // attention
    acc.insert(&at.o_proj.weight, matmul(&dh.t()?, &o)?);
    drop(o);
    let d_o = matmul(&dh, &at.o_proj.weight.detach())?;
    let dqkv = kernels::attention_backward(spec, &attn, &d_o)?;
    drop((attn, d_o));
    let dqkv = match (&at.q_norm, &at.k_norm, qkv_pre) {
        (Some(qn), Some(kn), Some(pre)) => {
            let (qd, kvd) = (nh * hd, kvh * hd);
            // per-head RMSNorm backward of the q (or k) part `start..start + len`
            let norm_back = |w: &Tensor, start: usize, len: usize, heads: usize| {
                let part = |t: &Tensor| t.narrow(1, start, len)?.reshape((n * heads, hd));
                kernels::rms_norm_backward(&part(&pre)?, &w.detach(), &part(&dqkv)?, None, eps)
            };
            let (dq, dqn) = norm_back(qn, 0, qd, nh)?;
            let (dk, dkn) = norm_back(kn, qd, kvd, kvh)?;
            acc.insert(qn, dqn);
            acc.insert(kn, dkn);
            Tensor::cat(
                &[
                    &dq.reshape((n, qd))?,
                    &dk.reshape((n, kvd))?,
                    &dqkv.narrow(1, qd + kvd, kvd)?,
                ],
                1,
            )?
        }
        _ => dqkv,
    };
    let input = (&layer.input_layernorm, &x, a);
    let projs = (&[&at.q_proj, &at.k_proj, &at.v_proj][..], w_qkv);
    norm_and_projections_backward(acc, input, projs, dqkv, &dh, eps)
}

/// `dL/dx` of `n = rms_norm(x, norm)` followed by the packed projections `y = n W^T`, `W`
/// the projections' weights stacked by rows, from `dy = dL/dy` plus the residual branch's
/// `resid`; the gradients of the projections and of `norm` go into `acc`. `n`, `W` and `dy`
/// are taken by value and freed as soon as they are used.
fn norm_and_projections_backward(
    acc: &mut GradStore,
    (norm, x, n): (&Tensor, &Tensor, Tensor),
    (projs, w): (&[&Linear], Tensor),
    dy: Tensor,
    resid: &Tensor,
    eps: f64,
) -> Result<Tensor> {
    project_grads_into(acc, projs, &dy, &n)?;
    drop(n);
    let dn = matmul(&dy, &w)?;
    drop((dy, w));
    let (dx, dw) = kernels::rms_norm_backward(x, &norm.detach(), &dn, Some(resid), eps)?;
    acc.insert(norm, dw);
    Ok(dx)
}
