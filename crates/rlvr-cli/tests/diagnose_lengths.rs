//! `rlvr diagnose`: where the response lengths come from. A record's token count (rlvr's
//! `length`, or `response_length`) is used exactly, never re-counted; only text-only records
//! (verl's and TRL's dumps) are re-tokenized, and the report says so, naming the tokenizer and
//! any re-counted length above `--max-len`. A bad count is an error naming file, line and key.

#[allow(dead_code)] // TINY_TESTBED and the model builders are for the other CLI tests
mod common;
use common::{rlvr_here as rlvr, tokenizer_dir};

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

fn tok_arg() -> String {
    tokenizer_dir().display().to_string()
}

/// The fixture tokenizer's count of `text` (what a re-count gives).
fn recount(text: &str) -> usize {
    let tok = rlvr_model::ChatTokenizer::from_dir(&tokenizer_dir()).unwrap();
    tok.encode(text, false).unwrap().len()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn diagnose_json(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["diagnose", path.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&ok(&rlvr(&args))).unwrap()
}

fn diagnose_table(path: &Path, extra: &[&str]) -> String {
    let mut args = vec!["diagnose", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    ok(&rlvr(&args))
}

fn lengths(v: &Value) -> Vec<u64> {
    v["sequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["length"].as_u64().unwrap())
        .collect()
}

/// Two prompts, two responses each; the second response of each group is long.
const OUTPUTS: [&str; 4] = [
    "4",
    "Let me think step by step: 2 plus 2 makes 5.",
    "9",
    "It is 6 because 3+3, and I double-checked it",
];
const SCORES: [f64; 4] = [1.0, 0.0, 1.0, 0.0];

/// TRL's wandb `completions` table: text only.
fn trl_table(dir: &Path, outputs: &[&str]) -> PathBuf {
    let data: Vec<Value> = outputs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let p = format!("prompt {}", i / 2);
            json!([1, [{"role": "user", "content": p}], o, SCORES[i % 4]])
        })
        .collect();
    let table = json!({"columns": ["step", "prompt", "completion", "accuracy_reward"],
                       "data": data});
    let path = dir.join("completions.table.json");
    std::fs::write(&path, table.to_string()).unwrap();
    path
}

/// verl's `<step>.jsonl`, each line with `extra` merged in.
fn verl_dump(dir: &Path, extra: &[Value]) -> PathBuf {
    let mut text = String::new();
    for (i, o) in OUTPUTS.iter().enumerate() {
        let mut line = json!({"input": format!("prompt {}", i / 2), "output": o, "gts": "x",
                              "score": SCORES[i], "step": 1});
        if let Some(Value::Object(m)) = extra.get(i) {
            for (k, v) in m {
                line[k] = v.clone();
            }
        }
        text += &format!("{line}\n");
    }
    let path = dir.join("1.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn text_only_dumps_say_which_tokenizer_re_counted_the_lengths() {
    let dir = tempfile::tempdir().unwrap();
    let tok = tok_arg();
    for path in [trl_table(dir.path(), &OUTPUTS), verl_dump(dir.path(), &[])] {
        let table = diagnose_table(&path, &["--tokenizer", &tok]);
        assert!(
            table.contains(&format!(
                "token counts: 4 of 4 re-counted from the response text by tokenizer {tok}"
            )),
            "{table}"
        );
        assert!(
            table.contains("may differ from the ones the run trained on"),
            "{table}"
        );
        assert!(table.contains("end-of-sequence token"), "{table}");
        assert!(table.contains("no length cap given: --max-len"), "{table}");

        let v = diagnose_json(&path, &["--tokenizer", &tok]);
        let l = &v["lengths"];
        assert_eq!(l["re_counted"], 4, "{l}");
        assert_eq!(l["from_field"], 0, "{l}");
        assert_eq!(l["tokenizer"], tok.as_str(), "{l}");
        let note = l["note"].as_str().unwrap();
        assert!(note.contains(&format!("by tokenizer {tok}")), "{note}");
        assert!(note.contains("may differ"), "{note}");
        let want: Vec<u64> = OUTPUTS.iter().map(|o| recount(o) as u64).collect();
        assert_eq!(lengths(&v), want);
    }
}

#[test]
fn counts_a_dump_holds_are_used_exactly_not_re_counted() {
    let dir = tempfile::tempdir().unwrap();
    let tok = tok_arg();
    // rlvr's own dump (trainer.rollout_data_dir): verl's fields plus uid and length. The counts
    // are not what re-tokenizing the text gives, so a re-count would show.
    let counts = [7u64, 300, 5, 211];
    for (o, &c) in OUTPUTS.iter().zip(&counts) {
        assert_ne!(
            recount(o) as u64,
            c,
            "the fixture must tell a re-count apart"
        );
    }
    for key in ["length", "response_length"] {
        let extra: Vec<Value> = counts
            .iter()
            .enumerate()
            .map(|(i, c)| json!({"uid": format!("u{}", i / 2), key: c}))
            .collect();
        let path = verl_dump(dir.path(), &extra);
        // a tokenizer is at hand, and still not used
        let v = diagnose_json(&path, &["--tokenizer", &tok]);
        assert_eq!(lengths(&v), counts, "{key}");
        let l = &v["lengths"];
        assert_eq!(l["from_field"], 4, "{l}");
        assert_eq!(l["re_counted"], 0, "{l}");
        assert_eq!(l["fields"], json!([key]), "{l}");
        assert_eq!(l["tokenizer"], Value::Null, "{l}");
        let table = diagnose_table(&path, &[]);
        assert!(
            table.contains(&format!(
                "token counts: all 4 read from the records' \"{key}\" field"
            )),
            "{table}"
        );
        assert!(!table.contains("re-counted from"), "{table}");
    }
}

#[test]
fn a_dump_mixing_counts_and_text_counts_each_its_own_way() {
    let dir = tempfile::tempdir().unwrap();
    let tok = tok_arg();
    let extra = [
        json!({"length": 99}),
        json!({}),
        json!({"length": 3}),
        json!({}),
    ];
    let path = verl_dump(dir.path(), &extra);
    let v = diagnose_json(&path, &["--tokenizer", &tok]);
    let want = [
        99,
        recount(OUTPUTS[1]) as u64,
        3,
        recount(OUTPUTS[3]) as u64,
    ];
    assert_eq!(lengths(&v), want);
    assert_eq!(v["lengths"]["from_field"], 2);
    assert_eq!(v["lengths"]["re_counted"], 2);
    let table = diagnose_table(&path, &["--tokenizer", &tok]);
    assert!(
        table.contains(&format!(
            "2 of 4 re-counted from the response text by tokenizer {tok}"
        )) && table.contains("2 read from the records' \"length\" field"),
        "{table}"
    );
}

#[test]
fn re_counted_lengths_above_max_len_are_reported_not_clipped() {
    let dir = tempfile::tempdir().unwrap();
    let tok = tok_arg();
    // a "cut" completion whose text re-counts to more tokens than the run's cap of 24
    let long = "abcdefghij klmnopqrst uvwxyz 0123456789 ABCDEFG";
    let outputs = [OUTPUTS[0], long, OUTPUTS[2], OUTPUTS[3]];
    let n = recount(long);
    assert!(n > 24, "{n}");
    let path = trl_table(dir.path(), &outputs);
    let v = diagnose_json(&path, &["--tokenizer", &tok, "--max-len", "24"]);
    assert_eq!(lengths(&v)[1], n as u64, "clipped");
    let over = outputs.iter().filter(|o| recount(o) > 24).count();
    let l = &v["lengths"];
    assert_eq!(l["max_len_given"], 24, "{l}");
    assert_eq!(l["over_max_len"], over, "{l}");
    assert_eq!(l["over_max_len_re_counted"], over, "{l}");
    let table = diagnose_table(&path, &["--tokenizer", &tok, "--max-len", "24"]);
    assert!(
        table.contains(&format!(
            "{over} of 4 lengths exceed --max-len 24 (longest {n}; {over} of them re-counted \
             from text): counted as they are, not clipped to 24."
        )),
        "{table}"
    );
    // within the cap: said too
    let table = diagnose_table(&path, &["--tokenizer", &tok, "--max-len", "1000"]);
    assert!(
        table.contains(&format!(
            "every length is within --max-len 1000 (longest {n})"
        )),
        "{table}"
    );
}

#[test]
fn bad_counts_are_errors_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let tok = tok_arg();
    for (field, needle) in [
        (
            r#""length": -3"#,
            "\"length\" must be a token count (a non-negative integer), got -3",
        ),
        (r#""length": 2.5"#, "got 2.5 (not an integer)"),
        (
            r#""length": 3.0"#,
            "got 3.0 (a float; token counts are integers)",
        ),
        (r#""length": -0.5"#, "got -0.5 (negative)"),
        (r#""length": 1e300"#, "more than any response holds"),
        (
            r#""length": 99999999999"#,
            "\"length\" is 99999999999 tokens, more than any",
        ),
        (
            r#""length": 18446744073709551616"#,
            "more than any response holds",
        ),
        (r#""length": "12""#, "got the string \"12\""),
        (r#""length": true"#, "got the bool true"),
        (r#""length": null"#, "got null (a missing or NaN count"),
        (r#""length": [1, 2]"#, "got [1,2]"),
        (
            r#""response_length": {"n": 1}"#,
            "\"response_length\" must be a token count",
        ),
        (
            r#""length": 3, "response_length": 4"#,
            "\"length\" (3) and \"response_length\" (4) disagree",
        ),
    ] {
        // verl/rlvr dump layout, the bad record on line 2
        let path = dir.path().join("2.jsonl");
        let good = r#"{"input": "p", "output": "a", "score": 1, "step": 2, "length": 1}"#;
        let bad = format!(r#"{{"input": "p", "output": "bb", "score": 0, "step": 2, {field}}}"#);
        std::fs::write(&path, format!("{good}\n{bad}\n")).unwrap();
        let out = rlvr(&["diagnose", path.to_str().unwrap(), "--tokenizer", &tok]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{field}: {err}");
        assert!(
            err.contains(&format!("{}:2:", path.display())),
            "{field}: {err}"
        );
        assert!(err.contains(needle), "{field}: {err}");
    }
    // rlvr's {group, reward, length} layout: the same checks
    let path = dir.path().join("rlvr.jsonl");
    std::fs::write(
        &path,
        "{\"group\": 1, \"reward\": 1, \"length\": 3}\n{\"group\": 1, \"reward\": 0, \"length\": 3.5}\n",
    )
    .unwrap();
    let out = rlvr(&["diagnose", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}:2:", path.display())) && err.contains("\"length\" must be"),
        "{err}"
    );
    // a wandb table: the row is named
    let table = json!({"columns": ["step", "prompt", "completion", "r", "length"],
                       "data": [[1, "p", "a", 1.0, 2], [1, "p", "b", 0.0, -1]]});
    let path = dir.path().join("t.json");
    std::fs::write(&path, table.to_string()).unwrap();
    let out = rlvr(&["diagnose", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{} element 1:", path.display())) && err.contains("\"length\""),
        "{err}"
    );
}
