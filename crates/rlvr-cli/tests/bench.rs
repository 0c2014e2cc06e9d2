//! `rlvr bench grpo`, `rlvr bench matmul` and `rlvr bench optimizer` end to end on a tiny random model with a
//! byte-level tokenizer: the printed fields are there and consistent (the phases fit in the
//! step, the exactly on-policy step recomputes no old log-probs, random rewards are never
//! constant over a step), and bad arguments exit 2 with a message naming the argument.

#[allow(dead_code)] // TINY_TESTBED is for the other CLI tests
mod common;

use std::path::Path;

use common::{log, rlvr, save_one_layer_model};
use rlvr_model::ChatTokenizer;

/// A random one-layer model over the 256 byte-level symbols plus `<eos>` (id 256).
fn save_byte_model(dir: &Path) {
    let tok = ChatTokenizer::byte_level().unwrap();
    save_one_layer_model(dir, &tok, 257, 256, 64, 5);
}

/// The number after `key: ` on its own line of `out`.
fn field(out: &str, key: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no `{key}:` line in\n{out}"));
    line[key.len() + 2..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|e| panic!("`{line}`: {e}"))
}

#[test]
fn bench_grpo_one_step_prints_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    save_byte_model(&model);
    let m = model.to_str().unwrap();
    let o = rlvr(
        &[
            "bench",
            "grpo",
            "--model",
            m,
            "--prompts",
            "2",
            "--generations",
            "3",
            "--new-tokens",
            "8",
            "--steps",
            "1",
            "--json",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", log(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    for key in [
        "step_seconds",
        "step_cpu_seconds",
        "completion_tokens_per_second",
        "generation_seconds",
        "old_logprob_seconds",
        "forward_backward_seconds",
        "optimizer_seconds",
    ] {
        assert!(field(&out, key) >= 0.0, "{key}: {out}");
    }
    assert!(field(&out, "peak_rss_mib") > 1.0, "{out}");
    let json: serde_json::Value =
        serde_json::from_str(out.lines().last().unwrap()).expect("last line is JSON");
    let med = |k: &str| json["median"][k].as_f64().unwrap();
    let (step, gen, old, fb, opt) = (
        med("step"),
        med("generation"),
        med("old_logprobs"),
        med("forward_backward"),
        med("optimizer"),
    );
    assert!(step > 0.0 && gen > 0.0 && fb > 0.0 && opt > 0.0, "{out}");
    // two threads at most: the CPU time of a step is under twice its wall time (+ clock ticks)
    let cpu = med("step_cpu");
    assert!(cpu > 0.0 && cpu <= 2.0 * step + 0.02, "{out}");
    // exactly on-policy (one epoch, one mini-batch, no KL): no old log-prob pass runs
    assert!(old < 1e-3, "{out}");
    assert!(gen + old + fb + opt <= step, "{out}");
    // 2 x 3 x 8 = 48 completion tokens per step
    assert_eq!(json["completion_tokens_per_step"], 48);
    let tps = json["completion_tokens_per_second"].as_f64().unwrap();
    assert!((tps * step - 48.0).abs() < 1e-6, "{out}");
    assert_eq!(json["steps"].as_array().unwrap().len(), 1);
    // six random 0/1 rewards, never all equal: the mean is a multiple of 1/6 inside (0, 1)
    let r = json["steps"][0]["reward_mean"].as_f64().unwrap();
    assert!(
        r > 0.0 && r < 1.0 && ((r * 6.0) - (r * 6.0).round()).abs() < 1e-9,
        "{r}"
    );

    for cpu_time in [false, true] {
        let mut args = vec![
            "bench", "matmul", "--model", m, "--tokens", "32", "--reps", "1", "--json",
        ];
        if cpu_time {
            args.push("--cpu-time");
        }
        let o = rlvr(&args, dir.path());
        assert!(o.status.success(), "{}", log(&o));
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let json: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        assert_eq!(json["cpu_time"], cpu_time);
        check_matmul_rows(&json);
        assert_eq!(
            json["decode"],
            serde_json::json!([]),
            "no --decode, no decode row"
        );
    }

    // one sampling step's products for 3 rows: the layer's four and the head's, 2 flops per
    // multiply-add (k x n of each: 16x32, 16x16, 16x64, 32x16, 16x257)
    let o = rlvr(
        &[
            "bench", "matmul", "--model", m, "--tokens", "4", "--reps", "1", "--decode", "3",
            "--json",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", log(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.contains("one sampling step's products for 3 rows"),
        "{out}"
    );
    let json: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let decode = json["decode"].as_array().unwrap();
    assert_eq!(decode.len(), 1, "{json}");
    let flops = 2.0 * 3.0 * (16 * 32 + 16 * 16 + 16 * 64 + 32 * 16 + 16 * 257) as f64;
    assert!(
        (decode[0]["gflop"].as_f64().unwrap() * 1e9 - flops).abs() < 1e-6,
        "{json}"
    );
    assert_eq!(decode[0]["rows"], 3);
    let (secs, gflops) = (
        decode[0]["seconds"].as_f64().unwrap(),
        decode[0]["gflops"].as_f64().unwrap(),
    );
    assert!(secs > 0.0 && gflops.is_finite() && gflops > 0.0, "{json}");
}

/// The binary has no link-time BLAS: by default it measures every library it finds and says
/// which runs the products and why; a named library that does not load falls back to the
/// built-in gemm crate, saying why and which kernel; `RLVR_BLAS` picks either built-in crate
/// (`cpu/blas.rs`, `cpu/blas_choice.rs`).
#[test]
fn bench_matmul_says_which_blas_runs_and_falls_back_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model");
    save_byte_model(&model);
    let m = model.to_str().unwrap();
    let header = |blas: Option<&str>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rlvr"));
        cmd.args([
            "bench", "matmul", "--model", m, "--tokens", "16", "--reps", "1",
        ])
        .current_dir(dir.path())
        // the measured choice's cache (cpu/blas_choice.rs) in the test's own directory
        .env("XDG_CACHE_HOME", dir.path().join("cache"));
        match blas {
            Some(v) => cmd.env("RLVR_BLAS", v),
            None => cmd.env_remove("RLVR_BLAS"),
        };
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", log(&o));
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        out.lines().next().unwrap_or("").to_string()
    };
    let missing = header(Some("/nonexistent/libopenblas.so.0"));
    assert!(
        missing.contains("by gemm crate 0.19.0 (pure Rust, ")
            && missing.contains(" kernel): /nonexistent/libopenblas.so.0 could not be loaded"),
        "{missing}"
    );
    for (v, line) in [
        ("gemm", "by gemm crate 0.19.0 (pure Rust, "),
        ("matrixmultiply", "by matrixmultiply 0.3.11 (pure Rust, "),
        ("none", "by gemm crate 0.19.0 (pure Rust, "),
    ] {
        let off = header(Some(v));
        assert!(
            off.contains(line) && off.contains(&format!(" kernel): RLVR_BLAS={v},")),
            "{off}"
        );
    }
    // the default is measured among every library found, and says so with each one's rate;
    // CI installs the system OpenBLAS, so it must be among them
    let default = header(None);
    let cache = dir.path().join("cache/rlvr/matmul-choice.json");
    assert!(
        default.contains("chosen by measurement (")
            && default.contains("gemm crate ")
            && default.contains("matrixmultiply ")
            && default.contains(&format!("cached in {}", cache.display())),
        "{default}"
    );
    if std::env::var_os("CI").is_some() {
        assert!(default.contains("OpenBLAS "), "{default}");
    }
    // the next process takes the recorded choice
    let again = header(None);
    assert!(
        again.contains(&format!("measured earlier, cached in {}", cache.display())),
        "{again}"
    );
    let kind = |h: &str| h.split(": chosen by").next().unwrap_or("").to_string();
    assert_eq!(kind(&again), kind(&default));
}

/// `rlvr bench optimizer` runs each way of stepping and says how many bytes a parameter each
/// must move: the clipped step reads the weight once for its bound and the update reads 16
/// and writes 12 (the norm recorded by the accumulation), 4 more when the gradients were set
/// from outside, 56 as separate passes (norm, clip in place, check, update), and a bf16
/// weight writes its 2 bytes beside its f32 master's.
#[test]
fn bench_optimizer_runs_every_way_and_counts_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for (extra, bytes, what) in [
        (&[][..], 32, "fused host pass, clipping folded in:"),
        (&["--norm-pass"][..], 36, "clipping folded in, a norm pass:"),
        (
            &["--separate-passes"][..],
            56,
            "clipping and check separate:",
        ),
        (
            &["--dtype", "bf16"][..],
            34,
            "bf16 with f32 master), fused host pass",
        ),
        (&["--tensor-path"][..], 32, "tensor-op path:"),
    ] {
        let mut args = vec![
            "bench",
            "optimizer",
            "--shape",
            "bench-tiny",
            "--steps",
            "1",
        ];
        args.extend(extra);
        let o = rlvr(&args, dir.path());
        assert!(o.status.success(), "{extra:?}: {}", log(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains(what) && out.contains(&format!("({bytes} bytes a parameter)")),
            "{extra:?}: {out}"
        );
    }
}

/// The five products of the one-layer test model, with finite positive GFLOP/s.
fn check_matmul_rows(json: &serde_json::Value) {
    let rows = json["products"].as_array().unwrap();
    let layers: Vec<&str> = rows.iter().map(|r| r["layer"].as_str().unwrap()).collect();
    assert_eq!(layers, ["qkv", "o", "gate_up", "down", "lm_head"]);
    // q 2x8 + k, v 1x8 each = 32 outputs; gate+up 2 x 32; the head: the vocabulary
    let kn: Vec<(u64, u64)> = rows
        .iter()
        .map(|r| (r["k"].as_u64().unwrap(), r["n"].as_u64().unwrap()))
        .collect();
    assert_eq!(kn, [(16, 32), (16, 16), (16, 64), (32, 16), (16, 257)]);
    for r in rows {
        for k in [
            "forward_gflops",
            "backward_input_gflops",
            "backward_weight_gflops",
        ] {
            let g = r[k].as_f64().unwrap();
            assert!(g.is_finite() && g > 0.0, "{k} {g}");
        }
    }
}

#[test]
fn bench_argument_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["bench", "grpo", "--model", "no-such-dir"],
            "--model no-such-dir: no such directory",
        ),
        (&["bench", "grpo", "--model", "."], "no config.json"),
        (
            &["bench", "grpo", "--model", ".", "--generations", "1"],
            "--generations must be at least 2",
        ),
        (
            &["bench", "grpo", "--model", ".", "--new-tokens", "0"],
            "--new-tokens must be at least 1",
        ),
        (
            &["bench", "grpo", "--model", ".", "--steps", "0"],
            "--steps must be at least 1",
        ),
        (
            &["bench", "matmul", "--tokens", "0"],
            "--tokens must be at least 1",
        ),
        (
            &["bench", "matmul", "--decode", "0"],
            "--decode must be at least 1",
        ),
    ];
    for (args, want) in cases {
        let o = rlvr(args, dir.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", log(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{args:?}: want {want:?} in {err}");
    }
    // clap's own errors (missing --model, not a number) also exit 2 naming the argument
    let o = rlvr(&["bench", "grpo"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--model"));
    let o = rlvr(
        &["bench", "grpo", "--model", ".", "--prompts", "x"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--prompts"));
}
