//! The KV-cached sampling forward on the CPU in f32, on plain buffers: the training forward's
//! row kernels (`cpu/kernels.rs`: RMSNorm, RoPE, softmax, SwiGLU) and matrix product
//! ([`crate::cpu::matmul::sgemm`]) without a tensor op per step, on the one [`KvCache`].
//!
//! Decoding one token for 64 rows of a small model is a few hundred small products; through
//! candle each of the ~40 ops of a layer allocates its output, dispatches to the thread pool and
//! (for the attention) transposes and copies, which cost several times the arithmetic. Here a
//! step is, per layer, four matrix products ([`crate::cpu::matmul::sgemm`]: OpenBLAS, or the
//! built-in matrixmultiply or gemm crate, on the weights' own buffers: q|k|v and gate|up written into one buffer each, residual
//! adds inside the products, `dst += a W^T`) and loops over reused buffers:
//!
//! * RMSNorm per row ([`kernels::rms_norm_rows`]; per head on q and k with Qwen3's `q_norm` /
//!   `k_norm`), rotate-half RoPE at each row's own position ([`kernels::rope_row`], the
//!   training attention's tables);
//! * keys and values written into the cache's buffers, allocated once for all positions;
//! * attention per row and query head over the cached keys `j` visible to the query at absolute
//!   position `q` (`j == q`, or `j < q` and `j` not a padding key): `softmax(q.k_j / sqrt(d))`
//!   ([`kernels::softmax_row`]) weighting `v_j` (grouped-query: query head `h` reads key-value
//!   head `h / (heads / kv_heads)`, transformers' `repeat_kv` order), rows in parallel, each
//!   key-value head's cache read once for all the query heads that share it;
//! * `silu(g) * u` between the MLP products ([`kernels::swiglu_rows`]);
//! * the final norm and the vocabulary product only at each row's last new position.
//!
//! The result equals the tensor path up to f32 rounding (summation order); tests compare the
//! two within 1e-4. Only for a CPU model in f32 not forced onto the generic path
//! (`Decoder::uses_cpu_decode`); everything else samples through `generic/decode.rs`.

use candle_core::{Device, Tensor};
use rayon::prelude::*;

use crate::cpu::kernels;
use crate::cpu::matmul::{sgemm, Operand, ProductDtype};
use crate::cpu::skinny_bf16::{Bf16Rows, Bf16Weights};
use crate::error::{Error, Result};
use crate::kv_cache::KvCache;
use crate::model::{Decoder, Linear};

/// Calls `f` with the f32 elements of a CPU tensor ([`crate::cpu::with_cpu_slice`]).
fn with_f32<R>(t: &Tensor, f: impl FnOnce(&[f32]) -> R) -> Result<R> {
    Ok(crate::cpu::with_cpu_slice(t, "CPU decode", f)?)
}

/// `dst (+)= a [W_1; W_2; ..]^T + [b_1; b_2; ..]`: each `Linear` of `parts` writes its product
/// (and bias) into its own columns of `dst`, whose rows are as wide as all the parts' outputs
/// together (q|k|v, gate|up). `a` is `[m, k]` row-major; with `accumulate` the products are
/// added to `dst` (the residual adds), else they replace it.
///
/// With `bf16`, the parts' weights rounded to bf16 and stacked ([`Bf16Weights`]), the product
/// runs once over all their columns on the bf16 kernel (`cpu/skinny_bf16.rs`).
fn project_into(
    dst: &mut [f32],
    accumulate: bool,
    a: &[f32],
    m: usize,
    parts: &[&Linear],
    bf16: Option<&Bf16Rows>,
) -> Result<()> {
    let widths = parts
        .iter()
        .map(|l| l.weight.dim(0))
        .collect::<candle_core::Result<Vec<_>>>()?;
    let stride: usize = widths.iter().sum();
    let beta = if accumulate { 1.0 } else { 0.0 };
    if let Some(w) = bf16 {
        debug_assert_eq!(w.rows(), stride);
        crate::cpu::skinny_bf16::sgemm_nt(m, a, w.k(), w, beta, dst, stride);
    }
    let mut col0 = 0;
    for (lin, &n) in parts.iter().zip(&widths) {
        let k = lin.weight.dim(1)?;
        if m > 0 && n > 0 && bf16.is_none() {
            with_f32(&lin.weight, |w| {
                let (a, w) = (Operand::plain(a, k), Operand::transposed(w, k));
                sgemm([m, n, k], a, w, beta, &mut dst[col0..], stride)
            })?;
        }
        if let Some(b) = &lin.bias {
            with_f32(b, |b| {
                for row in dst.chunks_mut(stride).take(m) {
                    for (d, &bv) in row[col0..col0 + n].iter_mut().zip(b) {
                        *d += bv;
                    }
                }
            })?;
        }
        col0 += n;
    }
    Ok(())
}

/// Every weight of the decode's products rounded to bf16 ([`Bf16Weights`]), made once per
/// generation (kept in its [`KvCache`]): the rounding of 135M weights costs about one decode
/// step.
fn bf16_weights(m: &Decoder) -> Result<Bf16Weights> {
    let rows = |parts: &[&Linear]| -> Result<Bf16Rows> {
        let k = parts[0].weight.dim(1)?;
        let mut out = Bf16Rows::empty(k);
        for l in parts {
            let n = l.weight.dim(0)?;
            with_f32(&l.weight, |w| out.append(w, n, k))?;
        }
        Ok(out)
    };
    let mut layers = Vec::with_capacity(m.layers.len());
    for layer in &m.layers {
        let (at, mlp) = (&layer.self_attn, &layer.mlp);
        layers.push([
            rows(&[&at.q_proj, &at.k_proj, &at.v_proj])?,
            rows(&[&at.o_proj])?,
            rows(&[&mlp.gate_proj, &mlp.up_proj])?,
            rows(&[&mlp.down_proj])?,
        ]);
    }
    let (vocab, hsz) = m.lm_head.dims2()?;
    let lm_head = with_f32(&m.lm_head, |w| Bf16Rows::new(w, vocab, hsz, hsz))?;
    Ok(Bf16Weights { layers, lm_head })
}

/// `sum_i a_i b_i` in eight interleaved partial sums (which the compiler keeps in vector
/// registers; a single running sum cannot be vectorized without reassociating it).
#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Head counts and sizes of [`attend`].
struct AttnShape {
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    capacity: usize,
    scale: f32,
}

/// One query position of one row and what it attends to: `q` `[heads * head_dim]`, the row's
/// `[kv_heads, capacity, head_dim]` cached keys `k` and values `v`, and the key flags `ok` of
/// positions `0..=qpos` (`qpos = ok.len() - 1`, the query's own).
struct Query<'a> {
    q: &'a [f32],
    k: &'a [f32],
    v: &'a [f32],
    ok: &'a [bool],
}

/// Attention of one [`Query`]: for each query head `h` (key-value head
/// `g = h / (heads / kv_heads)`), `out_h = sum_j p_j v_j` with
/// `p = softmax_j(scale * q_h . k_j)` over the keys `j <= qpos` with `ok[j]` or `j == qpos`.
/// `probs` is scratch.
fn attend(s: &AttnShape, query: &Query, probs: &mut [f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { attend_avx2(s, query, probs, out) };
        }
    }
    attend_body(s, query, probs, out)
}

/// [`attend_body`] compiled for AVX2 (8-wide vectors in the dot products and the sums).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn attend_avx2(s: &AttnShape, query: &Query, probs: &mut [f32], out: &mut [f32]) {
    attend_body(s, query, probs, out)
}

#[inline(always)]
fn attend_body(s: &AttnShape, query: &Query, probs: &mut [f32], out: &mut [f32]) {
    let Query { q, k, v, ok } = *query;
    let hd = s.head_dim;
    let groups = s.heads / s.kv_heads;
    let len = ok.len();
    let qpos = len - 1;
    // one pass over each key-value head's cache for all the query heads that share it
    // (decoding reads the whole cache every step, so the passes are what costs)
    let probs = &mut probs[..groups * len];
    for g in 0..s.kv_heads {
        let qg = &q[g * groups * hd..(g + 1) * groups * hd];
        let kg = &k[g * s.capacity * hd..][..len * hd];
        let vg = &v[g * s.capacity * hd..][..len * hd];
        for (j, (kj, &okj)) in kg.chunks_exact(hd).zip(ok).enumerate() {
            // the cache holds no later key, and one sequence per row
            let visible = crate::mask::visible(qpos, j, okj, true);
            for (i, qh) in qg.chunks_exact(hd).enumerate() {
                probs[i * len + j] = if visible {
                    dot(qh, kj) * s.scale
                } else {
                    f32::NEG_INFINITY
                };
            }
        }
        for pi in probs.chunks_exact_mut(len) {
            kernels::softmax_row(pi);
        }
        let og = &mut out[g * groups * hd..(g + 1) * groups * hd];
        og.fill(0.0);
        for (j, vj) in vg.chunks_exact(hd).enumerate() {
            for (i, o) in og.chunks_exact_mut(hd).enumerate() {
                let w = probs[i * len + j];
                if w != 0.0 {
                    for (oo, &vx) in o.iter_mut().zip(vj) {
                        *oo += w * vx;
                    }
                }
            }
        }
    }
}

/// Buffers of one step, reused from step to step ([`KvCache`]'s scratch).
const SCRATCH: usize = 8;

fn sized(v: &mut Vec<f32>, n: usize) -> &mut [f32] {
    v.resize(n, 0.0);
    &mut v[..n]
}

/// Runs `ids` (`[rows, t]` row-major, at RoPE `positions`, their key flags already in the
/// cache: [`KvCache::begin`]) through the model, writing the cache's new positions, and returns
/// the f32 logits `[rows, vocab]` of each row's last new position.
pub(crate) fn forward(
    m: &Decoder,
    ids: &[u32],
    positions: &[u32],
    cache: &mut KvCache,
) -> Result<Tensor> {
    let mut scratch = std::mem::take(&mut cache.scratch);
    scratch.resize_with(SCRATCH, Vec::new);
    let logits = forward_rows(m, ids, positions, cache, &mut scratch);
    cache.scratch = scratch;
    logits
}

/// [`forward`] with its scratch buffers (module docs). One forward over all rows, each product
/// using every thread. (Blocks of rows on one thread each, meeting once per step, measured
/// slower: each thread packs every weight matrix again for its own product, which costs more
/// than the products' thread hand-offs.)
fn forward_rows(
    m: &Decoder,
    ids: &[u32],
    positions: &[u32],
    cache: &mut KvCache,
    scratch: &mut [Vec<f32>],
) -> Result<Tensor> {
    let cfg = m.config();
    let (hsz, nh, kvh, hd) = (
        cfg.hidden_size,
        cfg.num_attention_heads,
        cfg.num_key_value_heads,
        cfg.head_dim,
    );
    let (qd, kvd) = (nh * hd, kvh * hd);
    let qkv_w = qd + 2 * kvd;
    let ffn = cfg.intermediate_size;
    let eps = cfg.rms_norm_eps;
    let vocab = cfg.vocab_size;
    let rows = cache.key_ok().len();
    let n = ids.len();
    if rows == 0 || !n.is_multiple_of(rows) || positions.len() != n {
        return Err(Error::InvalidArgument(format!(
            "CPU decode: {n} ids, {} positions for {rows} rows",
            positions.len()
        )));
    }
    let t = n / rows;
    // bf16 products of a few rows on the bf16 kernel, from weights rounded once (else each
    // product rounds its operands: `cpu/matmul/bf16.rs`)
    let bf16 = if crate::cpu::matmul::product_dtype() == ProductDtype::Bf16
        && n <= crate::cpu::skinny::MAX_ROWS
        && crate::cpu::skinny_bf16::available()
    {
        if cache.bf16_weights.is_none() {
            cache.bf16_weights = Some(std::sync::Arc::new(bf16_weights(m)?));
        }
        cache.bf16_weights.clone()
    } else {
        None
    };
    let layer_bf16 = |li: usize, which: usize| bf16.as_ref().map(|w| &w.layers[li][which]);
    let past = cache.len();
    let threaded = rayon::current_num_threads() > 1;
    let [x, xn, qkv, q, attn, gu, act, norm_tmp] = scratch else {
        unreachable!("{SCRATCH} scratch buffers")
    };
    let (cos, sin) = crate::rope::cos_sin(&m.inv_freq, positions);

    let x = sized(x, n * hsz);
    with_f32(&m.embed_tokens, |e| {
        for (row, &id) in x.chunks_exact_mut(hsz).zip(ids) {
            let id = id as usize;
            row.copy_from_slice(&e[id * hsz..(id + 1) * hsz]);
        }
    })?;
    let norm_tmp = sized(norm_tmp, hd);
    for (li, layer) in m.layers.iter().enumerate() {
        let at = &layer.self_attn;
        // attention block: norm, q|k|v, per-head norms and RoPE, keys and values into the cache
        let xn = sized(xn, n * hsz);
        with_f32(&layer.input_layernorm, |w| {
            kernels::rms_norm_rows(x, w, eps, xn)
        })?;
        let qkv = sized(qkv, n * qkv_w);
        project_into(
            qkv,
            false,
            xn,
            n,
            &[&at.q_proj, &at.k_proj, &at.v_proj],
            layer_bf16(li, 0),
        )?;
        let qn = at.q_norm.as_ref().map(Tensor::to_vec1::<f32>).transpose()?;
        let kn = at.k_norm.as_ref().map(Tensor::to_vec1::<f32>).transpose()?;
        let q = sized(q, n * qd);
        let (mut k_new, mut v_new) = (vec![0f32; n * kvd], vec![0f32; n * kvd]);
        for (i, row) in qkv.chunks_exact(qkv_w).enumerate() {
            let rope = |x: &[f32], out: &mut [f32]| {
                kernels::rope_row(x, &cos[i * hd..][..hd], &sin[i * hd..][..hd], false, out)
            };
            // per head: Qwen3's per-head norm, then RoPE
            for (h, dst) in q[i * qd..(i + 1) * qd].chunks_exact_mut(hd).enumerate() {
                let head = &row[h * hd..][..hd];
                match &qn {
                    Some(w) => {
                        kernels::rms_norm_row(head, w, eps, norm_tmp);
                        rope(norm_tmp, dst);
                    }
                    None => rope(head, dst),
                }
            }
            let (r, j) = (i / t, i % t);
            for g in 0..kvh {
                let at_ = ((r * kvh + g) * t + j) * hd;
                let head = &row[qd + g * hd..][..hd];
                match &kn {
                    Some(w) => {
                        kernels::rms_norm_row(head, w, eps, norm_tmp);
                        rope(norm_tmp, &mut k_new[at_..at_ + hd]);
                    }
                    None => rope(head, &mut k_new[at_..at_ + hd]),
                }
                v_new[at_..at_ + hd].copy_from_slice(&row[qd + kvd + g * hd..][..hd]);
            }
        }
        let k_new = Tensor::from_vec(k_new, (rows, kvh, t, hd), &Device::Cpu)?;
        let v_new = Tensor::from_vec(v_new, (rows, kvh, t, hd), &Device::Cpu)?;
        cache.write(li, &k_new, &v_new)?;
        // attention over the cached keys, rows in parallel
        let (kb, vb) = cache.buffers(li)?;
        let shape = AttnShape {
            heads: nh,
            kv_heads: kvh,
            head_dim: hd,
            capacity: kb.dim(2)?,
            scale: 1.0 / (hd as f32).sqrt(),
        };
        let re = kvh * shape.capacity * hd;
        let attn = sized(attn, n * qd);
        let key_ok = cache.key_ok();
        let q = &*q;
        with_f32(kb, |kc| {
            with_f32(vb, |vc| {
                let attend_row = |(r, out_r): (usize, &mut [f32])| {
                    let mut probs = vec![0f32; (nh / kvh) * (past + t)];
                    for j in 0..t {
                        let query = Query {
                            q: &q[(r * t + j) * qd..][..qd],
                            k: &kc[r * re..(r + 1) * re],
                            v: &vc[r * re..(r + 1) * re],
                            ok: &key_ok[r][..=past + j],
                        };
                        attend(&shape, &query, &mut probs, &mut out_r[j * qd..(j + 1) * qd]);
                    }
                };
                if threaded {
                    attn.par_chunks_mut(t * qd).enumerate().for_each(attend_row);
                } else {
                    attn.chunks_mut(t * qd).enumerate().for_each(attend_row);
                }
            })
        })??;
        project_into(x, true, attn, n, &[&at.o_proj], layer_bf16(li, 1))?;
        // MLP block
        with_f32(&layer.post_attention_layernorm, |w| {
            kernels::rms_norm_rows(x, w, eps, xn)
        })?;
        let gu = sized(gu, n * 2 * ffn);
        let mlp = &layer.mlp;
        project_into(
            gu,
            false,
            xn,
            n,
            &[&mlp.gate_proj, &mlp.up_proj],
            layer_bf16(li, 2),
        )?;
        let act = sized(act, n * ffn);
        kernels::swiglu_rows(gu, ffn, act);
        project_into(x, true, act, n, &[&mlp.down_proj], layer_bf16(li, 3))?;
    }

    // final norm and logits at each row's last new position
    let last = sized(attn, rows * hsz);
    for (r, dst) in last.chunks_exact_mut(hsz).enumerate() {
        dst.copy_from_slice(&x[(r * t + t - 1) * hsz..(r * t + t) * hsz]);
    }
    let normed = sized(xn, rows * hsz);
    with_f32(&m.norm, |w| kernels::rms_norm_rows(last, w, eps, normed))?;
    let mut logits = vec![0f32; rows * vocab];
    match &bf16 {
        Some(w) => crate::cpu::skinny_bf16::sgemm_nt(
            rows,
            normed,
            hsz,
            &w.lm_head,
            0.0,
            &mut logits,
            vocab,
        ),
        None => with_f32(&m.lm_head, |wt| {
            let (a, w) = (Operand::plain(normed, hsz), Operand::transposed(wt, hsz));
            sgemm([rows, vocab, hsz], a, w, 0.0, &mut logits, vocab)
        })?,
    }
    Ok(Tensor::from_vec(logits, (rows, vocab), &Device::Cpu)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_a_plain_sum_at_every_length() {
        for len in 0..40 {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos() - 0.3).collect();
            let exact: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
            let got = dot(&a, &b) as f64;
            assert!((got - exact).abs() < 1e-5, "len {len}: {got} vs {exact}");
        }
    }
}
