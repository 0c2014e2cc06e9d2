//! The default matrix-product library, chosen by measurement on the machine it runs on.
//!
//! Which library multiplies f32 matrices fastest depends on the CPU, not on a rule one machine
//! can set: on a 2-core AMD EPYC with AVX2 the gemm crate, matrixmultiply and OpenBLAS run
//! within a few percent of each other, while on an AMD EPYC with full-width AVX-512 (Zen 5)
//! matrixmultiply's AVX-512 kernel runs the real model's training products at 192 GFLOP/s on
//! one core against 123-124 for the gemm crate and for OpenBLAS 0.3.21 (which runs its Haswell
//! kernel there), and on an Intel Xeon with AVX-512 matrixmultiply and OpenBLAS run at about 1.5
//! times the gemm crate (BENCHMARKS.md). So with `RLVR_BLAS` unset (or `auto`), [`choose`]
//! times every library available on one thread on [`SHAPES`] (a layer's forward product and
//! both backward ones) and runs the products on the fastest, unless the **incumbent** (the first
//! CBLAS found, else the built-in [`super::blas::FALLBACK`]: the default before measurement) is
//! within [`MARGIN`] of it. A close race is timing noise, and keeping the incumbent then keeps a
//! machine's runs from switching libraries, and so bits, from one process to the next.
//!
//! The libraries: OpenBLAS (`libopenblas.so.0`, `libopenblas.so` on the dynamic loader's path),
//! MKL's single dynamic library (`libmkl_rt.so.3`, `.so.2`, `.so` on the loader's path and in
//! `$CONDA_PREFIX/lib` and `$VIRTUAL_ENV/lib`, where conda and pip's `mkl` package put it), BLIS
//! (AMD's AOCL-BLAS: `libblis-mt.so`, `libblis.so` on the loader's path and in
//! `$AOCL_ROOT/lib`, `$CONDA_PREFIX/lib` (conda-forge's `aocl-blas`) and `$VIRTUAL_ENV/lib`, and
//! the copy pip's `aoclda` package ships in `site-packages/aoclda.libs`), and the two built-in
//! crates. (MKL and AOCL-BLAS also carry the bf16 GEMMs of [`super::matmul::bf16`].) The line `rlvr train` and `rlvr bench` print says what was chosen,
//! what each candidate measured, and why.
//!
//! The measurement takes a fraction of a second; its result is kept in
//! `$XDG_CACHE_HOME/rlvr/matmul-choice.json` (else `$HOME/.cache/rlvr/`) under a key naming the
//! CPU model, its features, the build (dev or release) and every candidate (a library's path and
//! size, a crate's version and kernel): a process whose key is there takes the recorded choice without measuring, so every
//! run on a machine uses one library. Another CPU, a library installed or removed, or a new
//! build of a crate is another key, measured afresh and kept beside the others (at most 16). A cache that cannot be read or written is
//! worked around (measured, with the reason in the line); the file is written whole under a
//! temporary name and renamed, and processes that start together take turns on a lock file
//! beside it (`matmul-choice.json.lock`): the first measures, the others read its record.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::blas::{load, Backend, BuiltIn, DEFAULT_LIBRARIES, FALLBACK};

/// How much faster than the incumbent a library must measure to replace it: 10%.
pub const MARGIN: f64 = 1.10;

/// The products timed, `[m, n, k]` with `A` and `B` as a layer's forward (`x W^T`) and its two
/// backward products (`dY W`, `dY^T x`) store them: 512 rows of width 1024.
pub const SHAPES: [([usize; 3], bool, bool); 3] = [
    ([512, 1024, 1024], false, true),
    ([512, 1024, 1024], false, false),
    ([1024, 1024, 512], true, false),
];
/// Rounds over all candidates (each candidate's best round counts).
const ROUNDS: usize = 3;

/// MKL's single dynamic library, by the names its packages install.
pub const MKL_LIBRARIES: &[&str] = &["libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so"];

/// The cache file's name, in the cache directory.
pub const CACHE_FILE: &str = "matmul-choice.json";

/// One library that could run the products.
struct Candidate {
    /// Short name in the line (`OpenBLAS`, `MKL`, `gemm crate`, `matrixmultiply`).
    label: String,
    /// What identifies it in the cache key (path and size, or crate, version and kernel).
    identity: String,
    backend: Backend,
}

/// A candidate's measured rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub label: String,
    pub gflops: f64,
}

/// One record of the cache file (a JSON list of them).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    key: String,
    chosen: String,
    measured: Vec<Measured>,
}

/// Each candidate's rate in one line, in order: `OpenBLAS 124.9, matrixmultiply 202.8`.
pub(crate) fn rates_line(measured: &[Measured]) -> String {
    measured
        .iter()
        .map(|m| format!("{} {:.1}", m.label, m.gflops))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The index of the library to run: the fastest of `measured`, unless `measured[incumbent]`
/// is within [`MARGIN`] of it. Rates that are not finite and positive never win.
pub fn pick(measured: &[Measured], incumbent: usize) -> usize {
    let rate = |i: usize| {
        let g = measured[i].gflops;
        if g.is_finite() && g > 0.0 {
            g
        } else {
            0.0
        }
    };
    let best = (0..measured.len())
        .max_by(|&a, &b| rate(a).total_cmp(&rate(b)).then(b.cmp(&a)))
        .unwrap_or(incumbent);
    if rate(best) > MARGIN * rate(incumbent) {
        best
    } else {
        incumbent
    }
}

/// The default cache file: `$XDG_CACHE_HOME/rlvr/` else `$HOME/.cache/rlvr/` (None when
/// neither is set).
pub fn default_cache_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("rlvr").join(CACHE_FILE))
}

/// The backend `RLVR_BLAS` unset selects: measured with `time` (a candidate's GFLOP/s on one
/// thread; `super::matmul` times [`SHAPES`]) or read from `cache`, among the libraries found
/// (module docs).
pub fn choose(cache: Option<&Path>, time: impl Fn(&Backend) -> f64) -> Backend {
    let (candidates, not_found) = candidates();
    let incumbent = candidates
        .iter()
        .position(|c| c.backend.is_blas())
        .unwrap_or_else(|| {
            candidates
                .iter()
                .position(
                    |c| matches!(c.backend, Backend::BuiltIn { kind, .. } if kind == FALLBACK),
                )
                .unwrap_or(0)
        });
    let key = cache_key(&candidates);
    // processes that start together (a sweep's runs) take turns: the first measures while the
    // others wait, then they read its record, so none measures under another's load and all
    // run one library (the lock goes when `_turn` drops; without one, each measures alone)
    let _turn = cache.and_then(lock_cache);
    let (record, cache_note) = match cache.map(|p| (p, read_cache(p, &key))) {
        Some((p, Ok(Some(r)))) => (
            Some(r),
            format!("measured earlier, cached in {}", p.display()),
        ),
        Some((_, Ok(None))) | None => (None, String::new()),
        Some((p, Err(e))) => (None, format!("cache {} not read: {e}", p.display())),
    };
    let (measured, chosen, note) = match record.and_then(|r| {
        candidates
            .iter()
            .position(|c| c.label == r.chosen)
            .map(|i| (r, i))
    }) {
        Some((r, i)) => (r.measured, i, cache_note),
        None => {
            let measured = measure_all(&candidates, &time);
            let chosen = pick(&measured, incumbent);
            let record = Record {
                key,
                chosen: candidates[chosen].label.clone(),
                measured: measured.clone(),
            };
            let note = match cache {
                Some(p) => match write_cache(p, &record) {
                    Ok(()) => format!("cached in {}", p.display()),
                    Err(e) => format!("not cached: {}: {e}", p.display()),
                },
                None => "not cached: no cache directory (XDG_CACHE_HOME and HOME unset)".into(),
            };
            let note = if cache_note.is_empty() {
                note
            } else {
                format!("{cache_note}; {note}")
            };
            (measured, chosen, note)
        }
    };
    let rates = rates_line(&measured);
    let rule = if chosen == incumbent {
        format!(
            "the default, {} is within {:.0}% of the fastest",
            candidates[incumbent].label,
            (MARGIN - 1.0) * 100.0
        )
    } else {
        format!(
            "the fastest, more than {:.0}% ahead of the default {}",
            (MARGIN - 1.0) * 100.0,
            candidates[incumbent].label
        )
    };
    let mut why = format!("chosen by measurement ({rule}; GFLOP/s on one thread: {rates}; {note})");
    if !not_found.is_empty() {
        why.push_str(&format!("; not found: {}", not_found.join("; ")));
    }
    let mut candidates = candidates;
    let chosen = candidates.swap_remove(chosen).backend;
    match chosen {
        Backend::Blas(mut b) => {
            b.chosen = Some(why);
            Backend::Blas(b)
        }
        Backend::BuiltIn { kind, .. } => Backend::built_in(kind, why),
    }
}

/// Every library found, and why the ones looked for were not (the first OpenBLAS name that
/// loads, the first MKL that loads, then both built-in crates).
fn candidates() -> (Vec<Candidate>, Vec<String>) {
    let mut found = Vec::new();
    let mut why = Vec::new();
    let mut first_loading = |label: &str, names: Vec<String>| {
        let mut errors = Vec::new();
        let tried = names.join(", ");
        for name in names {
            match load(&name) {
                Ok(b) => {
                    let size = library_file(&name)
                        .and_then(|p| std::fs::metadata(&p).ok().map(|m| (p, m.len())));
                    let identity = match size {
                        Some((p, len)) => format!("{label}={}:{len}", p.display()),
                        None => format!("{label}={name}"),
                    };
                    found.push(Candidate {
                        label: label.to_string(),
                        identity,
                        backend: Backend::Blas(b),
                    });
                    return;
                }
                Err(e) => errors.push(e),
            }
        }
        // a library that is absent is named; one that is there but fails says why
        errors.retain(|e| !e.contains("cannot open shared object file"));
        if errors.is_empty() {
            why.push(format!("{label} ({tried})"));
        } else {
            why.push(format!("{label} ({})", errors.join("; ")));
        }
    };
    for (label, names) in library_search() {
        first_loading(label, names);
    }
    for kind in [BuiltIn::Gemm, BuiltIn::MatrixMultiply] {
        found.push(Candidate {
            label: match kind {
                BuiltIn::Gemm => "gemm crate".into(),
                BuiltIn::MatrixMultiply => "matrixmultiply".into(),
            },
            identity: kind.describe(),
            backend: Backend::built_in(kind, ""),
        });
    }
    (found, why)
}

/// The libraries looked for, by label, each with the names tried in order: OpenBLAS
/// ([`DEFAULT_LIBRARIES`]), then MKL ([`MKL_LIBRARIES`] on the loader's path, then in
/// `$CONDA_PREFIX/lib` and `$VIRTUAL_ENV/lib`), then BLIS ([`BLIS_LIBRARIES`] on the loader's
/// path, then in `$AOCL_ROOT/lib`, `$CONDA_PREFIX/lib` and `$VIRTUAL_ENV/lib`, then the AOCL-BLAS
/// that pip's `aoclda` package ships: [`wheel_libraries`] of [`AOCL_WHEEL`]).
pub(crate) fn library_search() -> Vec<(&'static str, Vec<String>)> {
    let in_prefixes = |vars: &[&str], names: &[&str]| -> Vec<String> {
        let mut found: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        for var in vars {
            if let Some(dir) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                for name in names {
                    let p = PathBuf::from(&dir).join("lib").join(name);
                    if p.is_file() {
                        found.push(p.display().to_string());
                    }
                }
            }
        }
        found
    };
    let mkl = in_prefixes(&["CONDA_PREFIX", "VIRTUAL_ENV"], MKL_LIBRARIES);
    let mut blis = in_prefixes(
        &["AOCL_ROOT", "CONDA_PREFIX", "VIRTUAL_ENV"],
        BLIS_LIBRARIES,
    );
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty()) {
        let (package, prefix) = AOCL_WHEEL;
        blis.extend(wheel_libraries(Path::new(&venv), package, prefix));
    }
    vec![
        (
            "OpenBLAS",
            DEFAULT_LIBRARIES.iter().map(|s| s.to_string()).collect(),
        ),
        ("MKL", mkl),
        ("BLIS", blis),
    ]
}

/// BLIS's libraries, by the names AMD's AOCL-BLAS installs (multithreaded build first; the
/// same names as the BLIS project's own builds, which have `cblas_sgemm` but not AOCL's bf16
/// GEMM).
pub const BLIS_LIBRARIES: &[&str] = &[
    "libblis-mt.so",
    "libblis.so",
    "libblis-mt.so.5",
    "libblis.so.5",
];

/// The Python package that ships AMD's AOCL-BLAS as a wheel (`pip install aoclda`), and the
/// start of that library's file name in the package's `aoclda.libs` directory (renamed by
/// auditwheel: `libblis-mt-3117697f.so.5.3.0`).
pub const AOCL_WHEEL: (&str, &str) = ("aoclda", "libblis-mt");

/// The shared libraries whose names start with `prefix` in the `<package>.libs` directory that
/// auditwheel makes beside a wheel's package, in every `lib/python3.*/site-packages` of the
/// environment `venv`, sorted.
pub fn wheel_libraries(venv: &Path, package: &str, prefix: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(venv.join("lib")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for python in entries.flatten() {
        if !python.file_name().to_string_lossy().starts_with("python") {
            continue;
        }
        let libs = python
            .path()
            .join("site-packages")
            .join(format!("{package}.libs"));
        for file in std::fs::read_dir(&libs).into_iter().flatten().flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            if name.starts_with(prefix) && name.contains(".so") && file.path().is_file() {
                found.push(file.path().display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// The file a library name resolves to: the name itself when it is a path, else the first
/// match in the usual library directories (for the cache key only).
fn library_file(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.is_file().then(|| p.to_path_buf());
    }
    let dirs = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
        "/lib/x86_64-linux-gnu",
    ];
    dirs.iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
        .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
}

/// The cache key: the CPU, the build (a dev build's own code runs at another optimization
/// level) and every candidate.
fn cache_key(candidates: &[Candidate]) -> String {
    let ids: Vec<&str> = candidates.iter().map(|c| c.identity.as_str()).collect();
    let build = if cfg!(debug_assertions) {
        "dev build"
    } else {
        "release build"
    };
    format!(
        "{}; {}; {build}; {}",
        cpu_model().unwrap_or_else(|| "unknown".into()),
        cpu_features().join(" "),
        ids.join("; ")
    )
}

/// The CPU's model name from `/proc/cpuinfo` (Linux); `None` elsewhere or when it has none.
/// (Also what a run's `host.jsonl` records.)
pub fn cpu_model() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| matches!(k.trim(), "model name" | "Model" | "cpu model"))
        .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|v| !v.is_empty())
}

/// The instruction-set features the product kernels dispatch on (`fma`, `avx2`, `avx512f`,
/// `neon`), those this CPU has.
pub fn cpu_features() -> Vec<&'static str> {
    #[allow(unused_mut)]
    let mut out = Vec::new();
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        for (name, has) in [
            ("fma", std::arch::is_x86_feature_detected!("fma")),
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
        ] {
            if has {
                out.push(name);
            }
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("neon") {
            out.push("neon");
        }
    }
    out
}

/// An exclusive lock on `<cache>.lock`, held until the returned file is dropped; None when the
/// lock file cannot be made (the choice then goes on unlocked).
fn lock_cache(cache: &Path) -> Option<std::fs::File> {
    let dir = cache.parent()?;
    std::fs::create_dir_all(dir).ok()?;
    let mut name = cache.file_name()?.to_os_string();
    name.push(".lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(name))
        .ok()?;
    f.lock().ok()?;
    Some(f)
}

/// The most records the cache keeps (one per CPU, build and set of libraries seen).
const MAX_RECORDS: usize = 16;

/// The cache's records: none when the file is absent.
fn read_records(path: &Path) -> Result<Vec<Record>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.to_string()),
    };
    if text.len() > 1 << 20 {
        return Err(format!("{} bytes, more than its records", text.len()));
    }
    serde_json::from_str(&text).map_err(|e| format!("not a list of records ({e})"))
}

/// The cache's record for `key`: Ok(None) when the file is absent or holds no such key.
fn read_cache(path: &Path, key: &str) -> Result<Option<Record>, String> {
    Ok(read_records(path)?.into_iter().find(|r| r.key == key))
}

/// Adds `record` to the cache at `path` (replacing one with its key; the oldest dropped past
/// [`MAX_RECORDS`]; a damaged file is replaced), written whole: a temporary file in the same
/// directory, renamed.
fn write_cache(path: &Path, record: &Record) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut records = read_records(path).unwrap_or_default();
    records.retain(|r| r.key != record.key);
    records.push(record.clone());
    let excess = records.len().saturating_sub(MAX_RECORDS);
    records.drain(..excess);
    let tmp = dir.join(format!(".{CACHE_FILE}.{}", std::process::id()));
    let text = serde_json::to_string_pretty(&records).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Every candidate's rate: [`ROUNDS`] rounds over all of them in turn (so load from other
/// processes hits each alike), each candidate's best round.
fn measure_all(candidates: &[Candidate], time: &impl Fn(&Backend) -> f64) -> Vec<Measured> {
    let mut best = vec![0.0f64; candidates.len()];
    for _ in 0..ROUNDS {
        for (i, c) in candidates.iter().enumerate() {
            best[i] = best[i].max(time(&c.backend));
        }
    }
    candidates
        .iter()
        .zip(best)
        .map(|(c, g)| Measured {
            label: c.label.clone(),
            gflops: g,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(label: &str, g: f64) -> Measured {
        Measured {
            label: label.into(),
            gflops: g,
        }
    }

    #[test]
    fn the_fastest_wins_only_by_more_than_the_margin() {
        let rates = [
            m("OpenBLAS", 124.0),
            m("gemm crate", 123.0),
            m("matrixmultiply", 192.0),
        ];
        assert_eq!(pick(&rates, 0), 2);
        // within 10%: the incumbent stays
        let close = [
            m("OpenBLAS", 110.0),
            m("gemm crate", 115.0),
            m("matrixmultiply", 120.0),
        ];
        assert_eq!(pick(&close, 0), 0);
        let edge = [m("gemm crate", 100.0), m("matrixmultiply", 110.0)];
        assert_eq!(pick(&edge, 0), 0);
        let past = [m("gemm crate", 100.0), m("matrixmultiply", 110.1)];
        assert_eq!(pick(&past, 0), 1);
        // the incumbent ahead stays
        assert_eq!(pick(&[m("a", 200.0), m("b", 100.0)], 0), 0);
    }

    #[test]
    fn a_broken_measurement_never_wins() {
        for bad in [f64::NAN, f64::INFINITY, -5.0, 0.0] {
            assert_eq!(pick(&[m("a", 100.0), m("b", bad)], 0), 0, "{bad}");
            // a broken incumbent gives way to any working library
            assert_eq!(pick(&[m("a", bad), m("b", 1.0)], 0), 1, "{bad}");
        }
    }

    /// A built-in crate wins when it measures fastest; the cache then answers without
    /// measuring; a damaged or foreign cache is measured around and rewritten.
    #[test]
    fn the_choice_is_measured_once_and_cached() {
        let dir = std::env::temp_dir().join(format!("rlvr-choice-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = dir.join("sub").join(CACHE_FILE);
        let calls = std::cell::Cell::new(0);
        // matrixmultiply far ahead of everything else
        let time = |b: &Backend| {
            calls.set(calls.get() + 1);
            match b {
                Backend::BuiltIn {
                    kind: BuiltIn::MatrixMultiply,
                    ..
                } => 300.0,
                _ => 100.0,
            }
        };
        let b = choose(Some(&cache), time);
        assert!(
            matches!(
                b,
                Backend::BuiltIn {
                    kind: BuiltIn::MatrixMultiply,
                    ..
                }
            ),
            "{}",
            b.describe()
        );
        let d = b.describe();
        assert!(d.contains("chosen by measurement (the fastest"), "{d}");
        assert!(d.contains("matrixmultiply 300.0"), "{d}");
        assert!(d.contains(&format!("cached in {}", cache.display())), "{d}");
        let measured_calls = calls.get();
        assert!(measured_calls >= 2 * ROUNDS, "{measured_calls}");
        // a second process: no measurement
        let b = choose(Some(&cache), time);
        assert_eq!(calls.get(), measured_calls);
        assert!(
            b.describe().contains("measured earlier, cached in"),
            "{}",
            b.describe()
        );
        assert!(matches!(
            b,
            Backend::BuiltIn {
                kind: BuiltIn::MatrixMultiply,
                ..
            }
        ));
        // a damaged cache: measured again, the reason said, the file rewritten
        std::fs::write(&cache, "{ not json").unwrap();
        let b = choose(Some(&cache), time);
        assert!(calls.get() > measured_calls);
        assert!(
            b.describe().contains("not read: not a list of records"),
            "{}",
            b.describe()
        );
        assert!(read_cache(&cache, &cache_key(&candidates().0))
            .unwrap()
            .is_some());
        // another machine's record (another key): measured afresh, and kept beside it
        let text = std::fs::read_to_string(&cache).unwrap();
        std::fs::write(
            &cache,
            text.replace("\"key\": \"", "\"key\": \"other CPU; "),
        )
        .unwrap();
        let before = calls.get();
        choose(Some(&cache), time);
        assert!(calls.get() > before);
        // both kept
        assert_eq!(read_records(&cache).unwrap().len(), 2);
        // a cache that cannot be written (its directory is a file): measured, said so
        let blocked = dir.join("file");
        std::fs::write(&blocked, "").unwrap();
        let b = choose(Some(&blocked.join(CACHE_FILE)), time);
        assert!(b.describe().contains("not cached: "), "{}", b.describe());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Two processes starting together: one measures, the other waits and reads its record.
    #[test]
    fn choices_made_at_once_take_turns() {
        let dir = std::env::temp_dir().join(format!("rlvr-choice-turns-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = dir.join(CACHE_FILE);
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let time = |_: &Backend| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            100.0
        };
        let lines: Vec<String> = std::thread::scope(|s| {
            let a = s.spawn(|| choose(Some(&cache), time).describe());
            let b = s.spawn(|| choose(Some(&cache), time).describe());
            vec![a.join().unwrap(), b.join().unwrap()]
        });
        let per_choice = ROUNDS * candidates().0.len();
        assert_eq!(
            calls.load(std::sync::atomic::Ordering::SeqCst),
            per_choice,
            "{lines:?}"
        );
        assert_eq!(
            lines
                .iter()
                .filter(|l| l.contains("measured earlier"))
                .count(),
            1,
            "{lines:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// All equal: the default stays (the first CBLAS found, else the gemm crate).
    #[test]
    fn a_tie_keeps_the_default() {
        let b = choose(None, |_| 100.0);
        let d = b.describe();
        assert!(d.contains("chosen by measurement (the default"), "{d}");
        assert!(d.contains("not cached: no cache directory"), "{d}");
        if !b.is_blas() {
            assert!(matches!(b, Backend::BuiltIn { kind, .. } if kind == FALLBACK));
        }
    }
}
