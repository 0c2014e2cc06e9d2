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
        let (b1, b2) = (super::f32_rounded(b1), super::f32_rounded(b2));
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

/// One AdamW step of one parameter in place (see [`AdamScalars::element`]): `m`, `v`, the
/// weight `w` and its f32 `master` (None: `w` is f32 and its own) are overwritten, `g` read.
/// The caller has checked [`applies`].
pub(super) fn adamw_step(
    s: &AdamScalars,
    m: &Tensor,
    v: &Tensor,
    w: &Tensor,
    master: Option<&Tensor>,
    g: &Tensor,
) -> Result<()> {
    with_storage_mut(m, &mut |ms, ml| {
        let m = f32s_mut(ms, ml)?;
        with_storage_mut(v, &mut |vs, vl| {
            let v = f32s_mut(vs, vl)?;
            let mut inner = |ws: &mut CpuStorage, wl: &Layout, gs: &CpuStorage, gl: &Layout| {
                let g = f32s(gs, gl)?;
                update(s, &mut *m, &mut *v, weight(ws, wl, None)?, g)
            };
            match master {
                None => with_storage_mut_and(w, g, &mut inner),
                Some(master) => with_storage_mut(master, &mut |ps, pl| {
                    let p = f32s_mut(ps, pl)?;
                    with_storage_mut_and(w, g, &mut |ws, wl, gs, gl| {
                        let g = f32s(gs, gl)?;
                        update(s, &mut *m, &mut *v, weight(ws, wl, Some(&mut *p))?, g)
                    })
                }),
            }
        })
    })
}

fn check_len(n: usize, lens: &[usize]) -> Result<()> {
    if lens.iter().any(|&l| l != n) {
        candle_core::bail!("optimizer: state and gradient lengths differ ({n} against {lens:?})");
    }
    Ok(())
}

fn update(s: &AdamScalars, m: &mut [f32], v: &mut [f32], w: Weight<'_>, g: &[f32]) -> Result<()> {
    let n = g.len();
    check_len(n, &[m.len(), v.len()])?;
    let mv = m.par_chunks_mut(PIECE).zip(v.par_chunks_mut(PIECE));
    match w {
        Weight::F32(w) => {
            check_len(n, &[w.len()])?;
            mv.zip(w.par_chunks_mut(PIECE))
                .zip(g.par_chunks(PIECE))
                .for_each(|(((m, v), w), g)| {
                    for i in 0..g.len() {
                        (m[i], v[i], w[i]) = s.element(m[i], v[i], w[i], g[i]);
                    }
                });
        }
        Weight::Bf16(w, p) => update_with_master(s, mv, w, p, g, bf16::from_f32)?,
        Weight::F16(w, p) => update_with_master(s, mv, w, p, g, f16::from_f32)?,
    }
    Ok(())
}

/// [`update`] of a half-precision weight `w` whose f32 master `p` takes the step; `w` is then
/// the master rounded by `round`.
fn update_with_master<'a, T: Send>(
    s: &AdamScalars,
    mv: impl IndexedParallelIterator<Item = (&'a mut [f32], &'a mut [f32])>,
    w: &mut [T],
    p: &mut [f32],
    g: &[f32],
    round: fn(f32) -> T,
) -> Result<()> {
    check_len(g.len(), &[w.len(), p.len()])?;
    mv.zip(w.par_chunks_mut(PIECE).zip(p.par_chunks_mut(PIECE)))
        .zip(g.par_chunks(PIECE))
        .for_each(|(((m, v), (w, p)), g)| {
            for i in 0..g.len() {
                (m[i], v[i], p[i]) = s.element(m[i], v[i], p[i], g[i]);
                w[i] = round(p[i]);
            }
        });
    Ok(())
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
    Ok(m.par_chunks(PIECE)
        .zip(v.par_chunks(PIECE))
        .zip(p.par_chunks(PIECE))
        .zip(g.par_chunks(PIECE))
        .all(|(((m, v), p), g)| {
            (0..g.len()).all(|i| {
                let (m, v, p) = s.element(m[i], v[i], p[i], g[i]);
                m.is_finite() && v.is_finite() && p.is_finite()
            })
        }))
}

/// The sum of squares of `g`'s elements, in f64 (pieces summed in order: the same value for
/// any thread count).
pub(super) fn sum_of_squares(g: &Tensor) -> Result<f64> {
    let (gs, gl) = g.storage_and_layout();
    let g = f32s(host(&gs)?, gl)?;
    let parts: Vec<f64> = g
        .par_chunks(PIECE)
        .map(|p| p.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>())
        .collect();
    Ok(parts.iter().sum())
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
/// caller), as the tensor path rounds it.
pub(super) fn add_in_place(acc: &Tensor, g: &Tensor) -> Result<()> {
    with_storage_mut_and(acc, g, &mut |a, al, gs, gl| {
        let a = f32s_mut(a, al)?;
        let r = span(gl)?;
        match gs {
            CpuStorage::F32(v) => add_pieces(a, &v[r], |x| x),
            CpuStorage::BF16(v) => add_pieces(a, &v[r], bf16::to_f32),
            CpuStorage::F16(v) => add_pieces(a, &v[r], f16::to_f32),
            _ => candle_core::bail!("optimizer: a gradient of unsupported dtype"),
        }
    })
}

fn add_pieces<T: Copy + Sync>(
    a: &mut [f32],
    g: &[T],
    to_f32: impl Fn(T) -> f32 + Sync,
) -> Result<()> {
    check_len(a.len(), &[g.len()])?;
    a.par_chunks_mut(PIECE)
        .zip(g.par_chunks(PIECE))
        .for_each(|(a, g)| {
            for (a, &g) in a.iter_mut().zip(g) {
                *a += to_f32(g);
            }
        });
    Ok(())
}
