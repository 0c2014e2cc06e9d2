//! The sampling forward's product in bf16 (`model.matmul_dtype = "bf16"`, `super::matmul::bf16`): `c =
//! bf16(a) w^T + beta c` for a few rows `a` `[m, k]` (`m` at most [`super::skinny::MAX_ROWS`])
//! and a weight `w` `[n, k]` whose rows were rounded to bf16 once ([`Bf16Rows`]: the sampler
//! rounds every weight when a generation starts and keeps the copies in its KV cache for all
//! its steps). On CPUs with AVX512-BF16 (`vdpbf16ps`: 32 bf16 products summed into 16 f32 lanes
//! per instruction) it reads half the bytes of the f32 kernel (`super::skinny`) and does twice
//! its multiply-adds per instruction.
//!
//! # Contract
//! * Element `(i, j)` is `sum_l bf16(a[i, l]) w[j, l]`: products of bf16 values, exact in f32,
//!   summed in f32 in a fixed order (lane `x` of 16 takes the pairs `l = 2x, 2x + 1` of every
//!   block of 32, each block's pair added to the lane in turn; the lanes then added by the
//!   CPU's reduction), then `beta c + s`. The bf16 route of every other product
//!   (`super::matmul::bf16`) sums the same terms in another order: the two agree within f32 summation
//!   error (tested). `vdpbf16ps` treats denormal inputs as zero and flushes denormal results: a
//!   difference only for magnitudes below 1.2e-38.
//! * An element's bits depend only on its own row of `a` and row of `w` (not on the other rows,
//!   the thread count or the tiling): tested.
//! * [`available`] says whether this CPU runs it.

use std::array;

use rayon::prelude::*;

use super::matmul::bf16::to_bf16_bits;
use super::matmul::split::{for_each_part, Out, Part, Shape};

/// bf16 elements per step of the kernel: one 512-bit register.
const STEP: usize = 32;

/// Whether this CPU runs the kernel (AVX-512F and AVX512-BF16).
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A matrix's rows rounded to bf16 (to nearest, ties to even: `half`'s conversion, as every
/// bf16 product's), each zero-padded to a multiple of 32 elements.
#[derive(Debug, Clone)]
pub(crate) struct Bf16Rows {
    bits: Vec<u16>,
    rows: usize,
    k: usize,
    /// Elements from one row to the next (`k` rounded up to a multiple of [`STEP`]).
    ld: usize,
}

impl Bf16Rows {
    /// No rows yet, of `k` columns each ([`Self::append`] adds them).
    pub(crate) fn empty(k: usize) -> Self {
        let ld = k.div_ceil(STEP).max(1) * STEP;
        Bf16Rows {
            bits: Vec::new(),
            rows: 0,
            k,
            ld,
        }
    }

    /// `rows` rows of `k` from `x`, whose rows sit `ldx` elements apart.
    pub(crate) fn new(x: &[f32], rows: usize, k: usize, ldx: usize) -> Self {
        let mut out = Self::empty(k);
        out.append(x, rows, ldx);
        out
    }

    /// Adds `rows` rows of `k` from `x` (rows `ldx` apart) below the ones there, converted
    /// straight from `x`, rows in parallel: several matrices of `k` columns stack one above the
    /// other this way (a layer's q|k|v or gate|up), each read once from its own buffer.
    pub(crate) fn append(&mut self, x: &[f32], rows: usize, ldx: usize) {
        let (k, ld) = (self.k, self.ld);
        let start = self.bits.len();
        self.bits.resize(start + rows * ld, 0);
        self.bits[start..]
            .par_chunks_mut(ld)
            .enumerate()
            .with_min_len(16)
            .for_each(|(r, row)| {
                for (o, &v) in row.iter_mut().zip(&x[r * ldx..r * ldx + k]) {
                    *o = to_bf16_bits(v);
                }
            });
        self.rows += rows;
    }

    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    pub(crate) fn k(&self) -> usize {
        self.k
    }
}

/// Every weight of the CPU decode's products rounded to bf16, as `cpu/decode.rs` multiplies
/// them: per layer q|k|v, o, gate|up and down stacked, then the vocabulary head.
#[derive(Debug)]
pub(crate) struct Bf16Weights {
    pub(crate) layers: Vec<[Bf16Rows; 4]>,
    pub(crate) lm_head: Bf16Rows,
}

/// `c = bf16(a) w^T + beta c`: `a` `[m, w.k()]` in rows of `lda`, `c` `[m, w.rows()]` in rows
/// of `ldc`; `w`'s rows split among the calling rayon pool's threads (module docs).
///
/// Panics if this CPU lacks the kernel ([`available`]), `m` exceeds
/// [`super::skinny::MAX_ROWS`], or a slice is too short for its shape.
pub(crate) fn sgemm_nt(
    m: usize,
    a: &[f32],
    lda: usize,
    w: &Bf16Rows,
    beta: f32,
    c: &mut [f32],
    ldc: usize,
) {
    assert!(
        available(),
        "bf16 decode kernel: this CPU has no AVX512-BF16"
    );
    assert!(m <= super::skinny::MAX_ROWS, "bf16 decode kernel: {m} rows");
    let (n, k) = (w.rows, w.k);
    assert!(
        m == 0 || a.len() >= (m - 1) * lda + k,
        "bf16 decode kernel: a too short"
    );
    assert!(
        m == 0 || (ldc >= n && c.len() >= (m - 1) * ldc + n),
        "bf16 decode kernel: c too short"
    );
    if m == 0 || n == 0 {
        return;
    }
    let a16 = Bf16Rows::new(a, m, k, lda);
    debug_assert_eq!(a16.ld, w.ld);
    let out = Out(c.as_mut_ptr());
    let shape = Shape {
        dims: [m, n, k],
        a: (false, a16.ld),
        b: (true, w.ld),
    };
    for_each_part(shape, ldc, (1, 4), |part: Part| {
        let [pm, pn, _] = part.dims;
        // SAFETY: the asserts above hold `a` and `c` to their shapes, the copies hold `m` and
        // `n` padded rows of `ld`; a part's columns `part.c_off..+pn` of `c` and rows of `w`
        // from `part.b_off` lie inside them, parts write disjoint columns, and `c` is borrowed
        // mutably, so it aliases neither copy; the CPU has the kernel's instructions.
        unsafe {
            #[cfg(target_arch = "x86_64")]
            tiles(
                [pm, pn],
                &a16.bits[part.a_off..],
                a16.ld,
                &w.bits[part.b_off..],
                w.ld,
                beta,
                Out(out.at(part.c_off)),
                ldc,
            );
        }
    });
}

/// The product in tiles of 4 rows of `a` by 4 rows of `w` (edges in smaller tiles), for each
/// block of weight rows every block of `a`'s rows.
///
/// # Safety
/// `a` and `w` hold `m` and `n` rows of `ld` bf16 elements (zero past each row's `k`); `c.0`
/// points at `m` rows of `n` writable elements at `ldc` that alias neither; the CPU has
/// AVX-512F and AVX512-BF16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
#[allow(clippy::too_many_arguments)]
unsafe fn tiles(
    [m, n]: [usize; 2],
    a: &[u16],
    lda: usize,
    w: &[u16],
    ldw: usize,
    beta: f32,
    c: Out,
    ldc: usize,
) {
    let p = Tiles {
        a,
        lda,
        w,
        ldw,
        beta,
        c,
        ldc,
    };
    let mut j = 0;
    while j < n {
        if n - j >= 4 {
            // SAFETY (every call): forwarded; the tiles stay inside `m x n`.
            unsafe { row_tiles::<4>(&p, m, j) };
            j += 4;
        } else {
            unsafe { row_tiles::<1>(&p, m, j) };
            j += 1;
        }
    }
}

/// The arguments of [`tiles`].
#[cfg(target_arch = "x86_64")]
struct Tiles<'a> {
    a: &'a [u16],
    lda: usize,
    w: &'a [u16],
    ldw: usize,
    beta: f32,
    c: Out,
    ldc: usize,
}

/// All `m` rows of the output by columns `j..j + J`: tiles of 4 rows, then of 2 and 1.
///
/// # Safety
/// As [`tiles`], and `j + J <= n`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn row_tiles<const J: usize>(p: &Tiles<'_>, m: usize, j: usize) {
    let mut i = 0;
    // SAFETY (every call): forwarded; `i + rows <= m`.
    while m - i >= 4 {
        unsafe { tile::<4, J>(p, i, j) };
        i += 4;
    }
    if m - i >= 2 {
        unsafe { tile::<2, J>(p, i, j) };
        i += 2;
    }
    if m - i >= 1 {
        unsafe { tile::<1, J>(p, i, j) };
    }
}

/// Rows `i0..i0 + I` by columns `j0..j0 + J` of the output.
///
/// # Safety
/// As [`tiles`], and the tile lies inside the output.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn tile<const I: usize, const J: usize>(p: &Tiles<'_>, i0: usize, j0: usize) {
    use std::arch::x86_64::*;
    let ld = p.lda;
    let ap: [*const u16; I] = array::from_fn(|i| p.a[(i0 + i) * p.lda..].as_ptr());
    let wp: [*const u16; J] = array::from_fn(|j| p.w[(j0 + j) * p.ldw..].as_ptr());
    let mut acc = [[_mm512_setzero_ps(); J]; I];
    let mut l = 0;
    while l < ld {
        // SAFETY: `l + STEP <= ld`: inside every padded row.
        let wv: [__m512bh; J] = array::from_fn(|j| unsafe {
            std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(wp[j].add(l).cast()))
        });
        for i in 0..I {
            // SAFETY: as above.
            let av = unsafe {
                std::mem::transmute::<__m512i, __m512bh>(_mm512_loadu_si512(ap[i].add(l).cast()))
            };
            for j in 0..J {
                acc[i][j] = _mm512_dpbf16_ps(acc[i][j], av, wv[j]);
            }
        }
        l += STEP;
    }
    for (i, row) in acc.iter().enumerate() {
        for (j, lanes) in row.iter().enumerate() {
            let s = _mm512_reduce_add_ps(*lanes);
            // SAFETY: element (i0 + i, j0 + j) lies inside the output the caller gave.
            unsafe {
                let cij = p.c.0.add((i0 + i) * p.ldc + j0 + j);
                *cij = if p.beta == 0.0 {
                    s
                } else {
                    p.beta.mul_add(*cij, s)
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::matmul::tests::data;

    fn rounded(x: f32) -> f64 {
        half::bf16::from_f32(x).to_f64()
    }

    /// Against the f64 sum of the rounded operands' products, at shapes with `k` not a multiple
    /// of 32, every row count to 64, `beta` 0 and not, strided `a` and `c`.
    #[test]
    fn the_kernel_is_the_product_of_the_rounded_operands() {
        if !available() {
            eprintln!("skipped: this CPU has no AVX512-BF16");
            return;
        }
        for &(m, n, k) in &[
            (1, 1, 1),
            (3, 7, 33),
            (5, 9, 64),
            (64, 70, 100),
            (17, 300, 576),
        ] {
            for beta in [0.0f32, 0.5] {
                let (lda, ldc) = (k + 3, n + 2);
                let a = data(m * lda, 21);
                let wf = data(n * k, 22);
                let w = Bf16Rows::new(&wf, n, k, k);
                let c0 = data(m * ldc, 23);
                let mut c = c0.clone();
                sgemm_nt(m, &a, lda, &w, beta, &mut c, ldc);
                for i in 0..m {
                    for j in 0..n {
                        let terms: Vec<f64> = (0..k)
                            .map(|l| rounded(a[i * lda + l]) * rounded(wf[j * k + l]))
                            .collect();
                        let want = beta as f64 * c0[i * ldc + j] as f64 + terms.iter().sum::<f64>();
                        let scale = terms.iter().map(|t| t.abs()).sum::<f64>() + 1e-3;
                        let got = c[i * ldc + j] as f64;
                        assert!(
                            (got - want).abs() <= 1e-6 * scale,
                            "[{m},{n},{k}] beta {beta} ({i},{j}): {got} vs {want}"
                        );
                    }
                    for j in n..ldc {
                        assert_eq!(c[i * ldc + j], c0[i * ldc + j]);
                    }
                }
            }
        }
    }

    /// An element's bits depend only on its row of `a` and of `w`: the same row computed alone,
    /// among others, and on 1 or 3 threads gives the same bits.
    #[test]
    fn an_element_depends_only_on_its_rows() {
        if !available() {
            return;
        }
        let (m, n, k) = (13, 203, 150);
        let a = data(m * k, 31);
        let w = Bf16Rows::new(&data(n * k, 32), n, k, k);
        let run = |threads: usize, rows: std::ops::Range<usize>| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut c = vec![0f32; rows.len() * n];
            pool.install(|| sgemm_nt(rows.len(), &a[rows.start * k..], k, &w, 0.0, &mut c, n));
            c
        };
        let all = run(1, 0..m);
        assert_eq!(all, run(3, 0..m));
        for i in [0, 5, 12] {
            assert_eq!(&all[i * n..(i + 1) * n], &run(2, i..i + 1)[..]);
        }
    }

    #[test]
    fn stacked_rows_are_the_parts_in_turn() {
        let (x, y) = (data(2 * 5, 1), data(3 * 5, 2));
        let mut s = Bf16Rows::empty(5);
        s.append(&x, 2, 5);
        s.append(&y, 3, 5);
        let whole: Vec<f32> = x.iter().chain(&y).copied().collect();
        let t = Bf16Rows::new(&whole, 5, 5, 5);
        assert_eq!((s.rows(), s.k(), s.ld), (5, 5, 32));
        assert_eq!(s.bits, t.bits);
        // padding is zero
        assert!(s.bits[5..32].iter().all(|&b| b == 0));
    }
}
