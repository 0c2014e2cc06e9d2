//! The sampling forward on the CPU in f32, on plain buffers: the same function as
//! [`Qwen::forward_cached`] without a tensor op per step.
//!
//! Decoding one token for 64 rows of a small model is a few hundred small products; through
//! candle each of the ~40 ops of a layer allocates its output, dispatches to the thread pool and
//! (for the attention) transposes and copies, which cost several times the arithmetic. Here a
//! step is, per layer, four matrix products ([`crate::cpu::matmul::sgemm`]: OpenBLAS, or the gemm
//! crate candle's CPU matmul calls, on the weights' own buffers: q|k|v and gate|up written
//! into one buffer each) and loops over reused buffers:
//!
//! * `x_n = w * x / sqrt(mean(x^2) + eps)` (RMSNorm, per row; also per head on q and k with
//!   Qwen3's `q_norm` / `k_norm`);
//! * rotate-half RoPE at each row's own position `p`: for `i < d/2`, angle `a = p * inv_freq[i]`
//!   in f32, `(x_i, x_{i+d/2}) -> (x_i cos a - x_{i+d/2} sin a, x_{i+d/2} cos a + x_i sin a)`;
//! * keys and values written in place into a cache allocated once for all positions;
//! * attention per row and query head over the cached keys `j` visible to the query at absolute
//!   position `q` (`j == q`, or `j < q` and `j` not a padding key): `softmax(q.k_j / sqrt(d))`
//!   weighting `v_j` (grouped-query: query head `h` reads key-value head `h / (heads /
//!   kv_heads)`, transformers' `repeat_kv` order; the exponentials by [`fast_exp`], relative
//!   error below 2e-7), rows in parallel, each key-value head's cache read once for all the
//!   query heads that share it;
//! * `silu(g) * u` between the MLP products (rows in parallel), residual adds inside the
//!   products (`dst += a W^T`);
//! * the final norm and the vocabulary product only at each row's last new position.
//!
//! The result equals the tensor path up to f32 rounding (summation order); tests compare the
//! two within 1e-4. Only for a CPU model in f32 not forced onto the generic path
//! (`Qwen::uses_cpu_decode`); everything else samples through [`Qwen::forward_cached`].

use candle_core::Tensor;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::generate::sampler::fast_exp;
use crate::model::{Linear, Qwen};

/// Calls `f` with the f32 elements of a CPU tensor in row-major order (a copy only when `t`
/// is not contiguous).
fn with_f32<R>(t: &Tensor, f: impl FnOnce(&[f32]) -> R) -> Result<R> {
    let t = t.contiguous()?;
    let (storage, layout) = t.storage_and_layout();
    let candle_core::Storage::Cpu(cpu) = &*storage else {
        return Err(Error::InvalidArgument(
            "the CPU decode needs CPU tensors".into(),
        ));
    };
    let all = cpu.as_slice::<f32>()?;
    Ok(f(&all[layout.start_offset()..][..t.elem_count()]))
}

/// `dst[i, col0 + j] (+)= sum_l a[i, l] w[j, l]` for `i < m`, `j < n`, `l < k`: `a` is `[m, k]`
/// row-major, `w` is `[n, k]` row-major (a `Linear` weight, so this is `a W^T`), `dst` has rows
/// of `dst_stride` elements. With `accumulate` the product is added to `dst`, else it replaces it.
#[allow(clippy::too_many_arguments)]
fn matmul_wt(
    dst: &mut [f32],
    dst_stride: usize,
    col0: usize,
    accumulate: bool,
    a: &[f32],
    m: usize,
    k: usize,
    w: &[f32],
    n: usize,
) {
    assert!(
        col0 + n <= dst_stride,
        "columns {col0}+{n} > row {dst_stride}"
    );
    if m == 0 || n == 0 {
        return;
    }
    let beta = if accumulate { 1.0 } else { 0.0 };
    crate::cpu::matmul::sgemm(
        false,
        true,
        m,
        n,
        k,
        a,
        k,
        w,
        k,
        beta,
        &mut dst[col0..],
        dst_stride,
    );
}

/// `dst[.., col0..col0 + out] (+)= a W^T + b` for one `Linear`.
#[allow(clippy::too_many_arguments)]
fn linear_into(
    dst: &mut [f32],
    dst_stride: usize,
    col0: usize,
    accumulate: bool,
    a: &[f32],
    m: usize,
    lin: &Linear,
) -> Result<()> {
    let (n, k) = lin.weight.dims2()?;
    with_f32(&lin.weight, |w| {
        matmul_wt(dst, dst_stride, col0, accumulate, a, m, k, w, n)
    })?;
    if let Some(b) = &lin.bias {
        with_f32(b, |b| {
            for row in dst.chunks_mut(dst_stride).take(m) {
                for (d, &bv) in row[col0..col0 + n].iter_mut().zip(b) {
                    *d += bv;
                }
            }
        })?;
    }
    Ok(())
}

/// `silu(g) = g sigmoid(g)` with the exponential of `-|g|` only (by [`fast_exp`], so the loop
/// vectorizes): `sigmoid(g) = 1 / (1 + e)` for `g >= 0`, `e / (1 + e)` below, `e = exp(-|g|)`.
#[inline(always)]
fn silu(g: f32) -> f32 {
    let e = fast_exp(-g.abs());
    let sig = if g >= 0.0 { 1.0 } else { e } / (1.0 + e);
    g * sig
}

/// `y = w * x / sqrt(mean(x^2) + eps)` over each `w.len()`-wide row of `x`, in place.
fn rms_norm_rows(x: &mut [f32], w: &[f32], eps: f64) {
    let d = w.len();
    let norm_row = |row: &mut [f32]| {
        let ms = row.iter().map(|&v| v * v).sum::<f32>() / d as f32;
        let inv = 1.0 / (ms + eps as f32).sqrt();
        for (v, &wv) in row.iter_mut().zip(w) {
            *v = wv * (*v * inv);
        }
    };
    if x.len() >= 1 << 15 {
        x.par_chunks_mut(d).for_each(norm_row);
    } else {
        x.chunks_mut(d).for_each(norm_row);
    }
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

/// Attention of one query position `qpos = ok.len() - 1` of one row: for each query head `h`
/// (key-value head `g = h / (heads / kv_heads)`), `out_h = sum_j p_j v_j` with
/// `p = softmax_j(scale * q_h . k_j)` over the keys `j <= qpos` with `ok[j]` or `j == qpos`.
/// `k` and `v` are the row's `[kv_heads, capacity, head_dim]` cache; `probs` is scratch.
fn attend(
    s: &AttnShape,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    ok: &[bool],
    probs: &mut [f32],
    out: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { attend_avx2(s, q, k, v, ok, probs, out) };
        }
    }
    attend_body(s, q, k, v, ok, probs, out)
}

/// [`attend_body`] compiled for AVX2 (8-wide vectors in the dot products and the sums).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn attend_avx2(
    s: &AttnShape,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    ok: &[bool],
    probs: &mut [f32],
    out: &mut [f32],
) {
    attend_body(s, q, k, v, ok, probs, out)
}

#[inline(always)]
fn attend_body(
    s: &AttnShape,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    ok: &[bool],
    probs: &mut [f32],
    out: &mut [f32],
) {
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
            // the query's own key is always visible
            let visible = okj || j == qpos;
            for (i, qh) in qg.chunks_exact(hd).enumerate() {
                probs[i * len + j] = if visible {
                    dot(qh, kj) * s.scale
                } else {
                    f32::NEG_INFINITY
                };
            }
        }
        for pi in probs.chunks_exact_mut(len) {
            let mx = pi.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            for p in pi.iter_mut() {
                *p = fast_exp(*p - mx);
            }
            let z: f32 = pi.iter().sum();
            let inv_z = 1.0 / z;
            for p in pi.iter_mut() {
                *p *= inv_z;
            }
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

/// Keys and values of the CPU decode, with the key flags of every row.
///
/// Per layer one `[rows, kv_heads, capacity, head_dim]` buffer each for keys and values,
/// allocated once; positions `0..len` are filled. `key_ok[r][j]` is false for a padding key.
pub(crate) struct DecodeCache {
    kv_heads: usize,
    head_dim: usize,
    capacity: usize,
    rows: usize,
    len: usize,
    k: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
    key_ok: Vec<Vec<bool>>,
}

impl DecodeCache {
    /// An empty cache for `rows` rows and `capacity` positions of `model`'s layers.
    pub(crate) fn new(model: &Qwen, rows: usize, capacity: usize) -> Self {
        let cfg = model.config();
        let per_layer = rows * cfg.num_key_value_heads * capacity * cfg.head_dim;
        Self {
            kv_heads: cfg.num_key_value_heads,
            head_dim: cfg.head_dim,
            capacity,
            rows,
            len: 0,
            k: vec![vec![0.0; per_layer]; cfg.num_hidden_layers],
            v: vec![vec![0.0; per_layer]; cfg.num_hidden_layers],
            key_ok: vec![Vec::with_capacity(capacity); rows],
        }
    }

    /// Elements of one row's keys (or values) in one layer.
    fn row_elems(&self) -> usize {
        self.kv_heads * self.capacity * self.head_dim
    }

    /// Keeps, reorders or repeats rows: row `i` of the result is row `from[i]`.
    pub(crate) fn select_rows(&mut self, from: &[usize]) {
        let re = self.row_elems();
        let pick = |buf: &Vec<f32>| -> Vec<f32> {
            let mut out = vec![0.0; from.len() * re];
            for (dst, &r) in out.chunks_exact_mut(re).zip(from) {
                dst.copy_from_slice(&buf[r * re..(r + 1) * re]);
            }
            out
        };
        let compacting = from.len() <= self.rows && from.iter().enumerate().all(|(i, &r)| r >= i);
        for buf in self.k.iter_mut().chain(self.v.iter_mut()) {
            if compacting {
                // in place, front to back: row i's source r >= i was not yet overwritten
                for (i, &r) in from.iter().enumerate() {
                    if r != i {
                        buf.copy_within(r * re..(r + 1) * re, i * re);
                    }
                }
                buf.truncate(from.len() * re);
            } else {
                *buf = pick(buf);
            }
        }
        self.key_ok = from.iter().map(|&r| self.key_ok[r].clone()).collect();
        self.rows = from.len();
    }
}

/// Per-step scratch buffers, grown as needed and reused.
#[derive(Default)]
struct Scratch {
    x: Vec<f32>,
    xn: Vec<f32>,
    qkv: Vec<f32>,
    attn: Vec<f32>,
    gu: Vec<f32>,
    act: Vec<f32>,
}

fn sized(v: &mut Vec<f32>, n: usize) -> &mut [f32] {
    v.resize(n, 0.0);
    &mut v[..n]
}

/// The CPU sampling forward of one model (see the module docs).
pub(crate) struct CpuDecoder<'m> {
    model: &'m Qwen,
    scratch: Scratch,
    /// Whether the attention runs rows in parallel (candle's CPU thread count > 1, read once).
    threaded: bool,
}

impl<'m> CpuDecoder<'m> {
    pub(crate) fn new(model: &'m Qwen) -> Self {
        let threads = candle_core::utils::get_num_threads();
        Self {
            model,
            scratch: Scratch::default(),
            threaded: threads > 1,
        }
    }

    /// Runs `t` new tokens per row through the model, extending `cache`, and returns the f32
    /// logits `[rows, vocab]` of each row's last new position.
    ///
    /// `ids`, `positions` (RoPE positions) and `key_ok` (false for padding) are `[rows, t]`
    /// row-major; `rows` is `cache.rows()`.
    pub(crate) fn step(
        &mut self,
        cache: &mut DecodeCache,
        ids: &[u32],
        positions: &[u32],
        key_ok: &[bool],
        t: usize,
    ) -> Result<Tensor> {
        let cfg = self.model.config();
        let rows = cache.rows;
        let n = rows * t;
        if ids.len() != n || positions.len() != n || key_ok.len() != n {
            return Err(Error::InvalidArgument(format!(
                "CPU decode: {} ids, {} positions, {} key flags for {rows} rows x {t}",
                ids.len(),
                positions.len(),
                key_ok.len()
            )));
        }
        if cache.len + t > cache.capacity {
            return Err(Error::InvalidArgument(format!(
                "CPU decode: {} cached + {t} new positions exceed the capacity {}",
                cache.len, cache.capacity
            )));
        }
        let vocab = cfg.vocab_size;
        if let Some(&bad) = ids.iter().find(|&&i| i as usize >= vocab) {
            return Err(Error::InvalidArgument(format!(
                "token id {bad} >= vocab_size {vocab}"
            )));
        }
        for (r, ok) in key_ok.chunks_exact(t).enumerate() {
            cache.key_ok[r].extend_from_slice(ok);
        }

        // One forward over all rows, each product using every thread. (Blocks of rows on one
        // thread each, meeting once per step, measured slower: each thread packs every weight
        // matrix again for its own product, which costs more than the products' thread
        // hand-offs.)
        let mut logits = vec![0f32; rows * vocab];
        let geom = StepPositions {
            t,
            past: cache.len,
            capacity: cache.capacity,
        };
        let step_rows = StepRows {
            ids,
            positions,
            key_ok: &cache.key_ok,
            k: cache.k.iter_mut().map(Vec::as_mut_slice).collect(),
            v: cache.v.iter_mut().map(Vec::as_mut_slice).collect(),
            logits: &mut logits,
            scratch: &mut self.scratch,
        };
        let model = self.model;
        forward_rows(model, step_rows, &geom, self.threaded)?;
        cache.len += t;
        Ok(Tensor::from_vec(logits, (rows, vocab), model.device())?)
    }
}

/// Positions of one step: `t` new tokens per row after `past` cached, in a cache of
/// `capacity` positions.
struct StepPositions {
    t: usize,
    past: usize,
    capacity: usize,
}

/// The rows of a step: their inputs (`[rows, t]` row-major), key flags, per-layer cache
/// slices (`[rows, kv_heads, capacity, head_dim]`), logits out and scratch.
struct StepRows<'a> {
    ids: &'a [u32],
    positions: &'a [u32],
    key_ok: &'a [Vec<bool>],
    k: Vec<&'a mut [f32]>,
    v: Vec<&'a mut [f32]>,
    logits: &'a mut [f32],
    scratch: &'a mut Scratch,
}

/// The forward of a [`StepRows`] (module docs): writes its keys and values into the cache at
/// positions `past..past + t` and its logits `[rows, vocab]` of each row's last new position.
/// The products run through [`crate::cpu::matmul::sgemm`]; the attention runs rows in parallel when
/// `threaded`.
fn forward_rows(m: &Qwen, mut w: StepRows, geom: &StepPositions, threaded: bool) -> Result<()> {
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
    let StepPositions {
        t,
        past,
        capacity: cap,
    } = *geom;
    let rows = w.key_ok.len();
    let n = rows * t;
    let total = past + t;

    // RoPE angles of every new position: [n, hd/2] cos and sin
    let half = hd / 2;
    let mut cos = Vec::with_capacity(n * half);
    let mut sin = Vec::with_capacity(n * half);
    for &p in w.positions {
        for &f in &m.inv_freq {
            let a = p as f32 * f;
            cos.push(a.cos());
            sin.push(a.sin());
        }
    }
    let rope = |x: &mut [f32], i: usize| {
        let (c, s) = (
            &cos[i * half..(i + 1) * half],
            &sin[i * half..(i + 1) * half],
        );
        for head in x.chunks_exact_mut(hd) {
            let (x1, x2) = head.split_at_mut(half);
            for j in 0..half {
                let (a, b) = (x1[j], x2[j]);
                x1[j] = a * c[j] - b * s[j];
                x2[j] = b * c[j] + a * s[j];
            }
        }
    };

    let sc = w.scratch;
    let x = sized(&mut sc.x, n * hsz);
    with_f32(&m.embed_tokens, |e| {
        for (row, &id) in x.chunks_exact_mut(hsz).zip(w.ids) {
            let id = id as usize;
            row.copy_from_slice(&e[id * hsz..(id + 1) * hsz]);
        }
    })?;
    let shape = AttnShape {
        heads: nh,
        kv_heads: kvh,
        head_dim: hd,
        capacity: cap,
        scale: 1.0 / (hd as f32).sqrt(),
    };
    let re = kvh * cap * hd;
    for (li, layer) in m.layers.iter().enumerate() {
        let at = &layer.self_attn;
        // attention block
        let xn = sized(&mut sc.xn, n * hsz);
        xn.copy_from_slice(x);
        with_f32(&layer.input_layernorm, |w| rms_norm_rows(xn, w, eps))?;
        let qkv = sized(&mut sc.qkv, n * qkv_w);
        linear_into(qkv, qkv_w, 0, false, xn, n, &at.q_proj)?;
        linear_into(qkv, qkv_w, qd, false, xn, n, &at.k_proj)?;
        linear_into(qkv, qkv_w, qd + kvd, false, xn, n, &at.v_proj)?;
        if let (Some(qn), Some(kn)) = (&at.q_norm, &at.k_norm) {
            with_f32(qn, |w| {
                for row in qkv.chunks_exact_mut(qkv_w) {
                    rms_norm_rows(&mut row[..qd], w, eps);
                }
            })?;
            with_f32(kn, |w| {
                for row in qkv.chunks_exact_mut(qkv_w) {
                    rms_norm_rows(&mut row[qd..qd + kvd], w, eps);
                }
            })?;
        }
        let (kc, vc) = (&mut *w.k[li], &mut *w.v[li]);
        for (i, row) in qkv.chunks_exact_mut(qkv_w).enumerate() {
            let (q, kv) = row.split_at_mut(qd);
            let (k, v) = kv.split_at_mut(kvd);
            rope(q, i);
            rope(k, i);
            let (r, j) = (i / t, i % t);
            for g in 0..kvh {
                let at_ = ((r * kvh + g) * cap + past + j) * hd;
                kc[at_..at_ + hd].copy_from_slice(&k[g * hd..(g + 1) * hd]);
                vc[at_..at_ + hd].copy_from_slice(&v[g * hd..(g + 1) * hd]);
            }
        }
        let attn = sized(&mut sc.attn, n * qd);
        let (kc, vc) = (&*kc, &*vc);
        let qkv = &*qkv;
        let attend_row = |(r, out_r): (usize, &mut [f32])| {
            let mut probs = vec![0f32; (nh / kvh) * total];
            for j in 0..t {
                attend(
                    &shape,
                    &qkv[(r * t + j) * qkv_w..][..qd],
                    &kc[r * re..(r + 1) * re],
                    &vc[r * re..(r + 1) * re],
                    &w.key_ok[r][..=past + j],
                    &mut probs,
                    &mut out_r[j * qd..(j + 1) * qd],
                );
            }
        };
        if threaded {
            attn.par_chunks_mut(t * qd).enumerate().for_each(attend_row);
        } else {
            attn.chunks_mut(t * qd).enumerate().for_each(attend_row);
        }
        linear_into(x, hsz, 0, true, attn, n, &at.o_proj)?;
        // MLP block
        let xn = sized(&mut sc.xn, n * hsz);
        xn.copy_from_slice(x);
        with_f32(&layer.post_attention_layernorm, |w| {
            rms_norm_rows(xn, w, eps)
        })?;
        let gu = sized(&mut sc.gu, n * 2 * ffn);
        linear_into(gu, 2 * ffn, 0, false, xn, n, &layer.mlp.gate_proj)?;
        linear_into(gu, 2 * ffn, ffn, false, xn, n, &layer.mlp.up_proj)?;
        let act = sized(&mut sc.act, n * ffn);
        let swiglu_row = |(a, row): (&mut [f32], &[f32])| {
            let (g, u) = row.split_at(ffn);
            for ((a, &g), &u) in a.iter_mut().zip(g).zip(u) {
                *a = silu(g) * u;
            }
        };
        if threaded && n * ffn >= 1 << 15 {
            act.par_chunks_mut(ffn)
                .zip(gu.par_chunks(2 * ffn))
                .for_each(swiglu_row);
        } else {
            act.chunks_mut(ffn)
                .zip(gu.chunks(2 * ffn))
                .for_each(swiglu_row);
        }
        linear_into(x, hsz, 0, true, act, n, &layer.mlp.down_proj)?;
    }

    // final norm and logits at each row's last new position
    let last = sized(&mut sc.xn, rows * hsz);
    for (r, dst) in last.chunks_exact_mut(hsz).enumerate() {
        dst.copy_from_slice(&x[(r * t + t - 1) * hsz..(r * t + t) * hsz]);
    }
    with_f32(&m.norm, |w| rms_norm_rows(last, w, eps))?;
    with_f32(&m.lm_head, |wt| {
        matmul_wt(w.logits, vocab, 0, false, last, rows, hsz, wt, vocab)
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silu_matches_its_formula() {
        for i in -2000..=2000 {
            let g = i as f32 * 0.05; // -100 ..= 100
            let exact = g as f64 / (1.0 + (-(g as f64)).exp());
            let got = silu(g) as f64;
            let tol = 2e-6 * exact.abs().max(1e-30);
            assert!(
                (got - exact).abs() <= tol,
                "silu({g}) = {got}, exact {exact}"
            );
        }
        assert_eq!(silu(0.0), 0.0);
        assert_eq!(silu(-200.0), 0.0);
        assert_eq!(silu(200.0), 200.0);
    }

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
