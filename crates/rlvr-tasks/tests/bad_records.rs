//! Broken or hostile dataset files through the public loaders: a line that is not UTF-8, a
//! line longer than [`MAX_LINE_BYTES`], a prompt longer than [`MAX_PROMPT_BYTES`]. Each is an
//! error naming the file and the line, read and rejected before a tokenizer ever sees it; and
//! an absurd number of reward workers is refused instead of starting the threads.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rlvr_tasks::data::{read_records, MAX_LINE_BYTES, MAX_PROMPT_BYTES};
use rlvr_tasks::{load_file, FieldMap, RewardConfig, RewardError, RewardFn};

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

const GOOD: &str = r#"{"problem": "1+1?", "answer": "2"}"#;

#[test]
fn a_non_utf8_line_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = format!("{GOOD}\n\n").into_bytes();
    bytes.extend_from_slice(b"{\"problem\": \"caf\xe9?\", \"answer\": \"1\"}\n");
    let p = write(dir.path(), "latin1.jsonl", &bytes);
    let err = read_records(&p).unwrap_err().to_string();
    assert!(
        err.contains("latin1.jsonl: line 3: not UTF-8 (invalid byte at column 17)"),
        "{err}"
    );
    let err = load_file(&p, &FieldMap::problem_answer())
        .unwrap_err()
        .to_string();
    assert!(err.contains("latin1.jsonl: line 3"), "{err}");
    // a json array: the line and column of the first invalid byte
    let p = write(
        dir.path(),
        "latin1.json",
        b"[\n  {\"problem\": \"caf\xe9?\", \"answer\": \"1\"}\n]",
    );
    let err = read_records(&p).unwrap_err().to_string();
    assert!(
        err.contains("latin1.json: not UTF-8 (invalid byte at line 2 column 19)"),
        "{err}"
    );
}

#[test]
fn a_line_longer_than_the_limit_is_refused_before_parsing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("long.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    writeln!(f, "{GOOD}").unwrap();
    // a valid record, one byte over the limit
    let head = br#"{"answer": "1", "problem": ""#;
    let tail = b"\"}";
    let fill = MAX_LINE_BYTES + 1 - head.len() - tail.len();
    f.write_all(head).unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let mut left = fill;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    f.write_all(tail).unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    let err = read_records(&p).unwrap_err().to_string();
    assert!(
        err.contains("long.jsonl: line 2: the line is longer than"),
        "{err}"
    );
}

#[test]
fn crlf_lines_and_a_last_line_without_newline_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "crlf.jsonl",
        format!("{GOOD}\r\n{GOOD}").as_bytes(),
    );
    assert_eq!(read_records(&p).unwrap().len(), 2);
}

#[test]
fn an_over_long_prompt_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let huge = "x".repeat(MAX_PROMPT_BYTES + 1);
    let fits = "x".repeat(MAX_PROMPT_BYTES);
    let text = format!(
        "{GOOD}\n{}\n{}\n",
        serde_json::json!({"problem": fits, "answer": "1"}),
        serde_json::json!({"problem": huge, "answer": "1"}),
    );
    let p = write(dir.path(), "huge.jsonl", text.as_bytes());
    let t = Instant::now();
    let err = load_file(&p, &FieldMap::problem_answer())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("huge.jsonl: line 3: field `problem`: the prompt is 4194305 bytes"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());

    // chat prompts count their messages, parquet-like json arrays name the element
    let msgs = serde_json::json!([{"role": "user", "content": huge}]);
    let text = serde_json::json!([
        {"prompt": [{"role": "user", "content": "hi"}], "reward_model": {"ground_truth": "1"}},
        {"prompt": msgs, "reward_model": {"ground_truth": "1"}},
    ]);
    let p = write(dir.path(), "chat.json", text.to_string().as_bytes());
    let err = load_file(&p, &FieldMap::verl()).unwrap_err().to_string();
    assert!(
        err.contains("chat.json: element 1: field `prompt`: the prompt is"),
        "{err}"
    );
}

#[test]
fn absurd_reward_worker_counts_are_refused_quickly() {
    let t = Instant::now();
    let err = RewardFn::new(&RewardConfig {
        num_workers: 100_000,
        ..RewardConfig::default()
    })
    .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert!(matches!(
        err,
        RewardError::TooManyWorkers {
            workers: 100_000,
            ..
        }
    ));
    assert!(err.is_user_input());
    assert!(err.to_string().contains("num_workers = 100000"), "{err}");
    // the bound itself is allowed
    let max = rlvr_tasks::reward::max_workers();
    let f = RewardFn::new(&RewardConfig {
        num_workers: max,
        ..RewardConfig::default()
    })
    .unwrap();
    assert_eq!(f.workers(), max);
}
