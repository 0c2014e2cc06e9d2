//! The optimizer's arithmetic on host memory, fused: one pass over each parameter's contiguous
//! storage, threaded (rayon, in fixed-size pieces), with no allocation. The device-agnostic
//! tensor path in `mod.rs` runs about ten whole-tensor operations per chunk, each reading and
//! writing memory and allocating its result; on the CPU the step is memory-bound, so this path
//! reads `m`, `v`, the weight (or its f32 master) and the gradient once and writes them once.
//!
//! Every element is computed with exactly the f32 operations, in the same order and with the
//! same f32-rounded scalars, as the tensor path (candle's `x * s` is `x * f32(s) + 0`, `x / s`
//! is `x * f32(1/s) + 0`, `x + s` is `x * 1 + f32(s)`), so the two paths give the same bits
//! (tested in `mod.rs` against the out-of-place formula); only the work's order and memory
//! traffic differ.
//!
//! Storage is reached through candle's in-place custom ops (`Tensor::inplace_op1/2`), nested
//! so that the moments, the weight and the master are all writable in one pass: each level
//! holds the write lock of one tensor's storage. The tensors are distinct allocations, the
//! gradient the only source, so the locks never meet.
//!
//! Clipping is folded in: a step given the clip scale `k` reads each gradient entry once and
//! uses `g * k + 0` (candle's `affine(k, 0)`, what clipping in place would have stored), so
//! the gradient is never rewritten. The step also returns its state's [`Peaks`], from which
//! the next step can prove that it stays finite without reading the state twice
//! ([`AdamScalars::stays_finite_within`]).

use std::cell::RefCell;

use candle_core::{CpuStorage, DType, InplaceOp1, InplaceOp2, Layout, Result, Tensor};
use half::{bf16, f16};
use rayon::prelude::*;

/// Elements per piece of threaded work (fixed, so results and sums never depend on the
/// thread count).
const PIECE: usize = 1 << 15;

/// One AdamW step's scalars, each rounded to f32 as candle rounds a tensor op's scalar.
#[derive(Debug, Clone, Copy)]
pub(super) struct AdamScalars {
    b1: f32,
    c1: f32,
    b2: f32,
    c2: f32,
    inv_bc1: f32,
    inv_bc2: f32,
    eps: f32,
    lr_decay: f32,
    lr: f32,
}

impl AdamScalars {
    /// The scalars of step `t` (bias corrections `1 - b^t` of the f32 betas, as in the
    /// tensor path: `super::f32_rounded`) with learning rate `lr` and
    /// decoupled decay `decay` (0 for a parameter of rank < 2).
    pub(super) fn new(b1: f64, b2: f64, eps: f64, lr: f64, decay: f64, t: u64) -> Self {
        let (b1, b2) = (super::adamw::f32_rounded(b1), super::adamw::f32_rounded(b2));
        let bc1 = 1.0 - b1.powi(t as i32);
        let bc2 = 1.0 - b2.powi(t as i32);
        Self {
            b1: b1 as f32,
            c1: (1.0 - b1) as f32,
            b2: b2 as f32,
            c2: (1.0 - b2) as f32,
            inv_bc1: (1.0 / bc1) as f32,
            inv_bc2: (1.0 / bc2) as f32,
            eps: eps as f32,
            lr_decay: (lr * decay) as f32,
            lr: lr as f32,
        }
    }

    /// `(m', v', p')` for one element:
    /// `m' = b1 m + (1-b1) g`, `v' = b2 v + (1-b2) g^2`,
    /// `p' = (p - p (lr wd)) - lr (m'/(1-b1^t)) / (sqrt(v'/(1-b2^t)) + eps)`,
    /// as the tensor path rounds it (module docs).
    #[inline(always)]
    fn element(&self, m: f32, v: f32, p: f32, g: f32) -> (f32, f32, f32) {
        let z = 0f32;
        let m = (m * self.b1 + z) + (g * self.c1 + z);
        let v = (v * self.b2 + z) + ((g * g) * self.c2 + z);
        let u = (m * self.inv_bc1 + z) / ((v * self.inv_bc2 + z).sqrt() + self.eps);
        let p = (p - (p * self.lr_decay + z)) - (u * self.lr + z);
        (m, v, p)
    }

    /// Whether a step from a state with `|m| <= state.m` and `0 <= v <= state.v`, weights
    /// `|p| <= p_peak` and (clipped) gradients `|g| <= g_peak` leaves every intermediate and
    /// result of [`Self::element`] finite. Each bound is carried through the formula in f64
    /// (`|u| <= |m'| / (1-b1^t) / eps`, since `sqrt(v') >= 0`), and all must stay below half
    /// of `f32::MAX`: the f32 roundings of the dozen operations add at most `2^-24` relative
    /// each, far inside the factor 2. A sufficient condition only (false for `eps <= 0`, a
    /// beta outside `[0, 1]` or an infinite peak): when it fails, [`adamw_stays_finite`]
    /// decides element by element.
    ///
    /// `p_limit` is where the weight's storage overflows ([`overflow_bits`]): the new
    /// weight must stay below half of it too.
    pub(super) fn stays_finite_within(
        &self,
        state: Peaks,
        p_peak: f32,
        g_peak: f64,
        p_limit: f32,
    ) -> bool {
        let f = f64::from;
        let unit = |x: f32| (0.0..=1.0).contains(&x);
        if !(self.eps > 0.0 && unit(self.b1) && unit(self.c1) && unit(self.b2) && unit(self.c2))
            || self.inv_bc1 < 0.0
            || self.inv_bc2 < 0.0
        {
            return false;
        }
        let g = g_peak;
        let m = f(self.b1) * f(state.m) + f(self.c1) * g;
        let v = f(self.b2) * f(state.v) + f(self.c2) * g * g;
        let (m_hat, v_hat) = (m * f(self.inv_bc1), v * f(self.inv_bc2));
        let u = m_hat / f(self.eps);
        let p = f(p_peak);
        let (decay, step) = (p * f(self.lr_decay).abs(), u * f(self.lr).abs());
        let limit = f(f32::MAX) / 2.0;
        let new_p = p + decay + step;
        new_p < f(p_limit) / 2.0
            && [
                g,
                g * g,
                f(state.m),
                f(state.v),
                m,
                v,
                m_hat,
                v_hat,
                v_hat.sqrt() + f(self.eps),
                u,
                p,
                decay,
                step,
                new_p,
            ]
            .iter()
            .all(|x| *x < limit) // false for NaN
    }
}

/// The largest entries of a parameter's optimizer state as a step left it: `max |m|` and
/// `max v`, infinite when any entry is not finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Peaks {
    pub m: f32,
    pub v: f32,
}

impl Peaks {
    /// The peaks of a zero state.
    pub const ZERO: Self = Self { m: 0.0, v: 0.0 };

    /// From [`peak_bits`] accumulators.
    fn from_bits(m: u32, v: u32) -> Self {
        Self {
            m: peak_value(m),
            v: peak_value(v),
        }
    }

    fn max(self, o: Self) -> Self {
        Self {
            m: self.m.max(o.m),
            v: self.v.max(o.v),
        }
    }
}

/// The running peak of `|x|` as the bits of `|x|` (the sign cleared): for non-negative
/// floats the integer order is the float order, and every NaN lies above infinity, so an
/// integer maximum (which vectorizes, where a float maximum with NaN handling does not) tracks
/// `max |x|` and any NaN at once. [`peak_value`] reads it back.
#[inline(always)]
fn peak_bits(acc: u32, x: f32) -> u32 {
    acc.max(x.to_bits() & 0x7fff_ffff)
}

/// The peak that [`peak_bits`] tracked: `max |x|`, infinite when any `x` was not finite.
fn peak_value(bits: u32) -> f32 {
    f32::from_bits(bits.min(f32::INFINITY.to_bits()))
}

/// Whether the fused path can take this parameter: everything on the host, contiguous, the
/// state and gradient f32, the weight f32 (its own master) or bf16/f16 with an f32 master.
pub(super) fn applies(
    m: &Tensor,
    v: &Tensor,
    w: &Tensor,
    master: Option<&Tensor>,
    g: &Tensor,
) -> bool {
    let host = |t: &Tensor| t.device().is_cpu() && t.is_contiguous();
    let f32_host = |t: &Tensor| host(t) && t.dtype() == DType::F32;
    let weight_ok = match master {
        None => w.dtype() == DType::F32,
        Some(master) => f32_host(master) && matches!(w.dtype(), DType::BF16 | DType::F16),
    };
    f32_host(m) && f32_host(v) && f32_host(g) && host(w) && weight_ok
}

/// Runs `f` with `t`'s host storage writable (its write lock held meanwhile).
fn with_storage_mut(
    t: &Tensor,
    f: &mut dyn FnMut(&mut CpuStorage, &Layout) -> Result<()>,
) -> Result<()> {
    type F<'f> = &'f mut dyn FnMut(&mut CpuStorage, &Layout) -> Result<()>;
    struct Op<'f>(RefCell<F<'f>>);
    impl InplaceOp1 for Op<'_> {
        fn name(&self) -> &'static str {
            "rlvr-optimizer"
        }
        fn cpu_fwd(&self, s: &mut CpuStorage, l: &Layout) -> Result<()> {
            (self.0.borrow_mut())(s, l)
        }
    }
    t.inplace_op1(&Op(RefCell::new(f)))
}

/// Runs `f` with `t`'s host storage writable and `src`'s readable.
fn with_storage_mut_and(
    t: &Tensor,
    src: &Tensor,
    f: &mut dyn FnMut(&mut CpuStorage, &Layout, &CpuStorage, &Layout) -> Result<()>,
) -> Result<()> {
    type F<'f> = &'f mut dyn FnMut(&mut CpuStorage, &Layout, &CpuStorage, &Layout) -> Result<()>;
    struct Op<'f>(RefCell<F<'f>>);
    impl InplaceOp2 for Op<'_> {
        fn name(&self) -> &'static str {
            "rlvr-optimizer"
        }
        fn cpu_fwd(
            &self,
            s: &mut CpuStorage,
            l: &Layout,
            s2: &CpuStorage,
            l2: &Layout,
        ) -> Result<()> {
            (self.0.borrow_mut())(s, l, s2, l2)
        }
    }
    t.inplace_op2(src, &Op(RefCell::new(f)))
}

/// The contiguous elements of a layout.
fn span(l: &Layout) -> Result<std::ops::Range<usize>> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(a..b),
        None => candle_core::bail!("optimizer: a tensor is not contiguous"),
    }
}

fn f32s_mut<'a>(s: &'a mut CpuStorage, l: &Layout) -> Result<&'a mut [f32]> {
    let r = span(l)?;
    match s {
        CpuStorage::F32(v) => Ok(&mut v[r]),
        _ => candle_core::bail!("optimizer: expected f32 storage"),
    }
}

fn f32s<'a>(s: &'a CpuStorage, l: &Layout) -> Result<&'a [f32]> {
    let r = span(l)?;
    match s {
        CpuStorage::F32(v) => Ok(&v[r]),
        _ => candle_core::bail!("optimizer: expected f32 storage"),
    }
}

/// The weight being updated: its own f32 master, or a bf16/f16 copy of an f32 master.
enum Weight<'a> {
    F32(&'a mut [f32]),
    Bf16(&'a mut [bf16], &'a mut [f32]),
    F16(&'a mut [f16], &'a mut [f32]),
}

fn weight<'a>(
    w: &'a mut CpuStorage,
    wl: &Layout,
    master: Option<&'a mut [f32]>,
) -> Result<Weight<'a>> {
    let r = span(wl)?;
    Ok(match (w, master) {
        (CpuStorage::F32(v), None) => Weight::F32(&mut v[r]),
        (CpuStorage::BF16(v), Some(m)) => Weight::Bf16(&mut v[r], m),
        (CpuStorage::F16(v), Some(m)) => Weight::F16(&mut v[r], m),
        _ => candle_core::bail!("optimizer: a weight's dtype does not match its master"),
    })
}

/// One AdamW step of one parameter in place (see [`AdamScalars::element`]) on the gradient
/// `g` scaled by the clip factor `k` (`g * k + 0`; `k = 1` without clipping, which changes no
/// result: it maps only `-0` to `+0`, and `g` enters the formula as `g c1 + 0` and `g^2`,
/// the same bits for either zero): `m`, `v`, the weight `w` and its f32 `master` (None: `w`
/// is f32 and its own) are overwritten, `g` read. Returns the new state's [`Peaks`]. The
/// caller has checked [`applies`].
pub(super) fn adamw_step(
    s: &AdamScalars,
    k: f32,
    m: &Tensor,
    v: &Tensor,
    w: &Tensor,
    master: Option<&Tensor>,
    g: &Tensor,
) -> Result<Peaks> {
    let mut peaks = Peaks::ZERO;
    with_storage_mut(m, &mut |ms, ml| {
        let m = f32s_mut(ms, ml)?;
        with_storage_mut(v, &mut |vs, vl| {
            let v = f32s_mut(vs, vl)?;
            let mut inner = |ws: &mut CpuStorage, wl: &Layout, gs: &CpuStorage, gl: &Layout| {
                let g = f32s(gs, gl)?;
                peaks = update(s, k, &mut *m, &mut *v, weight(ws, wl, None)?, g)?;
                Ok(())
            };
            match master {
                None => with_storage_mut_and(w, g, &mut inner),
                Some(master) => with_storage_mut(master, &mut |ps, pl| {
                    let p = f32s_mut(ps, pl)?;
                    with_storage_mut_and(w, g, &mut |ws, wl, gs, gl| {
                        let g = f32s(gs, gl)?;
                        peaks = update(s, k, &mut *m, &mut *v, weight(ws, wl, Some(&mut *p))?, g)?;
                        Ok(())
                    })
                }),
            }
        })
    })?;
    Ok(peaks)
}

fn check_len(n: usize, lens: &[usize]) -> Result<()> {
    if lens.iter().any(|&l| l != n) {
        candle_core::bail!("optimizer: state and gradient lengths differ ({n} against {lens:?})");
    }
    Ok(())
}

fn update(
    s: &AdamScalars,
    k: f32,
    m: &mut [f32],
    v: &mut [f32],
    w: Weight<'_>,
    g: &[f32],
) -> Result<Peaks> {
    let n = g.len();
    check_len(n, &[m.len(), v.len()])?;
    let mv = m.par_chunks_mut(PIECE).zip(v.par_chunks_mut(PIECE));
    match w {
        Weight::F32(w) => {
            check_len(n, &[w.len()])?;
            Ok(mv
                .zip(w.par_chunks_mut(PIECE))
                .zip(g.par_chunks(PIECE))
                .map(|(((m, v), w), g)| simd::piece_f32(s, k, m, v, w, g))
                .reduce(|| Peaks::ZERO, Peaks::max))
        }
        Weight::Bf16(w, p) => update_with_master(s, k, mv, w, p, g, simd::piece_bf16),
        Weight::F16(w, p) => update_with_master(s, k, mv, w, p, g, simd::piece_f16),
    }
}

/// One piece's update of a half-precision weight and its f32 master (`simd::piece_bf16`,
/// `simd::piece_f16`): `(s, k, m, v, master, weight, g)`.
type MasterPiece<T> =
    fn(&AdamScalars, f32, &mut [f32], &mut [f32], &mut [f32], &mut [T], &[f32]) -> Peaks;

/// [`update`] of a half-precision weight `w` whose f32 master `p` takes the step, piece by
/// piece with `piece`.
fn update_with_master<'a, T: Send>(
    s: &AdamScalars,
    k: f32,
    mv: impl IndexedParallelIterator<Item = (&'a mut [f32], &'a mut [f32])>,
    w: &mut [T],
    p: &mut [f32],
    g: &[f32],
    piece: MasterPiece<T>,
) -> Result<Peaks> {
    check_len(g.len(), &[w.len(), p.len()])?;
    Ok(mv
        .zip(w.par_chunks_mut(PIECE).zip(p.par_chunks_mut(PIECE)))
        .zip(g.par_chunks(PIECE))
        .map(|(((m, v), (w, p)), g)| piece(s, k, m, v, p, w, g))
        .reduce(|| Peaks::ZERO, Peaks::max))
}

/// The loops over one piece, written so the compiler vectorizes them (no branch, no bounds
/// check in the loop), and compiled twice more, for AVX-512 and for AVX2, each run on a CPU
/// that has it: the update is one square root and one division per element, which the
/// baseline x86-64 build runs one element at a time, far below memory speed. Vector `sqrt`
/// and `div` round exactly as the scalar ones (IEEE), and Rust contracts no multiply-add, so
/// every build gives the same bits.
mod simd {
    use super::{peak_bits, AdamScalars, Peaks};
    use half::{bf16, f16};

    /// `pub(super) fn $name(args) -> ret`, running `$body(args)` compiled for the widest
    /// vector extension the CPU has.
    macro_rules! dispatched {
        ($(#[$doc:meta])* fn $name:ident, $avx512:ident, $avx2:ident
            ($($arg:ident: $ty:ty),*) -> $ret:ty = $body:expr) => {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f")]
            fn $avx512($($arg: $ty),*) -> $ret {
                ($body)($($arg),*)
            }

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2")]
            fn $avx2($($arg: $ty),*) -> $ret {
                ($body)($($arg),*)
            }

            $(#[$doc])*
            pub(super) fn $name($($arg: $ty),*) -> $ret {
                #[cfg(target_arch = "x86_64")]
                {
                    if std::arch::is_x86_feature_detected!("avx512f") {
                        // SAFETY: the CPU has AVX-512F (checked just above).
                        return unsafe { $avx512($($arg),*) };
                    }
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: the CPU has AVX2 (checked just above).
                        return unsafe { $avx2($($arg),*) };
                    }
                }
                ($body)($($arg),*)
            }
        };
    }

    /// `m, v, w` <- the step on `g * k + 0`; the new moments' peaks. (The bodies are
    /// visible to the tests, which call them in the baseline build.)
    #[inline(always)]
    pub(super) fn f32_body(
        s: &AdamScalars,
        k: f32,
        m: &mut [f32],
        v: &mut [f32],
        w: &mut [f32],
        g: &[f32],
    ) -> Peaks {
        let (mut pm, mut pv) = (0u32, 0u32);
        let mvw = m.iter_mut().zip(v.iter_mut()).zip(w.iter_mut());
        for (((m, v), w), &g) in mvw.zip(g) {
            (*m, *v, *w) = s.element(*m, *v, *w, g * k + 0.0);
            (pm, pv) = (peak_bits(pm, *m), peak_bits(pv, *v));
        }
        Peaks::from_bits(pm, pv)
    }

    /// `m, v, p` <- the step on `g * k + 0`, `w` <- `round(p)`; the new moments' peaks.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn master_body<T>(
        s: &AdamScalars,
        k: f32,
        m: &mut [f32],
        v: &mut [f32],
        p: &mut [f32],
        w: &mut [T],
        g: &[f32],
        round: impl Fn(f32) -> T,
    ) -> Peaks {
        let (mut pm, mut pv) = (0u32, 0u32);
        let mvp = m
            .iter_mut()
            .zip(v.iter_mut())
            .zip(p.iter_mut().zip(w.iter_mut()));
        for (((m, v), (p, w)), &g) in mvp.zip(g) {
            (*m, *v, *p) = s.element(*m, *v, *p, g * k + 0.0);
            *w = round(*p);
            (pm, pv) = (peak_bits(pm, *m), peak_bits(pv, *v));
        }
        Peaks::from_bits(pm, pv)
    }

    /// The largest [`peak_bits`] of the step's new moments `m, v` and of its new weights
    /// `p` on `g * k + 0`, nothing written.
    #[inline(always)]
    pub(super) fn check_body(
        s: &AdamScalars,
        k: f32,
        m: &[f32],
        v: &[f32],
        p: &[f32],
        g: &[f32],
    ) -> (u32, u32) {
        let (mut moments, mut weights) = (0u32, 0u32);
        for (((&m, &v), &p), &g) in m.iter().zip(v).zip(p).zip(g) {
            let (m, v, p) = s.element(m, v, p, g * k + 0.0);
            moments = peak_bits(peak_bits(moments, m), v);
            weights = peak_bits(weights, p);
        }
        (moments, weights)
    }

    /// The sum of squares of `g` in f64, in eight interleaved partial sums (the order is
    /// fixed, so is the value), and the [`peak_bits`] of `p`.
    #[inline(always)]
    pub(super) fn norm_body(g: &[f32], p: &[f32]) -> (f64, u32) {
        let mut lanes = [0f64; 8];
        let whole = g.chunks_exact(8);
        let tail: f64 = whole
            .remainder()
            .iter()
            .map(|&x| f64::from(x) * f64::from(x))
            .sum();
        for c in whole {
            for (acc, &x) in lanes.iter_mut().zip(c) {
                *acc += f64::from(x) * f64::from(x);
            }
        }
        let peak = p.iter().fold(0, |a, &x| peak_bits(a, x));
        (lanes.iter().sum::<f64>() + tail, peak)
    }

    dispatched!(
        /// [`f32_body`].
        fn piece_f32, piece_f32_avx512, piece_f32_avx2
        (s: &AdamScalars, k: f32, m: &mut [f32], v: &mut [f32], w: &mut [f32], g: &[f32])
            -> Peaks = f32_body
    );
    dispatched!(
        /// [`master_body`] of a bf16 weight.
        fn piece_bf16, piece_bf16_avx512, piece_bf16_avx2
        (s: &AdamScalars, k: f32, m: &mut [f32], v: &mut [f32], p: &mut [f32], w: &mut [bf16],
            g: &[f32]) -> Peaks
            = |s, k, m, v, p, w, g| master_body(s, k, m, v, p, w, g, bf16::from_f32)
    );
    dispatched!(
        /// [`master_body`] of an f16 weight.
        fn piece_f16, piece_f16_avx512, piece_f16_avx2
        (s: &AdamScalars, k: f32, m: &mut [f32], v: &mut [f32], p: &mut [f32], w: &mut [f16],
            g: &[f32]) -> Peaks
            = |s, k, m, v, p, w, g| master_body(s, k, m, v, p, w, g, f16::from_f32)
    );
    dispatched!(
        /// [`check_body`].
        fn piece_check, piece_check_avx512, piece_check_avx2
        (s: &AdamScalars, k: f32, m: &[f32], v: &[f32], p: &[f32], g: &[f32]) -> (u32, u32)
            = check_body
    );
    dispatched!(
        /// [`norm_body`].
        fn piece_norm, piece_norm_avx512, piece_norm_avx2
        (g: &[f32], p: &[f32]) -> (f64, u32) = norm_body
    );
}

/// The host storage of a tensor's storage.
fn host(s: &candle_core::Storage) -> Result<&CpuStorage> {
    match s {
        candle_core::Storage::Cpu(c) => Ok(c),
        _ => candle_core::bail!("optimizer: expected host storage"),
    }
}

/// Whether [`adamw_step`] would leave every new `m`, `v` and weight finite (nothing written).
pub(super) fn adamw_stays_finite(
    s: &AdamScalars,
    k: f32,
    m: &Tensor,
    v: &Tensor,
    w: &Tensor,
    master: Option<&Tensor>,
    g: &Tensor,
) -> Result<bool> {
    let (ms, ml) = m.storage_and_layout();
    let (vs, vl) = v.storage_and_layout();
    let (gs, gl) = g.storage_and_layout();
    let p_tensor = master.unwrap_or(w);
    let (ps, pl) = p_tensor.storage_and_layout();
    let m = f32s(host(&ms)?, ml)?;
    let v = f32s(host(&vs)?, vl)?;
    let g = f32s(host(&gs)?, gl)?;
    let p = f32s(host(&ps)?, pl)?;
    check_len(g.len(), &[m.len(), v.len(), p.len()])?;
    let (moments, weights) = m
        .par_chunks(PIECE)
        .zip(v.par_chunks(PIECE))
        .zip(p.par_chunks(PIECE))
        .zip(g.par_chunks(PIECE))
        .map(|(((m, v), p), g)| simd::piece_check(s, k, m, v, p, g))
        .reduce(|| (0, 0), |a, b| (a.0.max(b.0), a.1.max(b.1)));
    Ok(moments < f32::INFINITY.to_bits() && weights < overflow_bits(w.dtype()))
}

/// The bits of the smallest f32 magnitude that rounds to infinity in `dtype` (round to
/// nearest even): infinity itself for f32; halfway above the largest finite bf16
/// (`0x7f7f_8000`) and f16 (65520) for those. A weight stored in `dtype` is finite iff its
/// f32 value's [`peak_bits`] lie below.
pub(super) fn overflow_bits(dtype: DType) -> u32 {
    match dtype {
        DType::BF16 => 0x7f7f_8000,
        DType::F16 => 65520f32.to_bits(),
        _ => f32::INFINITY.to_bits(),
    }
}

/// The sum of squares of `g`'s elements, in f64 (pieces summed in order: the same value for
/// any thread count).
pub(super) fn sum_of_squares(g: &Tensor) -> Result<f64> {
    let (gs, gl) = g.storage_and_layout();
    let g = f32s(host(&gs)?, gl)?;
    let parts: Vec<f64> = g
        .par_chunks(PIECE)
        .map(|g| simd::piece_norm(g, &[]).0)
        .collect();
    Ok(parts.iter().sum())
}

/// [`sum_of_squares`] of `g` (the same value) and, in the same pass, `max |p|` of the f32
/// tensor `p` (infinite when an entry is not finite): the gradient's contribution to the
/// global norm and the weight's bound for [`AdamScalars::stays_finite_within`].
pub(super) fn sum_of_squares_and_peak(g: &Tensor, p: &Tensor) -> Result<(f64, f32)> {
    let (gs, gl) = g.storage_and_layout();
    let (ps, pl) = p.storage_and_layout();
    let g = f32s(host(&gs)?, gl)?;
    let p = f32s(host(&ps)?, pl)?;
    check_len(g.len(), &[p.len()])?;
    let parts: Vec<(f64, u32)> = g
        .par_chunks(PIECE)
        .zip(p.par_chunks(PIECE))
        .map(|(g, p)| simd::piece_norm(g, p))
        .collect();
    let sum = parts.iter().map(|x| x.0).sum();
    Ok((sum, peak_value(parts.iter().fold(0, |a, x| a.max(x.1)))))
}

/// `max |p|` of the f32 tensor `p` (infinite when an entry is not finite): the weight's bound
/// for [`AdamScalars::stays_finite_within`] when the gradient's sum of squares is already
/// known ([`copy_with_sum_of_squares`], [`add_in_place`]).
pub(super) fn peak(p: &Tensor) -> Result<f32> {
    let (ps, pl) = p.storage_and_layout();
    let p = f32s(host(&ps)?, pl)?;
    let bits = p
        .par_chunks(PIECE)
        .map(|p| simd::piece_norm(&[], p).1)
        .reduce(|| 0, u32::max);
    Ok(peak_value(bits))
}

/// `g *= scale` in place, as candle's `affine(scale, 0)` rounds it (`g * f32(scale) + 0`).
pub(super) fn scale_in_place(g: &Tensor, scale: f64) -> Result<()> {
    let k = scale as f32;
    with_storage_mut(g, &mut |gs, gl| {
        let g = f32s_mut(gs, gl)?;
        g.par_chunks_mut(PIECE).for_each(|p| {
            for x in p {
                *x = *x * k + 0.0;
            }
        });
        Ok(())
    })
}

/// `acc += f32(g)` in place (`g` f32, bf16 or f16, any host layout made contiguous by the
/// caller), as the tensor path rounds it; returns the new `acc`'s [`sum_of_squares`] (the
/// same value), taken in the same pass, piece by piece while the piece is in cache.
pub(super) fn add_in_place(acc: &Tensor, g: &Tensor) -> Result<f64> {
    let mut sum = 0.0;
    with_storage_mut_and(acc, g, &mut |a, al, gs, gl| {
        let a = f32s_mut(a, al)?;
        sum = for_each_piece(a, gs, gl, |a, g| *a += g)?;
        Ok(())
    })?;
    Ok(sum)
}

/// An f32 copy of the host gradient `g` (f32, bf16 or f16, contiguous; `-0.0` kept) and the
/// copy's [`sum_of_squares`] (the same value), in one pass: the first piece of a gradient
/// accumulator.
pub(super) fn copy_with_sum_of_squares(g: &Tensor) -> Result<(Tensor, f64)> {
    let (gs, gl) = g.storage_and_layout();
    // zeroed memory from the allocator: fresh pages, not written twice
    let mut out = vec![0f32; gl.shape().elem_count()];
    let sum = for_each_piece(&mut out, host(&gs)?, gl, |a, g| *a = g)?;
    drop(gs);
    Ok((
        Tensor::from_vec(out, g.shape(), &candle_core::Device::Cpu)?,
        sum,
    ))
}

/// `f(a, f32(g))` for every element of `a` and of `g`'s contiguous `gl` span (f32, bf16 or
/// f16), threaded in [`PIECE`]s; returns the sum of squares of the new `a`, each piece's as
/// [`sum_of_squares`] takes it, summed in order.
fn for_each_piece(
    a: &mut [f32],
    gs: &CpuStorage,
    gl: &Layout,
    f: impl Fn(&mut f32, f32) + Sync,
) -> Result<f64> {
    let r = span(gl)?;
    match gs {
        CpuStorage::F32(v) => pieces(a, &v[r], |x| x, f),
        CpuStorage::BF16(v) => pieces(a, &v[r], bf16::to_f32, f),
        CpuStorage::F16(v) => pieces(a, &v[r], f16::to_f32, f),
        _ => candle_core::bail!("optimizer: a gradient of unsupported dtype"),
    }
}

fn pieces<T: Copy + Sync>(
    a: &mut [f32],
    g: &[T],
    to_f32: impl Fn(T) -> f32 + Sync,
    f: impl Fn(&mut f32, f32) + Sync,
) -> Result<f64> {
    check_len(a.len(), &[g.len()])?;
    let parts: Vec<f64> = a
        .par_chunks_mut(PIECE)
        .zip(g.par_chunks(PIECE))
        .map(|(a, g)| {
            for (a, &g) in a.iter_mut().zip(g) {
                f(a, to_f32(g));
            }
            simd::piece_norm(a, &[]).0
        })
        .collect();
    Ok(parts.iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Deterministic values of varied sign and exponent, with the specials the loops must
    /// carry through unchanged: zeros of both signs, infinities, NaN, subnormals.
    fn values(n: usize, seed: u32) -> Vec<f32> {
        let specials = [
            0.0,
            -0.0,
            f32::INFINITY,
            -f32::INFINITY,
            f32::NAN,
            1e-40,
            -3e-39,
        ];
        (0..n as u32)
            .map(|i| {
                let h = i
                    .wrapping_mul(2_654_435_761)
                    .wrapping_add(seed.wrapping_mul(40_503));
                if h % 97 == 0 {
                    return specials[(h / 97) as usize % specials.len()];
                }
                let x = (h % 20_011) as f32 / 10_005.5 - 1.0;
                x * 10f32.powi((h % 9) as i32 - 4)
            })
            .collect()
    }

    fn bits(x: &[f32]) -> Vec<u32> {
        x.iter().map(|x| x.to_bits()).collect()
    }

    /// The vectorized builds (AVX-512, AVX2, where the CPU has them) give the scalar
    /// baseline's bits: the update (f32 weight; bf16 and f16 weights with a master), the
    /// check, the norm and the peaks, on lengths with every tail, with and without a clip
    /// factor, through zeros of both signs, infinities, NaN and subnormals.
    #[test]
    fn every_build_of_the_loops_gives_the_same_bits() {
        let s = AdamScalars::new(0.9, 0.999, 1e-8, 1e-3, 0.01, 3);
        for n in [1, 7, 8, 15, 16, 17, 63, 1000] {
            for k in [1.0f32, 0.37] {
                let (m, v, p, g) = (values(n, 1), values(n, 2), values(n, 3), values(n, 4));
                let v: Vec<f32> = v.iter().map(|x| x.abs()).collect();
                // f32 weight: the dispatched build against the baseline body
                let (mut m1, mut v1, mut p1) = (m.clone(), v.clone(), p.clone());
                let peaks1 = simd::piece_f32(&s, k, &mut m1, &mut v1, &mut p1, &g);
                let (mut m0, mut v0, mut p0) = (m.clone(), v.clone(), p.clone());
                let peaks0 = simd::f32_body(&s, k, &mut m0, &mut v0, &mut p0, &g);
                let what = format!("n {n} k {k}");
                assert_eq!(bits(&m1), bits(&m0), "{what}: m");
                assert_eq!(bits(&v1), bits(&v0), "{what}: v");
                assert_eq!(bits(&p1), bits(&p0), "{what}: p");
                assert_eq!(peaks1, peaks0, "{what}: peaks");
                // the peaks are max |m'| and max v', infinite when any is not finite
                let want = |x: &[f32]| {
                    if x.iter().any(|x| !x.is_finite()) {
                        f32::INFINITY
                    } else {
                        x.iter().fold(0f32, |a, x| a.max(x.abs()))
                    }
                };
                assert_eq!(
                    peaks1,
                    Peaks {
                        m: want(&m1),
                        v: want(&v1)
                    },
                    "{what}"
                );
                // each element as the scalar formula gives it
                for i in 0..n {
                    let e = s.element(m[i], v[i], p[i], g[i] * k + 0.0);
                    assert_eq!(
                        [m1[i], v1[i], p1[i]].map(f32::to_bits),
                        [e.0, e.1, e.2].map(f32::to_bits),
                        "{what}: element {i}"
                    );
                }
                // bf16 and f16 weights with an f32 master
                let (mut mb, mut vb, mut pb) = (m.clone(), v.clone(), p.clone());
                let mut wb = vec![bf16::ZERO; n];
                let pk = simd::piece_bf16(&s, k, &mut mb, &mut vb, &mut pb, &mut wb, &g);
                assert_eq!(
                    (bits(&mb), bits(&vb), bits(&pb), pk),
                    (bits(&m1), bits(&v1), bits(&p1), peaks1)
                );
                let round: Vec<u16> = p1.iter().map(|&x| bf16::from_f32(x).to_bits()).collect();
                assert_eq!(
                    wb.iter().map(|w| w.to_bits()).collect::<Vec<_>>(),
                    round,
                    "{what}: bf16"
                );
                let (mut mh, mut vh, mut ph) = (m.clone(), v.clone(), p.clone());
                let mut wh = vec![f16::ZERO; n];
                simd::piece_f16(&s, k, &mut mh, &mut vh, &mut ph, &mut wh, &g);
                let round: Vec<u16> = p1.iter().map(|&x| f16::from_f32(x).to_bits()).collect();
                assert_eq!(
                    wh.iter().map(|w| w.to_bits()).collect::<Vec<_>>(),
                    round,
                    "{what}: f16"
                );
                // the check sees what the update writes
                let (moments, weights) = simd::piece_check(&s, k, &m, &v, &p, &g);
                assert_eq!(
                    (moments, weights),
                    simd::check_body(&s, k, &m, &v, &p, &g),
                    "{what}: check"
                );
                let all = |x: &[f32]| x.iter().fold(0, |a, &x| peak_bits(a, x));
                assert_eq!(
                    moments,
                    all(&m1).max(all(&v1)),
                    "{what}: check of the moments"
                );
                assert_eq!(weights, all(&p1), "{what}: check of the weights");
            }
            // the norm: the dispatched build against the baseline and a plain f64 sum
            let g: Vec<f32> = values(n, 5).into_iter().filter(|x| x.is_finite()).collect();
            let p = values(g.len(), 6);
            let (sum, peak) = simd::piece_norm(&g, &p);
            assert_eq!((sum.to_bits(), peak), {
                let (s0, p0) = simd::norm_body(&g, &p);
                (s0.to_bits(), p0)
            });
            let plain: f64 = g.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
            assert!(
                (sum - plain).abs() <= 1e-12 * plain,
                "n {n}: {sum} against {plain}"
            );
            let finite = p.iter().all(|x| x.is_finite());
            let max = p.iter().fold(0f32, |a, x| a.max(x.abs()));
            assert_eq!(peak_value(peak), if finite { max } else { f32::INFINITY });
        }
    }

    /// The bits of the largest finite value in each storage type round to it, and the
    /// threshold's own value rounds to infinity.
    #[test]
    fn overflow_bits_are_where_each_storage_overflows() {
        let below = |d| f32::from_bits(overflow_bits(d) - 1);
        let at = |d| f32::from_bits(overflow_bits(d));
        assert!(bf16::from_f32(below(DType::BF16)).is_finite());
        assert!(bf16::from_f32(at(DType::BF16)).is_infinite());
        assert!(f16::from_f32(below(DType::F16)).is_finite());
        assert!(f16::from_f32(at(DType::F16)).is_infinite());
        assert_eq!(at(DType::F32), f32::INFINITY);
    }

    /// A magnitude `10^e` for a proptest exponent.
    fn mag(e: f64) -> f32 {
        10f64.powf(e).min(f64::from(f32::MAX)) as f32
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Whenever the bound says a step stays finite, it does: for every state, weight and
        /// gradient within the peaks, including the worst corners (`v = 0` under the largest
        /// `m`, same-signed `m` and `g`), every result of the step is finite and the weight
        /// stays below where its storage overflows.
        #[test]
        fn the_finiteness_bound_implies_a_finite_step(
            (lr_e, eps_e, wd, t) in (-8.0..42.0f64, -14.0..0.0f64, 0.0..1.0f64, 1u64..2000),
            (b1, b2) in (0.0..1.0f64, 0.0..1.0f64),
            (m_e, v_e, p_e, g_e) in (-6.0..39.0f64, -12.0..39.0f64, -4.0..39.0f64, -6.0..20.0f64),
            storage in 0usize..3,
            signs in 0u8..16,
        ) {
            let s = AdamScalars::new(b1, b2, 10f64.powf(eps_e), 10f64.powf(lr_e), wd, t);
            let peaks = Peaks { m: mag(m_e), v: mag(v_e) };
            let (p_peak, g_peak) = (mag(p_e), mag(g_e));
            let dtype = [DType::F32, DType::BF16, DType::F16][storage];
            let limit = f32::from_bits(overflow_bits(dtype));
            if s.stays_finite_within(peaks, p_peak, f64::from(g_peak), limit) {
                let sign = |bit: u8| if signs & (1 << bit) != 0 { -1.0 } else { 1.0 };
                for (m, v, p, g) in [
                    (sign(0) * peaks.m, 0.0, sign(1) * p_peak, sign(0) * g_peak),
                    (sign(0) * peaks.m, peaks.v, sign(1) * p_peak, sign(2) * g_peak),
                    (0.0, 0.0, sign(3) * p_peak, sign(2) * g_peak),
                    (sign(3) * peaks.m / 3.0, peaks.v / 7.0, sign(1) * p_peak / 5.0, sign(0) * g_peak),
                ] {
                    let (m, v, p) = s.element(m, v, p, g);
                    prop_assert!(m.is_finite() && v.is_finite() && p.is_finite(), "{m} {v} {p}");
                    prop_assert!(p.abs() < limit, "{p} against the storage's {limit}");
                }
            }
        }
    }

    /// The bound holds for a training run's numbers and fails where a step can overflow.
    #[test]
    fn the_finiteness_bound_passes_training_values_and_fails_overflows() {
        let typical = Peaks { m: 1e-3, v: 1e-6 };
        let s = AdamScalars::new(0.9, 0.999, 1e-8, 1e-5, 0.01, 10);
        assert!(s.stays_finite_within(typical, 10.0, 1.0, f32::MAX));
        assert!(s.stays_finite_within(Peaks::ZERO, 10.0, 1.0, 65520.0));
        let huge_lr = AdamScalars::new(0.9, 0.999, 1e-8, 1e39, 0.01, 10);
        assert!(!huge_lr.stays_finite_within(typical, 10.0, 1.0, f32::MAX));
        assert!(
            !s.stays_finite_within(typical, 3e38, 1.0, f32::MAX),
            "weights near the limit"
        );
        assert!(
            !s.stays_finite_within(typical, 40_000.0, 1.0, 65520.0),
            "an f16 weight near its limit"
        );
        let inf = Peaks {
            m: f32::INFINITY,
            v: 0.0,
        };
        assert!(
            !s.stays_finite_within(inf, 1.0, 1.0, f32::MAX),
            "a state already infinite"
        );
        let no_eps = AdamScalars::new(0.9, 0.999, 0.0, 1e-5, 0.0, 10);
        assert!(
            !no_eps.stays_finite_within(typical, 1.0, 1.0, f32::MAX),
            "eps 0: 0/0"
        );
        assert!(!s.stays_finite_within(typical, 1.0, f64::NAN, f32::MAX));
    }
}
