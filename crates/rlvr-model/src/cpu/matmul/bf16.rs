//! CPU matrix products with bf16 operands and f32 accumulation: what torch's CPU autocast
//! (`torch.autocast("cpu", dtype=torch.bfloat16)`, TRL's `bf16=True` on a CPU) does to every
//! `nn.Linear` and `matmul`, for CPUs whose bf16 products run faster than their f32 ones (Intel
//! Xeon with AMX-BF16; AVX512-BF16).
//!
//! With the process's product dtype ([`ProductDtype`]: a run's `model.matmul_dtype`) set to
//! `bf16`, every product of [`super::sgemm`] and [`super::matmul`] (the linear
//! layers, the vocabulary product and the training attention's products, forward and backward;
//! the sampler's projections) rounds both operands to bf16, to nearest with ties to even as
//! torch's `.to(torch.bfloat16)` does, and sums their products in f32:
//!
//! `C = bf16(A) bf16(B) + beta C`, each product of two bf16 values exact in f32, summed in f32.
//!
//! Its output stays f32, where autocast rounds a product's output to bf16 too (and runs the
//! next elementwise op in bf16): this is the more precise of the two. Everything that is not a
//! matrix product stays f32: the weights and the optimizer (no master copy), norms, RoPE,
//! softmax, SwiGLU, the log-probs and the loss, and the sampler's per-row attention dot
//! products (`cpu/decode.rs`).
//!
//! # Routes
//!
//! Which code computes a bf16 product is chosen once per process ([`route`]), from
//! [`BF16_ENV`]:
//!
//! | `RLVR_BLAS_BF16` | what runs the bf16 products |
//! |---|---|
//! | unset, empty or `auto` | the fastest of the libraries' bf16 GEMMs found and the rounded route, measured; the first library found unless another route measures more than 10% faster ([`crate::cpu::blas_choice::MARGIN`]); with no library, the rounded route |
//! | `rounded` | the rounded route |
//! | a path or library name | that library's bf16 GEMM (else the rounded route, with the reason) |
//!
//! * **A library's bf16 GEMM**, loaded at run time: MKL's `cblas_gemm_bf16bf16f32`,
//!   OpenBLAS's `cblas_sbgemm` (OpenBLAS built with `BUILD_BFLOAT16`; Debian's 0.3.21 is not)
//!   or AMD AOCL-BLAS's `aocl_gemm_bf16bf16f32of32` (its own calling convention; AVX512-BF16
//!   kernels for AMD Zen 4 and 5), looked for in the library of the f32 products, then where
//!   the f32 choice looks ([`crate::cpu::blas_choice`]: OpenBLAS on the loader's path, MKL's
//!   `libmkl_rt` on it and in `$CONDA_PREFIX/lib` and `$VIRTUAL_ENV/lib`, where pip's `mkl`
//!   package puts it; BLIS's `libblis-mt.so` on it, in `$AOCL_ROOT/lib`, `$CONDA_PREFIX/lib`,
//!   `$VIRTUAL_ENV/lib` and in pip's `aoclda` package). Each operand is converted to a
//!   contiguous bf16 copy, then the product is split among the calling rayon pool's threads as
//!   the f32 CBLAS's is, one single-threaded call each.
//! * **The rounded route**: the operands rounded to bf16 and held in f32, multiplied by the
//!   run's f32 product ([`super::backend`]). The same terms summed in f32, so the same
//!   numbers up to summation order, at the f32 product's speed plus one pass over each
//!   operand: the way bf16 runs where no bf16 GEMM is installed.
//!
//! Where a library is found, every library's route and the rounded route are timed on one
//! thread on [`crate::cpu::blas_choice::SHAPES`] (best of three rounds, a fraction of a second
//! each, at the first bf16 product) and the line the run prints ([`Route::describe`]) gives
//! every rate. A library's bf16 GEMM on a CPU
//! without bf16 instructions converts back to f32 inside, and can be slower than the rounded
//! route: the measurement finds that.
//!
//! # Contract
//! * Both routes equal the f64 product of the rounded operands within f32 summation error
//!   (tested); NaN and infinities propagate (a NaN operand rounds to a NaN).
//! * Deterministic: the same operands and thread count give the same bits.
//! * Loading never panics: a library that does not load, or lacks both symbols, leaves the
//!   rounded route, with the reason in the line.

use std::ffi::{c_char, c_int, c_void};
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};

use half::bf16;
use serde::{Deserialize, Serialize};

use super::split::{for_each_part, Out, Part, Shape};
use super::{settled, sgemm_on, Operand, Product};
use scratch::{Pool, Pooled};

/// The environment variable that picks the bf16 GEMM (module docs).
pub const BF16_ENV: &str = "RLVR_BLAS_BF16";

/// The bf16 GEMM symbols looked for, in order: MKL's, OpenBLAS's, then AMD AOCL-BLAS's.
pub const BF16_SYMBOLS: [&str; 3] = [
    "cblas_gemm_bf16bf16f32",
    "cblas_sbgemm",
    "aocl_gemm_bf16bf16f32of32",
];

/// The dtype of the CPU matrix products' operands (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProductDtype {
    /// f32 operands (the default): the products are exact f32 products summed in f32.
    #[default]
    #[serde(alias = "float32")]
    F32,
    /// Operands rounded to bf16, products summed in f32 (torch's CPU autocast).
    #[serde(alias = "bfloat16")]
    Bf16,
}

impl ProductDtype {
    /// The names accepted, in the form configs write.
    pub const NAMES: [&'static str; 2] = ["f32", "bf16"];

    /// `f32` or `bf16`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::Bf16 => "bf16",
        }
    }
}

impl std::fmt::Display for ProductDtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProductDtype {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" | "float32" => Ok(Self::F32),
            "bf16" | "bfloat16" => Ok(Self::Bf16),
            other => Err(format!(
                "unknown matrix product dtype '{other}' (expected one of: {})",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// The process's product dtype: 0 f32, 1 bf16.
static PRODUCT_DTYPE: AtomicU8 = AtomicU8::new(0);

/// Sets the dtype of every later CPU matrix product of this process (a run sets it once, from
/// its config, before its first product).
pub fn set_product_dtype(dtype: ProductDtype) {
    PRODUCT_DTYPE.store(dtype as u8, Ordering::Relaxed);
}

/// The dtype the CPU matrix products run in ([`set_product_dtype`]; f32 unless set).
pub fn product_dtype() -> ProductDtype {
    match PRODUCT_DTYPE.load(Ordering::Relaxed) {
        0 => ProductDtype::F32,
        _ => ProductDtype::Bf16,
    }
}

/// A bf16 GEMM with CBLAS's signature (`cblas_gemm_bf16bf16f32`, `cblas_sbgemm`): row-major
/// layout `101`, transpose flags `111`/`112`, bf16 operands as `u16` bits, f32 `C`.
type Bf16GemmFn = unsafe extern "C" fn(
    layout: c_int,
    trans_a: c_int,
    trans_b: c_int,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: f32,
    a: *const u16,
    lda: c_int,
    b: *const u16,
    ldb: c_int,
    beta: f32,
    c: *mut f32,
    ldc: c_int,
);

/// AMD AOCL-BLAS's bf16 GEMM, `aocl_gemm_bf16bf16f32of32` (its `aocl_gemm_interface_apis.h`):
/// order `'r'` (row-major), transposes `'n'`/`'t'`, 64-bit dimensions (`dim_t`), each
/// operand's memory format `'n'` (as stored, not reordered into AOCL's own layout), bf16
/// operands as `u16` bits, f32 `C`, and post-ops (none: null).
type AoclBf16GemmFn = unsafe extern "C" fn(
    order: c_char,
    trans_a: c_char,
    trans_b: c_char,
    m: i64,
    n: i64,
    k: i64,
    alpha: f32,
    a: *const u16,
    lda: i64,
    mem_format_a: c_char,
    b: *const u16,
    ldb: i64,
    mem_format_b: c_char,
    beta: f32,
    c: *mut f32,
    ldc: i64,
    post_ops: *const c_void,
);

/// A bf16 GEMM's entry point, by its calling convention.
#[derive(Clone, Copy)]
enum Entry {
    /// CBLAS's (MKL, OpenBLAS).
    Cblas(Bf16GemmFn),
    /// AOCL's.
    Aocl(AoclBf16GemmFn),
}

/// A library's bf16 GEMM, loaded.
pub struct Bf16Gemm {
    /// The name or path it was loaded by.
    pub library: String,
    /// The symbol found ([`BF16_SYMBOLS`]).
    pub symbol: &'static str,
    entry: Entry,
    /// Keeps the library mapped for as long as `entry` may be called (the whole process).
    _lib: libloading::Library,
}

/// Loads `name` and finds its bf16 GEMM; the error says what failed.
pub fn load(name: &str) -> Result<Bf16Gemm, String> {
    let lib = crate::cpu::library::open(name)?;
    for symbol in BF16_SYMBOLS {
        let c_name = format!("{symbol}\0");
        // SAFETY: each symbol is looked up with its library's C signature: MKL's and
        // OpenBLAS's are CBLAS's (`Bf16GemmFn`; `const MKL_BF16 *` and `const bfloat16 *` are
        // 16-bit values), AOCL's its own (`AoclBf16GemmFn`).
        let entry = if symbol.starts_with("aocl_") {
            unsafe { lib.get::<AoclBf16GemmFn>(c_name.as_bytes()) }
                .ok()
                .map(|f| Entry::Aocl(*f))
        } else {
            unsafe { lib.get::<Bf16GemmFn>(c_name.as_bytes()) }
                .ok()
                .map(|f| Entry::Cblas(*f))
        };
        if let Some(entry) = entry {
            crate::cpu::blas::set_one_thread(&lib);
            return Ok(Bf16Gemm {
                library: name.to_string(),
                symbol,
                entry,
                _lib: lib,
            });
        }
    }
    let (last, rest) = BF16_SYMBOLS.split_last().expect("symbols");
    Err(format!("{name} has no {} or {last}", rest.join(", ")))
}

/// What computes the bf16 products of this process (module docs).
pub enum Route {
    /// A library's bf16 GEMM, and why it runs.
    Library(Bf16Gemm, String),
    /// Operands rounded to bf16 in f32, multiplied by the f32 product; and why.
    Rounded(String),
}

impl Route {
    /// One line: what runs the bf16 products and why, e.g. `cblas_gemm_bf16bf16f32 of
    /// libmkl_rt.so.3: ...` or `operands rounded to bf16, multiplied in f32 by matrixmultiply
    /// 0.3.11 (...): no bf16 GEMM found (...)`.
    pub fn describe(&self) -> String {
        format!("{}: {}", self.identity(), self.why())
    }

    /// What computes the products, without why (what must match for two runs to compute
    /// alike).
    pub fn identity(&self) -> String {
        match self {
            Route::Library(g, _) => format!("{} of {}", g.symbol, g.library),
            Route::Rounded(_) => format!(
                "operands rounded to bf16, multiplied in f32 by {}",
                super::backend().identity()
            ),
        }
    }

    fn why(&self) -> &str {
        match self {
            Route::Library(_, why) | Route::Rounded(why) => why,
        }
    }
}

/// The route of this process's bf16 products, chosen on first call from [`BF16_ENV`] (module
/// docs).
pub fn route() -> &'static Route {
    static ROUTE: std::sync::OnceLock<Route> = std::sync::OnceLock::new();
    ROUTE.get_or_init(|| choose_route(std::env::var(BF16_ENV).ok().as_deref()))
}

/// The route for a value of [`BF16_ENV`] (module docs).
pub fn choose_route(env: Option<&str>) -> Route {
    let env = env.map(str::trim).filter(|v| !v.is_empty());
    match env {
        Some(v) if v.eq_ignore_ascii_case("rounded") => {
            return Route::Rounded(format!("{BF16_ENV}={v}"))
        }
        Some(v) if !v.eq_ignore_ascii_case("auto") => {
            return match load(v) {
                Ok(g) => Route::Library(g, format!("{BF16_ENV}={v}")),
                Err(e) => Route::Rounded(e),
            }
        }
        _ => {}
    }
    let (mut found, tried) = find();
    if found.is_empty() {
        return Route::Rounded(format!("no bf16 GEMM found ({})", tried.join("; ")));
    }
    // each route's best of three rounds, taken in turn (a first call's allocations and a
    // neighbour's load do not decide); the first library found is the incumbent, which
    // another route must beat by the f32 choice's margin
    let mut rates = vec![0f64; found.len() + 1];
    for _ in 0..3 {
        for (rate, gemm) in rates.iter_mut().zip(&found) {
            *rate = rate.max(rate_of_library(gemm));
        }
        let rounded = &mut rates[found.len()];
        *rounded = rounded.max(super::rate_of(rounded_product));
    }
    let measured: Vec<crate::cpu::blas_choice::Measured> = found
        .iter()
        .map(|g| format!("{} of {}", g.symbol, g.library))
        .chain(std::iter::once("rounded".to_string()))
        .zip(&rates)
        .map(|(label, &gflops)| crate::cpu::blas_choice::Measured { label, gflops })
        .collect();
    let line = crate::cpu::blas_choice::rates_line(&measured);
    let chosen = crate::cpu::blas_choice::pick(&measured, 0);
    let margin = (crate::cpu::blas_choice::MARGIN - 1.0) * 100.0;
    let why = if chosen == 0 {
        format!("chosen by measurement (GFLOP/s on one thread: {line})")
    } else {
        format!(
            "chosen by measurement, more than {margin:.0}% ahead of {} ({line})",
            measured[0].label
        )
    };
    if chosen < found.len() {
        Route::Library(found.swap_remove(chosen), why)
    } else {
        Route::Rounded(why)
    }
}

/// GFLOP/s of a library's bf16 GEMM on one thread, as [`super::measure`] times an f32
/// library (the operands' conversion counted).
pub fn rate_of_library(gemm: &Bf16Gemm) -> f64 {
    super::rate_of(|p, c, ldc| library_product(gemm, p, c, ldc))
}

/// Every library with a bf16 GEMM, each once, in the order searched: the f32 products'
/// library, then OpenBLAS's, MKL's and BLIS's names ([`crate::cpu::blas_choice`]); and what
/// was tried without one.
fn find() -> (Vec<Bf16Gemm>, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    if let crate::cpu::blas::Backend::Blas(b) = super::backend() {
        names.push(b.library.clone());
    }
    for (_, group) in crate::cpu::blas_choice::library_search() {
        names.extend(group);
    }
    let mut seen = std::collections::HashSet::new();
    let (mut found, mut tried): (Vec<Bf16Gemm>, Vec<String>) = (Vec::new(), Vec::new());
    for name in names {
        if !seen.insert(name.clone()) {
            continue;
        }
        match load(&name) {
            // one library by several names (a link and its target) is timed once
            Ok(g) if found.iter().any(|f| same_file(&f.library, &g.library)) => {}
            Ok(g) => found.push(g),
            // an absent library is named; one that loads but lacks the symbols says so
            Err(e) if e.contains("could not be loaded") => tried.push(format!("{name} not found")),
            Err(e) => tried.push(e),
        }
    }
    (found, tried)
}

/// Whether two library names are one file (both paths that resolve alike; bare names only
/// when equal).
fn same_file(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// `C = bf16(op(a)) bf16(op(b)) + beta C` on `route` (module docs): [`super::sgemm`]
/// when the product dtype is bf16.
pub(crate) fn sgemm(route: &Route, p: Product<'_>, c: &mut [f32], ldc: usize) {
    match route {
        Route::Library(g, _) => library_product(g, p, c, ldc),
        Route::Rounded(_) => rounded_product(p, c, ldc),
    }
}

/// `x` rounded to bf16 (to nearest, ties to even; NaN stays NaN), as bits: the one rounding of
/// every bf16 product (this module's and the decode kernel's, `cpu/skinny_bf16.rs`).
pub(crate) fn to_bf16_bits(x: f32) -> u16 {
    bf16::from_f32(x).to_bits()
}

/// `x` rounded to bf16 and held in f32 (exactly representable).
fn to_bf16_value(x: f32) -> f32 {
    bf16::from_f32(x).to_f32()
}

/// Kept buffers for the operands' copies ([`scratch`]): bf16 bits for the libraries, bf16
/// values in f32 for the rounded route.
static BITS: Pool<u16> = Pool::new();
static VALUES: Pool<f32> = Pool::new();

/// The operand `x`, stored `rows x cols` in rows of `x.ld`, converted element by element by
/// `f` into a contiguous copy (rows of `cols`) in a kept buffer of `pool`.
fn pack<T: Copy + Send + 'static>(
    pool: &'static Pool<T>,
    x: &Operand<'_>,
    (rows, cols): (usize, usize),
    f: impl Fn(f32) -> T + Sync,
) -> Pooled<T> {
    pool.take(rows * cols).fill(x, (rows, cols), f)
}

/// The rounded route: operands rounded to bf16 values in f32, multiplied by the run's f32
/// product.
fn rounded_product(p: Product<'_>, c: &mut [f32], ldc: usize) {
    if settled(&p, c, ldc) {
        return;
    }
    let [m, n, k] = p.dims;
    let (sa, sb) = (p.a.stored(m, k), p.b.stored(k, n));
    let a = pack(&VALUES, &p.a, sa, to_bf16_value);
    let b = pack(&VALUES, &p.b, sb, to_bf16_value);
    let product = Product {
        dims: p.dims,
        a: Operand {
            data: &a,
            ld: sa.1,
            trans: p.a.trans,
        },
        b: Operand {
            data: &b,
            ld: sb.1,
            trans: p.b.trans,
        },
        beta: p.beta,
    };
    sgemm_on(super::backend(), product, c, ldc);
}

/// CBLAS's `CblasRowMajor`, `CblasNoTrans` and `CblasTrans`.
const ROW_MAJOR: c_int = 101;
const NO_TRANS: c_int = 111;
const TRANS: c_int = 112;
/// Row and column parts start at multiples of these (whole tiles of the libraries' kernels).
const ROW_ALIGN: usize = 48;
const COL_ALIGN: usize = 16;

/// A dimension as AOCL's 64-bit `dim_t` (a slice's length always fits).
fn dim64(x: usize) -> i64 {
    x as i64
}

fn dim(x: usize, what: &str) -> c_int {
    c_int::try_from(x).unwrap_or_else(|_| panic!("bf16 gemm: {what} = {x} exceeds BLAS's int"))
}

/// A library's bf16 GEMM: operands converted to contiguous bf16 copies, the product split
/// among the calling rayon pool's threads ([`for_each_part`]), one call per part.
fn library_product(g: &Bf16Gemm, p: Product<'_>, c: &mut [f32], ldc: usize) {
    if settled(&p, c, ldc) {
        return;
    }
    let [m, n, k] = p.dims;
    let (sa, sb) = (p.a.stored(m, k), p.b.stored(k, n));
    let a = pack(&BITS, &p.a, sa, to_bf16_bits);
    let b = pack(&BITS, &p.b, sb, to_bf16_bits);
    let (lda, ldb) = (sa.1, sb.1);
    let shape = Shape {
        dims: p.dims,
        a: (p.a.trans, lda),
        b: (p.b.trans, ldb),
    };
    let op = |t: bool| if t { TRANS } else { NO_TRANS };
    let aocl_op = |t: bool| (if t { b't' } else { b'n' }) as c_char;
    let out = Out(c.as_mut_ptr());
    let entry = g.entry;
    for_each_part(shape, ldc, (ROW_ALIGN, COL_ALIGN), |part: Part| {
        let [pm, pn, k] = part.dims;
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        // SAFETY: `settled` checked `c` against its shape and `ldc`; the packed copies hold
        // their operands contiguously at `lda`/`ldb`, so each part's offsets and extents stay
        // inside them; parts write disjoint rows (or columns) of `c`, which is borrowed
        // mutably, so it aliases neither copy; each entry is called with its library's
        // signature (`Entry`), AOCL's with no post-ops.
        unsafe {
            match entry {
                Entry::Cblas(gemm) => gemm(
                    ROW_MAJOR,
                    op(p.a.trans),
                    op(p.b.trans),
                    dim(pm, "m"),
                    dim(pn, "n"),
                    dim(k, "k"),
                    1.0,
                    pa.add(part.a_off),
                    dim(lda, "lda"),
                    pb.add(part.b_off),
                    dim(ldb, "ldb"),
                    p.beta,
                    out.at(part.c_off),
                    dim(ldc, "ldc"),
                ),
                Entry::Aocl(gemm) => gemm(
                    b'r' as c_char,
                    aocl_op(p.a.trans),
                    aocl_op(p.b.trans),
                    dim64(pm),
                    dim64(pn),
                    dim64(k),
                    1.0,
                    pa.add(part.a_off),
                    dim64(lda),
                    b'n' as c_char,
                    pb.add(part.b_off),
                    dim64(ldb),
                    b'n' as c_char,
                    p.beta,
                    out.at(part.c_off),
                    dim64(ldc),
                    std::ptr::null(),
                ),
            }
        }
    });
}

mod scratch;

#[cfg(test)]
mod tests;
