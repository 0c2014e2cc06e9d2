//! `<run>/host.jsonl`: the machine each process of a run ran on, one JSON line per start or
//! resume.
//!
//! A run's bits depend on the machine (docs/determinism.md: the CPU's instruction set picks the
//! matrix-product kernel, OpenBLAS picks its own by CPU model, and with OpenBLAS the thread count
//! can move a decode product), so a comparison of rules seed by seed is exact only when a seed's
//! runs ran on the same kind of machine. Each line records what decides that: the CPU model and
//! the features the kernels dispatch on, the matrix-product library and kernel, the worker
//! threads, the device and dtype, and the step the process started from. A run resumed on
//! another machine gets a second line with another `machine`; `rlvr report` lists the machines
//! and flags a seed whose rules did not all run on one.
//!
//! Line keys: `step` (the first step this process trains: 0 for a fresh run), `started_unix`
//! (seconds), `rlvr` (version), `os`, `arch`, `cpu` (model name, `"unknown"` when the system
//! does not say), `cpu_features` (of `fma`, `avx2`, `avx512f`, `neon`: those present),
//! `logical_cpus`, `threads` (the CPU worker threads), `device`, `dtype`, `matmul` (the CPU
//! matrix-product library, `null` off the CPU) and `machine` (one line joining the cpu, its
//! features, the matmul library and the threads: what must match for two runs to compute alike).

use rlvr_core::run_dir::RunDir;
use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::TrainConfig;
use crate::TrainError;

/// The file, in the run directory.
pub const HOST_FILE: &str = rlvr_core::run_dir::HOST_FILE;

/// One line of `host.jsonl` (module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostRecord {
    pub step: usize,
    pub started_unix: u64,
    pub rlvr: String,
    pub os: String,
    pub arch: String,
    pub cpu: String,
    pub cpu_features: Vec<String>,
    pub logical_cpus: usize,
    pub threads: usize,
    pub device: String,
    pub dtype: String,
    pub matmul: Option<String>,
    pub machine: String,
}

impl HostRecord {
    /// This process's machine, for a run about to train from `step`.
    pub fn current(cfg: &TrainConfig, step: usize) -> Self {
        Self::on(
            &cfg.model.device.to_string(),
            cfg.model.dtype.as_str(),
            rlvr_model::matmul::worker_threads(),
            step,
        )
    }

    /// The record of a process on this machine that runs on `device` in `dtype` with
    /// `threads` CPU worker threads, from `step`.
    fn on(device: &str, dtype: &str, threads: usize, step: usize) -> Self {
        let cpu = rlvr_model::blas_choice::cpu_model().unwrap_or_else(|| "unknown".into());
        let cpu_features: Vec<String> = rlvr_model::blas_choice::cpu_features()
            .into_iter()
            .map(String::from)
            .collect();
        let matmul = (device == "cpu").then(rlvr_model::matmul::backend_description);
        // the library and kernel, not why it was chosen (a measured choice's rates vary)
        let identity = (device == "cpu").then(rlvr_model::matmul::backend_identity);
        let machine = machine_signature(&cpu, &cpu_features, identity.as_deref(), threads, device);
        HostRecord {
            step,
            started_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            rlvr: env!("CARGO_PKG_VERSION").into(),
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
            cpu,
            cpu_features,
            logical_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            threads,
            device: device.to_string(),
            dtype: dtype.to_string(),
            matmul,
            machine,
        }
    }

    /// Appends this record as one line to `<run_dir>/host.jsonl`.
    pub fn append(&self, run_dir: &Path) -> Result<(), TrainError> {
        let path = RunDir::new(run_dir).host();
        let mut line = serde_json::to_string(self).expect("a host record serializes");
        line.push('\n');
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .map_err(|e| TrainError::io(&path, e))
    }
}

/// The `machine` line of a process on this machine that runs on `device` with `threads` CPU
/// worker threads (what [`HostRecord::current`] records; `rlvr sweep` compares it with the
/// machines a seed's finished runs recorded).
pub fn local_machine(device: &str, threads: usize) -> String {
    HostRecord::on(device, "", threads, 0).machine
}

/// `<cpu> (<features>); <device or matmul library>; <threads> thread(s)`: what must match for
/// two runs to compute alike. The matmul text is the library and its kernel
/// (`rlvr_model::matmul::backend_identity`), not why it was chosen; a loaded file's name is
/// dropped, since it varies by distribution while the library and kernel do not.
pub fn machine_signature(
    cpu: &str,
    features: &[String],
    matmul: Option<&str>,
    threads: usize,
    device: &str,
) -> String {
    let features = if features.is_empty() {
        "no fma/avx2/avx512f".to_string()
    } else {
        features.join(" ")
    };
    let library = match matmul {
        Some(m) => m.split(" (loaded").next().unwrap_or(m).trim().to_string(),
        None => format!("device {device}"),
    };
    format!("{cpu} ({features}); {library}; {threads} thread(s)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_joins_what_decides_the_bits_and_drops_the_file_name() {
        let f = vec!["fma".to_string(), "avx2".to_string()];
        assert_eq!(
            machine_signature(
                "AMD EPYC",
                &f,
                Some("OpenBLAS 0.3.21 DYNAMIC_ARCH Zen MAX_THREADS=64 (loaded libopenblas.so.0, one thread per call)"),
                1,
                "cpu"
            ),
            "AMD EPYC (fma avx2); OpenBLAS 0.3.21 DYNAMIC_ARCH Zen MAX_THREADS=64; 1 thread(s)"
        );
        assert_eq!(
            machine_signature("unknown", &[], None, 8, "cuda:0"),
            "unknown (no fma/avx2/avx512f); device cuda:0; 8 thread(s)"
        );
    }

    #[test]
    fn appends_one_line_per_start_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = TrainConfig::default();
        let first = HostRecord::current(&cfg, 0);
        first.append(dir.path()).unwrap();
        let resumed = HostRecord::current(&cfg, 50);
        resumed.append(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(HOST_FILE)).unwrap();
        let lines: Vec<HostRecord> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines, vec![first.clone(), resumed]);
        assert_eq!(lines[1].step, 50);
        assert!(first.threads >= 1 && first.logical_cpus >= 1);
        assert_eq!(first.device, cfg.model.device.to_string());
        // on the CPU the record names the matmul library, and the machine line carries it
        let matmul = first
            .matmul
            .as_deref()
            .expect("the default device is the CPU");
        let library = rlvr_model::matmul::backend_identity();
        assert!(
            matmul.starts_with(library.split(" (loaded").next().unwrap()),
            "{matmul}"
        );
        assert!(first.machine.contains(&library), "{}", first.machine);
        assert!(first.machine.starts_with(&first.cpu), "{}", first.machine);
    }

    #[test]
    fn an_unwritable_run_dir_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-dir");
        let err = HostRecord::current(&TrainConfig::default(), 0)
            .append(&missing)
            .unwrap_err()
            .to_string();
        assert!(err.contains("host.jsonl"), "{err}");
    }
}
