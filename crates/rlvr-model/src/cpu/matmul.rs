//! The f32 matrix product of the CPU training and sampling paths, and the library behind it.
//!
//! [`matmul`] is `C = A B` for 2-D `A` `[m, k]` and `B` `[k, n]`, either of which may be a
//! transposed view (`w.t()`), with candle's backward `dA = dC B^T`, `dB = A^T dC`. [`sgemm`] is
//! the same product on plain row-major slices, `C = op(A) op(B) + beta C`.
//!
//! Which library computes it is chosen once per process, at run time ([`crate::cpu::blas`]):
//! * a CBLAS loaded with `dlopen` (by default the system OpenBLAS, `libopenblas.so.0`; or
//!   the library `RLVR_BLAS` names), one single-threaded call per thread of the rayon pool it
//!   is called from (`RAYON_NUM_THREADS` for the global one), each on its own rows or columns
//!   of the output.
//! * else, built in, the pure-Rust gemm crate, called as candle's CPU matmul calls it (its own
//!   rayon split; AVX2+FMA kernel on x86); or, with `RLVR_BLAS=matrixmultiply`, the pure-Rust
//!   matrixmultiply crate (AVX-512 kernel where the CPU has it), split among the rayon threads
//!   as the CBLAS is.
//!
//! Whatever the library, a product of at most 64 rows (`skinny::MAX_ROWS`) by a
//! transposed weight (`x W^T`: the sampling forward's) runs on rlvr's own kernel
//! (`cpu/skinny.rs`) on x86-64 CPUs with AVX-512 or AVX2 and FMA, its columns split among the
//! rayon threads: the libraries pack the whole weight for those few rows.
//!
//! Other devices (CUDA, Metal), other dtypes and batched (3-D and up) operands always go to
//! candle's matmul.
//!
//! # Contract
//! * The three backends agree within f32 rounding: the same product, summed in another order
//!   (tested against an f64 reference, every backend in one build).
//! * All are deterministic: the same operands and thread count give the same bits (tested).
//! * The built-in crates' results do not depend on the thread count (tested with 1, 2 and 3
//!   threads, parts split by rows and by columns). The gemm crate blocks the sum over `k` the
//!   same way for any count. matrixmultiply sums each element over `k` in one register, in
//!   fixed blocks of `k`, whichever rows and columns a call covers, so the parts' boundaries
//!   change no bit: a run on matrixmultiply gives the same bits with any `RAYON_NUM_THREADS`
//!   on the same CPU kernel. OpenBLAS's can depend on it: a part boundary moves edge tiles,
//!   which sum in another order. Measured with OpenBLAS 0.3.21 on Zen: splitting rows at
//!   multiples of 12 keeps every bit, splitting columns anywhere changes some elements in the
//!   last bits. AMD's AOCL-BLAS 5.3.0 (BLIS) likewise, measured on Zen 5: of five shapes split
//!   among 2 and 3 threads, one (129 x 257 x 1000, split by columns among 2) changed 1,705 of
//!   its elements in the last bits. Decode products of more rows than the skinny kernel takes (wider than tall)
//!   are split by columns, so such a run's bits depend on its thread count. The skinny
//!   kernel's do not: each element's sum depends only on its own row and column (tested).
//! * The two built-in crates give different bits from each other (another kernel, another
//!   blocking), and each crate's bits differ between its CPU kernels (AVX-512 against AVX2).

use candle_core::{CpuStorage, CustomOp2, DType, Layout, Shape, Tensor};

pub use super::operand::Operand;
pub mod bf16;

use crate::cpu::blas::{Backend, BuiltIn};
pub use bf16::{product_dtype, set_product_dtype, ProductDtype};

/// The library that computes [`matmul`] and [`sgemm`] in this process, chosen on first call
/// from `RLVR_BLAS` ([`crate::cpu::blas`]): unset, empty or `auto`, the measured choice
/// ([`measured_choice`] with the user's cache directory); else the library or crate it names.
pub fn backend() -> &'static Backend {
    static BACKEND: std::sync::OnceLock<Backend> = std::sync::OnceLock::new();
    BACKEND.get_or_init(|| {
        let env = std::env::var(crate::cpu::blas::BLAS_ENV).ok();
        if crate::cpu::blas::measured(env.as_deref()) {
            measured_choice(crate::cpu::blas_choice::default_cache_file().as_deref())
        } else {
            crate::cpu::blas::choose(env.as_deref())
        }
    })
}

/// The fastest library of this machine ([`crate::cpu::blas_choice`]), each candidate timed by
/// [`measure`], with `cache` (none: measured every time).
pub fn measured_choice(cache: Option<&std::path::Path>) -> Backend {
    crate::cpu::blas_choice::choose(cache, measure)
}

/// GFLOP/s of `backend` on [`crate::cpu::blas_choice::SHAPES`], on one thread (a pool of its
/// own, so the products run as they do on each of a run's threads): each product once to warm
/// up, then timed once.
pub fn measure(backend: &Backend) -> f64 {
    rate_of(|p, c, ldc| sgemm_on(backend, p, c, ldc))
}

/// GFLOP/s of the product routine `run` (called as `run(product, c, ldc)`) on
/// [`crate::cpu::blas_choice::SHAPES`], on one thread, as [`measure`] times a library.
pub(crate) fn rate_of(run: impl Fn(Product<'_>, &mut [f32], usize) + Sync) -> f64 {
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
        Ok(p) => p,
        Err(_) => return 0.0,
    };
    pool.install(|| {
        let mut flops = 0.0;
        let mut secs = 0.0;
        for ([m, n, k], trans_a, trans_b) in crate::cpu::blas_choice::SHAPES {
            let a = fill(m * k, 1);
            let b = fill(k * n, 2);
            let mut c = vec![0f32; m * n];
            let op_a = if trans_a {
                Operand::transposed(&a, m)
            } else {
                Operand::plain(&a, k)
            };
            let op_b = if trans_b {
                Operand::transposed(&b, k)
            } else {
                Operand::plain(&b, n)
            };
            let product = Product {
                dims: [m, n, k],
                a: op_a,
                b: op_b,
                beta: 0.0,
            };
            run(product, &mut c, n); // warm-up
            let t = std::time::Instant::now();
            run(product, &mut c, n);
            secs += t.elapsed().as_secs_f64();
            flops += 2.0 * (m * n * k) as f64;
        }
        flops / secs.max(1e-9) / 1e9
    })
}

/// `n` values in [-1, 1) from a fixed stream (the measured products' operands).
fn fill(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (s >> 8) as f32 / (1u32 << 23) as f32 - 1.0
        })
        .collect()
}

/// The library that computes [`matmul`] and [`sgemm`] in this process, in one line; with bf16
/// products ([`product_dtype`]), what computes those ([`bf16::Route::describe`])
/// and then the f32 library.
pub fn backend_description() -> String {
    match product_dtype() {
        ProductDtype::F32 => backend().describe(),
        ProductDtype::Bf16 => format!(
            "bf16 operands, f32 sums: {} (f32 products: {})",
            bf16::route().describe(),
            backend().describe()
        ),
    }
}

/// The library and kernel that compute [`matmul`] and [`sgemm`] in this process, without why
/// ([`Backend::identity`]; with bf16 products, what computes those first).
pub fn backend_identity() -> String {
    match product_dtype() {
        ProductDtype::F32 => backend().identity(),
        ProductDtype::Bf16 => format!(
            "bf16 operands, f32 sums: {} (f32 products: {})",
            bf16::route().identity(),
            backend().identity()
        ),
    }
}

/// The CPU worker threads products are split across (rayon's pool of this process).
pub fn worker_threads() -> usize {
    rayon::current_num_threads()
}

/// `a b` for 2-D `a` `[m, k]` and `b` `[k, n]` (see the module docs for which library runs
/// it); differentiable like candle's `matmul`.
pub fn matmul(a: &Tensor, b: &Tensor) -> candle_core::Result<Tensor> {
    if a.device().is_cpu()
        && a.dtype() == DType::F32
        && b.dtype() == DType::F32
        && a.rank() == 2
        && b.rank() == 2
    {
        a.apply_op2(b, CpuMatmul)
    } else {
        a.matmul(b)
    }
}

/// `c = op(a) op(b) + beta c` on row-major slices: `op(a)` is `[m, k]`, `op(b)` `[k, n]`
/// ([`Operand`]), and `c` `[m, n]` in rows of `ldc`. With `beta == 0` the old contents of `c`
/// are ignored (also NaNs).
///
/// Panics if a slice is too short for its shape and leading dimension, or a leading dimension
/// is smaller than its row.
pub fn sgemm(
    dims: [usize; 3],
    a: Operand<'_>,
    b: Operand<'_>,
    beta: f32,
    c: &mut [f32],
    ldc: usize,
) {
    let product = Product { dims, a, b, beta };
    match product_dtype() {
        ProductDtype::F32 => sgemm_on(backend(), product, c, ldc),
        ProductDtype::Bf16 => bf16::sgemm(bf16::route(), product, c, ldc),
    }
}

/// The inputs of one [`sgemm`]: `op(a) op(b) + beta c` with `dims = [m, n, k]`.
#[derive(Clone, Copy)]
pub(crate) struct Product<'a> {
    pub dims: [usize; 3],
    pub a: Operand<'a>,
    pub b: Operand<'a>,
    pub beta: f32,
}

/// Checks that every slice holds its operand (panics otherwise, as [`sgemm`] says) and settles
/// the products that need no multiplication: `true` when `m`, `n` or `k` is 0 (`c` then holds
/// the result: untouched, or scaled by `beta`).
pub(crate) fn settled(p: &Product<'_>, c: &mut [f32], ldc: usize) -> bool {
    let Product { dims, a, b, beta } = *p;
    let [m, n, k] = dims;
    let ((a_rows, a_cols), (b_rows, b_cols)) = (a.stored(m, k), b.stored(k, n));
    check_operand("a", a.data.len(), a_rows, a_cols, a.ld);
    check_operand("b", b.data.len(), b_rows, b_cols, b.ld);
    check_operand("c", c.len(), m, n, ldc);
    if m == 0 || n == 0 {
        return true;
    }
    if k == 0 {
        for row in c.chunks_mut(ldc).take(m) {
            for v in &mut row[..n] {
                *v = if beta == 0.0 { 0.0 } else { beta * *v };
            }
        }
        return true;
    }
    false
}

/// [`sgemm`] in f32 on a given backend.
pub(crate) fn sgemm_on(backend: &Backend, p: Product<'_>, c: &mut [f32], ldc: usize) {
    if settled(&p, c, ldc) {
        return;
    }
    let Product { a, b, .. } = p;
    let m = p.dims[0];
    if crate::cpu::skinny::applies(m, &a, &b) {
        return skinny_product(p, c, ldc);
    }
    match backend {
        Backend::Blas(blas) => blas_backend::sgemm(blas.sgemm, p, c, ldc),
        Backend::BuiltIn {
            kind: BuiltIn::MatrixMultiply,
            ..
        } => matrixmultiply_backend::sgemm(p, c, ldc),
        Backend::BuiltIn {
            kind: BuiltIn::Gemm,
            ..
        } => gemm_backend::sgemm(p, c, ldc),
    }
}

/// A product of a few rows by a transposed weight ([`crate::cpu::skinny`]), its columns split
/// among the calling rayon pool's threads ([`split::for_each_part`]).
fn skinny_product(p: Product<'_>, c: &mut [f32], ldc: usize) {
    let out = split::Out(c.as_mut_ptr());
    split::for_each_part((&p).into(), ldc, (1, 4), |part: split::Part| {
        // SAFETY: `sgemm_on` checked that every slice holds its operand at its leading
        // dimension, so the part's offsets and extents stay inside them; parts write disjoint
        // rows (or columns) of `c`, which is borrowed mutably, so it aliases neither input.
        unsafe {
            crate::cpu::skinny::sgemm_nt(
                part.dims,
                &p.a.data[part.a_off..],
                p.a.ld,
                &p.b.data[part.b_off..],
                p.b.ld,
                p.beta,
                crate::cpu::skinny::Out(out.at(part.c_off)),
                ldc,
            )
        }
    });
}

/// Panics unless `len` elements hold `rows` rows of `cols` at a stride of `ld`.
fn check_operand(name: &str, len: usize, rows: usize, cols: usize, ld: usize) {
    assert!(
        ld >= cols.max(1),
        "sgemm: {name}'s leading dimension {ld} < {cols} columns"
    );
    assert!(
        rows == 0 || cols == 0 || len >= (rows - 1) * ld + cols,
        "sgemm: {name} holds {len} elements, < {rows} rows of {cols} at a stride of {ld}"
    );
}

/// How a 2-D strided view, whose elements start at `data`, reads as a row-major BLAS operand,
/// or `None` when neither dimension is contiguous (the caller copies it first).
fn blas_view<'a>(data: &'a [f32], layout: &Layout) -> Option<Operand<'a>> {
    let (dims, strides) = (layout.dims(), layout.stride());
    let ((rows, cols), (s0, s1)) = ((dims[0], dims[1]), (strides[0], strides[1]));
    if s1 == 1 || cols <= 1 {
        let ld = if rows <= 1 { cols.max(1) } else { s0 };
        (ld >= cols.max(1)).then_some(Operand::plain(data, ld))
    } else if s0 == 1 || rows <= 1 {
        let ld = if cols <= 1 { rows.max(1) } else { s1 };
        (ld >= rows.max(1)).then_some(Operand::transposed(data, ld))
    } else {
        None
    }
}

/// [`matmul`] as a candle op on the CPU, so autograd records it with candle's matmul backward.
struct CpuMatmul;

impl CustomOp2 for CpuMatmul {
    fn name(&self) -> &'static str {
        "rlvr-cpu-matmul"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (CpuStorage::F32(a), CpuStorage::F32(b)) = (s1, s2) else {
            candle_core::bail!("rlvr-cpu-matmul: f32 operands only");
        };
        let ((m, k), (k2, n)) = (l1.shape().dims2()?, l2.shape().dims2()?);
        if k != k2 {
            candle_core::bail!(
                "rlvr-cpu-matmul: [{m}, {k}] x [{k2}, {n}]: inner dimensions differ"
            );
        }
        let (a_copy, b_copy);
        let a = match blas_view(&a[l1.start_offset()..], l1) {
            Some(op) => op,
            None => {
                a_copy = strided_copy(a, l1);
                Operand::plain(&a_copy, k.max(1))
            }
        };
        let b = match blas_view(&b[l2.start_offset()..], l2) {
            Some(op) => op,
            None => {
                b_copy = strided_copy(b, l2);
                Operand::plain(&b_copy, n.max(1))
            }
        };
        let mut c = vec![0f32; m * n];
        sgemm([m, n, k], a, b, 0.0, &mut c, n.max(1));
        Ok((CpuStorage::F32(c), Shape::from((m, n))))
    }

    fn bwd(
        &self,
        a: &Tensor,
        b: &Tensor,
        _res: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let da = matmul(grad, &b.t()?)?;
        let db = matmul(&a.t()?, grad)?;
        Ok((Some(da), Some(db)))
    }
}

/// The elements of a strided 2-D view, row-major and contiguous.
fn strided_copy(data: &[f32], layout: &Layout) -> Vec<f32> {
    let (dims, strides) = (layout.dims(), layout.stride());
    let mut out = Vec::with_capacity(dims[0] * dims[1]);
    for i in 0..dims[0] {
        let row = layout.start_offset() + i * strides[0];
        out.extend((0..dims[1]).map(|j| data[row + j * strides[1]]));
    }
    out
}

/// Splitting one product into single-threaded calls, one per thread of the calling rayon pool,
/// each on its own rows or columns of the output (the CBLAS and matrixmultiply backends).
pub(crate) mod split {
    use rayon::prelude::*;

    use super::Product;

    /// Products of fewer multiply-adds run as one call on the calling thread.
    const PARALLEL_MIN: usize = 1 << 18;

    /// The output's pointer, shared by the parts, each of which writes its own rows or columns.
    #[derive(Clone, Copy)]
    pub(crate) struct Out(pub *mut f32);
    // SAFETY: the parts write disjoint elements through it (see `for_each_part`).
    unsafe impl Send for Out {}
    unsafe impl Sync for Out {}

    impl Out {
        /// The pointer `off` elements in (a method, so closures capture the whole `Out`).
        ///
        /// # Safety
        /// `off` stays inside the output.
        pub(crate) unsafe fn at(self, off: usize) -> *mut f32 {
            self.0.add(off)
        }
    }

    /// One part of a product: `op(a) op(b)` of `dims = [m, n, k]` whose first elements sit
    /// `a_off`, `b_off` and `c_off` elements into the operands' slices.
    #[derive(Clone, Copy)]
    pub(crate) struct Part {
        pub dims: [usize; 3],
        pub a_off: usize,
        pub b_off: usize,
        pub c_off: usize,
    }

    /// The shape of one product as its parts need it: `dims = [m, n, k]` and, for `a` and `b`,
    /// whether it is stored transposed and its leading dimension.
    #[derive(Clone, Copy)]
    pub(crate) struct Shape {
        pub dims: [usize; 3],
        pub a: (bool, usize),
        pub b: (bool, usize),
    }

    impl From<&Product<'_>> for Shape {
        fn from(p: &Product<'_>) -> Self {
            Shape {
                dims: p.dims,
                a: (p.a.trans, p.a.ld),
                b: (p.b.trans, p.b.ld),
            }
        }
    }

    /// Runs `call` on each part of `p`'s product: one part per thread of the calling rayon pool
    /// (`RAYON_NUM_THREADS` for the global one) along the output's longer dimension, parts
    /// starting at multiples of `row_align` rows or `col_align` columns; small products are
    /// one part, run on the calling thread. Parts write disjoint rows (or columns) of the
    /// output `out`, which holds `p`'s `c` in rows of `ldc`.
    pub(crate) fn for_each_part(
        p: Shape,
        ldc: usize,
        (row_align, col_align): (usize, usize),
        call: impl Fn(Part) + Sync,
    ) {
        let Shape {
            dims: [m, n, k],
            a: (trans_a, lda),
            b: (trans_b, ldb),
        } = p;
        let parts = if m * n * k < PARALLEL_MIN {
            1
        } else {
            rayon::current_num_threads()
        };
        let split_rows = m >= n;
        let (len, align) = if split_rows {
            (m, row_align)
        } else {
            (n, col_align)
        };
        let part = len.div_ceil(parts).div_ceil(align) * align;
        // the part of rows (or columns) `lo..lo + part` of the output
        let run = |lo: usize| {
            let hi = (lo + part).min(len);
            let dims = if split_rows {
                [hi - lo, n, k]
            } else {
                [m, hi - lo, k]
            };
            // where it starts in each operand: row `lo` of op(a) and c, or column `lo` of
            // op(b) and c
            let (a_off, b_off, c_off) = match (split_rows, trans_a, trans_b) {
                (true, false, _) => (lo * lda, 0, lo * ldc),
                (true, true, _) => (lo, 0, lo * ldc),
                (false, _, false) => (0, lo, lo),
                (false, _, true) => (0, lo * ldb, lo),
            };
            call(Part {
                dims,
                a_off,
                b_off,
                c_off,
            })
        };
        if part >= len {
            run(0);
        } else {
            (0..len)
                .step_by(part)
                .collect::<Vec<_>>()
                .into_par_iter()
                .for_each(run);
        }
    }
}

/// A CBLAS loaded at run time (`cpu/blas.rs`).
mod blas_backend {
    use std::ffi::c_int;

    use super::split::{for_each_part, Out, Part};
    use super::Product;
    use crate::cpu::blas::SgemmFn;

    /// CBLAS's `CblasRowMajor`, `CblasNoTrans` and `CblasTrans`.
    const ROW_MAJOR: c_int = 101;
    const NO_TRANS: c_int = 111;
    const TRANS: c_int = 112;

    /// Row parts start at multiples of this (a multiple of OpenBLAS's sgemm tiles: on Zen a
    /// row split there leaves every element's bits as in one undivided call).
    const ROW_ALIGN: usize = 48;
    /// Column parts start at multiples of this (whole micro-kernel tiles).
    const COL_ALIGN: usize = 16;

    fn dim(x: usize, what: &str) -> c_int {
        c_int::try_from(x).unwrap_or_else(|_| panic!("sgemm: {what} = {x} exceeds BLAS's int"))
    }

    /// OpenBLAS runs one thread per call (set when it is loaded); a product is split into one
    /// part per thread of the calling rayon pool along its longer output dimension
    /// ([`for_each_part`]), each part one OpenBLAS call. Against OpenBLAS's own threads this
    /// measured 8% faster on bench-small's GRPO step and 20% on its 64-row decode products on
    /// a 2-core AMD EPYC (Zen kernel): no worker threads spinning beside rayon's, and a decode
    /// product split by columns, which OpenBLAS splits by its 64 rows. On a 2-core AVX-512
    /// Xeon, OpenBLAS's own threads win on a lone 64-row product
    /// (`bench/probe_openblas_split.c`) but not in bench-small's decode loop (BENCHMARKS.md,
    /// Intel VM).
    pub(super) fn sgemm(cblas_sgemm: SgemmFn, p: Product<'_>, c: &mut [f32], ldc: usize) {
        let Product { a, b, beta, .. } = p;
        let out = Out(c.as_mut_ptr());
        let op = |t: bool| if t { TRANS } else { NO_TRANS };
        for_each_part((&p).into(), ldc, (ROW_ALIGN, COL_ALIGN), |part: Part| {
            let [pm, pn, k] = part.dims;
            // SAFETY: `super::sgemm` checked that every slice holds its operand at its
            // leading dimension, so the part's offsets and extents stay inside them; parts
            // write disjoint rows (or columns) of `c`, which is borrowed mutably, so it
            // aliases neither input; `cblas_sgemm` has CBLAS's C signature (`cpu/blas.rs`).
            unsafe {
                cblas_sgemm(
                    ROW_MAJOR,
                    op(a.trans),
                    op(b.trans),
                    dim(pm, "m"),
                    dim(pn, "n"),
                    dim(k, "k"),
                    1.0,
                    a.data.as_ptr().add(part.a_off),
                    dim(a.ld, "lda"),
                    b.data.as_ptr().add(part.b_off),
                    dim(b.ld, "ldb"),
                    beta,
                    out.at(part.c_off),
                    dim(ldc, "ldc"),
                )
            }
        });
    }
}

/// The pure-Rust matrixmultiply crate (`cpu/blas.rs`): its `sgemm` takes any row and column
/// strides, so transposed operands are read in place, and it runs single-threaded (its
/// `threading` feature is off), one call per part of [`split::for_each_part`].
///
/// Each output element is one FMA chain over `k` in a register of the micro-kernel, in blocks
/// of `k` (256) that do not depend on `m` or `n`, and an edge tile's result is copied out with
/// the same roundings as a full tile's when `alpha == 1`; so where a part boundary falls
/// changes no bit, and the result does not depend on the thread count (tested).
mod matrixmultiply_backend {
    use super::split::{for_each_part, Out, Part};
    use super::Product;

    /// Row parts start at multiples of this (the crate's row block, `S_MC`: whole 16-row
    /// AVX-512 and 8-row AVX2 tiles).
    const ROW_ALIGN: usize = 64;
    /// Column parts start at multiples of this (whole 16- and 8-column tiles).
    const COL_ALIGN: usize = 16;

    pub(super) fn sgemm(p: Product<'_>, c: &mut [f32], ldc: usize) {
        let Product { a, b, beta, .. } = p;
        let out = Out(c.as_mut_ptr());
        let ((a_rs, a_cs), (b_rs, b_cs)) = (a.strides(), b.strides());
        for_each_part((&p).into(), ldc, (ROW_ALIGN, COL_ALIGN), |part: Part| {
            let [pm, pn, k] = part.dims;
            // SAFETY: `super::sgemm` checked that every slice holds its operand at its
            // leading dimension, so the part's offsets and extents stay inside them; parts
            // write disjoint rows (or columns) of `c`, which is borrowed mutably, so it
            // aliases neither input. With `beta == 0` the crate does not read `c`.
            unsafe {
                matrixmultiply::sgemm(
                    pm,
                    k,
                    pn,
                    1.0,
                    a.data.as_ptr().add(part.a_off),
                    a_rs,
                    a_cs,
                    b.data.as_ptr().add(part.b_off),
                    b_rs,
                    b_cs,
                    beta,
                    out.at(part.c_off),
                    ldc as isize,
                    1,
                )
            }
        });
    }
}

/// The pure-Rust gemm crate, as candle's CPU matmul calls it.
mod gemm_backend {
    use super::Product;

    pub(super) fn sgemm(p: Product<'_>, c: &mut [f32], ldc: usize) {
        let Product { dims, a, b, beta } = p;
        let [m, n, k] = dims;
        let threads = rayon::current_num_threads();
        let par = if threads > 1 {
            gemm::Parallelism::Rayon(threads)
        } else {
            gemm::Parallelism::None
        };
        let ((a_rs, a_cs), (b_rs, b_cs)) = (a.strides(), b.strides());
        // SAFETY: `super::sgemm` checked that every slice holds its operand at its leading
        // dimension, and `c` is borrowed mutably, so it aliases neither input.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c.as_mut_ptr(),
                1,
                ldc as isize,
                beta != 0.0,
                a.data.as_ptr(),
                a_cs,
                a_rs,
                b.data.as_ptr(),
                b_cs,
                b_rs,
                beta,
                1.0,
                false,
                false,
                false,
                par,
            );
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use candle_core::{Device, Var};

    /// `n` values in [-1, 1) from a fixed linear congruential stream.
    pub(crate) fn data(n: usize, seed: u32) -> Vec<f32> {
        super::fill(n, seed)
    }

    /// Both built-in crates and, where one loads, the system BLAS: the sgemm tests run on each.
    fn backends() -> Vec<Backend> {
        let mut v = vec![
            Backend::built_in(BuiltIn::MatrixMultiply, "tested"),
            Backend::built_in(BuiltIn::Gemm, "tested"),
        ];
        if let b @ Backend::Blas(_) = crate::cpu::blas::choose(Some("libopenblas.so.0")) {
            v.push(b);
        }
        // another library named to the tests (`.ci/run` names AMD's AOCL-BLAS)
        if let Ok(name) = std::env::var(TEST_BLAS_ENV) {
            match crate::cpu::blas::choose(Some(&name)) {
                b @ Backend::Blas(_) => v.push(b),
                other => panic!("{TEST_BLAS_ENV}={name} did not load: {}", other.describe()),
            }
        }
        v
    }

    /// Names one more CBLAS library for the backend tests to cover (a path or a name).
    const TEST_BLAS_ENV: &str = "RLVR_TEST_BLAS";

    /// The real measurement gives every library it can time a finite, positive rate.
    #[test]
    fn every_library_measures() {
        for b in backends() {
            let g = measure(&b);
            assert!(g.is_finite() && g > 0.1, "{}: {g}", b.describe());
        }
    }

    fn product<'a>(dims: [usize; 3], a: Operand<'a>, b: Operand<'a>, beta: f32) -> Product<'a> {
        Product { dims, a, b, beta }
    }

    /// Element `(i, l)` of `op(x)` stored row-major with leading dimension `ld`.
    fn at(x: &[f32], trans: bool, ld: usize, i: usize, l: usize) -> f64 {
        f64::from(if trans { x[l * ld + i] } else { x[i * ld + l] })
    }

    #[test]
    fn sgemm_matches_an_f64_reference_for_every_transpose_stride_and_beta() {
        // the last two are split among threads (CBLAS and matrixmultiply backends): by rows,
        // then by columns, each with a short last part
        for (backend, (m, n, k)) in backends().iter().flat_map(|b| {
            [
                (1, 1, 1),
                (3, 5, 7),
                (7, 13, 5),
                (37, 29, 65),
                (65, 129, 33),
                (130, 70, 260),
                (70, 130, 260),
            ]
            .map(|s| (b, s))
        }) {
            for (trans_a, trans_b) in [(false, false), (false, true), (true, false), (true, true)] {
                for beta in [0.0f32, 1.0, 0.5] {
                    let lda = if trans_a { m } else { k } + 3;
                    let ldb = if trans_b { k } else { n } + 2;
                    let ldc = n + 1;
                    let a = data(if trans_a { k } else { m } * lda, 1);
                    let b = data(if trans_b { n } else { k } * ldb, 2);
                    let mut c = data(m * ldc, 3);
                    if beta == 0.0 {
                        c[0] = f32::NAN; // ignored with beta = 0
                    }
                    let c0 = c.clone();
                    let op_a = Operand {
                        data: &a,
                        ld: lda,
                        trans: trans_a,
                    };
                    let op_b = Operand {
                        data: &b,
                        ld: ldb,
                        trans: trans_b,
                    };
                    sgemm_on(backend, product([m, n, k], op_a, op_b, beta), &mut c, ldc);
                    let what = format!(
                        "{}: {m}x{n}x{k} ta={trans_a} tb={trans_b} beta={beta}",
                        backend.describe()
                    );
                    for i in 0..m {
                        for j in 0..n {
                            let (mut sum, mut mag) = (0.0, 0.0);
                            for l in 0..k {
                                let p = at(&a, trans_a, lda, i, l) * at(&b, trans_b, ldb, l, j);
                                sum += p;
                                mag += p.abs();
                            }
                            let old = if beta == 0.0 {
                                0.0
                            } else {
                                f64::from(c0[i * ldc + j])
                            };
                            let want = f64::from(beta) * old + sum;
                            let got = f64::from(c[i * ldc + j]);
                            assert!(
                                (got - want).abs() <= 1e-6 * (mag + 1.0),
                                "{what}: c[{i},{j}] = {got}, want {want}"
                            );
                        }
                        // the padding column of each row of c is left alone
                        assert_eq!(
                            c[i * ldc + n].to_bits(),
                            c0[i * ldc + n].to_bits(),
                            "{what}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn sgemm_with_empty_inner_dimension_scales_c_by_beta() {
        let (a, b) = (Vec::new(), Vec::new());
        for backend in backends() {
            let mut c = vec![2.0f32, f32::NAN, 4.0, 8.0];
            let (op_a, op_b) = (Operand::plain(&a, 1), Operand::plain(&b, 2));
            sgemm_on(&backend, product([2, 2, 0], op_a, op_b, 0.0), &mut c, 2);
            assert_eq!(c, [0.0; 4]);
            let mut c = vec![2.0f32, 6.0, 4.0, 8.0];
            sgemm_on(&backend, product([2, 2, 0], op_a, op_b, 0.5), &mut c, 2);
            assert_eq!(c, [1.0, 3.0, 2.0, 4.0]);
        }
    }

    /// A short operand and a leading dimension below its row panic with a message naming them.
    #[test]
    fn sgemm_refuses_a_short_operand_or_a_leading_dimension_below_the_row() {
        for (b_len, ldc, want) in [
            (
                11,
                3,
                "sgemm: b holds 11 elements, < 4 rows of 3 at a stride of 3",
            ),
            (12, 2, "sgemm: c's leading dimension 2 < 3 columns"),
        ] {
            let err = std::panic::catch_unwind(|| {
                let (a, b) = (vec![0.0; 8], vec![0.0; b_len]);
                let mut c = vec![0.0; 6];
                let (a, b) = (Operand::plain(&a, 4), Operand::plain(&b, 3));
                sgemm([2, 3, 4], a, b, 0.0, &mut c, ldc);
            })
            .expect_err(want);
            let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
            assert_eq!(msg, want);
        }
    }

    /// The same operands and thread count give the same bits on each backend; with the
    /// built-in crates, also across thread counts, whether the parts split the output's rows or
    /// its columns (module docs). `k` spans up to four of matrixmultiply's blocks of 256; odd
    /// sizes leave edge tiles.
    #[test]
    fn sgemm_is_deterministic() {
        for (backend, (m, n, k)) in backends().iter().flat_map(|b| {
            [
                (200, 300, 300),
                (300, 200, 300),
                (257, 129, 513),
                (129, 257, 1000),
                (61, 700, 70),
            ]
            .map(|s| (b, s))
        }) {
            let (a, b) = (data(m * k, 4), data(n * k, 5));
            let run = |threads: usize| {
                let mut c = vec![0.0f32; m * n];
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| {
                        let (op_a, op_b) = (Operand::plain(&a, k), Operand::transposed(&b, k));
                        sgemm_on(backend, product([m, n, k], op_a, op_b, 0.0), &mut c, n)
                    });
                c.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            };
            let what = format!("{}: {m}x{n}x{k}", backend.describe());
            for threads in [1, 2, 3] {
                assert_eq!(run(threads), run(threads), "{what}, {threads} threads");
            }
            if !backend.is_blas() {
                assert_eq!(run(1), run(2), "{what}");
                assert_eq!(run(1), run(3), "{what}");
            }
        }
    }

    fn close(got: &Tensor, want: &Tensor, what: &str) {
        let (g, w) = (
            got.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            want.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
        );
        assert_eq!(got.dims(), want.dims(), "{what}");
        for (i, (g, w)) in g.iter().zip(&w).enumerate() {
            assert!(
                (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
                "{what}[{i}]: {g} vs {w}"
            );
        }
    }

    /// Contiguous, transposed, offset and fully strided (copied) views all give candle's
    /// product.
    #[test]
    fn matmul_of_any_2d_view_equals_candles_matmul() {
        let dev = Device::Cpu;
        let x = Tensor::from_vec(data(6 * 7 * 5, 6), (6, 7, 5), &dev).unwrap();
        let y = Tensor::from_vec(data(9 * 7, 7), (9, 7), &dev).unwrap();
        let lhs = [
            (
                "contiguous",
                x.reshape((42, 5)).unwrap().narrow(0, 0, 9).unwrap(),
            ),
            (
                "offset rows",
                x.reshape((42, 5)).unwrap().narrow(0, 10, 9).unwrap(),
            ),
            (
                "column slice",
                x.reshape((42, 5))
                    .unwrap()
                    .narrow(1, 1, 3)
                    .unwrap()
                    .narrow(0, 0, 9)
                    .unwrap(),
            ),
            (
                "transposed",
                y.t().unwrap().narrow(1, 0, 5).unwrap().t().unwrap(),
            ),
            (
                "strided",
                x.narrow(2, 2, 1)
                    .unwrap()
                    .squeeze(2)
                    .unwrap()
                    .narrow(0, 0, 5)
                    .unwrap(),
            ),
        ];
        for (name, a) in &lhs {
            let inner = a.dim(1).unwrap();
            for (bname, b) in [
                ("b", y.narrow(0, 0, inner).unwrap()),
                (
                    "b^T",
                    y.t().unwrap().narrow(1, 0, inner).unwrap().t().unwrap(),
                ),
            ] {
                let want = a
                    .contiguous()
                    .unwrap()
                    .matmul(&b.contiguous().unwrap())
                    .unwrap();
                close(&matmul(a, &b).unwrap(), &want, &format!("{name} x {bname}"));
            }
        }
    }

    #[test]
    fn matmul_refuses_mismatched_inner_dimensions() {
        let dev = Device::Cpu;
        let a = Tensor::zeros((2, 3), DType::F32, &dev).unwrap();
        let b = Tensor::zeros((4, 5), DType::F32, &dev).unwrap();
        let err = matmul(&a, &b).unwrap_err().to_string();
        assert!(err.contains("[2, 3] x [4, 5]"), "{err}");
    }

    /// The op's backward: `dA = dC B^T`, `dB = A^T dC`, as candle's matmul, also through a
    /// transposed operand.
    #[test]
    fn matmul_backward_equals_candles() {
        let dev = Device::Cpu;
        let a = Var::from_vec(data(7 * 11, 8), (7, 11), &dev).unwrap();
        let w = Var::from_vec(data(5 * 11, 9), (5, 11), &dev).unwrap();
        let r = Tensor::from_vec(data(7 * 5, 10), (7, 5), &dev).unwrap();
        let grads = |prod: &Tensor| {
            let g = (prod * &r).unwrap().sum_all().unwrap().backward().unwrap();
            (
                g.get(a.as_tensor()).unwrap().clone(),
                g.get(w.as_tensor()).unwrap().clone(),
            )
        };
        let (da, dw) = grads(&matmul(a.as_tensor(), &w.as_tensor().t().unwrap()).unwrap());
        let (da_ref, dw_ref) = grads(&a.as_tensor().matmul(&w.as_tensor().t().unwrap()).unwrap());
        close(&da, &da_ref, "dA");
        close(&dw, &dw_ref, "dW");
    }
}
