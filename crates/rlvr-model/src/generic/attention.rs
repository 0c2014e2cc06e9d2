//! Causal grouped-query attention in bounded memory from plain candle tensor ops, so it runs
//! on every device (the CPU kernels of `cpu/kernels.rs` do not run on CUDA); the attention of
//! the device-generic path's training step and of its KV-cached sampling forward.
//!
//! [`Attention::forward`] walks the queries in chunks of `c` rows. A chunk's scores are
//! `[B, heads, c, L]` with `L = past + start + c` (keys after the chunk's last query are causally
//! invisible and never computed); the result keeps only the output `O` and the row
//! log-sum-exp `lse = m + log(sum exp(S - m))`, so the stored activation memory of one call is
//! `O(T x head_dim)` and its peak working memory `O(T x c)`: never `T x T`.
//!
//! [`Attention::backward`] recomputes each chunk's probabilities `P = exp(S - lse)` and applies, with
//! `S = scale * Q K^T + mask` and `D = rowsum(dO * O)`:
//! ```text
//! dV += P^T dO        dP = dO V^T        dS = P * (dP - D)
//! dQ  = scale * dS K  dK += scale * dS^T Q
//! ```
//! Scores, softmax, `lse` and `D` are f32 (f64 for an f64 model); the matmuls run in the
//! model's dtype (bf16 works). Masks are built on the device from `arange` comparisons: the
//! tensor form of the one mask rule, [`crate::mask::visible`] (key `j` is visible to query `i`
//! when `j == i`, or `j < i` and `j` is not a padding key and, in a packed batch, belongs to
//! the same sequence as `i`); a test checks it against that function key by key.
//!
//! Shapes: `q` `[B, heads, T, hd]` (after RoPE), `k`, `v` `[B, kv_heads, past + T, hd]`: the
//! queries are the last `T` positions (`past` > 0 only when sampling with a KV cache; the
//! backward takes `past = 0`); query head `h` uses kv head `h / (heads / kv_heads)`
//! (transformers' `repeat_kv` order).

use candle_core::{DType, Tensor, D};

use crate::error::Result;
use crate::model::upcast;

/// Added to invisible scores; `exp` of it underflows to exactly 0.
const MASK_VALUE: f64 = -1e9;

/// What [`Attention::backward`] needs besides q, k, v: the output and the row log-sum-exp.
pub(crate) struct FlashOut {
    /// `[B, heads, T, hd]` in the dtype of `v`.
    pub o: Tensor,
    /// `[B, kv_heads, groups, T, 1]` f32 (f64 for f64 inputs).
    pub lse: Tensor,
}

/// Problem geometry shared by both passes.
struct Geo {
    b: usize,
    kvh: usize,
    g: usize,
    /// Query positions.
    t: usize,
    /// Keys before the first query (cached positions when sampling; 0 in training).
    past: usize,
    hd: usize,
    up: DType,
}

impl Geo {
    fn of(q: &Tensor, k: &Tensor) -> Result<Self> {
        let (b, nh, t, hd) = q.dims4()?;
        let (kvh, l) = (k.dim(1)?, k.dim(2)?);
        Ok(Self {
            b,
            kvh,
            g: nh / kvh,
            t,
            past: l - t,
            hd,
            up: upcast(q.dtype()),
        })
    }

    /// Rows `s..s+c` of a `[B, heads, T, hd]` tensor as `[B, kv_heads, groups * c, hd]`.
    fn rows(&self, x: &Tensor, s: usize, c: usize) -> Result<Tensor> {
        Ok(x.reshape((self.b, self.kvh, self.g, self.t, self.hd))?
            .narrow(3, s, c)?
            .contiguous()?
            .reshape((self.b, self.kvh, self.g * c, self.hd))?)
    }
}

/// The additive mask `[B or 1, 1, 1, c, L]` (0 visible, MASK_VALUE not) of query rows
/// `s..s+c` (positions `past + s..`) against keys `0..L`, built on `device`. `key_ok` is
/// `[B, past + T]` in `up` (1 real, 0 padding); `segments` `[B, past + T]` u32, the sequence of
/// each position of a packed batch.
fn chunk_mask(
    geo: &Geo,
    (key_ok, segments): (Option<&Tensor>, Option<&Tensor>),
    s: usize,
    c: usize,
    l: usize,
    device: &candle_core::Device,
) -> Result<Tensor> {
    let p = geo.past + s;
    let qi = Tensor::arange(p as u32, (p + c) as u32, device)?.reshape((c, 1))?;
    let kj = Tensor::arange(0u32, l as u32, device)?.reshape((1, l))?;
    let shape = (1, 1, 1, c, l);
    // j < i: earlier keys, then only the real ones, then only those of the query's sequence
    let mut earlier = kj.broadcast_lt(&qi)?.to_dtype(geo.up)?.reshape(shape)?;
    let same = kj.broadcast_eq(&qi)?.to_dtype(geo.up)?.reshape(shape)?; // j == i
    if let Some(ok) = key_ok {
        let ok = ok.narrow(1, 0, l)?.reshape((geo.b, 1, 1, 1, l))?;
        earlier = ok.broadcast_mul(&earlier)?;
    }
    if let Some(seg) = segments {
        let sq = seg.narrow(1, p, c)?.reshape((geo.b, 1, 1, c, 1))?;
        let sk = seg.narrow(1, 0, l)?.reshape((geo.b, 1, 1, 1, l))?;
        earlier = sk
            .broadcast_eq(&sq)?
            .to_dtype(geo.up)?
            .broadcast_mul(&earlier)?;
    }
    let visible = earlier.broadcast_add(&same)?;
    Ok(((visible - 1.0)? * -MASK_VALUE)?)
}

/// Scores `[B, kv_heads, groups, c, L]` in `up` of query rows `s..s+c` against keys `0..L`
/// (`L = past + s + c`), scaled and masked.
fn scores(
    geo: &Geo,
    qc: &Tensor,
    kc: &Tensor,
    masks: (Option<&Tensor>, Option<&Tensor>),
    s: usize,
    c: usize,
    scale: f64,
) -> Result<Tensor> {
    let l = geo.past + s + c;
    let sc =
        (qc.matmul(&kc.t()?)?.to_dtype(geo.up)? * scale)?.reshape((geo.b, geo.kvh, geo.g, c, l))?;
    let mask = chunk_mask(geo, masks, s, c, l, qc.device())?;
    Ok(sc.broadcast_add(&mask)?)
}

/// One causal attention call: `[q, k, v]` as in the module docs, the key flags
/// (`[B, past + T]`, 1 real, 0 padding, in the upcast dtype; `None`: every key real), the
/// sequence of each position of a packed batch (`[B, past + T]` u32; `None`: one sequence per
/// row), the score scale and the query rows per chunk.
pub(crate) struct Attention<'a> {
    pub qkv: [&'a Tensor; 3],
    pub key_ok: Option<&'a Tensor>,
    pub segments: Option<&'a Tensor>,
    pub scale: f64,
    pub chunk: usize,
}

/// Query rows `s..s + c` of one chunk with keys and values `0..L` and their masked scores.
struct Chunk {
    c: usize,
    l: usize,
    qc: Tensor,
    kc: Tensor,
    vc: Tensor,
    sc: Tensor,
}

impl Attention<'_> {
    fn chunk_at(&self, geo: &Geo, s: usize) -> Result<Chunk> {
        let c = self.chunk.max(1).min(geo.t - s);
        let l = geo.past + s + c;
        let qc = geo.rows(self.qkv[0], s, c)?;
        let kc = self.qkv[1].narrow(2, 0, l)?.contiguous()?;
        let vc = self.qkv[2].narrow(2, 0, l)?.contiguous()?;
        let masks = (self.key_ok, self.segments);
        let sc = scores(geo, &qc, &kc, masks, s, c, self.scale)?;
        Ok(Chunk {
            c,
            l,
            qc,
            kc,
            vc,
            sc,
        })
    }

    /// Causal attention output and row log-sum-exp (see the module docs). No graph is built
    /// when the inputs carry none (the training walk passes detached tensors).
    pub(crate) fn forward(&self) -> Result<FlashOut> {
        let geo = Geo::of(self.qkv[0], self.qkv[1])?;
        let (b, kvh, g, t, hd) = (geo.b, geo.kvh, geo.g, geo.t, geo.hd);
        let (mut os, mut lses) = (Vec::new(), Vec::new());
        let mut s = 0;
        while s < t {
            let Chunk { c, l, vc, sc, .. } = self.chunk_at(&geo, s)?;
            let m = sc.max_keepdim(D::Minus1)?;
            let e = sc.broadcast_sub(&m)?.exp()?;
            let sum = e.sum_keepdim(D::Minus1)?;
            let p = e.broadcast_div(&sum)?;
            let oc = p
                .to_dtype(self.qkv[2].dtype())?
                .reshape((b, kvh, g * c, l))?
                .matmul(&vc)?
                .reshape((b, kvh, g, c, hd))?;
            os.push(oc);
            lses.push((m + sum.log()?)?);
            s += c;
        }
        let o = Tensor::cat(&os, 3)?.reshape((b, kvh * g, t, hd))?;
        let lse = Tensor::cat(&lses, 3)?;
        Ok(FlashOut { o, lse })
    }

    /// Gradients `(dq, dk, dv)` of `sum(O * d_o)` for the [`Self::forward`] that gave `out`
    /// (any chunk size: the result does not depend on it). Queries must start at key 0.
    pub(crate) fn backward(
        &self,
        out: &FlashOut,
        d_o: &Tensor,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let geo = Geo::of(self.qkv[0], self.qkv[1])?;
        if geo.past != 0 {
            return Err(crate::error::Error::InvalidArgument(
                "attention backward: the queries must start at key 0".into(),
            ));
        }
        let (b, kvh, g, t, hd, up) = (geo.b, geo.kvh, geo.g, geo.t, geo.hd, geo.up);
        let dt = self.qkv[0].dtype();
        let d_o = d_o.to_dtype(dt)?.contiguous()?;
        // D = rowsum(dO * O), [B, kvh, g, T, 1]
        let big_d = (d_o.to_dtype(up)? * out.o.to_dtype(up)?)?
            .sum_keepdim(D::Minus1)?
            .reshape((b, kvh, g, t, 1))?;
        let mut dk = Tensor::zeros((b, kvh, t, hd), up, self.qkv[0].device())?;
        let mut dv = Tensor::zeros((b, kvh, t, hd), up, self.qkv[0].device())?;
        let mut dqs = Vec::new();
        let mut s = 0;
        while s < t {
            let Chunk {
                c,
                l,
                qc,
                kc,
                vc,
                sc,
            } = self.chunk_at(&geo, s)?;
            let doc = geo.rows(&d_o, s, c)?;
            let p = sc.broadcast_sub(&out.lse.narrow(3, s, c)?)?.exp()?;
            let p4 = p.reshape((b, kvh, g * c, l))?;
            let dv_c = p4.to_dtype(dt)?.t()?.matmul(&doc)?.to_dtype(up)?;
            dv = (dv + dv_c.pad_with_zeros(2, 0, t - l)?)?;
            let dp = doc
                .matmul(&vc.t()?)?
                .to_dtype(up)?
                .reshape((b, kvh, g, c, l))?;
            let ds = (p * dp.broadcast_sub(&big_d.narrow(3, s, c)?)?)?
                .reshape((b, kvh, g * c, l))?
                .to_dtype(dt)?;
            let dq_c = (ds.matmul(&kc)? * self.scale)?.reshape((b, kvh, g, c, hd))?;
            dqs.push(dq_c);
            let dk_c = (ds.t()?.matmul(&qc)?.to_dtype(up)? * self.scale)?;
            dk = (dk + dk_c.pad_with_zeros(2, 0, t - l)?)?;
            s += c;
        }
        let dq = Tensor::cat(&dqs, 3)?.reshape((b, kvh * g, t, hd))?;
        Ok((dq, dk.to_dtype(dt)?, dv.to_dtype(dt)?))
    }
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor};

    use super::*;

    /// The tensor mask of a chunk is [`crate::mask::visible`] at every query and key: padded
    /// and packed rows, the first chunk and a later one, with and without cached keys before
    /// the queries (sampling).
    #[test]
    fn the_chunk_mask_is_the_one_mask_rule() {
        let dev = Device::Cpu;
        let (b, heads, kv_heads, hd, t) = (2usize, 4usize, 2usize, 2usize, 7usize);
        for past in [0usize, 3] {
            let l_all = past + t;
            // row 0: padding at keys 1 and 5; row 1: no padding
            let ok: Vec<Vec<bool>> = (0..b)
                .map(|r| (0..l_all).map(|j| r == 1 || (j != 1 && j != 5)).collect())
                .collect();
            // row 0: one sequence; row 1: three packed sequences
            let seg: Vec<Vec<u32>> = (0..b)
                .map(|r| {
                    (0..l_all)
                        .map(|j| if r == 0 { 0 } else { (j / 4) as u32 })
                        .collect()
                })
                .collect();
            let q = Tensor::zeros((b, heads, t, hd), DType::F32, &dev).unwrap();
            let k = Tensor::zeros((b, kv_heads, l_all, hd), DType::F32, &dev).unwrap();
            let geo = Geo::of(&q, &k).unwrap();
            let ok_t = Tensor::from_vec(
                ok.iter()
                    .flatten()
                    .map(|&x| f32::from(u8::from(x)))
                    .collect::<Vec<_>>(),
                (b, l_all),
                &dev,
            )
            .unwrap();
            let seg_t = Tensor::from_vec(
                seg.iter().flatten().copied().collect::<Vec<u32>>(),
                (b, l_all),
                &dev,
            )
            .unwrap();
            for packed in [false, true] {
                let segments = packed.then_some(&seg_t);
                for (s, c) in [(0usize, 3usize), (3, 4)] {
                    let l = past + s + c;
                    let mask = chunk_mask(&geo, (Some(&ok_t), segments), s, c, l, &dev)
                        .unwrap()
                        .broadcast_as((b, 1, 1, c, l))
                        .unwrap()
                        .reshape((b, c, l))
                        .unwrap()
                        .to_vec3::<f32>()
                        .unwrap();
                    for (r, rows) in mask.iter().enumerate() {
                        for (qi, keys) in rows.iter().enumerate() {
                            let i = past + s + qi;
                            for (j, &m) in keys.iter().enumerate() {
                                let same = !packed || seg[r][j] == seg[r][i];
                                let want = crate::mask::visible(i, j, ok[r][j], same);
                                let got = m == 0.0;
                                assert_eq!(
                                    got, want,
                                    "past {past} packed {packed} row {r} query {i} key {j}"
                                );
                                if !got {
                                    assert_eq!(m, MASK_VALUE as f32);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
