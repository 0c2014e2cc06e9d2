//! The system BLAS, loaded at run time: which library computes the CPU f32 matrix products.
//!
//! rlvr has no link-time dependency on a BLAS. On first use, [`backend`] tries, in order:
//!
//! | `RLVR_BLAS` | what is loaded |
//! |---|---|
//! | unset | `libopenblas.so.0`, then `libopenblas.so` (the dynamic loader's search path) |
//! | a path or library name | that library only (any CBLAS that exports `cblas_sgemm`) |
//! | `gemm` or `none` | nothing: the pure-Rust gemm crate |
//!
//! and falls back to the gemm crate, with the reason, when nothing loads or the library lacks
//! `cblas_sgemm`. [`Backend::describe`] is the one line `rlvr train` and `rlvr bench` print.
//!
//! # Contract
//! * The choice is made once per process and never changes.
//! * A library that exports `openblas_set_num_threads` is set to one thread: rlvr splits a large
//!   product among its own rayon threads instead (`cpu/matmul.rs`). Other CBLAS libraries keep their
//!   own threading.
//! * Loading never panics: any failure selects the gemm crate and says why.

use std::ffi::{c_char, c_int, CStr};
use std::sync::OnceLock;

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
type ConfigFn = unsafe extern "C" fn() -> *const c_char;

/// A loaded CBLAS library.
pub struct Blas {
    /// The name or path it was loaded by.
    pub library: String,
    /// OpenBLAS's build description (`openblas_get_config`: version, kernel, threading), when
    /// the library is OpenBLAS.
    pub config: Option<String>,
    pub(crate) sgemm: SgemmFn,
    /// Keeps the library mapped for as long as `sgemm` may be called (the whole process).
    _lib: libloading::Library,
}

/// The library behind the CPU matrix product (`matmul`, `sgemm` of the sibling module).
pub enum Backend {
    /// A CBLAS loaded at run time.
    Blas(Blas),
    /// The pure-Rust gemm crate (candle's CPU matmul), and why no BLAS was loaded.
    Gemm { reason: String },
}

impl Backend {
    /// One line saying which library runs the products, e.g. `OpenBLAS 0.3.21 ... (loaded
    /// libopenblas.so.0)` or `gemm crate (pure Rust): libopenblas.so.0 not found; ...`.
    pub fn describe(&self) -> String {
        match self {
            Backend::Blas(b) => match &b.config {
                Some(c) => format!("{} (loaded {}, one thread per call)", c.trim(), b.library),
                None => format!("CBLAS cblas_sgemm (loaded {})", b.library),
            },
            Backend::Gemm { reason } => format!("gemm crate (pure Rust): {reason}"),
        }
    }

    /// Whether a BLAS library was loaded.
    pub fn is_blas(&self) -> bool {
        matches!(self, Backend::Blas(_))
    }
}

/// The process's backend, chosen on first call from [`BLAS_ENV`] (module docs).
pub fn backend() -> &'static Backend {
    static BACKEND: OnceLock<Backend> = OnceLock::new();
    BACKEND.get_or_init(|| choose(std::env::var(BLAS_ENV).ok().as_deref()))
}

/// The backend for a value of [`BLAS_ENV`] (`None`: unset).
pub fn choose(env: Option<&str>) -> Backend {
    let env = env.map(str::trim);
    let candidates: Vec<&str> = match env {
        None | Some("") => DEFAULT_LIBRARIES.to_vec(),
        Some(v) if v.eq_ignore_ascii_case("gemm") || v.eq_ignore_ascii_case("none") => {
            return Backend::Gemm {
                reason: format!("{BLAS_ENV}={v}"),
            }
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
    let hint = match env {
        None | Some("") => {
            "; install OpenBLAS (Debian/Ubuntu: apt install libopenblas0) for faster CPU \
             products, or set RLVR_BLAS to a CBLAS library"
        }
        Some(_) => "",
    };
    Backend::Gemm {
        reason: format!("{}{hint}", why.join("; ")),
    }
}

/// Loads `name` and resolves its symbols; the error says what failed.
fn load(name: &str) -> Result<Blas, String> {
    // SAFETY: loading a shared library runs its initializers; the libraries tried are BLAS
    // builds (the default names, or the one the user named in RLVR_BLAS).
    let lib = unsafe { libloading::Library::new(name) }
        .map_err(|e| format!("{name} could not be loaded ({e})"))?;
    // SAFETY: each symbol is looked up with the C signature CBLAS/OpenBLAS declare for it.
    let sgemm: SgemmFn = unsafe { lib.get::<SgemmFn>(b"cblas_sgemm\0") }
        .map(|s| *s)
        .map_err(|_| format!("{name} has no cblas_sgemm"))?;
    let set_threads = unsafe { lib.get::<SetThreadsFn>(b"openblas_set_num_threads\0") }
        .ok()
        .map(|s| *s);
    let config = unsafe { lib.get::<ConfigFn>(b"openblas_get_config\0") }
        .ok()
        .and_then(|get| {
            // SAFETY: returns a pointer to a static NUL-terminated string (or null).
            let p = unsafe { (*get)() };
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        });
    if let Some(set) = set_threads {
        // SAFETY: a plain setter of OpenBLAS's thread count.
        unsafe { set(1) };
    }
    Ok(Blas {
        library: name.to_string(),
        config,
        sgemm,
        _lib: lib,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_and_none_select_the_gemm_crate_and_say_so() {
        for v in ["gemm", "none", "GEMM", " none "] {
            let b = choose(Some(v));
            assert!(!b.is_blas(), "{v}");
            assert_eq!(
                b.describe(),
                format!("gemm crate (pure Rust): RLVR_BLAS={}", v.trim())
            );
        }
    }

    #[test]
    fn a_missing_library_falls_back_with_its_name_in_the_reason() {
        let b = choose(Some("/nonexistent/libopenblas.so.0"));
        assert!(!b.is_blas());
        let d = b.describe();
        assert!(
            d.starts_with(
                "gemm crate (pure Rust): /nonexistent/libopenblas.so.0 could not be loaded"
            ),
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
            "gemm crate (pure Rust): libc.so.6 has no cblas_sgemm"
        );
    }

    /// Under CI the system OpenBLAS is installed, so the default search must find it (else
    /// the OpenBLAS path would silently go untested).
    #[test]
    fn the_default_search_finds_openblas_under_ci() {
        let b = choose(None);
        if std::env::var_os("CI").is_some() {
            assert!(b.is_blas(), "{}", b.describe());
        }
        if let Backend::Blas(blas) = &b {
            assert!(blas.config.as_deref().unwrap_or("").contains("OpenBLAS"));
            assert!(b.describe().contains("loaded libopenblas.so"));
        }
    }
}
