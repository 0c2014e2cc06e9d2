//! The product of a few rows by a weight stored as its rows: `c = a w^T + beta c`, where `a` is
//! `[m, k]` with `m` at most [`MAX_ROWS`] and `w` is `[n, k]` (a `Linear`'s weight), both
//! row-major. This is the sampling forward's product (`cpu/decode.rs`: one new token for each
//! of a few sequences), which the general kernels compute far below the machine's rate: they
//! pack the whole weight for a handful of rows and fill half of a micro-kernel tile (measured at
//! the Qwen2.5-0.5B shape, 8 rows: 25-62 GFLOP/s with the gemm crate, 43-78 with OpenBLAS, per
//! product). Here each weight row is read once from memory, and from the first cache level for
//! every further row of `a`: one sampling step's products at that shape went from 0.17-0.21 s
//! to 0.10-0.12 s (`rlvr bench matmul --decode 8`, BENCHMARKS.md).
//!
//! # Contract
//! * Element `(i, j)` is `sum_l a[i, l] w[j, l]` summed as 16 interleaved chains of fused
//!   multiply-adds (lane `x` takes `l = x, x + 16, ...` over the first `16 * floor(k / 16)`
//!   terms), the lanes added pairwise (`x + 8`, then `+ 4`, `+ 2`, `+ 1`), then the remaining
//!   `k mod 16` terms one fused multiply-add each, in order; then `beta c + s` as one fused
//!   multiply-add (`beta == 0`: `s`, whatever `c` held).
//! * So an element's bits depend only on its own row of `a` and row of `w`: not on the other
//!   rows, the thread count, the blocking, or which CPU build ran (AVX-512, AVX2 + FMA and the
//!   portable body all compute that formula; tested bit for bit against a scalar transcription).
//! * [`applies`] says when a product takes this path: on x86-64 CPUs with AVX-512F, or AVX2 and
//!   FMA. Elsewhere the general kernels run (the portable body is correct on any CPU, and
//!   tested, but without hardware FMA each multiply-add is a library call, and on other
//!   architectures its speed has not been measured).

use std::array;

use super::operand::Operand;

/// Rows of `a` up to which this kernel computes the product: the sampling batch of one new
/// token per sequence. Measured against both libraries (`rlvr bench matmul --decode ROWS`,
/// BENCHMARKS.md): ahead at 8 to 64 rows on bench-tiny's, bench-small's and the 0.5B shape, level
/// at 128 rows on bench-small's, where the libraries keep the product.
pub(crate) const MAX_ROWS: usize = 64;

/// Interleaved partial sums of each element (one 512-bit or two 256-bit registers).
const LANES: usize = 16;

/// Whether [`sgemm_nt`] computes `op(a) op(b)` with `m` rows: `a` plain, `b` a transposed
/// weight (`op(b) = w^T`), `m <= MAX_ROWS`, on a CPU with hardware fused multiply-add.
pub(crate) fn applies(m: usize, a: &Operand<'_>, b: &Operand<'_>) -> bool {
    m <= MAX_ROWS && !a.trans && b.trans && has_fma()
}

/// Whether this CPU runs one of the vector builds ([`tiles_avx512`], [`tiles_avx2`]).
fn has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            || (std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The output pointer of one call, written at disjoint elements by the parts of a product.
#[derive(Clone, Copy)]
pub(crate) struct Out(pub *mut f32);

/// `c[i, j] = beta c[i, j] + sum_l a[i, l] w[j, l]` for `i < m`, `j < n`, single-threaded:
/// `a` in rows of `lda` from its first element, `w` in rows of `ldw`, `c` in rows of `ldc`
/// from `c.0` (see the module docs for the summation order).
///
/// # Safety
/// `a` and `w` hold `m` and `n` rows of `k` at their strides; `c.0` points at `m` rows of `n`
/// writable elements at a stride of `ldc`, which no one else reads or writes during the call
/// and which alias neither `a` nor `w`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sgemm_nt(
    [m, n, k]: [usize; 3],
    a: &[f32],
    lda: usize,
    w: &[f32],
    ldw: usize,
    beta: f32,
    c: Out,
    ldc: usize,
) {
    let p = Tiles {
        m,
        n,
        k,
        a,
        lda,
        w,
        ldw,
        beta,
        c,
        ldc,
    };
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (which implies FMA); the caller's promises hold.
            return unsafe { tiles_avx512(&p) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA; the caller's promises hold.
            return unsafe { tiles_avx2(&p) };
        }
    }
    // SAFETY: the caller's promises.
    unsafe { tiles::<Portable, 4, 4>(&p) }
}

/// The arguments of [`sgemm_nt`].
struct Tiles<'a> {
    m: usize,
    n: usize,
    k: usize,
    a: &'a [f32],
    lda: usize,
    w: &'a [f32],
    ldw: usize,
    beta: f32,
    c: Out,
    ldc: usize,
}

/// 4 x 4 tiles: 16 accumulators of 16 lanes and 5 operands fill 21 of AVX-512's 32 registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn tiles_avx512(p: &Tiles<'_>) {
    // SAFETY: forwarded from `sgemm_nt`.
    unsafe { tiles::<x86::Avx512, 4, 4>(p) }
}

/// 2 x 2 tiles: 4 accumulators of two 8-lane registers each and 4 operands' halves fill 14 of
/// AVX2's 16 registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn tiles_avx2(p: &Tiles<'_>) {
    // SAFETY: forwarded from `sgemm_nt`.
    unsafe { tiles::<x86::Avx2, 2, 2>(p) }
}

/// The product in tiles of `I` rows of `a` by `J` rows of `w` (edges in smaller tiles): for
/// each block of `J` weight rows, every row block of `a`, so the weight rows come from memory
/// once and from the first cache level after.
///
/// # Safety
/// As [`sgemm_nt`].
#[inline(always)]
unsafe fn tiles<S: Lanes, const I: usize, const J: usize>(p: &Tiles<'_>) {
    let mut j = 0;
    while j < p.n {
        if p.n - j >= J {
            // SAFETY: forwarded; the tiles stay inside `m x n`.
            unsafe { row_tiles::<S, I, J>(p, j) };
            j += J;
        } else {
            // SAFETY: as above.
            unsafe { row_tiles::<S, I, 1>(p, j) };
            j += 1;
        }
    }
}

/// All rows of the output by columns `j..j + J`: tiles of `I` rows, then of 4, 2 and 1.
///
/// # Safety
/// As [`sgemm_nt`], and `j + J <= n`.
#[inline(always)]
unsafe fn row_tiles<S: Lanes, const I: usize, const J: usize>(p: &Tiles<'_>, j: usize) {
    let mut i = 0;
    // SAFETY (every call): forwarded; `i + rows <= m` for the tile's rows.
    while p.m - i >= I {
        unsafe { tile::<S, I, J>(p, i, j) };
        i += I;
    }
    if p.m - i >= 4 {
        unsafe { tile::<S, 4, J>(p, i, j) };
        i += 4;
    }
    if p.m - i >= 2 {
        unsafe { tile::<S, 2, J>(p, i, j) };
        i += 2;
    }
    if p.m - i >= 1 {
        unsafe { tile::<S, 1, J>(p, i, j) };
    }
}

/// Sixteen f32 lanes in registers: the operations [`tile`] needs, per CPU build.
trait Lanes: Copy {
    /// Lanes of zeros.
    fn zero() -> Self;
    /// The 16 elements at `p`.
    ///
    /// # Safety
    /// `p` points at 16 readable f32.
    unsafe fn load(p: *const f32) -> Self;
    /// `a * b + self`, lane by lane, each a fused multiply-add.
    fn fma(self, a: Self, b: Self) -> Self;
    /// The lanes added pairwise ([`pairwise_sum`]'s order).
    fn sum(self) -> f32;
}

/// The portable build: an array the compiler may vectorize.
#[derive(Clone, Copy)]
struct Portable([f32; LANES]);

impl Lanes for Portable {
    #[inline(always)]
    fn zero() -> Self {
        Portable([0.0; LANES])
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller's promise.
        Portable(unsafe { std::ptr::read_unaligned(p as *const [f32; LANES]) })
    }
    #[inline(always)]
    fn fma(self, a: Self, b: Self) -> Self {
        Portable(array::from_fn(|x| a.0[x].mul_add(b.0[x], self.0[x])))
    }
    #[inline(always)]
    fn sum(self) -> f32 {
        pairwise_sum(self.0)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::Lanes;

    /// One AVX-512 register. Its methods run only inside `tiles_avx512`'s build, on a CPU with
    /// AVX-512F.
    #[derive(Clone, Copy)]
    pub(super) struct Avx512(__m512);

    impl Lanes for Avx512 {
        #[inline(always)]
        fn zero() -> Self {
            // SAFETY: only called where AVX-512F was detected (`sgemm_nt`).
            Avx512(unsafe { _mm512_setzero_ps() })
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            // SAFETY: the caller's promise; AVX-512F as above.
            Avx512(unsafe { _mm512_loadu_ps(p) })
        }
        #[inline(always)]
        fn fma(self, a: Self, b: Self) -> Self {
            // SAFETY: AVX-512F as above.
            Avx512(unsafe { _mm512_fmadd_ps(a.0, b.0, self.0) })
        }
        #[inline(always)]
        fn sum(self) -> f32 {
            // SAFETY: AVX-512F as above.
            unsafe {
                let lo = _mm512_castps512_ps256(self.0);
                let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(self.0), 1));
                sum8(_mm256_add_ps(lo, hi))
            }
        }
    }

    /// `v[x] + v[x + 4]`, then `+ 2`, then `+ 1`: the last three levels of [`super::pairwise_sum`].
    #[inline(always)]
    unsafe fn sum8(v: __m256) -> f32 {
        // SAFETY: the callers run on CPUs with AVX.
        unsafe {
            let q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
            let d = _mm_add_ps(q, _mm_movehl_ps(q, q));
            _mm_cvtss_f32(_mm_add_ss(d, _mm_shuffle_ps(d, d, 1)))
        }
    }

    /// Two AVX2 registers (lanes 0..8 and 8..16). Its methods run only inside `tiles_avx2`'s
    /// build, on a CPU with AVX2 and FMA.
    #[derive(Clone, Copy)]
    pub(super) struct Avx2(__m256, __m256);

    impl Lanes for Avx2 {
        #[inline(always)]
        fn zero() -> Self {
            // SAFETY: only called where AVX2 and FMA were detected (`sgemm_nt`).
            unsafe { Avx2(_mm256_setzero_ps(), _mm256_setzero_ps()) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            // SAFETY: the caller's promise; AVX2 as above.
            unsafe { Avx2(_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8))) }
        }
        #[inline(always)]
        fn fma(self, a: Self, b: Self) -> Self {
            // SAFETY: FMA as above.
            unsafe {
                Avx2(
                    _mm256_fmadd_ps(a.0, b.0, self.0),
                    _mm256_fmadd_ps(a.1, b.1, self.1),
                )
            }
        }
        #[inline(always)]
        fn sum(self) -> f32 {
            // SAFETY: AVX as above.
            unsafe { sum8(_mm256_add_ps(self.0, self.1)) }
        }
    }
}

/// Rows `i0..i0 + I` by columns `j0..j0 + J` of the output, in lanes `S`.
///
/// # Safety
/// As [`sgemm_nt`], the tile lies inside `m x n`, and `S`'s instructions run on this CPU.
#[inline(always)]
unsafe fn tile<S: Lanes, const I: usize, const J: usize>(p: &Tiles<'_>, i0: usize, j0: usize) {
    let k = p.k;
    let ar: [&[f32]; I] = array::from_fn(|i| &p.a[(i0 + i) * p.lda..][..k]);
    let wr: [&[f32]; J] = array::from_fn(|j| &p.w[(j0 + j) * p.ldw..][..k]);
    let ap: [*const f32; I] = array::from_fn(|i| ar[i].as_ptr());
    let wp: [*const f32; J] = array::from_fn(|j| wr[j].as_ptr());
    let full = k / LANES * LANES;
    let mut acc = [[S::zero(); J]; I];
    let mut l = 0;
    while l < full {
        // SAFETY: `l + LANES <= full <= k`, inside every row.
        let wv: [S; J] = array::from_fn(|j| unsafe { S::load(wp[j].add(l)) });
        for i in 0..I {
            // SAFETY: as above.
            let av = unsafe { S::load(ap[i].add(l)) };
            for j in 0..J {
                acc[i][j] = acc[i][j].fma(av, wv[j]);
            }
        }
        l += LANES;
    }
    for i in 0..I {
        for j in 0..J {
            let mut s = acc[i][j].sum();
            for t in full..k {
                s = ar[i][t].mul_add(wr[j][t], s);
            }
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

/// `v`'s lanes added pairwise: `v[x] + v[x + 8]`, then `+ 4`, `+ 2`, `+ 1`.
#[inline(always)]
fn pairwise_sum(mut v: [f32; LANES]) -> f32 {
    let mut h = LANES / 2;
    while h > 0 {
        for x in 0..h {
            v[x] += v[x + h];
        }
        h /= 2;
    }
    v[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::matmul::tests::data;

    /// The contract's formula, one element at a time, in scalar arithmetic.
    fn formula(a: &[f32], w: &[f32], beta: f32, c: f32) -> f32 {
        let k = a.len();
        let full = k / LANES * LANES;
        let mut lanes = [0f32; LANES];
        for l in 0..full {
            lanes[l % LANES] = a[l].mul_add(w[l], lanes[l % LANES]);
        }
        for h in [8, 4, 2, 1] {
            for x in 0..h {
                lanes[x] += lanes[x + h];
            }
        }
        let mut s = lanes[0];
        for l in full..k {
            s = a[l].mul_add(w[l], s);
        }
        if beta == 0.0 {
            s
        } else {
            beta.mul_add(c, s)
        }
    }

    /// One product's operands at strides wider than their rows, and `c`'s old contents.
    struct Case {
        dims: [usize; 3],
        a: Vec<f32>,
        w: Vec<f32>,
        c: Vec<f32>,
        beta: f32,
    }

    impl Case {
        fn new([m, n, k]: [usize; 3], beta: f32, seed: u32) -> Case {
            let mut c = data(m * (n + 2), seed + 2);
            if beta == 0.0 {
                // ignored whatever it holds
                c.iter_mut().step_by(3).for_each(|x| *x = f32::NAN);
            }
            Case {
                dims: [m, n, k],
                a: data(m * (k + 3), seed),
                w: data(n * (k + 1), seed + 1),
                c,
                beta,
            }
        }

        fn strides(&self) -> (usize, usize, usize) {
            let [_, n, k] = self.dims;
            (k + 3, k + 1, n + 2)
        }

        /// The formula's output (the padding columns of `c` untouched).
        fn expected(&self) -> Vec<f32> {
            let [m, n, k] = self.dims;
            let (lda, ldw, ldc) = self.strides();
            let mut out = self.c.clone();
            for i in 0..m {
                for j in 0..n {
                    let (a, w) = (&self.a[i * lda..][..k], &self.w[j * ldw..][..k]);
                    out[i * ldc + j] = formula(a, w, self.beta, self.c[i * ldc + j]);
                }
            }
            out
        }

        /// `c` after `run` computed the product into it.
        fn run(&self, run: impl FnOnce(&Tiles<'_>)) -> Vec<f32> {
            let (lda, ldw, ldc) = self.strides();
            let [m, n, k] = self.dims;
            let mut c = self.c.clone();
            let p = Tiles {
                m,
                n,
                k,
                a: &self.a,
                lda,
                w: &self.w,
                ldw,
                beta: self.beta,
                c: Out(c.as_mut_ptr()),
                ldc,
            };
            run(&p);
            c
        }
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Shapes around the tiles' and lanes' edges: `k` below, at and past 16 and a real width,
    /// rows and columns that leave every kind of edge tile.
    fn cases() -> Vec<Case> {
        let mut v = Vec::new();
        let mut seed = 1;
        for k in [0, 1, 15, 16, 17, 33, 64, 901] {
            for (m, n) in [
                (1, 1),
                (2, 3),
                (3, 5),
                (5, 4),
                (8, 9),
                (13, 7),
                (MAX_ROWS, 17),
            ] {
                for beta in [0.0, 1.0, 0.3] {
                    v.push(Case::new([m, n, k], beta, seed));
                    seed += 3;
                }
            }
        }
        v
    }

    #[test]
    fn every_build_and_blocking_computes_the_formula_bit_for_bit() {
        for case in cases() {
            let want = bits(&case.expected());
            let dims = case.dims;
            // SAFETY (every call): `Case` sizes its buffers for its strides.
            let got = |name: &str, out: Vec<f32>| {
                assert_eq!(
                    bits(&out),
                    want,
                    "{name}, [m, n, k] = {dims:?}, beta {}",
                    case.beta
                )
            };
            got(
                "portable 4x4",
                case.run(|p| unsafe { tiles::<Portable, 4, 4>(p) }),
            );
            got(
                "portable 1x1",
                case.run(|p| unsafe { tiles::<Portable, 1, 1>(p) }),
            );
            got(
                "portable 3x2",
                case.run(|p| unsafe { tiles::<Portable, 3, 2>(p) }),
            );
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx512f") {
                    got("AVX-512", case.run(|p| unsafe { tiles_avx512(p) }));
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    got("AVX2", case.run(|p| unsafe { tiles_avx2(p) }));
                }
            }
            let (lda, ldw, ldc) = case.strides();
            let mut c = case.c.clone();
            // SAFETY: as above; `c` is this call's own.
            unsafe {
                sgemm_nt(
                    dims,
                    &case.a,
                    lda,
                    &case.w,
                    ldw,
                    case.beta,
                    Out(c.as_mut_ptr()),
                    ldc,
                )
            };
            got("sgemm_nt", c);
        }
    }

    /// Through [`crate::cpu::matmul::sgemm`] (which splits the columns among threads), the
    /// formula's bits with any thread count, on every backend, whenever [`applies`].
    #[test]
    fn the_product_through_sgemm_has_the_formulas_bits_with_any_thread_count() {
        if !has_fma() {
            return;
        }
        // wide enough to be split among threads
        let case = Case::new([8, 300, 200], 1.0, 7);
        let want = bits(&case.expected());
        let (lda, ldw, ldc) = case.strides();
        let [m, n, k] = case.dims;
        let (a, w) = (
            Operand::plain(&case.a, lda),
            Operand::transposed(&case.w, ldw),
        );
        assert!(applies(m, &a, &w));
        assert!(!applies(MAX_ROWS + 1, &a, &w));
        assert!(!applies(m, &Operand::transposed(&case.a, lda), &w));
        assert!(!applies(m, &a, &Operand::plain(&case.w, ldw)));
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut c = case.c.clone();
            pool.install(|| crate::cpu::matmul::sgemm([m, n, k], a, w, case.beta, &mut c, ldc));
            assert_eq!(bits(&c), want, "{threads} threads");
        }
    }
}
