//! `rlvr eval` end to end: a checkpoint written by a short `rlvr train` run is evaluated on the
//! held-out testbed problems and on a user's JSON-lines file; the printed metrics must agree
//! with the per-sample file, the run must be reproducible from its seed, greedy decoding must
//! give k identical samples, and bad input must exit 2 naming what is wrong.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{log, rlvr, TINY_TESTBED};

/// A tiny testbed checkpoint: warm start plus two GRPO steps.
fn tiny_checkpoint(dir: &Path) -> PathBuf {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/testbed.toml");
    let cache = format!("testbed.cache_dir={}", dir.join("cache").display());
    let runs = format!("trainer.runs_dir={}", dir.join("runs").display());
    let mut args = vec!["train", "--config", config.to_str().unwrap()];
    for kv in TINY_TESTBED.into_iter().chain([
        "testbed.warm_start_steps=40",
        "trainer.run_name=tiny",
        "eval.n_problems=4",
        "eval.k=2",
        "logging.progress=false",
        cache.as_str(),
        runs.as_str(),
    ]) {
        args.extend(["--set", kv]);
    }
    let o = rlvr(&args, dir);
    assert!(o.status.success(), "train failed:\n{}", log(&o));
    let ckpt = dir.join("runs/tiny/checkpoint");
    assert!(ckpt.join("config.json").exists(), "{}", log(&o));
    ckpt
}

struct Eval {
    summary: serde_json::Value,
    samples: Vec<serde_json::Value>,
    samples_text: String,
}

fn eval(dir: &Path, model: &Path, data: &str, extra: &[&str], out: &str) -> Eval {
    let out_path = dir.join(out);
    let mut args = vec![
        "eval",
        "--model",
        model.to_str().unwrap(),
        "--data",
        data,
        "--max-tokens",
        "48",
        "--json",
        "--out",
        out_path.to_str().unwrap(),
    ];
    args.extend(extra);
    let o = rlvr(&args, dir);
    assert!(o.status.success(), "eval failed:\n{}", log(&o));
    let summary: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", log(&o)));
    let samples_text = std::fs::read_to_string(&out_path).unwrap();
    let samples = samples_text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Eval {
        summary,
        samples,
        samples_text,
    }
}

/// Correct samples per problem index, checking that every problem has `k` samples numbered
/// 0..k in order.
fn correct_per_problem(samples: &[serde_json::Value], k: usize) -> BTreeMap<u64, usize> {
    let mut per = BTreeMap::<u64, Vec<&serde_json::Value>>::new();
    for s in samples {
        per.entry(s["problem"].as_u64().unwrap())
            .or_default()
            .push(s);
    }
    per.into_iter()
        .map(|(p, v)| {
            assert_eq!(v.len(), k, "problem {p}");
            for (j, s) in v.iter().enumerate() {
                assert_eq!(s["sample"].as_u64(), Some(j as u64), "problem {p}");
            }
            (p, v.iter().filter(|s| s["correct"] == true).count())
        })
        .collect()
}

#[test]
fn eval_metrics_agree_with_samples_and_are_reproducible() {
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = tiny_checkpoint(tmp.path());
    let k = 3;
    let args = ["--k", "3", "--n-problems", "10", "--seed", "5"];
    let a = eval(tmp.path(), &ckpt, "testbed", &args, "a.jsonl");
    assert_eq!(a.summary["n_problems"], 10);
    assert_eq!(a.summary["k"], 3);
    assert_eq!(a.samples.len(), 10 * k);
    let per = correct_per_problem(&a.samples, k);
    assert_eq!(
        per.keys().copied().collect::<Vec<_>>(),
        (0..10).collect::<Vec<_>>()
    );
    let mean = per.values().sum::<usize>() as f64 / (10 * k) as f64;
    let pass = per.values().filter(|&&c| c > 0).count() as f64 / 10.0;
    let got_mean = a.summary["mean_at_k"].as_f64().unwrap();
    let got_pass = a.summary["pass_at_k"].as_f64().unwrap();
    assert!((got_mean - mean).abs() < 1e-12, "{got_mean} vs {mean}");
    assert!((got_pass - pass).abs() < 1e-12, "{got_pass} vs {pass}");
    for s in &a.samples {
        assert_eq!(s["data_source"], "testbed");
        // testbed ids spell the terms, whose sum is the gold answer
        let id = s["id"].as_str().unwrap();
        let terms: Vec<&str> = id.split('-').skip(1).collect();
        let sum: u64 = terms.iter().map(|t| t.parse::<u64>().unwrap()).sum();
        assert_eq!(s["answer"].as_str().unwrap(), sum.to_string(), "{id}");
        // the question asked, as the testbed writes it ("Add: 7 9 5 =")
        assert_eq!(
            s["question"].as_str().unwrap(),
            format!("Add: {} =", terms.join(" ")),
            "{id}"
        );
        assert!(s["choices"].is_null(), "{s}");
        assert!(s["tokens"].as_u64().unwrap() <= 48);
    }

    // the same seed gives the same samples; another seed other samples
    let b = eval(tmp.path(), &ckpt, "testbed", &args, "b.jsonl");
    assert_eq!(a.samples_text, b.samples_text);
    let other = ["--k", "3", "--n-problems", "10", "--seed", "6"];
    let c = eval(tmp.path(), &ckpt, "testbed", &other, "c.jsonl");
    assert_ne!(a.samples_text, c.samples_text);

    // greedy: the k samples of a problem are identical, so mean@k = pass@k
    let greedy = ["--k", "3", "--n-problems", "6", "--temperature", "0"];
    let g = eval(tmp.path(), &ckpt, "testbed", &greedy, "g.jsonl");
    for chunk in g.samples.chunks(k) {
        assert!(
            chunk.iter().all(|s| s["response"] == chunk[0]["response"]),
            "{chunk:?}"
        );
    }
    assert_eq!(g.summary["mean_at_k"], g.summary["pass_at_k"]);
}

#[test]
fn eval_reads_a_users_jsonl_and_rejects_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let ckpt = tiny_checkpoint(tmp.path());
    let data = tmp.path().join("mine.jsonl");
    std::fs::write(
        &data,
        "{\"problem\": \"2+3\", \"answer\": \"5\", \"id\": \"p1\"}\n\n\
         {\"problem\": \"4+4\", \"answer\": \"8\", \"id\": \"p2\"}\n",
    )
    .unwrap();
    let e = eval(
        tmp.path(),
        &ckpt,
        data.to_str().unwrap(),
        &["--k", "2"],
        "mine-out.jsonl",
    );
    assert_eq!(e.summary["n_problems"], 2);
    let field = |name: &str| -> Vec<String> {
        e.samples
            .iter()
            .map(|s| s[name].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(field("id"), ["p1", "p1", "p2", "p2"]);
    assert_eq!(field("answer"), ["5", "5", "8", "8"]);

    let model = ckpt.to_str().unwrap();
    let data_s = data.to_str().unwrap();
    // a malformed line: exit 2, naming the file and the line
    let bad = tmp.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"problem\": \"1+1\", \"answer\": \"2\"}\n{\"problem\": \"1+2\", \"answer\": \n",
    )
    .unwrap();
    let o = rlvr(
        &["eval", "--model", model, "--data", bad.to_str().unwrap()],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.jsonl") && err.contains("line 2"), "{err}");
    // a missing model directory
    let o = rlvr(
        &["eval", "--model", "no/such/dir", "--data", data_s],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no/such/dir"));
    // a missing data file
    let o = rlvr(
        &["eval", "--model", model, "--data", "missing.jsonl"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.jsonl"));
    // k = 0
    let o = rlvr(
        &["eval", "--model", model, "--data", data_s, "--k", "0"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--k"));
    // sampler settings out of range name their flag, before the model is read
    for args in [
        ["--temperature=-1"].as_slice(),
        &["--temperature", "nan"],
        &["--top-p", "0"],
        &["--top-p", "1.5"],
        &["--max-tokens", "0"],
    ] {
        let mut argv = vec!["eval", "--model", "no/such/model", "--data", data_s];
        argv.extend_from_slice(args);
        let o = rlvr(&argv, tmp.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", log(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        let flag = args[0].split('=').next().unwrap();
        assert!(
            err.contains(flag) && !err.contains("no/such/model"),
            "{args:?}: {err}"
        );
    }
}
