//! `rlvr eval` on a code dataset: the sampled programs run in the sandbox and pass@k / mean@k
//! come from their verdicts. The model is a random one over a four-token vocabulary whose
//! tokens are a right program, a wrong program, `?` and end-of-sequence, so that about a
//! quarter of one-token responses are right: each sample's verdict in `--out` must be what
//! running its program gives (right iff the extracted program is the one printing the expected
//! number), and the printed metrics must agree with the samples. Bad settings exit 2 naming
//! what is wrong.

#[allow(dead_code)] // TINY_TESTBED is for the other CLI tests
mod common;

use std::path::Path;

use common::{log, rlvr, save_one_layer_model};
use rlvr_model::ChatTokenizer;

const PRINT3: &str = "```python\nprint(3)\n```";
const PRINT4: &str = "```python\nprint(4)\n```";

/// A random model whose tokens are [PRINT3, PRINT4, "?", "<eos>"]; a prompt is one `?` token.
fn save_program_model(dir: &Path) {
    let mut vocab = serde_json::Map::new();
    for (i, t) in [PRINT3, PRINT4, "?", "<eos>"].into_iter().enumerate() {
        vocab.insert(t.to_string(), i.into());
    }
    let json = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [{
            "id": 3, "content": "<eos>", "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true
        }],
        "normalizer": null,
        "pre_tokenizer": null,
        "post_processor": null,
        "decoder": {"type": "Fuse"},
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "?"}
    });
    let tok: rlvr_model::tokenizers::Tokenizer = json.to_string().parse().unwrap();
    let tok = ChatTokenizer::new(tok, Some("<eos>")).unwrap();
    save_one_layer_model(dir, &tok, 4, 3, 16, 3);
}

/// Two stdin/stdout problems: print 3, print 4.
fn write_data(path: &Path) {
    let text = [("three", "3"), ("four", "4")]
        .iter()
        .map(|(id, out)| {
            serde_json::json!({
                "id": id, "problem": format!("Print {out}."),
                "tests": [{"input": "", "output": format!("{out}\n")}]
            })
            .to_string()
                + "\n"
        })
        .collect::<String>();
    std::fs::write(path, text).unwrap();
}

fn have_python() -> bool {
    rlvr_test_support::python(&rlvr_tasks::code::SandboxConfig::default().python).is_some()
}

#[test]
fn eval_on_a_code_dataset_reports_pass_at_k_from_the_sandbox() {
    if !have_python() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let model = tmp.path().join("model");
    save_program_model(&model);
    let data = tmp.path().join("code.jsonl");
    write_data(&data);
    let out = tmp.path().join("samples.jsonl");
    let k = 12;
    let o = rlvr(
        &[
            "eval",
            "--model",
            model.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
            "--k",
            &k.to_string(),
            "--max-tokens",
            "1",
            "--seed",
            "1",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", log(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let samples: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(samples.len(), 2 * k);

    // each verdict is what running the program gives: right iff it prints the expected number
    let mut per_problem = [0usize; 2];
    let mut kinds = std::collections::BTreeSet::new();
    for s in &samples {
        let p = s["problem"].as_u64().unwrap() as usize;
        let response = s["response"].as_str().unwrap();
        let want = ["print(3)", "print(4)"][p];
        let program = rlvr_tasks::code::extract_code(response);
        let right = program.as_deref().map(str::trim) == Some(want);
        assert_eq!(s["correct"], right, "{s}");
        assert_eq!(s["reward"], if right { 1.0 } else { 0.0 }, "{s}");
        assert_eq!(s["scorer"], "code", "{s}");
        let reason = s["reason"].as_str().unwrap();
        match program {
            None => assert_eq!(reason, "no code block found", "{s}"),
            Some(_) if right => assert_eq!(reason, "1/1 tests passed", "{s}"),
            Some(_) => assert_eq!(reason, "0/1 tests passed; test 0: wrong output", "{s}"),
        }
        kinds.insert(response.to_string());
        per_problem[p] += usize::from(right);
    }
    // the random model wrote right programs, wrong programs and no program
    assert!(
        kinds.contains(PRINT3) && kinds.contains(PRINT4) && kinds.len() >= 3,
        "{kinds:?}"
    );
    let right = per_problem.iter().sum::<usize>();
    assert!(right > 0 && right < 2 * k, "{per_problem:?}");
    let mean = right as f64 / (2 * k) as f64;
    let pass = per_problem.iter().filter(|&&c| c > 0).count() as f64 / 2.0;
    assert_eq!(summary["mean_at_k"].as_f64().unwrap(), mean, "{summary}");
    assert_eq!(summary["pass_at_k"].as_f64().unwrap(), pass, "{summary}");

    // bad settings: exit 2, naming what is wrong
    let m = model.to_str().unwrap();
    let d = data.to_str().unwrap();
    let o = rlvr(
        &["eval", "--model", m, "--data", d, "--reward", "sandbox"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--reward") && err.contains("auto, math, code, testbed"),
        "{err}"
    );
    let o = rlvr(
        &["eval", "--model", m, "--data", d, "--reward", "math"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("problem three") && err.contains("code tests"),
        "{err}"
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(["eval", "--model", m, "--data", d])
        .env("RLVR_PYTHON", "/no/such/python3")
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", log(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/no/such/python3") && err.contains("RLVR_PYTHON"),
        "{err}"
    );
}
