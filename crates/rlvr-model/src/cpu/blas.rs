//! Which library computes the CPU f32 matrix products: a system CBLAS loaded at run time, or one
//! of two pure-Rust crates built in.
//!
//! rlvr has no link-time dependency on a BLAS. On first use, the process's backend
//! (`super::matmul::backend`) reads `RLVR_BLAS`:
//!
//! | `RLVR_BLAS` | what runs the products |
//! |---|---|
//! | unset or `auto` | the fastest library on this machine, measured once and cached ([`super::blas_choice`]): OpenBLAS (`libopenblas.so.0`, `libopenblas.so`), MKL (`libmkl_rt`), BLIS (AMD's AOCL-BLAS: `libblis-mt.so`, `libblis.so`, pip's `aoclda`), the built-in gemm crate or matrixmultiply crate; the first CBLAS found, else the gemm crate, unless another measures more than 10% faster |
//! | a path or library name | that library only (any CBLAS that exports `cblas_sgemm`) |
//! | `gemm` or `none` | nothing is loaded: the built-in gemm crate (candle's CPU matmul) |
//! | `matrixmultiply` | nothing is loaded: the built-in matrixmultiply crate |
//!
//! and a named library that does not load, or lacks `cblas_sgemm`, falls back to the built-in
//! [`FALLBACK`] (the gemm crate), with the reason. [`Backend::describe`] is the one line `rlvr
//! train` and `rlvr bench` print; for a built-in crate it names the micro-kernel its run-time
//! CPU dispatch picks (e.g. `gemm crate 0.19.0 (pure Rust, fma kernel)`, `matrixmultiply
//! 0.3.11 (pure Rust, avx512f kernel)`), and for a measured choice every candidate's rate.
//!
//! Why gemm stays the fallback of a named library that fails: `rlvr bench matmul` on the
//! bench-tiny and bench-small training shapes measured it level with matrixmultiply on
//! bench-tiny and 2-6% faster on bench-small and on 64-row decode products, on a 2-core AMD
//! EPYC whose AVX-512 runs as two 256-bit halves (BENCHMARKS.md, "Built-in matrix product"),
//! and it keeps the bits of earlier runs without OpenBLAS. On CPUs with full-width AVX-512
//! (Intel Xeon, AMD Zen 5) matrixmultiply's AVX-512 kernel (compiled in on stable Rust, where
//! gemm's needs nightly) is 1.5-1.6x faster: the measured default finds that.
//!
//! # Contract
//! * The choice is made once per process and never changes.
//! * A library that exports `openblas_set_num_threads` (OpenBLAS), `MKL_Set_Num_Threads`
//!   (MKL) or `bli_thread_set_num_threads` (BLIS) is set to one thread: rlvr splits a large
//!   product among its own rayon threads instead (`cpu/matmul.rs`). Other CBLAS libraries keep
//!   their own threading.
//! * A library named by its path loads with the dependencies that sit beside it (a wheel's
//!   `.libs` directory: [`super::library`]).
//! * Loading never panics: any failure selects [`FALLBACK`] and says why.

use std::ffi::{c_char, c_int, CStr};

/// The environment variable that picks the BLAS library (module docs).
pub const BLAS_ENV: &str = "RLVR_BLAS";

/// The libraries tried, in order, when [`BLAS_ENV`] is unset.
pub const DEFAULT_LIBRARIES: &[&str] = &["libopenblas.so.0", "libopenblas.so"];

/// CBLAS's `cblas_sgemm` (row-major layout `101`, transpose flags `111`/`112`, LP64 ints).
pub(crate) type SgemmFn = unsafe extern "C" fn(
    layout: c_int,
    trans_a: c_int,
    trans_b: c_int,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: f32,
    a: *const f32,
    lda: c_int,
    b: *const f32,
    ldb: c_int,
    beta: f32,
    c: *mut f32,
    ldc: c_int,
);

type SetThreadsFn = unsafe extern "C" fn(c_int);
type SetBlisThreadsFn = unsafe extern "C" fn(i64);
type ConfigFn = unsafe extern "C" fn() -> *const c_char;

/// A loaded CBLAS library.
pub struct Blas {
    /// The name or path it was loaded by.
    pub library: String,
    /// The library's description of its build, where it gives one: OpenBLAS's
    /// (`openblas_get_config`: version, kernel, threading), BLIS's (`bli_info_get_version_str`).
    pub config: Option<String>,
    pub(crate) sgemm: SgemmFn,
    /// Why it runs the products when it was chosen by measurement ([`super::blas_choice`]).
    pub chosen: Option<String>,
    /// Keeps the library mapped for as long as `sgemm` may be called (the whole process).
    _lib: libloading::Library,
}

/// The version of the matrixmultiply crate built in (pinned exactly in the workspace's
/// Cargo.toml, so this line cannot go stale).
pub const MATRIXMULTIPLY_VERSION: &str = "0.3.11";
/// The version of the gemm crate built in (pinned exactly, as candle's).
pub const GEMM_VERSION: &str = "0.19.0";

/// A pure-Rust matrix product compiled into rlvr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltIn {
    /// The matrixmultiply crate (`sgemm` on arbitrary strides, AVX-512 on stable Rust).
    MatrixMultiply,
    /// The gemm crate, called as candle's CPU matmul calls it.
    Gemm,
}

/// The built-in crate that runs the products when no CBLAS loads (or `RLVR_BLAS=none`), chosen
/// by `rlvr bench matmul` (module docs).
pub const FALLBACK: BuiltIn = BuiltIn::Gemm;

impl BuiltIn {
    /// E.g. `matrixmultiply 0.3.11 (pure Rust, avx512f kernel)`: the crate, its version and
    /// the micro-kernel its run-time dispatch picks on this CPU.
    pub fn describe(self) -> String {
        match self {
            BuiltIn::MatrixMultiply => format!(
                "matrixmultiply {MATRIXMULTIPLY_VERSION} (pure Rust, {} kernel)",
                matrixmultiply_kernel()
            ),
            BuiltIn::Gemm => format!(
                "gemm crate {GEMM_VERSION} (pure Rust, {} kernel)",
                gemm_kernel()
            ),
        }
    }
}

/// The f32 kernel matrixmultiply 0.3.11 dispatches to, tested as its `sgemm_kernel::detect`
/// does: `avx512f`, else `fma` and `avx2`, else `avx`, else its portable `fallback` (x86); NEON
/// on aarch64. (Its AVX-512 kernel is compiled in from rustc 1.89 on, below our
/// `rust-version`, with its default `avx512` feature.)
pub fn matrixmultiply_kernel() -> &'static str {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "avx512f";
        }
        if std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2")
        {
            return "fma+avx2";
        }
        if std::arch::is_x86_feature_detected!("avx") {
            return "avx";
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("neon") {
            return "neon";
        }
    }
    "fallback"
}

/// The f32 kernel the gemm crate 0.19.0 dispatches to on stable Rust: its AVX-512 kernel
/// needs the nightly-only `x86-v4` feature, so x86 runs `fma` (AVX2+FMA) where the CPU has
/// FMA, else `scalar`; NEON on aarch64.
pub fn gemm_kernel() -> &'static str {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            return "fma";
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("neon") {
            return "neon";
        }
    }
    "scalar"
}

/// The library behind the CPU matrix product (`matmul`, `sgemm` of the sibling module).
pub enum Backend {
    /// A CBLAS loaded at run time.
    Blas(Blas),
    /// A pure-Rust crate built in, and why no BLAS was loaded.
    BuiltIn { kind: BuiltIn, reason: String },
}

impl Backend {
    /// One line saying which library runs the products, e.g. `OpenBLAS 0.3.21 ... (loaded
    /// libopenblas.so.0)` or `gemm crate 0.19.0 (pure Rust, fma kernel): libopenblas.so.0
    /// could not be loaded (...); ...`.
    pub fn describe(&self) -> String {
        match self {
            Backend::Blas(b) => {
                let what = match &b.config {
                    Some(c) => format!("{} (loaded {}, one thread per call)", c.trim(), b.library),
                    None => format!("CBLAS cblas_sgemm (loaded {})", b.library),
                };
                match &b.chosen {
                    Some(why) => format!("{what}: {why}"),
                    None => what,
                }
            }
            Backend::BuiltIn { kind, reason } => format!("{}: {reason}", kind.describe()),
        }
    }

    /// What computes the products, without why: the library and its kernel (`OpenBLAS 0.3.21
    /// ... Haswell MAX_THREADS=64`, `CBLAS cblas_sgemm libmkl_rt.so.2`, `matrixmultiply 0.3.11
    /// (pure Rust, avx512f kernel)`): what must match for two runs to compute alike.
    pub fn identity(&self) -> String {
        match self {
            Backend::Blas(b) => match &b.config {
                Some(c) => c.trim().to_string(),
                None => format!("CBLAS cblas_sgemm {}", b.library),
            },
            Backend::BuiltIn { kind, .. } => kind.describe(),
        }
    }

    /// A built-in crate, with the reason given.
    pub fn built_in(kind: BuiltIn, reason: impl Into<String>) -> Self {
        Backend::BuiltIn {
            kind,
            reason: reason.into(),
        }
    }

    /// Whether a BLAS library was loaded.
    pub fn is_blas(&self) -> bool {
        matches!(self, Backend::Blas(_))
    }
}

/// The backend for a value of [`BLAS_ENV`] without measuring: a named library or built-in
/// crate; unset, empty or `auto`, the first of [`DEFAULT_LIBRARIES`] that loads, else
/// [`FALLBACK`] (the incumbent of the measured choice, `super::blas_choice`, which the process's
/// backend, `super::matmul::backend`, makes for those values instead).
pub fn choose(env: Option<&str>) -> Backend {
    let env = env.map(str::trim);
    let candidates: Vec<&str> = match env {
        None | Some("") => DEFAULT_LIBRARIES.to_vec(),
        Some(v) if v.eq_ignore_ascii_case("auto") => DEFAULT_LIBRARIES.to_vec(),
        Some(v) if v.eq_ignore_ascii_case("gemm") => {
            return Backend::built_in(BuiltIn::Gemm, format!("{BLAS_ENV}={v}"))
        }
        Some(v) if v.eq_ignore_ascii_case("matrixmultiply") => {
            return Backend::built_in(BuiltIn::MatrixMultiply, format!("{BLAS_ENV}={v}"))
        }
        Some(v) if v.eq_ignore_ascii_case("none") => {
            return Backend::built_in(FALLBACK, format!("{BLAS_ENV}={v}"))
        }
        Some(v) => vec![v],
    };
    let mut why = Vec::new();
    for name in &candidates {
        match load(name) {
            Ok(b) => return Backend::Blas(b),
            Err(e) => why.push(e),
        }
    }
    Backend::built_in(FALLBACK, why.join("; "))
}

/// Whether a value of [`BLAS_ENV`] asks for the measured choice (unset, empty or `auto`).
pub fn measured(env: Option<&str>) -> bool {
    env.map(str::trim)
        .is_none_or(|v| v.is_empty() || v.eq_ignore_ascii_case("auto"))
}

/// Loads `name` and resolves its symbols; the error says what failed.
pub(crate) fn load(name: &str) -> Result<Blas, String> {
    let lib = super::library::open(name)?;
    // SAFETY: each symbol is looked up with the C signature CBLAS/OpenBLAS declare for it.
    let sgemm: SgemmFn = unsafe { lib.get::<SgemmFn>(b"cblas_sgemm\0") }
        .map(|s| *s)
        .map_err(|_| format!("{name} has no cblas_sgemm"))?;
    let config = build_description(&lib);
    set_one_thread(&lib);
    Ok(Blas {
        library: name.to_string(),
        config,
        sgemm,
        chosen: None,
        _lib: lib,
    })
}

/// The library's own description of its build: OpenBLAS's `openblas_get_config` (version,
/// kernel, threading), BLIS's `bli_info_get_version_str` (`AOCL-BLAS 5.3.0 Build 20260507`).
fn build_description(lib: &libloading::Library) -> Option<String> {
    [&b"openblas_get_config\0"[..], b"bli_info_get_version_str\0"]
        .into_iter()
        .find_map(|symbol| {
            // SAFETY: both are `const char *f(void)`, returning a static NUL-terminated string
            // (or null).
            let get = unsafe { lib.get::<ConfigFn>(symbol) }.ok()?;
            let p = unsafe { (*get)() };
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        })
}

/// Sets OpenBLAS (`openblas_set_num_threads`), MKL (`MKL_Set_Num_Threads`) or BLIS
/// (`bli_thread_set_num_threads`, AMD's AOCL-BLAS among its builds) to one thread per call
/// (module docs); other libraries keep their own threading.
pub(crate) fn set_one_thread(lib: &libloading::Library) {
    for symbol in [&b"openblas_set_num_threads\0"[..], b"MKL_Set_Num_Threads\0"] {
        // SAFETY: both are `void f(int)`, plain setters of the library's thread count.
        if let Ok(set) = unsafe { lib.get::<SetThreadsFn>(symbol) } {
            unsafe { (*set)(1) };
        }
    }
    // SAFETY: `void bli_thread_set_num_threads(dim_t)`, dim_t a 64-bit integer in BLIS's
    // builds (its default `BLIS_INT_TYPE_SIZE`); the setter of its global thread count, which
    // its level-3 products and AOCL's `aocl_gemm_*` read.
    if let Ok(set) = unsafe { lib.get::<SetBlisThreadsFn>(b"bli_thread_set_num_threads\0") } {
        unsafe { (*set)(1) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_matrixmultiply_and_none_select_a_built_in_crate_and_say_so() {
        for (v, kind) in [
            ("gemm", BuiltIn::Gemm),
            ("GEMM", BuiltIn::Gemm),
            ("matrixmultiply", BuiltIn::MatrixMultiply),
            (" MatrixMultiply ", BuiltIn::MatrixMultiply),
            ("none", FALLBACK),
            (" none ", FALLBACK),
        ] {
            let b = choose(Some(v));
            assert!(!b.is_blas(), "{v}");
            assert!(
                matches!(b, Backend::BuiltIn { kind: k, .. } if k == kind),
                "{v}"
            );
            assert_eq!(
                b.describe(),
                format!("{}: RLVR_BLAS={}", kind.describe(), v.trim())
            );
        }
    }

    /// The line names the crate, its version and the kernel of this CPU.
    #[test]
    fn a_built_in_crate_names_its_version_and_kernel() {
        let mm = BuiltIn::MatrixMultiply.describe();
        assert!(
            mm.starts_with("matrixmultiply 0.3.11 (pure Rust, ") && mm.ends_with(" kernel)"),
            "{mm}"
        );
        assert!(mm.contains(matrixmultiply_kernel()), "{mm}");
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            assert_eq!(mm, "matrixmultiply 0.3.11 (pure Rust, avx512f kernel)");
        }
        let g = BuiltIn::Gemm.describe();
        assert!(g.starts_with("gemm crate 0.19.0 (pure Rust, "), "{g}");
        // the versions named are the ones pinned
        let manifest =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml"))
                .unwrap();
        for pin in [
            format!("matrixmultiply = \"={MATRIXMULTIPLY_VERSION}\""),
            format!("gemm = \"={GEMM_VERSION}\""),
        ] {
            assert!(manifest.lines().any(|l| l.trim() == pin), "{pin}");
        }
    }

    #[test]
    fn a_missing_library_falls_back_with_its_name_in_the_reason() {
        let b = choose(Some("/nonexistent/libopenblas.so.0"));
        assert!(!b.is_blas());
        let d = b.describe();
        assert!(
            d.starts_with(&format!(
                "{}: /nonexistent/libopenblas.so.0 could not be loaded",
                FALLBACK.describe()
            )),
            "{d}"
        );
    }

    #[test]
    fn a_library_without_cblas_sgemm_is_refused() {
        // the C library is always loadable and has no BLAS in it
        let b = choose(Some("libc.so.6"));
        assert!(!b.is_blas());
        assert_eq!(
            b.describe(),
            format!("{}: libc.so.6 has no cblas_sgemm", FALLBACK.describe())
        );
    }

    /// Under CI the system OpenBLAS is installed, so the search must find it (else the
    /// OpenBLAS path would silently go untested), and the measured default names it among the
    /// candidates it timed.
    #[test]
    fn the_default_search_finds_openblas_under_ci() {
        let b = choose(Some("libopenblas.so.0"));
        if std::env::var_os("CI").is_some() {
            assert!(b.is_blas(), "{}", b.describe());
        }
        if let Backend::Blas(blas) = &b {
            assert!(blas.config.as_deref().unwrap_or("").contains("OpenBLAS"));
            assert!(b.describe().contains("loaded libopenblas.so"));
            let measured = super::super::matmul::measured_choice(None).describe();
            assert!(measured.contains("OpenBLAS "), "{measured}");
            assert!(measured.contains("chosen by measurement"), "{measured}");
        }
    }
}
