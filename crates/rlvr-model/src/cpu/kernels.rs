//! Fused CPU kernels of the training forward and their hand-written backwards (CPU, f32 or
//! f64).
//!
//! candle's autograd pays for every graph node: the op itself, a zero-filled gradient buffer
//! and an `add` into it in the backward, each a pass over a full activation. For a small model
//! these elementwise passes (and their allocations) cost more than the matmuls, so the
//! elementwise chains of a decoder layer are single kernels here, each forward paired with
//! its exact backward (used by the layer backward of `cpu/layer.rs`; the whole walk is checked
//! against finite differences in f64 by tests/train_step.rs):
//!
//! * [`rms_norm`]: `y = w * x / sqrt(mean(x^2) + eps)` over the last dimension (a custom op
//!   with an autograd backward: the final norm of the walk is differentiated by candle);
//! * [`add_bias`]: `y + b`, backward [`column_sum`];
//! * [`swiglu`]: `silu(g) * u` for `[.., 2F]` input holding `g` then `u` in each row;
//! * [`attention_forward`]: causal grouped-query self-attention with rotate-half RoPE, from
//!   the packed `q | k | v` projection `[B*T, (heads + 2 kv_heads) * head_dim]` to the
//!   attention output `[B*T, heads * head_dim]`, block by block and the blocks in parallel (a
//!   row, or one sequence of a packed row); each block's products per kv head through the CPU
//!   matrix product in f32 ([`crate::cpu::matmul::sgemm`]: the library of the run), summed in
//!   order in f64; the rest in place;
//! * [`vocab_rows`] / [`vocab_grad`]: the log-prob, log-sum-exp and entropy of logits rows and
//!   their gradient.
//!
//! Each kernel reads the CPU slices of contiguous tensors (the wrappers copy otherwise) and
//! returns new tensors, in f32 or f64 by the input's dtype; only [`rms_norm`] is a candle op,
//! for its autograd backward.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp2, DType, Layout, Shape, Tensor, WithDType};
use rayon::prelude::*;

type Result<T> = candle_core::Result<T>;

/// The float types the kernels run on: candle's `WithDType` (arithmetic, `from_f64`, the CPU
/// storage) plus the constants and functions the kernels need of a float.
pub(crate) trait Fl: WithDType + std::ops::Neg<Output = Self> {
    const ZERO: Self;
    const ONE: Self;
    fn sqrt(self) -> Self;
    /// `exp(x)` for `x <= 0`: [`fast_exp`] in f32 (vectorizable), exact in f64 (the
    /// finite-difference checks need its precision).
    fn exp_neg(self) -> Self;
    fn abs(self) -> Self;
    /// [`row_stats`] of one row of logits, on the fastest build the CPU runs (the same bits
    /// on every build: the summation order is fixed).
    fn row_stats(row: &[Self], with_ed: bool) -> (Self, f64, f64);
    /// [`grad_row`] on the fastest build the CPU runs (the same bits on every build).
    fn grad_row(row: &mut [Self], lse: Self, a: Self, ent: Option<(Self, Self)>);
    /// `c = op(a) op(b)` for contiguous operands, `op(a)` `[m, k]`, `op(b)` `[k, n]` (each
    /// stored transposed when its flag says so): the attention's per-head products.
    fn product(dims: [usize; 3], a: (&[Self], bool), b: (&[Self], bool), c: &mut [Self]);
}

/// `Fl` for a float type, `exp_neg` given.
macro_rules! impl_fl {
    ($t:ident, $exp_neg:path, $row_stats:path, $grad_row:path, $product:path) => {
        impl Fl for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            #[inline(always)]
            fn exp_neg(self) -> Self {
                $exp_neg(self)
            }
            fn abs(self) -> Self {
                $t::abs(self)
            }
            fn row_stats(row: &[Self], with_ed: bool) -> (Self, f64, f64) {
                $row_stats(row, with_ed)
            }
            fn grad_row(row: &mut [Self], lse: Self, a: Self, ent: Option<(Self, Self)>) {
                $grad_row(row, lse, a, ent)
            }
            fn product(dims: [usize; 3], a: (&[Self], bool), b: (&[Self], bool), c: &mut [Self]) {
                $product(dims, a, b, c)
            }
        }
    };
}

impl_fl!(f32, fast_exp, row_stats_f32, grad_row_f32, product_f32);
impl_fl!(
    f64,
    f64::exp,
    row_stats::<f64>,
    grad_row::<f64>,
    product_f64
);

/// [`Fl::product`] in f32: the CPU matrix product ([`crate::cpu::matmul::sgemm`]).
fn product_f32([m, n, k]: [usize; 3], a: (&[f32], bool), b: (&[f32], bool), c: &mut [f32]) {
    use crate::cpu::matmul::{sgemm, Operand};
    fn op(x: &[f32], trans: bool, rows: usize, cols: usize) -> Operand<'_> {
        if trans {
            Operand::transposed(x, rows.max(1))
        } else {
            Operand::plain(x, cols.max(1))
        }
    }
    let (a, b) = (op(a.0, a.1, m, k), op(b.0, b.1, k, n));
    sgemm([m, n, k], a, b, 0.0, c, n.max(1));
}

/// [`Fl::product`] in f64 (the reference path of the precision and gradient checks): each
/// element summed in order.
fn product_f64([m, n, k]: [usize; 3], a: (&[f64], bool), b: (&[f64], bool), c: &mut [f64]) {
    let at = |i: usize, l: usize| if a.1 { a.0[l * m + i] } else { a.0[i * k + l] };
    let bt = |l: usize, j: usize| if b.1 { b.0[j * k + l] } else { b.0[l * n + j] };
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| at(i, l) * bt(l, j)).sum();
        }
    }
}

/// Rows per parallel task of the row-wise kernels. A fixed number, not one derived from the
/// thread count: reductions across rows (`dw` of the RMSNorm backward, bias gradients) sum
/// one partial per block in block order, so the results do not depend on the thread count.
const BLOCK_ROWS: usize = 32;

/// Sums `[C]` partials (one per block of rows) in block order.
fn sum_partials<T: Fl>(parts: Vec<Vec<T>>, c: usize) -> Vec<T> {
    let mut acc = vec![T::ZERO; c];
    for p in parts {
        for (a, v) in acc.iter_mut().zip(p) {
            *a += v;
        }
    }
    acc
}

/// The contiguous elements of a tensor argument of a custom op.
fn view<'a, T: Fl>(s: &'a CpuStorage, l: &Layout, op: &str) -> Result<&'a [T]> {
    let data = s.as_slice::<T>()?;
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&data[a..b]),
        None => candle_core::bail!("{op}: non-contiguous input"),
    }
}

/// Runs `$body` with `$t` bound to f32 or f64 by `$dtype`; other dtypes are refused.
macro_rules! by_float {
    ($dtype:expr, $op:expr, |$t:ident| $body:expr) => {
        match $dtype {
            DType::F32 => {
                type $t = f32;
                $body
            }
            DType::F64 => {
                type $t = f64;
                $body
            }
            other => candle_core::bail!("{}: {other:?} is not f32 or f64", $op),
        }
    };
}

/// `$body` with `$x` bound to the `&[T]` elements of CPU tensor `$t` ([`super::with_cpu_slice`]);
/// `$body` may use `?`.
macro_rules! with_slice {
    ($t:expr, $T:ty, $op:expr, |$x:ident| $body:expr) => {
        super::with_cpu_slice::<$T, Result<_>>(&$t, $op, |$x| Ok($body))??
    };
}

fn cpu_tensor<T: Fl>(v: Vec<T>, shape: impl Into<Shape>) -> Result<Tensor> {
    Tensor::from_vec(v, shape, &candle_core::Device::Cpu)
}

// ---------------------------------------------------------------------------------------------
// Row kernels, shared by the training forward's ops and the CPU decode (`cpu/decode.rs`)

/// `exp(x)` for `x <= 0` in f32, vectorizable: Cody-Waite reduction `x = n ln2 + r`,
/// `|r| <= ln2/2`, a degree-7 Taylor polynomial for `e^r` (relative error below 2e-7), and `2^n`
/// from the exponent bits; 0 below -87 (where `e^x` is subnormal).
#[inline(always)]
pub(crate) fn fast_exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    const ROUND: f32 = 12_582_912.0; // 1.5 * 2^23: adding and subtracting rounds to an integer

    // a compare and select, not `f32::max` (its NaN rule), and the integer `n` read from the
    // bits of `k` (whose ulp is 1), not by a saturating cast: both vectorize (the values are
    // those of `max` and `as i32`, checked for every f32 up to 88)
    let xc = if x > -87.0 { x } else { -87.0 };
    let k = xc * LOG2E + ROUND;
    let n = k - ROUND;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r / 5040.0))))));
    let scale = f32::from_bits(k.to_bits().wrapping_sub(ROUND.to_bits()).wrapping_add(127) << 23);
    if x < -87.0 {
        0.0
    } else {
        p * scale
    }
}

/// `1 / (1 + exp(-g))` with the exponential of `-|g|` only (so it never overflows, and in f32
/// the loop vectorizes): `1 / (1 + e)` for `g >= 0`, `e / (1 + e)` below, `e = exp(-|g|)`.
#[inline(always)]
fn sigmoid<T: Fl>(g: T) -> T {
    let e = (-g.abs()).exp_neg();
    (if g >= T::ZERO { T::ONE } else { e }) / (T::ONE + e)
}

/// `y = w * x / sqrt(mean(x^2) + eps)` for one row `x` (the RMSNorm of the training forward
/// and the CPU decode).
#[inline]
pub(crate) fn rms_norm_row<T: Fl>(x: &[T], w: &[T], eps: f64, y: &mut [T]) {
    let mut ss = T::ZERO;
    for &v in x {
        ss += v * v;
    }
    let d = (ss * T::from_f64(1.0 / w.len() as f64) + T::from_f64(eps)).sqrt();
    for ((o, &v), &wi) in y.iter_mut().zip(x).zip(w) {
        *o = (v / d) * wi;
    }
}

/// [`rms_norm_row`] over every `w.len()`-wide row of `x` into `y`, blocks of rows in parallel.
pub(crate) fn rms_norm_rows<T: Fl>(x: &[T], w: &[T], eps: f64, y: &mut [T]) {
    let h = w.len();
    y.par_chunks_mut(h * BLOCK_ROWS)
        .zip(x.par_chunks(h * BLOCK_ROWS))
        .for_each(|(yb, xb)| {
            for (yrow, row) in yb.chunks_exact_mut(h).zip(xb.chunks_exact(h)) {
                rms_norm_row(row, w, eps, yrow);
            }
        });
}

/// `y = silu(g) * u` for every row of `x` (`[.., 2F]`, `g` then `u`) into `y` (`[.., F]`),
/// blocks of rows in parallel.
pub(crate) fn swiglu_rows<T: Fl>(x: &[T], f: usize, y: &mut [T]) {
    y.par_chunks_mut(f * BLOCK_ROWS)
        .zip(x.par_chunks(2 * f * BLOCK_ROWS))
        .for_each(|(yb, xb)| {
            for (yrow, row) in yb.chunks_exact_mut(f).zip(xb.chunks_exact(2 * f)) {
                let (g, u) = row.split_at(f);
                for ((o, &g), &u) in yrow.iter_mut().zip(g).zip(u) {
                    *o = g * sigmoid(g) * u;
                }
            }
        });
}

/// `softmax` of one row of scores in place, `-inf` for a hidden key (at least one finite):
/// `p_j = exp(s_j - max s) / sum_l exp(s_l - max s)`. Always inlined, so that it vectorizes
/// as its caller is compiled (the CPU decode's AVX2 attention).
#[inline(always)]
pub(crate) fn softmax_row<T: Fl>(s: &mut [T]) {
    let mut max = T::from_f64(f64::NEG_INFINITY);
    for &x in s.iter() {
        if x > max {
            max = x;
        }
    }
    let mut sum = T::ZERO;
    for x in s.iter_mut() {
        *x = (*x - max).exp_neg();
        sum += *x;
    }
    let inv = T::ONE / sum;
    for x in s.iter_mut() {
        *x *= inv;
    }
}

// ---------------------------------------------------------------------------------------------
// RMSNorm

struct RmsNorm {
    eps: f64,
}

fn rms_norm_fwd<T: Fl>(x: &[T], w: &[T], eps: f64) -> Vec<T> {
    let mut y = vec![T::ZERO; x.len()];
    rms_norm_rows(x, w, eps, &mut y);
    y
}

/// `dx` (plus `resid` when given) into `dx`, and the partial `dw` of each block of rows.
fn rms_norm_bwd_into<T: Fl>(x: &[T], w: &[T], g: &[T], dx: &mut [T], eps: f64) -> Vec<T> {
    let h = w.len();
    let (inv_h, eps) = (T::from_f64(1.0 / h as f64), T::from_f64(eps));
    let b = h * BLOCK_ROWS;
    let parts: Vec<Vec<T>> = dx
        .par_chunks_mut(b)
        .zip(x.par_chunks(b).zip(g.par_chunks(b)))
        .map(|(db, (xb, gb))| {
            let mut dw = vec![T::ZERO; h];
            for ((row, grow), drow) in xb
                .chunks_exact(h)
                .zip(gb.chunks_exact(h))
                .zip(db.chunks_exact_mut(h))
            {
                let (mut ss, mut dot) = (T::ZERO, T::ZERO);
                for i in 0..h {
                    ss += row[i] * row[i];
                    dot += grow[i] * w[i] * row[i];
                }
                let r = T::ONE / (ss * inv_h + eps).sqrt();
                let c = r * r * r * dot * inv_h;
                for i in 0..h {
                    drow[i] += grow[i] * w[i] * r - row[i] * c;
                    dw[i] += grow[i] * row[i] * r;
                }
            }
            dw
        })
        .collect();
    sum_partials(parts, h)
}

impl CustomOp2 for RmsNorm {
    fn name(&self) -> &'static str {
        "rms-norm-with-grad"
    }

    fn cpu_fwd(
        &self,
        xs: &CpuStorage,
        xl: &Layout,
        ws: &CpuStorage,
        wl: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let op = self.name();
        let y = by_float!(xs.dtype(), op, |T| T::to_cpu_storage_owned(
            rms_norm_fwd::<T>(view(xs, xl, op)?, view(ws, wl, op)?, self.eps)
        ));
        Ok((y, xl.shape().clone()))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let (dx, dw) = rms_norm_backward(x, w, grad, None, self.eps)?;
        Ok((Some(dx), Some(dw)))
    }
}

/// Differentiable RMSNorm over the last dimension: `w * x / sqrt(mean(x^2) + eps)` (CPU, f32
/// or f64, `x` and `w` of one dtype).
pub(crate) fn rms_norm(x: &Tensor, w: &Tensor, eps: f64) -> Result<Tensor> {
    x.contiguous()?.apply_op2(&w.contiguous()?, RmsNorm { eps })
}

/// `(dx, dw)` of [`rms_norm`] for upstream gradient `g`, plus `resid` added to `dx` when given
/// (the residual branch's gradient, so the sum costs no extra pass): with `r = 1 /
/// sqrt(mean(x^2) + eps)` per row, `dx = g w r - x r^3 mean(g w x) (+ resid)`,
/// `dw = sum_rows g x r`.
pub(crate) fn rms_norm_backward(
    x: &Tensor,
    w: &Tensor,
    g: &Tensor,
    resid: Option<&Tensor>,
    eps: f64,
) -> Result<(Tensor, Tensor)> {
    let (x, w, g) = (x.contiguous()?, w.contiguous()?, g.contiguous()?);
    let op = "rms-norm-backward";
    by_float!(x.dtype(), op, |T| {
        let mut dx = match resid {
            Some(r) => {
                let r = r.contiguous()?;
                with_slice!(r, T, op, |r| r.to_vec())
            }
            None => vec![T::ZERO; x.elem_count()],
        };
        let dw = with_slice!(x, T, op, |xs| with_slice!(w, T, op, |ws| with_slice!(
            g,
            T,
            op,
            |gs| rms_norm_bwd_into(xs, ws, gs, &mut dx, eps)
        )));
        Ok((cpu_tensor(dx, x.shape())?, cpu_tensor(dw, w.shape())?))
    })
}

// ---------------------------------------------------------------------------------------------
// Bias

/// `y + b` for `y` `[N, C]` and `b` `[C]` (CPU, f32 or f64), no graph; its backward is
/// [`column_sum`] of the upstream gradient (rows summed in place of candle's strided
/// reduction).
pub(crate) fn add_bias(y: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (y, b) = (y.contiguous()?, b.contiguous()?);
    let op = "add-bias";
    let c = b.elem_count();
    if y.dim(candle_core::D::Minus1)? != c {
        candle_core::bail!("{op}: rows of {:?} against a bias of {c}", y.dims());
    }
    by_float!(y.dtype(), op, |T| {
        let mut out = with_slice!(y, T, op, |ys| ys.to_vec());
        with_slice!(b, T, op, |b| out.par_chunks_mut(c * BLOCK_ROWS).for_each(
            |ob| {
                for row in ob.chunks_exact_mut(c) {
                    for (o, &bi) in row.iter_mut().zip(b) {
                        *o += bi;
                    }
                }
            }
        ));
        cpu_tensor(out, y.shape())
    })
}

/// Column sums of a `[N, C]` tensor (a bias gradient), row after row in blocks.
pub(crate) fn column_sum(x: &Tensor) -> Result<Tensor> {
    let x = x.contiguous()?;
    let op = "column-sum";
    let c = x.dim(candle_core::D::Minus1)?;
    by_float!(x.dtype(), op, |T| {
        let parts: Vec<Vec<T>> = with_slice!(x, T, op, |xs| xs
            .par_chunks(c * BLOCK_ROWS)
            .map(|xb| {
                let mut acc = vec![T::ZERO; c];
                for row in xb.chunks_exact(c) {
                    for (a, &v) in acc.iter_mut().zip(row) {
                        *a += v;
                    }
                }
                acc
            })
            .collect());
        cpu_tensor(sum_partials(parts, c), c)
    })
}

// ---------------------------------------------------------------------------------------------
// SwiGLU

/// `silu(g) * u` where each row of `x` (`[.., 2F]`) holds `g` then `u`; the result is
/// `[.., F]` (CPU, f32 or f64), no graph; its backward is [`swiglu_backward`].
pub(crate) fn swiglu(x: &Tensor) -> Result<Tensor> {
    let x = x.contiguous()?;
    let op = "swiglu";
    let mut dims = x.dims().to_vec();
    let f = x.dim(candle_core::D::Minus1)? / 2;
    *dims.last_mut().expect("rank >= 1") = f;
    by_float!(x.dtype(), op, |T| {
        let mut y = vec![T::ZERO; x.elem_count() / 2];
        with_slice!(x, T, op, |xs| swiglu_rows(xs, f, &mut y));
        cpu_tensor(y, dims)
    })
}

/// `dL/dx` of [`swiglu`] for `x` `[N, 2F]` and upstream gradient `[N, F]`: with `s =
/// sigmoid(g)`, `dg = go u s (1 + g (1 - s))`, `du = go g s`.
pub(crate) fn swiglu_backward(x: &Tensor, grad: &Tensor) -> Result<Tensor> {
    let (x, grad) = (x.contiguous()?, grad.contiguous()?);
    let op = "swiglu-backward";
    let f = x.dim(candle_core::D::Minus1)? / 2;
    by_float!(x.dtype(), op, |T| {
        let mut dx = vec![T::ZERO; x.elem_count()];
        let b = 2 * f * BLOCK_ROWS;
        with_slice!(x, T, op, |xs| with_slice!(grad, T, op, |gs| dx
            .par_chunks_mut(b)
            .zip(xs.par_chunks(b).zip(gs.par_chunks(f * BLOCK_ROWS)))
            .for_each(|(db, (xb, gb))| {
                for ((row, go), drow) in xb
                    .chunks_exact(2 * f)
                    .zip(gb.chunks_exact(f))
                    .zip(db.chunks_exact_mut(2 * f))
                {
                    let (g, u) = row.split_at(f);
                    let (dg, du) = drow.split_at_mut(f);
                    for j in 0..f {
                        let s = sigmoid(g[j]);
                        dg[j] = go[j] * u[j] * s * (T::ONE + g[j] * (T::ONE - s));
                        du[j] = go[j] * g[j] * s;
                    }
                }
            })));
        cpu_tensor(dx, x.shape())
    })
}

// ---------------------------------------------------------------------------------------------
// Attention

/// Shapes, RoPE tables and mask of one attention call.
pub(crate) struct AttnSpec {
    pub b: usize,
    pub t: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub scale: f64,
    /// cos and sin (rotate-half layout): `[T, head_dim]`, positions `0..T` in every row, or
    /// `[B, T, head_dim]`, each row's own positions (a packed batch).
    pub cos: Vec<f64>,
    pub sin: Vec<f64>,
    /// Per row and key, false for a padding key (`None`: every key is real). A query always
    /// sees itself and never a later key.
    pub key_ok: Option<Vec<Vec<bool>>>,
    /// Per row and position, the sequence it belongs to (a packed batch): a query sees only
    /// the keys of its own sequence. `None`: one sequence per row.
    pub segments: Option<Vec<Vec<u32>>>,
}

/// Positions `start..start + len` of row `row` that attend only among themselves (causally):
/// a whole row of a right-padded batch, or one sequence (or the trailing padding) of a packed
/// row. The attention runs block by block, so a packed row costs the sum of its sequences'
/// squared lengths, never the row's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Block {
    row: usize,
    start: usize,
    len: usize,
}

/// What the backward needs of one block: rotated queries `[kvh, g*len, hd]` (query heads
/// folded into the rows of their kv head), rotated keys and values `[kvh, len, hd]`,
/// probabilities `[kvh, g*len, len]`.
struct BlockSaved {
    q: Tensor,
    k: Tensor,
    v: Tensor,
    p: Tensor,
}

impl BlockSaved {
    /// Calls `f(q, k, v, p)` with the four arrays' elements.
    fn with_slices<T: Fl, R>(&self, f: impl FnOnce(&[T], &[T], &[T], &[T]) -> R) -> Result<R> {
        use crate::cpu::with_cpu_slice as with;
        let what = "attention-backward";
        with(&self.q, what, |q| {
            with(&self.k, what, |k| {
                with(&self.v, what, |v| with(&self.p, what, |p| f(q, k, v, p)))
            })
        })???
    }
}

/// What the backward needs: the blocks and what each kept.
struct AttnSaved {
    blocks: Vec<Block>,
    saved: Vec<BlockSaved>,
}

/// `y = x cos + rotate_half(x) sin` for one head vector (`rotate_half(x) = cat(-x2, x1)`);
/// with `transpose`, `y = x cos - rotate_half(x) sin`, the backward (`dx` from `dy`: the
/// rotation's transpose, as both halves of a rotate-half table hold the same angles).
#[inline]
pub(crate) fn rope_row<T: Fl>(x: &[T], cos: &[f64], sin: &[f64], transpose: bool, y: &mut [T]) {
    let h = x.len() / 2;
    let sign = if transpose { -1.0 } else { 1.0 };
    for j in 0..h {
        y[j] = x[j] * T::from_f64(cos[j]) - x[j + h] * T::from_f64(sign * sin[j]);
        y[j + h] = x[j + h] * T::from_f64(cos[j + h]) + x[j] * T::from_f64(sign * sin[j + h]);
    }
}

/// Which projection a head belongs to.
#[derive(Clone, Copy)]
enum Part {
    Q,
    K,
    V,
}

impl AttnSpec {
    /// The blocks of the batch, row by row: one per row, or with `segments` one per run of
    /// equal segment ids.
    fn blocks(&self) -> Vec<Block> {
        let mut out = Vec::new();
        for row in 0..self.b {
            let Some(seg) = &self.segments else {
                out.push(Block {
                    row,
                    start: 0,
                    len: self.t,
                });
                continue;
            };
            let mut start = 0;
            for i in 1..=self.t {
                if i == self.t || seg[row][i] != seg[row][start] {
                    out.push(Block {
                        row,
                        start,
                        len: i - start,
                    });
                    start = i;
                }
            }
        }
        out
    }

    /// Calls `f(part, packed, head_major, rope)` for every head of position `i` of `blk`:
    /// `packed` is the head's offset in the position's packed `q | k | v` row, `head_major`
    /// its offset in the block's head-major `[heads, len, head_dim]` array of that part, `rope`
    /// the position's cos and sin.
    fn for_each_head(
        &self,
        blk: Block,
        i: usize,
        mut f: impl FnMut(Part, usize, usize, [&[f64]; 2]),
    ) {
        let (t, nh, kvh, hd) = (self.t, self.heads, self.kv_heads, self.head_dim);
        let pos = blk.start + i;
        let at = if self.cos.len() == t * hd {
            pos
        } else {
            blk.row * t + pos
        } * hd;
        let rope = [&self.cos[at..][..hd], &self.sin[at..][..hd]];
        for h in 0..nh {
            f(Part::Q, h * hd, (h * blk.len + i) * hd, rope);
        }
        for h in 0..kvh {
            let o = (h * blk.len + i) * hd;
            f(Part::K, (nh + h) * hd, o, rope);
            f(Part::V, (nh + kvh + h) * hd, o, rope);
        }
    }

    /// [`crate::mask::visible`] for row `row`: its padding flags and packed sequences.
    fn visible(&self, row: usize, i: usize, j: usize) -> bool {
        let key_real = || {
            self.key_ok
                .as_ref()
                .is_none_or(|ok| ok[row].get(j).copied().unwrap_or(true))
        };
        let same_sequence = || {
            self.segments
                .as_ref()
                .is_none_or(|seg| seg[row][j] == seg[row][i])
        };
        j <= i && crate::mask::visible(i, j, key_real(), same_sequence())
    }

    /// The block's rotated queries, keys and values, head-major (`[heads, len, hd]`,
    /// `[kv_heads, len, hd]` twice), from the packed `q | k | v` rows `[B*T, width]`.
    fn gather<T: Fl>(&self, qkv: &[T], blk: Block) -> [Vec<T>; 3] {
        let (t, nh, kvh, hd) = (self.t, self.heads, self.kv_heads, self.head_dim);
        let width = (nh + 2 * kvh) * hd;
        let mut q = vec![T::ZERO; nh * blk.len * hd];
        let mut k = vec![T::ZERO; kvh * blk.len * hd];
        let mut v = vec![T::ZERO; kvh * blk.len * hd];
        for i in 0..blk.len {
            let row = &qkv[(blk.row * t + blk.start + i) * width..][..width];
            self.for_each_head(blk, i, |part, p, o, [cos, sin]| {
                let src = &row[p..p + hd];
                match part {
                    Part::Q => rope_row(src, cos, sin, false, &mut q[o..o + hd]),
                    Part::K => rope_row(src, cos, sin, false, &mut k[o..o + hd]),
                    Part::V => v[o..o + hd].copy_from_slice(src),
                }
            });
        }
        [q, k, v]
    }

    /// For each row, the range of `blocks` (in row order) that cover it.
    fn rows_of(&self, blocks: &[Block]) -> Vec<std::ops::Range<usize>> {
        let mut out = vec![0..0; self.b];
        let mut n = 0;
        for (row, r) in out.iter_mut().enumerate() {
            let first = n;
            while n < blocks.len() && blocks[n].row == row {
                n += 1;
            }
            *r = first..n;
        }
        out
    }

    fn forward<T: Fl>(&self, qkv: &[T]) -> Result<(Vec<T>, AttnSaved)> {
        let (t, nh, kvh, hd) = (self.t, self.heads, self.kv_heads, self.head_dim);
        let g = nh / kvh;
        let dev = candle_core::Device::Cpu;
        let blocks = self.blocks();
        // split, rotate and transpose to head-major, one task per block
        let parts: Vec<[Vec<T>; 3]> = blocks.par_iter().map(|&b| self.gather(qkv, b)).collect();
        let scale = T::from_f64(self.scale);
        // the blocks in parallel; per kv head two products ([`Fl::product`]: the CPU matrix
        // product in f32), the query heads of a kv head folded into the rows
        let per_block = blocks
            .par_iter()
            .zip(parts)
            .map(|(blk, [q, k, v])| -> Result<(Vec<T>, BlockSaved)> {
                let len = blk.len;
                let gl = g * len;
                // one kv head's part of each array: [g*len, hd], [len, hd], [g*len, len]
                let (qs, ks, ps) = (gl * hd, len * hd, gl * len);
                let mut s = vec![T::ZERO; kvh * ps];
                for (h, sh) in s.chunks_exact_mut(ps).enumerate() {
                    let (qh, kh) = (&q[h * qs..][..qs], &k[h * ks..][..ks]);
                    T::product([gl, len, hd], (qh, false), (kh, true), sh);
                }
                // scale, mask, softmax in place; rows are (kv head, group, query)
                s.par_chunks_mut(len)
                    .with_min_len(BLOCK_ROWS)
                    .enumerate()
                    .for_each(|(r, srow)| {
                        let i = r % len;
                        for (j, x) in srow.iter_mut().enumerate() {
                            *x = if self.visible(blk.row, blk.start + i, blk.start + j) {
                                *x * scale
                            } else {
                                T::from_f64(f64::NEG_INFINITY)
                            };
                        }
                        softmax_row(srow);
                    });
                // [kvh, g*len, hd] = head-major [heads, len, hd]
                let mut out = vec![T::ZERO; kvh * qs];
                for (h, oh) in out.chunks_exact_mut(qs).enumerate() {
                    let (ph, vh) = (&s[h * ps..][..ps], &v[h * ks..][..ks]);
                    T::product([gl, hd, len], (ph, false), (vh, false), oh);
                }
                let saved = BlockSaved {
                    q: Tensor::from_vec(q, (kvh, gl, hd), &dev)?,
                    k: Tensor::from_vec(k, (kvh, len, hd), &dev)?,
                    v: Tensor::from_vec(v, (kvh, len, hd), &dev)?,
                    p: Tensor::from_vec(s, (kvh, gl, len), &dev)?,
                };
                Ok((out, saved))
            })
            .collect::<Result<Vec<_>>>()?;
        let (outs, saved): (Vec<Vec<T>>, Vec<BlockSaved>) = per_block.into_iter().unzip();
        // back to token-major rows [B*T, heads*hd], one task per row
        let mut out = vec![T::ZERO; self.b * t * nh * hd];
        let rows = self.rows_of(&blocks);
        out.par_chunks_mut(t * nh * hd)
            .zip(&rows)
            .for_each(|(dst, range)| {
                for n in range.clone() {
                    let (blk, o) = (blocks[n], &outs[n]);
                    for h in 0..nh {
                        for i in 0..blk.len {
                            let to = ((blk.start + i) * nh + h) * hd;
                            let from = (h * blk.len + i) * hd;
                            dst[to..to + hd].copy_from_slice(&o[from..from + hd]);
                        }
                    }
                }
            });
        Ok((out, AttnSaved { blocks, saved }))
    }

    fn backward<T: Fl>(&self, saved: &AttnSaved, grad: &[T]) -> Result<Vec<T>> {
        let (t, nh, kvh, hd) = (self.t, self.heads, self.kv_heads, self.head_dim);
        let g = nh / kvh;
        let width = (nh + 2 * kvh) * hd;
        let blocks = &saved.blocks;
        let scale = T::from_f64(self.scale);
        // per block (in parallel): dL/dq, dL/dk, dL/dv, head-major, from four products per kv
        // head
        let grads = blocks
            .par_iter()
            .zip(&saved.saved)
            .map(|(blk, sv)| -> Result<[Vec<T>; 3]> {
                let len = blk.len;
                let gl = g * len;
                let mut d_o = vec![T::ZERO; nh * len * hd];
                for h in 0..nh {
                    for i in 0..len {
                        let from = ((blk.row * t + blk.start + i) * nh + h) * hd;
                        let to = (h * len + i) * hd;
                        d_o[to..to + hd].copy_from_slice(&grad[from..from + hd]);
                    }
                }
                sv.with_slices(|q: &[T], k: &[T], v: &[T], p: &[T]| {
                    // one kv head's part of each array: [g*len, hd], [len, hd], [g*len, len]
                    let (qs, ks, ps) = (gl * hd, len * hd, gl * len);
                    let mut dq = vec![T::ZERO; kvh * qs];
                    let (mut dk, mut dv) = (vec![T::ZERO; kvh * ks], vec![T::ZERO; kvh * ks]);
                    let mut ds = vec![T::ZERO; ps];
                    let heads = dq.chunks_exact_mut(qs).zip(dk.chunks_exact_mut(ks));
                    for (h, ((dqh, dkh), dvh)) in heads.zip(dv.chunks_exact_mut(ks)).enumerate() {
                        let (qh, kh) = (&q[h * qs..][..qs], &k[h * ks..][..ks]);
                        let (vh, ph) = (&v[h * ks..][..ks], &p[h * ps..][..ps]);
                        let doh = &d_o[h * qs..][..qs];
                        // dv = p^T do, dp = do v^T
                        T::product([len, hd, gl], (ph, true), (doh, false), dvh);
                        T::product([gl, len, hd], (doh, false), (vh, true), &mut ds);
                        // dS = scale * p * (dp - sum(dp * p)), in place of dp
                        ds.par_chunks_mut(len * BLOCK_ROWS)
                            .zip(ph.par_chunks(len * BLOCK_ROWS))
                            .for_each(|(db, pb)| {
                                for (drow, prow) in
                                    db.chunks_exact_mut(len).zip(pb.chunks_exact(len))
                                {
                                    let mut dot = T::ZERO;
                                    for (d, &pv) in drow.iter().zip(prow) {
                                        dot += *d * pv;
                                    }
                                    for (d, &pv) in drow.iter_mut().zip(prow) {
                                        *d = scale * pv * (*d - dot);
                                    }
                                }
                            });
                        // dq = dS k, dk = dS^T q
                        T::product([gl, hd, len], (&ds, false), (kh, false), dqh);
                        T::product([len, hd, gl], (&ds, true), (qh, false), dkh);
                    }
                    [dq, dk, dv]
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // un-rotate and pack to [B*T, (nh + 2 kvh) hd], one task per row
        let mut out = vec![T::ZERO; self.b * t * width];
        let rows = self.rows_of(blocks);
        out.par_chunks_mut(t * width)
            .zip(&rows)
            .for_each(|(seq, range)| {
                for n in range.clone() {
                    let (blk, [dq, dk, dv]) = (blocks[n], &grads[n]);
                    for i in 0..blk.len {
                        let row = &mut seq[(blk.start + i) * width..][..width];
                        self.for_each_head(blk, i, |part, p, o, [cos, sin]| {
                            let dst = &mut row[p..p + hd];
                            match part {
                                Part::Q => rope_row(&dq[o..o + hd], cos, sin, true, dst),
                                Part::K => rope_row(&dk[o..o + hd], cos, sin, true, dst),
                                Part::V => dst.copy_from_slice(&dv[o..o + hd]),
                            }
                        });
                    }
                }
            });
        Ok(out)
    }
}

// ---------------------------------------------------------------------------------------------
// Attention as a forward and a backward for the hand-written decoder-layer walk (`cpu/layer.rs`)

/// What [`attention_backward`] needs from [`attention_forward`].
pub(crate) struct AttnTape(AttnSaved);

/// [`attention`] without a graph, keeping what its backward needs.
pub(crate) fn attention_forward(qkv: &Tensor, spec: &AttnSpec) -> Result<(Tensor, AttnTape)> {
    let qkv = qkv.contiguous()?;
    let op = "attention-forward";
    let shape = (spec.b * spec.t, spec.heads * spec.head_dim);
    by_float!(qkv.dtype(), op, |T| {
        let (o, saved) = with_slice!(qkv, T, op, |q| spec.forward::<T>(q))?;
        Ok((cpu_tensor(o, shape)?, AttnTape(saved)))
    })
}

/// `dL/dqkv` `[B*T, (heads + 2 kv_heads) * head_dim]` of [`attention`] from the upstream
/// gradient `[B*T, heads * head_dim]`.
pub(crate) fn attention_backward(
    spec: &AttnSpec,
    tape: &AttnTape,
    grad: &Tensor,
) -> Result<Tensor> {
    let grad = grad.contiguous()?;
    let op = "attention-backward";
    let shape = (
        spec.b * spec.t,
        (spec.heads + 2 * spec.kv_heads) * spec.head_dim,
    );
    by_float!(grad.dtype(), op, |T| {
        let dqkv = with_slice!(grad, T, op, |g| spec.backward::<T>(&tape.0, g))?;
        cpu_tensor(dqkv, shape)
    })
}

// ---------------------------------------------------------------------------------------------
// Vocabulary rows (the training walk's steps 1 and 3, `training.rs`)

/// Lanes of [`row_stats`]' partial sums (one AVX2 register of f32).
const LANES: usize = 8;
/// Elements per block of [`row_stats`]: each lane sums `SUM_BLOCK / LANES` terms in `T`, then
/// the block's lanes are added to f64 accumulators.
const SUM_BLOCK: usize = 8 * LANES;

/// Per-row statistics of logits `z` (one row of `V`): with `m = max z`, `d = z - m`,
/// `e = exp(d)` ([`Fl::exp_neg`]): `(m, sum e, sum e d)`, the sums in f64.
///
/// Summation order is what keeps the log-sum-exp of a 151,936-token row within f32 rounding:
/// one running f32 sum of ~1.5e5 terms of similar size loses up to `n eps / 2` relative (each
/// add rounds to the ulp of a sum ~1e5 times its terms, and near-uniform rows round the same
/// way every time; measured on tests/precision.rs's models: 1.8e-5 in log-prob, 2.8e-4 in
/// entropy). Here each of 8 lanes sums 8 terms in `T` (relative error below `8 eps`), and the
/// blocks of 64 are summed in f64. The entropy's sum is of `e d`, not `e z`, so it does not
/// cancel against `m`. The order is fixed
/// (lanes, then blocks in row order), so the result does not depend on the vector width the
/// loop compiles to; in f32 the lanes vectorize (with [`fast_exp`]).
#[inline(always)]
fn row_stats<T: Fl>(row: &[T], with_ed: bool) -> (T, f64, f64) {
    let mut lm = [T::from_f64(f64::NEG_INFINITY); LANES];
    let chunks = row.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &v) in lm.iter_mut().zip(c) {
            *a = if v > *a { v } else { *a };
        }
    }
    let mut m = T::from_f64(f64::NEG_INFINITY);
    for &v in lm.iter().chain(rest) {
        if v > m {
            m = v;
        }
    }
    let (mut s, mut sd) = ([0f64; LANES], [0f64; LANES]);
    let blocks = row.chunks_exact(SUM_BLOCK);
    let tail = blocks.remainder();
    let mut e = [T::ZERO; SUM_BLOCK];
    for block in blocks {
        // the exponentials first (a plain map, which vectorizes), then the lanes
        for (e, &x) in e.iter_mut().zip(block) {
            *e = (x - m).exp_neg();
        }
        let (mut ls, mut ld) = ([T::ZERO; LANES], [T::ZERO; LANES]);
        for (ec, xc) in e.chunks_exact(LANES).zip(block.chunks_exact(LANES)) {
            for l in 0..LANES {
                ls[l] += ec[l];
            }
            if with_ed {
                for l in 0..LANES {
                    ld[l] += ec[l] * (xc[l] - m);
                }
            }
        }
        for l in 0..LANES {
            s[l] += ls[l].to_f64();
            sd[l] += ld[l].to_f64();
        }
    }
    let (mut st, mut sdt) = (s.iter().sum::<f64>(), sd.iter().sum::<f64>());
    for &v in tail {
        let d = v - m;
        let e = d.exp_neg();
        st += e.to_f64();
        sdt += (e * d).to_f64();
    }
    (m, st, sdt)
}

/// [`row_stats`] of f32 rows compiled for AVX2 (8-wide vectors in the lanes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn row_stats_avx2(row: &[f32], with_ed: bool) -> (f32, f64, f64) {
    row_stats(row, with_ed)
}

/// [`row_stats`] of an f32 row, through the AVX2 build on a CPU that has it.
fn row_stats_f32(row: &[f32], with_ed: bool) -> (f32, f64, f64) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { row_stats_avx2(row, with_ed) };
        }
    }
    row_stats(row, with_ed)
}

/// Per row of logits `z` `[n, V]` (f32 or f64, CPU): `(log p[target], lse, H)`, `[n]` each,
/// from [`row_stats`]: `lse = m + log s`, `log p[target] = z[target] - lse`,
/// `H = log s - sum(e d) / s` (`= lse - sum(e z) / s`; `H` only `with_entropy`), each
/// computed in f64 from the f64 sums and rounded once to the logits' dtype.
pub(crate) fn vocab_rows(
    z: &Tensor,
    targets: &[u32],
    with_entropy: bool,
) -> Result<(Tensor, Tensor, Option<Tensor>)> {
    let z = z.contiguous()?;
    let op = "vocab-rows";
    by_float!(z.dtype(), op, |T| vocab_rows_t::<T>(
        &z,
        targets,
        with_entropy,
        op
    ))
}

fn vocab_rows_t<T: Fl>(
    z: &Tensor,
    targets: &[u32],
    with_entropy: bool,
    op: &str,
) -> Result<(Tensor, Tensor, Option<Tensor>)> {
    let (n, v) = z.dims2()?;
    if targets.len() != n {
        candle_core::bail!("{op}: {} targets for {n} rows", targets.len());
    }
    let mut out = vec![(T::ZERO, T::ZERO, T::ZERO); n];
    with_slice!(z, T, op, |zs| {
        out.par_iter_mut()
            .zip(zs.par_chunks(v).zip(targets.par_iter()))
            .with_min_len(4)
            .try_for_each(|(o, (row, &t))| {
                let zt = *row
                    .get(t as usize)
                    .ok_or_else(|| candle_core::Error::Msg(format!("{op}: target {t} >= {v}")))?;
                let (m, s, sd) = T::row_stats(row, with_entropy);
                let ln_s = s.ln();
                let lse = m.to_f64() + ln_s;
                *o = (
                    T::from_f64(zt.to_f64() - lse),
                    T::from_f64(lse),
                    T::from_f64(ln_s - sd / s),
                );
                Ok::<(), candle_core::Error>(())
            })
    })?;
    let col = |f: fn(&(T, T, T)) -> T| cpu_tensor(out.iter().map(f).collect(), n);
    Ok((
        col(|o| o.0)?,
        col(|o| o.1)?,
        with_entropy.then(|| col(|o| o.2)).transpose()?,
    ))
}

/// One row of [`vocab_grad`] in place: logits in, `dL/dz` out (without the target's `+ a`):
/// `lp = z - lse`, `dz = exp(lp) (-(a + b (lp + H)))` with `ent = Some((-b, H))`, else
/// `-a exp(lp)`. The exponential is [`Fl::exp_neg`] (`lp <= 0` up to rounding; [`fast_exp`]
/// is exact to 5e-7 for small positive arguments too), so in f32 the loop vectorizes.
#[inline(always)]
fn grad_row<T: Fl>(row: &mut [T], lse: T, a: T, ent: Option<(T, T)>) {
    match ent {
        Some((nb, h)) => {
            for x in row.iter_mut() {
                let lp = *x - lse;
                *x = lp.exp_neg() * ((lp + h) * nb - a);
            }
        }
        None => {
            let na = -a;
            for x in row.iter_mut() {
                *x = (*x - lse).exp_neg() * na;
            }
        }
    }
}

/// [`grad_row`] of an f32 row compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn grad_row_avx2(row: &mut [f32], lse: f32, a: f32, ent: Option<(f32, f32)>) {
    grad_row(row, lse, a, ent)
}

/// [`grad_row`] of an f32 row, through the AVX2 build on a CPU that has it.
fn grad_row_f32(row: &mut [f32], lse: f32, a: f32, ent: Option<(f32, f32)>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { grad_row_avx2(row, lse, a, ent) };
        }
    }
    grad_row(row, lse, a, ent)
}

/// `dL/dz` `[n, V]` from logits `z` (consumed; the result reuses nothing of it but its shape),
/// per row with `lse`, upstream `a = g_lp / T` and (with entropies) `b = g_ent / T`, `H`:
/// `log p = z - lse`, `p = exp(log p)`,
/// `dz = p (-(a + b (log p + H))) + a 1[j = target]` (`-a p + a 1[j = target]` without `b`).
pub(crate) fn vocab_grad(
    z: &Tensor,
    targets: &[u32],
    lse: &Tensor,
    a: &Tensor,
    ent: Option<(&Tensor, &Tensor)>,
) -> Result<Tensor> {
    let z = z.contiguous()?;
    let op = "vocab-grad";
    by_float!(z.dtype(), op, |T| vocab_grad_t::<T>(
        &z, targets, lse, a, ent, op
    ))
}

fn vocab_grad_t<T: Fl>(
    z: &Tensor,
    targets: &[u32],
    lse: &Tensor,
    a: &Tensor,
    ent: Option<(&Tensor, &Tensor)>,
    op: &str,
) -> Result<Tensor> {
    let (n, v) = z.dims2()?;
    let col = |t: &Tensor| -> Result<Vec<T>> {
        let t = t.flatten_all()?.to_vec1::<T>()?;
        if t.len() != n {
            candle_core::bail!("{op}: {} values for {n} rows", t.len());
        }
        Ok(t)
    };
    let (lse, a) = (col(lse)?, col(a)?);
    let ent = match ent {
        Some((b, h)) => Some((col(b)?, col(h)?)),
        None => None,
    };
    if targets.len() != n || targets.iter().any(|&t| t as usize >= v) {
        candle_core::bail!("{op}: targets do not match {n} rows of {v} logits");
    }
    let mut dz = with_slice!(z, T, op, |zs| zs.to_vec());
    dz.par_chunks_mut(v)
        .enumerate()
        .with_min_len(4)
        .for_each(|(r, row)| {
            let (lse, a) = (lse[r], a[r]);
            T::grad_row(row, lse, a, ent.as_ref().map(|(b, h)| (-b[r], h[r])));
            row[targets[r] as usize] += a;
        });
    cpu_tensor(dz, (n, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_exp_is_accurate() {
        for i in 0..=200_000 {
            let x = -(i as f32) * 0.000_5; // [-100, 0]
            let want = (x as f64).exp();
            let got = fast_exp(x) as f64;
            if x < -87.0 {
                assert_eq!(got, 0.0);
            } else {
                assert!(
                    ((got - want) / want).abs() < 5e-7,
                    "exp({x}) = {want}, got {got}"
                );
            }
        }
        // small positive arguments (a log-prob rounded above 0: the vocabulary gradient)
        for i in 1..=10_000 {
            let x = i as f32 * 1e-6;
            let (want, got) = ((x as f64).exp(), fast_exp(x) as f64);
            assert!(
                ((got - want) / want).abs() < 5e-7,
                "exp({x}) = {want}, got {got}"
            );
        }
    }

    #[test]
    fn sigmoid_and_silu_match_their_formulas() {
        for i in -2000..=2000 {
            let g = i as f64 * 0.05; // -100 ..= 100
            let exact = 1.0 / (1.0 + (-g).exp());
            assert!((sigmoid(g) - exact).abs() <= 1e-15 * exact.max(1e-300));
            if g > -80.0 {
                // against the exact value at the f32 input
                let gf = g as f32;
                let exact = 1.0 / (1.0 + (-(gf as f64)).exp());
                let got = sigmoid(gf) as f64;
                assert!(
                    (got - exact).abs() <= 1e-6 * exact,
                    "sigmoid({gf}) = {got} vs {exact}"
                );
            }
        }
        let mut y = [0f32; 3];
        swiglu_rows(&[0.0, -200.0, 200.0, 1.0, 1.0, 1.0], 3, &mut y);
        assert_eq!(y, [0.0, 0.0, 200.0]);
    }

    #[test]
    fn softmax_row_sums_to_one_and_hides_masked_keys() {
        let mut s = [1.0f32, f32::NEG_INFINITY, 3.0, -2.0];
        softmax_row(&mut s);
        let e = [1f64.exp(), 0.0, 3f64.exp(), (-2f64).exp()];
        let z: f64 = e.iter().sum();
        for (got, want) in s.iter().zip(e) {
            assert!((*got as f64 - want / z).abs() < 1e-6, "{s:?}");
        }
        assert_eq!(s[1], 0.0);
    }
}
