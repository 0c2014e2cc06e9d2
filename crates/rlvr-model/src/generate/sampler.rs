//! One sampling step: a token and its log-prob per row of a `[rows, vocab]` logits tensor, on
//! the logits' device.
//!
//! The distribution, for one row with logits `x`, temperature `T`, `top_k`, `top_p` and a
//! uniform draw `u` in [0, 1) from the row's own RNG:
//!
//! * `s_i = x_i / T`, `w_i = exp(s_i - max s)`, `Z = sum_i w_i`; the returned log-prob is
//!   `log softmax(s)[token] = s_token - max s - ln Z`, before any truncation.
//! * top-k keeps `w_i >= tau_k`, `tau_k` the k-th largest weight; top-p then keeps
//!   `w_i >= tau_p`, `tau_p` the last weight of the shortest prefix of the kept weights sorted
//!   in decreasing order whose mass reaches `top_p` times the kept mass.
//! * the token is the first index `i` (vocabulary order) at which the running sum of the kept
//!   weights exceeds `u` times their total (inverse CDF), so a kept token of weight `w` is drawn
//!   with probability `w / kept mass`.
//! * greedy (`T = 0`): the first index of the largest logit, with its temperature-1 log-prob.
//!
//! Two implementations of that one function: [`sample_logits`] on the CPU works on the logits
//! in place (one vectorized exp pass, a bucket histogram of the weights that pre-filters the
//! top-k / top-p candidates, a weighted quickselect among them, no sort of the vocabulary);
//! on other devices it uses [`sample_logits_tensor`], tensor ops only (top-k / top-p candidates
//! from a tournament of block sorts, a sort of the k candidates, the inverse CDF from block
//! sums), which copies only the sampled ids and log-probs to the host. Both are tested against
//! each other and, by chi-square tests, against the softmax probabilities.

use candle_core::{DType, Device, Tensor, D};

use crate::cpu::kernels::fast_exp;
use crate::error::{Error, Result};
use crate::model::row_sums_f64;

/// Truncation and temperature of one sampling call.
#[derive(Debug, Clone, Copy)]
pub struct DrawParams {
    /// 0 = greedy.
    pub temperature: f64,
    /// None or >= vocab = off.
    pub top_k: Option<usize>,
    /// 1.0 = off.
    pub top_p: f64,
}

impl DrawParams {
    fn greedy(&self) -> bool {
        self.temperature == 0.0
    }

    fn inv_t(&self) -> f64 {
        if self.greedy() {
            1.0
        } else {
            1.0 / self.temperature
        }
    }

    fn top_k(&self, vocab: usize) -> Option<usize> {
        self.top_k.filter(|&k| k < vocab)
    }
}

/// One token per row of `logits` (`[rows, vocab]`, f32) and its log-prob (module docs), given
/// one uniform in [0, 1) per row (ignored when greedy). Returns `(tokens, logprobs)` on the host.
pub fn sample_logits(
    logits: &Tensor,
    uniforms: &[f64],
    params: &DrawParams,
) -> Result<(Vec<u32>, Vec<f32>)> {
    let (rows, vocab) = logits.dims2()?;
    if uniforms.len() != rows {
        return Err(Error::InvalidArgument(format!(
            "{} uniforms for {rows} rows",
            uniforms.len()
        )));
    }
    if rows == 0 || vocab == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    if !logits.device().is_cpu() {
        let u: Vec<f32> = uniforms.iter().map(|&u| u as f32).collect();
        let u = Tensor::from_vec(u, rows, logits.device())?;
        let (ids, lps) = sample_logits_tensor(logits, &u, params)?;
        // one small device-to-host copy: [rows, 2] (ids are exact in f32 below 2^24)
        let both = Tensor::stack(&[ids.to_dtype(DType::F32)?, lps], 1)?.to_vec2::<f32>()?;
        return Ok(both.iter().map(|r| (r[0] as u32, r[1])).unzip());
    }
    let logits = logits.to_dtype(DType::F32)?;
    let mut work = RowWork::default();
    Ok(crate::cpu::with_cpu_slice(
        &logits,
        "sampler",
        |all: &[f32]| {
            all.chunks_exact(vocab)
                .zip(uniforms)
                .map(|(x, &u)| sample_row(x, u, params, &mut work))
                .unzip()
        },
    )?)
}

/// Scratch buffers of [`sample_row`], reused across rows.
#[derive(Default)]
struct RowWork {
    w: Vec<f32>,
    cand: Vec<f32>,
    count: Vec<u32>,
    idx: Vec<u32>,
}

/// Histogram buckets: a positive f32 weight `w <= 1` falls in bucket `bits(w) >> SHIFT`, 1/32 of
/// a binade wide (bit patterns of non-negative floats are ordered like the floats).
const SHIFT: u32 = 18;
const BUCKETS: usize = (0x3F80_0000u32 >> SHIFT) as usize + 1;

fn bucket(w: f32) -> usize {
    (w.to_bits() >> SHIFT) as usize
}

/// Max of a slice, 8 lanes at a time (vectorizes; NaN-free input assumed).
fn max_f32(x: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &v) in lanes.iter_mut().zip(c) {
            *a = if v > *a { v } else { *a };
        }
    }
    let mut m = lanes.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for &v in rest {
        m = m.max(v);
    }
    m
}

/// Sum in f64 of the elements that `keep`, f32 blocks of 1024 summed in 8 f32 lanes
/// (vectorizes; relative error ~1e-7). `keep` is inlined, so `|_| true` costs no compare.
#[inline(always)]
fn sum_where(x: &[f32], keep: impl Fn(f32) -> bool + Copy) -> f64 {
    x.chunks(1024)
        .map(|block| {
            let mut lanes = [0f32; 8];
            let chunks = block.chunks_exact(8);
            let rest: f32 = chunks.remainder().iter().filter(|&&v| keep(v)).sum();
            for c in chunks {
                for (a, &v) in lanes.iter_mut().zip(c) {
                    *a += if keep(v) { v } else { 0.0 };
                }
            }
            lanes.iter().map(|&v| v as f64).sum::<f64>() + rest as f64
        })
        .sum()
}

/// The highest histogram bucket `b` at which `of(b) + of(b + 1) + ...` (from the top) reaches
/// `need`, and the sum above it; bucket 0 when no bucket does.
fn lowest_bucket(of: impl Fn(usize) -> f64, need: f64) -> (usize, f64) {
    let mut above = 0.0;
    for b in (0..BUCKETS).rev() {
        if above + of(b) >= need {
            return (b, above);
        }
        above += of(b);
    }
    (0, above)
}

/// The smallest value `v*` of `vals` such that the values `>= v*`, taken largest first, sum to
/// at least `need` (the last element of the shortest heavy prefix of `vals` sorted in
/// decreasing order). Weighted quickselect: expected O(len). Reorders `vals`.
fn weighted_threshold(vals: &mut [f32], mut need: f64) -> f32 {
    let desc = |a: &f32, b: &f32| b.total_cmp(a);
    let mut lo = 0;
    let mut hi = vals.len();
    let mut last = vals.iter().copied().fold(f32::INFINITY, f32::min);
    while hi - lo > 32 {
        let s = &mut vals[lo..hi];
        let mid = s.len() / 2;
        s.select_nth_unstable_by(mid, desc);
        let upper: f64 = s[..=mid].iter().map(|&v| v as f64).sum();
        if upper >= need {
            last = s[mid];
            hi = lo + mid + 1;
        } else {
            need -= upper;
            lo += mid + 1;
        }
    }
    let s = &mut vals[lo..hi];
    s.sort_unstable_by(desc);
    let mut acc = 0.0;
    for &v in s.iter() {
        acc += v as f64;
        if acc >= need {
            return v;
        }
    }
    // rounding: the whole remaining range was needed
    s.last().copied().unwrap_or(last)
}

/// The k-th largest of `vals` (1-based `k <= len`). Reorders `vals`.
fn kth_largest(vals: &mut [f32], k: usize) -> f32 {
    let (_, v, _) = vals.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    *v
}

/// One row on the CPU: returns the token and its log-prob (module docs).
fn sample_row(x: &[f32], u: f64, params: &DrawParams, work: &mut RowWork) -> (u32, f32) {
    let vocab = x.len();
    let inv_t = params.inv_t() as f32;
    let m = max_f32(x);
    let w = &mut work.w;
    w.clear();
    w.extend(x.iter().map(|&v| fast_exp((v - m) * inv_t)));
    let z = sum_where(w, |_| true);
    let ln_z = z.ln();
    let logprob = |i: usize| ((x[i] as f64 - m as f64) * inv_t as f64 - ln_z) as f32;
    if params.greedy() {
        let best = x.iter().position(|&v| v == m).unwrap_or(0);
        return (best as u32, logprob(best));
    }
    let top_k = params.top_k(vocab);
    if let Some(k) = top_k {
        return sample_top_k(
            &work.w,
            k,
            u,
            params.top_p,
            &mut work.count,
            &mut work.idx,
            &mut work.cand,
        )
        .map_or((0, logprob(0)), |i| (i, logprob(i as usize)));
    }
    let mut tau = 0f32;
    let mut kept = z;
    if params.top_p < 1.0 {
        // histogram of the weights: counts and masses per bucket, largest bucket first
        let mut mass = vec![0f64; BUCKETS];
        for &v in w.iter() {
            mass[bucket(v)] += v as f64;
        }
        // the lowest bucket holding kept tokens: buckets above it are kept whole; split it by
        // weight
        let need = params.top_p * z;
        let (lowest, acc) = lowest_bucket(|b| mass[b], need);
        let cand = &mut work.cand;
        cand.clear();
        cand.extend(w.iter().copied().filter(|&v| bucket(v) == lowest));
        tau = weighted_threshold(cand, need - acc);
        kept = sum_where(w, |v| v >= tau);
    }
    // inverse CDF in vocabulary order, skipping blocks of 1024 by their sums
    let target = u * kept;
    let mut acc = 0.0;
    let mut last_kept = None;
    for (bi, block) in w.chunks(1024).enumerate() {
        let bsum = sum_where(block, |v| v >= tau);
        if bsum > 0.0 {
            last_kept = Some(bi);
        }
        if acc + bsum <= target {
            acc += bsum;
            continue;
        }
        for (j, &v) in block.iter().enumerate() {
            if v >= tau && v > 0.0 {
                acc += v as f64;
                if acc > target {
                    let i = bi * 1024 + j;
                    return (i as u32, logprob(i));
                }
            }
        }
    }
    // rounding: the last kept token
    let bi = last_kept.unwrap_or(0);
    let block = &w[bi * 1024..((bi + 1) * 1024).min(vocab)];
    let j = block
        .iter()
        .rposition(|&v| v >= tau && v > 0.0)
        .unwrap_or(0);
    let i = bi * 1024 + j;
    (i as u32, logprob(i))
}

/// Top-k (then top-p among the k) on the weights `w` of one row, `k < w.len()`: the sampled
/// index, `None` only when no weight is positive. A histogram of bucket counts finds the lowest
/// bucket that holds the k-th largest weight; only the indices at or above it (in vocabulary
/// order) are candidates, so the threshold, the top-p split and the inverse CDF touch the
/// candidates alone, never the vocabulary again.
fn sample_top_k(
    w: &[f32],
    k: usize,
    u: f64,
    top_p: f64,
    count: &mut Vec<u32>,
    idx: &mut Vec<u32>,
    vals: &mut Vec<f32>,
) -> Option<u32> {
    count.clear();
    count.resize(BUCKETS, 0);
    for &v in w {
        count[bucket(v)] += 1;
    }
    let (lowest, _) = lowest_bucket(|b| f64::from(count[b]), k as f64);
    idx.clear();
    idx.extend((0..w.len() as u32).filter(|&i| bucket(w[i as usize]) >= lowest));
    vals.clear();
    vals.extend(idx.iter().map(|&i| w[i as usize]));
    let mut tau = kth_largest(vals, k);
    idx.retain(|&i| w[i as usize] >= tau && w[i as usize] > 0.0);
    let mass = |idx: &[u32]| idx.iter().map(|&i| w[i as usize] as f64).sum::<f64>();
    let mut kept = mass(idx);
    if top_p < 1.0 {
        vals.clear();
        vals.extend(idx.iter().map(|&i| w[i as usize]));
        tau = weighted_threshold(vals, top_p * kept);
        idx.retain(|&i| w[i as usize] >= tau);
        kept = mass(idx);
    }
    // inverse CDF over the kept candidates, in vocabulary order
    let target = u * kept;
    let mut acc = 0.0;
    for &i in idx.iter() {
        acc += w[i as usize] as f64;
        if acc > target {
            return Some(i);
        }
    }
    idx.last().copied()
}

/// Block width of the tournament top-k (candle's CUDA arg-sort keeps a row in shared memory:
/// 4096 u32 = 16 KiB).
const SORT_BLOCK: usize = 4096;
/// Largest k the tournament serves (each round keeps k of every block of 4096); larger top-k
/// thresholds come from bisection.
const TOURNAMENT_MAX_K: usize = 1024;
/// Candidates pre-filtered for top-p alone; rows whose top-1024 mass misses `top_p` fall back to
/// bisection.
const TOP_P_CANDIDATES: usize = 1024;
/// Width of the inverse-CDF blocks.
const CDF_BLOCK: usize = 512;
/// Bisection steps on a threshold in [0, 1]: resolution 2^-40.
const BISECT_STEPS: usize = 40;

/// `[n, n]` upper-triangular ones (`x.matmul(triu)` is the inclusive running sum of `x`).
fn triu(n: usize, device: &Device) -> Result<Tensor> {
    let mut m = vec![0f32; n * n];
    for i in 0..n {
        for j in i..n {
            m[i * n + j] = 1.0;
        }
    }
    Ok(Tensor::from_vec(m, (n, n), device)?)
}

/// Pads `x` `[rows, n]` with `value` to `[rows, len]`.
fn pad_cols(x: &Tensor, len: usize, value: f64) -> Result<Tensor> {
    let (rows, n) = x.dims2()?;
    if len == n {
        return Ok(x.clone());
    }
    let pad = (Tensor::ones((rows, len - n), x.dtype(), x.device())? * value)?;
    Ok(Tensor::cat(&[x, &pad], 1)?)
}

/// The `k` largest values of every row of `w` `[rows, n]` (non-negative), in decreasing order,
/// with their column indices: a tournament of block sorts (sort every block of 4096, keep its
/// best k, repeat on the survivors), then one sort of the last <= 4096 candidates. `k <= 1024`.
pub(crate) fn top_k_sorted(w: &Tensor, k: usize) -> Result<(Tensor, Tensor)> {
    let (rows, n) = w.dims2()?;
    let device = w.device();
    let mut vals = w.clone();
    let mut idx: Option<Tensor> = None; // column of `w` of each candidate; None = identity
    let mut width = n;
    while width > SORT_BLOCK {
        let blocks = width.div_ceil(SORT_BLOCK);
        let padded = pad_cols(&vals, blocks * SORT_BLOCK, -1.0)?;
        let flat = padded.reshape((rows * blocks, SORT_BLOCK))?;
        let order = flat
            .arg_sort_last_dim(false)?
            .narrow(1, 0, k)?
            .contiguous()?;
        let best = flat.gather(&order, 1)?.reshape((rows, blocks * k))?;
        let offsets: Vec<u32> = (0..rows * blocks)
            .map(|r| ((r % blocks) * SORT_BLOCK) as u32)
            .collect();
        let offsets = Tensor::from_vec(offsets, (rows * blocks, 1), device)?;
        let pos = order.broadcast_add(&offsets)?.reshape((rows, blocks * k))?;
        idx = Some(match idx {
            None => pos,
            Some(prev) => {
                // padding positions point past `prev`: clamp them to a real (losing) column
                let prev = pad_cols(&prev.to_dtype(DType::F32)?, blocks * SORT_BLOCK, 0.0)?
                    .to_dtype(DType::U32)?;
                prev.gather(&pos, 1)?
            }
        });
        vals = best;
        width = blocks * k;
    }
    let order = vals
        .arg_sort_last_dim(false)?
        .narrow(1, 0, k)?
        .contiguous()?;
    let best = vals.gather(&order, 1)?;
    let cols = match idx {
        None => order,
        Some(prev) => prev.contiguous()?.gather(&order, 1)?,
    };
    Ok((best, cols))
}

/// Per row, the largest `tau` in [lo, 1] with `f(tau) >= target` for a non-increasing `f`, by
/// bisection (`lo` must satisfy it).
fn bisect(lo: &Tensor, target: &Tensor, f: impl Fn(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    let mut lo = lo.clone();
    let mut hi = (lo.ones_like()? * 1.000_001)?;
    for _ in 0..BISECT_STEPS {
        let mid = ((&lo + &hi)? * 0.5)?;
        let ok = f(&mid)?.ge(target)?;
        lo = ok.where_cond(&mid, &lo)?;
        hi = ok.where_cond(&hi, &mid)?;
    }
    Ok(lo)
}

/// [`sample_logits`] with tensor ops on the logits' device: returns the ids `[rows]` (u32) and
/// log-probs `[rows]` (f32) as tensors there; `uniforms` is `[rows]` f32 on that device.
///
/// The same function as the CPU path (module docs). Top-k (k <= 1024) takes the k largest
/// weights by a tournament of block sorts and a sort of the k; top-p runs on those k, or, alone,
/// on the 1024 largest weights (a top-k pre-filter, as vLLM's sampler does), with a running sum
/// (a matmul with a triangular matrix) over the sorted candidates. Rows whose candidates hold
/// less than `top_p` of the mass (flat distributions), and top-k above 1024, get their
/// threshold by bisection on the full row instead (40 passes). The draw sums blocks of 512
/// weights, picks the block where the running sum crosses `u` times the kept mass, and then the
/// token within it.
pub fn sample_logits_tensor(
    logits: &Tensor,
    uniforms: &Tensor,
    params: &DrawParams,
) -> Result<(Tensor, Tensor)> {
    let (rows, vocab) = logits.dims2()?;
    let device = logits.device();
    let s = (logits.to_dtype(DType::F32)? * params.inv_t())?;
    let m = s.max_keepdim(D::Minus1)?;
    let z = s.broadcast_sub(&m)?;
    let w = z.exp()?;
    // the vocabulary-wide sum by blocks, then in f64 (tests/precision.rs)
    let total64 = row_sums_f64(&w)?;
    let total = total64.to_dtype(DType::F32)?;
    let lse = total64.log()?;
    let logprob_of = |ids: &Tensor| -> Result<Tensor> {
        let ids = ids.reshape((rows, 1))?;
        let zt = z.gather(&ids, 1)?.to_dtype(DType::F64)?;
        Ok(zt.sub(&lse)?.squeeze(1)?.to_dtype(DType::F32)?)
    };
    if params.greedy() {
        let ids = s.argmax_keepdim(D::Minus1)?.to_dtype(DType::U32)?;
        let lp = logprob_of(&ids)?;
        return Ok((ids.squeeze(1)?, lp));
    }
    let top_k = params.top_k(vocab);
    let top_p = params.top_p < 1.0;
    let zero = Tensor::zeros((rows, 1), DType::F32, device)?;
    let mass_ge = |tau: &Tensor| -> Result<Tensor> {
        let keep = w.broadcast_ge(tau)?.to_dtype(DType::F32)?;
        Ok((keep * &w)?.sum_keepdim(D::Minus1)?)
    };
    // the kept set is {w >= tau}; tau = 0 keeps every token
    let tau = match top_k {
        Some(k) if k <= TOURNAMENT_MAX_K => {
            let (vals, _) = top_k_sorted(&w, k)?;
            if top_p {
                let cum = vals.matmul(&triu(k, device)?)?;
                let target = (cum.narrow(1, k - 1, 1)? * params.top_p)?;
                heavy_prefix_last(&vals, &cum, &target)?
            } else {
                vals.narrow(1, k - 1, 1)?
            }
        }
        Some(k) => {
            let want = Tensor::full(k as f32, (rows, 1), device)?;
            let tau_k = bisect(&zero, &want, |t| {
                Ok(w.broadcast_ge(t)?
                    .to_dtype(DType::F32)?
                    .sum_keepdim(D::Minus1)?)
            })?;
            if top_p {
                let target = (mass_ge(&tau_k)? * params.top_p)?;
                bisect(&tau_k, &target, |t| mass_ge(&t.broadcast_maximum(&tau_k)?))?
            } else {
                tau_k
            }
        }
        None if top_p => {
            let k = TOP_P_CANDIDATES.min(vocab);
            let target = (&total * params.top_p)?;
            let (vals, _) = top_k_sorted(&w, k)?;
            let cum = vals.matmul(&triu(k, device)?)?;
            let enough = cum.narrow(1, k - 1, 1)?.ge(&target)?;
            let tau_sorted = heavy_prefix_last(&vals, &cum, &target)?;
            // one scalar to the host: does any row need the bisection?
            let all_enough = enough.to_dtype(DType::F32)?.min_all()?.to_scalar::<f32>()? > 0.5;
            if all_enough {
                tau_sorted
            } else {
                let tau_b = bisect(&zero, &target, mass_ge)?;
                enough.where_cond(&tau_sorted, &tau_b)?
            }
        }
        None => zero.clone(),
    };
    let kept = (w.broadcast_ge(&tau)?.to_dtype(DType::F32)? * &w)?;
    let ids = inverse_cdf(&kept, uniforms)?;
    let lp = logprob_of(&ids)?;
    Ok((ids, lp))
}

/// Per row of `vals` `[rows, k]` sorted in decreasing order with running sums `cum`: the last
/// value of the shortest prefix whose sum reaches `target` `[rows, 1]` (the last value when
/// none does), `[rows, 1]`.
fn heavy_prefix_last(vals: &Tensor, cum: &Tensor, target: &Tensor) -> Result<Tensor> {
    let k = vals.dim(1)?;
    let at = cum
        .broadcast_lt(target)?
        .to_dtype(DType::F32)?
        .sum_keepdim(D::Minus1)?
        .clamp(0.0, (k - 1) as f64)?
        .to_dtype(DType::U32)?;
    Ok(vals.gather(&at, 1)?)
}

/// Per row of the non-negative `kept` `[rows, n]`, the first column where the running sum
/// exceeds `u` times the row total (never a zero-weight column), as u32 `[rows]`.
fn inverse_cdf(kept: &Tensor, u: &Tensor) -> Result<Tensor> {
    let (rows, n) = kept.dims2()?;
    let device = kept.device();
    let blocks = n.div_ceil(CDF_BLOCK);
    let kb = pad_cols(kept, blocks * CDF_BLOCK, 0.0)?.reshape((rows, blocks, CDF_BLOCK))?;
    let bsum = kb.sum(D::Minus1)?; // [rows, blocks]
    let bcum = bsum.matmul(&triu(blocks, device)?)?;
    let t = u
        .reshape((rows, 1))?
        .to_dtype(DType::F32)?
        .mul(&bcum.narrow(1, blocks - 1, 1)?)?;
    // first position whose running sum exceeds t, clamped to the last positive one
    let first_above = |cum: &Tensor, t: &Tensor, vals: &Tensor| -> Result<Tensor> {
        let width = cum.dim(1)?;
        let count = cum
            .broadcast_le(t)?
            .to_dtype(DType::F32)?
            .sum_keepdim(D::Minus1)?;
        let ramp = Tensor::arange(1f32, width as f32 + 1.0, device)?.reshape((1, width))?;
        let last_pos = (vals.gt(0.0)?.to_dtype(DType::F32)?.broadcast_mul(&ramp)?)
            .max_keepdim(D::Minus1)?
            .affine(1.0, -1.0)?
            .clamp(0.0, (width - 1) as f64)?;
        Ok(count.minimum(&last_pos)?.to_dtype(DType::U32)?)
    };
    let b = first_above(&bcum, &t, &bsum)?; // [rows, 1]
    let before = (bcum.gather(&b, 1)? - bsum.gather(&b, 1)?)?;
    let gather_idx = b
        .reshape((rows, 1, 1))?
        .broadcast_as((rows, 1, CDF_BLOCK))?
        .contiguous()?;
    let block = kb.gather(&gather_idx, 1)?.reshape((rows, CDF_BLOCK))?;
    let cum = block.matmul(&triu(CDF_BLOCK, device)?)?;
    let j = first_above(&cum, &(t - before)?, &block)?;
    let id = ((b.to_dtype(DType::F32)? * CDF_BLOCK as f64)? + j.to_dtype(DType::F32)?)?;
    Ok(id.squeeze(1)?.to_dtype(DType::U32)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    fn p(t: f64, k: Option<usize>, top_p: f64) -> DrawParams {
        DrawParams {
            temperature: t,
            top_k: k,
            top_p,
        }
    }

    /// The uniforms `u` as the tensor path takes them (`[rows]` f32).
    fn uniforms(u: &[f64]) -> Tensor {
        Tensor::from_vec(
            u.iter().map(|&v| v as f32).collect::<Vec<_>>(),
            u.len(),
            &Device::Cpu,
        )
        .unwrap()
    }

    fn normal_logits(n: usize, sd: f32, seed: u64) -> Vec<f32> {
        let mut rng = StdRng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                // Box-Muller
                let (a, b) = (rng.random::<f64>().max(1e-300), rng.random::<f64>());
                ((-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()) as f32 * sd
            })
            .collect()
    }

    /// The truncated, renormalized distribution in f64 from a full sort (the definition).
    fn expected(x: &[f32], d: &DrawParams) -> Vec<f64> {
        let s: Vec<f64> = x.iter().map(|&v| v as f64 / d.temperature).collect();
        let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = s.iter().map(|&v| (v - m).exp()).collect();
        let mut order: Vec<usize> = (0..x.len()).collect();
        order.sort_by(|&a, &b| w[b].total_cmp(&w[a]).then(a.cmp(&b)));
        if let Some(k) = d.top_k {
            order.truncate(k);
        }
        if d.top_p < 1.0 {
            let total: f64 = order.iter().map(|&i| w[i]).sum();
            let mut acc = 0.0;
            let cut = order
                .iter()
                .position(|&i| {
                    acc += w[i];
                    acc >= d.top_p * total
                })
                .unwrap_or(order.len() - 1);
            order.truncate(cut + 1);
        }
        let kept: f64 = order.iter().map(|&i| w[i]).sum();
        let mut out = vec![0.0; x.len()];
        for &i in &order {
            out[i] = w[i] / kept;
        }
        out
    }

    /// Pearson's chi-square of `counts` against `probs` over the categories with expected
    /// count >= 5 (the rest pooled), and its 0.01% critical value (Wilson-Hilferty).
    fn chi_square(counts: &[usize], probs: &[f64]) -> (f64, f64) {
        let n: usize = counts.iter().sum();
        let (mut stat, mut df) = (0.0, 0usize);
        let (mut pool_o, mut pool_e) = (0.0, 0.0);
        for (&c, &q) in counts.iter().zip(probs) {
            let e = q * n as f64;
            if q == 0.0 {
                assert_eq!(c, 0, "a token outside the support was drawn");
            } else if e >= 5.0 {
                stat += (c as f64 - e).powi(2) / e;
                df += 1;
            } else {
                pool_o += c as f64;
                pool_e += e;
            }
        }
        if pool_e > 0.0 {
            stat += (pool_o - pool_e).powi(2) / pool_e.max(1e-12);
            df += 1;
        }
        let df = (df - 1).max(1) as f64;
        let z = 3.719; // upper 0.01% of N(0, 1)
        let crit = df * (1.0 - 2.0 / (9.0 * df) + z * (2.0 / (9.0 * df)).sqrt()).powi(3);
        (stat, crit)
    }

    fn cases() -> Vec<DrawParams> {
        vec![
            p(1.0, None, 1.0),
            p(0.7, None, 1.0),
            p(1.0, Some(8), 1.0),
            p(1.0, None, 0.7),
            p(0.8, Some(20), 0.9),
            p(1.3, Some(3), 0.5),
        ]
    }

    #[test]
    fn weighted_threshold_matches_a_sort() {
        let mut rng = StdRng::seed_from_u64(5);
        for case in 0..200 {
            let n = 1 + case * 7;
            let vals: Vec<f32> = (0..n).map(|_| rng.random::<f32>()).collect();
            let total: f64 = vals.iter().map(|&v| v as f64).sum();
            let need = total * rng.random::<f64>();
            let mut sorted = vals.clone();
            sorted.sort_by(|a, b| b.total_cmp(a));
            let mut acc = 0.0;
            let want = *sorted
                .iter()
                .find(|&&v| {
                    acc += v as f64;
                    acc >= need
                })
                .unwrap_or(sorted.last().unwrap());
            let mut work = vals.clone();
            assert_eq!(weighted_threshold(&mut work, need), want, "n={n}");
        }
    }

    #[test]
    fn greedy_takes_the_argmax_with_its_t1_logprob() {
        let logits = [0.0f32, 2.0, 1.0, 2.0];
        let z: f64 = logits.iter().map(|&x| (x as f64).exp()).sum();
        let t = Tensor::new(&[logits], &Device::Cpu).unwrap();
        let (tok, lp) = sample_logits(&t, &[0.3], &p(0.0, None, 1.0)).unwrap();
        assert_eq!(tok, vec![1]);
        assert!((lp[0] as f64 - (2.0 - z.ln())).abs() < 1e-6);
        let u = Tensor::new(&[0.3f32], &Device::Cpu).unwrap();
        let (tok, lp) = sample_logits_tensor(&t, &u, &p(0.0, None, 1.0)).unwrap();
        assert_eq!(tok.to_vec1::<u32>().unwrap(), vec![1]);
        assert!((lp.to_vec1::<f32>().unwrap()[0] as f64 - (2.0 - z.ln())).abs() < 1e-6);
    }

    /// Sampled frequencies match the softmax probabilities after temperature, top-k and top-p
    /// (a chi-square test at the 0.01% level; 12 tests), on the CPU path and on the tensor-op path, and
    /// every log-prob is `log softmax(logits / T)` of its token.
    #[test]
    fn frequencies_follow_the_truncated_softmax() {
        let x = normal_logits(40, 1.5, 11);
        let draws = 40_000;
        for (ci, d) in cases().into_iter().enumerate() {
            let want = expected(&x, &d);
            let s: Vec<f64> = x.iter().map(|&v| v as f64 / d.temperature).collect();
            let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let ln_z = s.iter().map(|&v| (v - m).exp()).sum::<f64>().ln();
            let mut rng = StdRng::seed_from_u64(1000 + ci as u64);
            let u: Vec<f64> = (0..draws).map(|_| rng.random::<f64>()).collect();
            // CPU path: one row per draw
            let mut work = RowWork::default();
            let mut counts = vec![0usize; x.len()];
            for &ui in &u {
                let (tok, lp) = sample_row(&x, ui, &d, &mut work);
                counts[tok as usize] += 1;
                assert!((lp as f64 - (s[tok as usize] - m - ln_z)).abs() < 1e-5);
            }
            let (stat, crit) = chi_square(&counts, &want);
            assert!(stat < crit, "cpu {d:?}: chi2 {stat} >= {crit}");
            // tensor path: all draws as rows of one batch
            let rows = Tensor::from_vec(x.clone(), (1, x.len()), &Device::Cpu)
                .unwrap()
                .broadcast_as((draws, x.len()))
                .unwrap()
                .contiguous()
                .unwrap();
            let ut = uniforms(&u);
            let (ids, lps) = sample_logits_tensor(&rows, &ut, &d).unwrap();
            let mut counts = vec![0usize; x.len()];
            for (tok, lp) in ids
                .to_vec1::<u32>()
                .unwrap()
                .into_iter()
                .zip(lps.to_vec1::<f32>().unwrap())
            {
                counts[tok as usize] += 1;
                assert!((lp as f64 - (s[tok as usize] - m - ln_z)).abs() < 1e-5);
            }
            let (stat, crit) = chi_square(&counts, &want);
            assert!(stat < crit, "tensor {d:?}: chi2 {stat} >= {crit}");
        }
    }

    /// The CPU path and the tensor-op path are one function: with the same uniforms they draw
    /// the same tokens, at a vocabulary wide enough for the tournament (two rounds), the top-p
    /// pre-filter, its bisection fallback (flat rows) and the bisection top-k (k > 1024).
    #[test]
    fn cpu_and_tensor_paths_agree() {
        let vocab = 20_000;
        let rows = 12;
        let mut x = Vec::with_capacity(rows * vocab);
        for r in 0..rows {
            // peaked rows first, flat rows last (their top-1024 mass is below top_p)
            let sd = if r < 8 { 4.0 } else { 0.05 };
            x.extend(normal_logits(vocab, sd, 40 + r as u64));
        }
        let logits = Tensor::from_vec(x, (rows, vocab), &Device::Cpu).unwrap();
        let mut rng = StdRng::seed_from_u64(9);
        for d in [
            p(1.0, None, 1.0),
            p(1.0, Some(50), 1.0),
            p(0.7, None, 0.7),
            p(1.0, Some(200), 0.9),
            p(1.0, Some(3000), 1.0),
            p(1.0, Some(3000), 0.8),
        ] {
            for _ in 0..3 {
                let u: Vec<f64> = (0..rows).map(|_| rng.random::<f64>()).collect();
                let (a, la) = sample_logits(&logits, &u, &d).unwrap();
                let ut = uniforms(&u);
                let (b, lb) = sample_logits_tensor(&logits, &ut, &d).unwrap();
                let (b, lb) = (b.to_vec1::<u32>().unwrap(), lb.to_vec1::<f32>().unwrap());
                // the inverse CDF sums in f64 on the CPU and in f32 blocks on the tensor path:
                // a draw within ~1e-6 of a boundary may pick the neighbouring kept token
                let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
                assert!(same + 1 >= rows, "{d:?}: {a:?} vs {b:?}");
                for (i, (x, y)) in la.iter().zip(&lb).enumerate() {
                    if a[i] == b[i] {
                        assert!((x - y).abs() < 1e-4, "{d:?} row {i}: {x} vs {y}");
                    }
                }
            }
        }
    }

    #[test]
    fn top_k_sorted_is_exact() {
        let vocab = 30_000; // two tournament rounds at k = 300
        let x = normal_logits(2 * vocab, 1.0, 3);
        let w = Tensor::from_vec(x.clone(), (2, vocab), &Device::Cpu)
            .unwrap()
            .exp()
            .unwrap();
        let (vals, cols) = top_k_sorted(&w, 300).unwrap();
        let (vals, cols) = (
            vals.to_vec2::<f32>().unwrap(),
            cols.to_vec2::<u32>().unwrap(),
        );
        let w = w.to_vec2::<f32>().unwrap();
        for r in 0..2 {
            let row = &x[r * vocab..(r + 1) * vocab];
            let mut order: Vec<usize> = (0..vocab).collect();
            order.sort_by(|&a, &b| row[b].total_cmp(&row[a]));
            let want: Vec<u32> = order[..300].iter().map(|&i| i as u32).collect();
            assert_eq!(cols[r], want);
            for (v, &c) in vals[r].iter().zip(&cols[r]) {
                assert_eq!(*v, w[r][c as usize]);
            }
        }
    }
}
