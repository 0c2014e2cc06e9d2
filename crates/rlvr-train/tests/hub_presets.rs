//! Every preset with a hub copy loads through the path of a real download: fetched at its
//! pinned revision from a loopback hub into a temporary cache, then read in that copy's own
//! layout, from a loopback hub (rlvr-hub's tests/common/hub_server.rs). The hub files are tests/fixtures/hub, written by scripts/tasks/make_hub_layout.py
//! (`--small`) from rows of the development data: pyarrow parquet, DAPO's wrapper and block
//! repetition, LiveCodeBench's base64/zlib/`pickle.dumps` private tests. Its MANIFEST.json
//! holds what the script computed from the rows it wrote (problems, duplicates, skipped rows,
//! first answers); the readers here must agree.

#[path = "../../rlvr-hub/tests/common/hub_server.rs"]
mod hub_server;

use std::path::{Path, PathBuf};

use base64::Engine;
use hub_server::{commit_of, HubServer};
use rlvr_hub::HubOptions;
use rlvr_tasks::code::{parse_tests, Tests};
use rlvr_tasks::{HubSource, PromptTemplate, PRESETS};
use rlvr_train::setup::load_dataset_with;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hub")
}

fn manifest() -> Value {
    let text = std::fs::read_to_string(fixtures().join("MANIFEST.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn options(endpoint: &str, cache: &Path) -> HubOptions {
    HubOptions::new(endpoint, cache)
}

fn hub_presets() -> Vec<(&'static str, &'static HubSource)> {
    PRESETS
        .iter()
        .filter_map(|p| p.hub.as_ref().map(|h| (p.name, h)))
        .collect()
}

/// The local data directory (CI sets RLVR_DATA_DIR), for comparisons with the local copies.
fn local_data() -> Option<PathBuf> {
    rlvr_tasks::resolve_data_dir(None).ok()
}

#[test]
fn every_hub_preset_downloads_at_its_revision_and_reads_its_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let server = HubServer::start(&fixtures());
    let empty = tmp.path().join("data");
    std::fs::create_dir_all(&empty).unwrap();
    let cache = tmp.path().join("cache");
    let opts = options(&server.endpoint, &cache);
    let manifest = manifest();
    let presets = hub_presets();
    assert!(presets.len() >= 14, "{}", presets.len());
    let mut fetched = std::collections::HashSet::new();
    for (name, hub) in &presets {
        let want = manifest
            .get(*name)
            .unwrap_or_else(|| panic!("{name}: no fixture in MANIFEST.json"));
        let ds = load_dataset_with(name, Some(&empty), &opts).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ds.name, *name);
        assert_eq!(
            ds.len() as u64,
            want["problems"].as_u64().unwrap(),
            "{name}: problems; skipped {:?}",
            ds.skipped
        );
        if let Some(n) = want.get("duplicates").and_then(Value::as_u64) {
            assert_eq!(ds.duplicates as u64, n, "{name}: duplicates");
        } else {
            assert_eq!(ds.duplicates, 0, "{name}");
        }
        if let Some(n) = want.get("skipped").and_then(Value::as_u64) {
            assert_eq!(ds.skipped.len() as u64, n, "{name}: {:?}", ds.skipped);
        }
        if let Some(answers) = want.get("answers").and_then(Value::as_array) {
            for (p, a) in ds.problems.iter().zip(answers) {
                assert_eq!(p.answer, a.as_str().unwrap(), "{name}: {}", p.id);
            }
        }
        for p in &ds.problems {
            assert!(!p.prompt.text().trim().is_empty(), "{name}: {}", p.id);
            assert!(!p.answer.trim().is_empty(), "{name}: {}", p.id);
        }
        // every file was requested at the pinned revision and sits in the cache
        let log = server.take_log();
        let cache_repo = cache.join(format!("datasets--{}", hub.repo.replace('/', "--")));
        for file in hub.files {
            if !fetched.insert((hub.repo, *file)) {
                continue; // fetched for an earlier preset (livecodebench_v6's test6.jsonl)
            }
            let url = format!("GET /datasets/{}/resolve/{}/{file}", hub.repo, hub.revision);
            assert!(
                log.iter().any(|l| l.starts_with(&url)),
                "{name}: {url} not in {log:?}"
            );
            assert!(
                cache_repo
                    .join(format!("snapshots/{}/{file}", commit_of(hub.revision)))
                    .is_file(),
                "{name}: {file} not cached"
            );
        }
        // a branch name (polaris's `main`) is recorded as a ref to the commit served
        if commit_of(hub.revision) != hub.revision {
            let r = std::fs::read_to_string(cache_repo.join("refs").join(hub.revision));
            assert_eq!(
                r.ok().as_deref().map(str::trim),
                Some(commit_of(hub.revision)),
                "{name}"
            );
        }
    }
    // a second load comes from the cache: no request at all
    for (name, _) in &presets {
        load_dataset_with(name, Some(&empty), &opts).unwrap();
    }
    assert_eq!(server.take_log(), Vec::<String>::new());
}

/// DAPO-Math-17k's hub rows hold DAPO's wrapper; the reader removes it, so the `dapo` template
/// of the recipes renders the hub's own prompt text, and the same problem as the local copy.
#[test]
fn dapo_hub_prompts_round_trip_through_the_dapo_template() {
    let tmp = tempfile::tempdir().unwrap();
    let server = HubServer::start(&fixtures());
    let opts = options(&server.endpoint, &tmp.path().join("cache"));
    let empty = tmp.path().join("data");
    std::fs::create_dir_all(&empty).unwrap();
    let ds = load_dataset_with("dapo_math_17k", Some(&empty), &opts).unwrap();
    // the raw hub prompts, read as plain verl rows
    let rev = rlvr_tasks::data::hub_source("dapo_math_17k")
        .unwrap()
        .revision;
    let path = tmp.path().join(format!(
        "cache/datasets--BytedTsinghua-SIA--DAPO-Math-17k/snapshots/{rev}/data/dapo-math-17k.parquet"
    ));
    let raw = rlvr_tasks::data::read_records(&path).unwrap();
    assert_eq!(raw.len(), 12, "4 rows x 3 repeats");
    for (p, (_, _, row)) in ds.problems.iter().zip(&raw) {
        let hub_text = row["prompt"][0]["content"].as_str().unwrap();
        assert_eq!(PromptTemplate::Dapo.render(p.prompt.text()), hub_text);
        assert!(!p.prompt.text().starts_with("Solve the following"));
    }
    if let Some(dir) = local_data() {
        let local = rlvr_tasks::load_preset("dapo_math_17k", &dir).unwrap();
        for (h, l) in ds.problems.iter().zip(&local.problems) {
            assert_eq!(h.prompt.text(), l.prompt.text());
            assert_eq!(h.answer, l.answer);
        }
    }
}

/// LiveCodeBench rows: stdin tests become the code task's `{input, output}` list (public then
/// private, decoded from Python's pickle); functional tests a check the reference solution of
/// the same LeetCode problem passes in the sandbox; the mixed row is skipped with its reason.
#[test]
fn livecodebench_rows_map_to_code_problems() {
    let tmp = tempfile::tempdir().unwrap();
    let server = HubServer::start(&fixtures());
    let opts = options(&server.endpoint, &tmp.path().join("cache"));
    let empty = tmp.path().join("data");
    std::fs::create_dir_all(&empty).unwrap();
    let ds = load_dataset_with("livecodebench", Some(&empty), &opts).unwrap();
    assert_eq!(ds.skipped.len(), 1, "{:?}", ds.skipped);
    assert!(
        ds.skipped[0].contains("test3.jsonl")
            && ds.skipped[0].contains("mixed0")
            && ds.skipped[0].contains("functional and"),
        "{:?}",
        ds.skipped
    );
    let mut functional = Vec::new();
    for p in &ds.problems {
        assert_eq!(p.data_source, "livecodebench");
        match parse_tests(&p.answer).unwrap() {
            Tests::Io(t) => {
                assert!(!t.is_empty());
                assert!(p.prompt.text().contains("# YOUR CODE HERE"), "{}", p.id);
            }
            Tests::Functional(_) => functional.push(p.clone()),
        }
    }
    assert_eq!(functional.len(), 2);
    // the stdin tests of row cf0 are exactly codeforces.json's first problem's tests
    if let Some(dir) = local_data() {
        let cf = rlvr_tasks::load_preset("codeforces", &dir).unwrap();
        let lcb = ds
            .problems
            .iter()
            .find(|p| p.id == "livecodebench-cf0")
            .unwrap();
        assert_eq!(
            parse_tests(&lcb.answer).unwrap(),
            parse_tests(&cf.problems[0].answer).unwrap()
        );
        let python = rlvr_tasks::code::SandboxConfig::default().python;
        if rlvr_test_support::python(&python).is_some() {
            let lc = rlvr_tasks::load_preset("leetcode", &dir).unwrap();
            let v = rlvr_tasks::code::CodeVerifier::default();
            for p in &functional {
                let i: usize = p.id.trim_start_matches("livecodebench-lc").parse().unwrap();
                let sol = lc.problems[i].solution.as_deref().unwrap();
                let s = rlvr_tasks::Verifier::score(&v, &format!("```python\n{sol}\n```"), p);
                assert!(s.correct, "{}: {}", p.id, s.reason);
                let bad =
                    rlvr_tasks::Verifier::score(&v, "```python\nclass Solution:\n    pass\n```", p);
                assert!(!bad.correct, "{}", p.id);
            }
        }
    }
}

#[test]
fn offline_with_an_empty_cache_names_repository_revision_and_how_to_fetch() {
    let tmp = tempfile::tempdir().unwrap();
    let server = HubServer::start(&fixtures());
    let mut opts = options(&server.endpoint, &tmp.path().join("cache"));
    opts.offline = true;
    let empty = tmp.path().join("data");
    std::fs::create_dir_all(&empty).unwrap();
    for (name, hub) in hub_presets() {
        let err = load_dataset_with(name, Some(&empty), &opts).unwrap_err();
        assert!(err.is_user_input());
        let msg = err.to_string();
        let fetch = format!(
            "hf download {} {} --repo-type dataset --revision {}",
            hub.repo,
            hub.files.join(" "),
            hub.revision
        );
        for want in [
            format!("preset {name}:"),
            "HF_HUB_OFFLINE".to_string(),
            fetch,
            "--data-dir".to_string(),
            "RLVR_DATA_DIR".to_string(),
            empty.display().to_string(),
        ] {
            assert!(msg.contains(&want), "{name}: {want:?} not in {msg}");
        }
        // one message per preset: the first missing file stops it
        assert_eq!(msg.matches("hf download").count(), 1, "{msg}");
    }
    assert!(server.take_log().is_empty());
    // no data directory at all says so
    if local_data().is_none() {
        let err = load_dataset_with("math500", None, &opts)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no local copy (no --data-dir given"), "{err}");
    }
}

// ---------------------------------------------------------------------------------------
// wrong layouts: each error names the preset, the file and the field
// ---------------------------------------------------------------------------------------

/// A copy of the fixture hub with `file` of `repo` replaced by `bytes`.
fn hub_with(root: &Path, repo: &str, file: &str, bytes: &[u8]) {
    copy_dir(&fixtures(), root);
    std::fs::write(root.join("datasets").join(repo).join(file), bytes).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn load_err(root: &Path, name: &str) -> String {
    let server = HubServer::start(root);
    let cache = root.parent().unwrap().join(format!("cache-{name}"));
    let empty = root.parent().unwrap().join("data");
    std::fs::create_dir_all(&empty).unwrap();
    let err =
        load_dataset_with(name, Some(&empty), &options(&server.endpoint, &cache)).unwrap_err();
    assert!(err.is_user_input(), "{err}");
    err.to_string()
}

/// A parquet file with string columns `names`, one row of `values`.
fn parquet_bytes(names: &[&str], values: &[&str]) -> Vec<u8> {
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use std::sync::Arc;
    let cols: String = names
        .iter()
        .map(|n| format!("required binary {n} (UTF8); "))
        .collect();
    let schema = Arc::new(parse_message_type(&format!("message m {{ {cols}}}")).unwrap());
    let mut out = Vec::new();
    let mut w =
        SerializedFileWriter::new(&mut out, schema, Arc::new(WriterProperties::default())).unwrap();
    let mut group = w.next_row_group().unwrap();
    let mut i = 0;
    while let Some(mut col) = group.next_column().unwrap() {
        col.typed::<ByteArrayType>()
            .write_batch(&[ByteArray::from(values[i])], None, None)
            .unwrap();
        col.close().unwrap();
        i += 1;
    }
    group.close().unwrap();
    w.close().unwrap();
    out
}

#[test]
fn a_renamed_column_names_the_preset_file_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("hub");
    // AIME 2024 with `problem` renamed to `question`
    let bytes = parquet_bytes(&["id", "question", "answer"], &["60", "Find x.", "033"]);
    hub_with(
        &root,
        "HuggingFaceH4/aime_2024",
        "data/train-00000-of-00001.parquet",
        &bytes,
    );
    let err = load_err(&root, "aime24");
    for want in [
        "preset aime24",
        "HuggingFaceH4/aime_2024",
        "train-00000-of-00001.parquet",
        "row 0",
        "missing field `problem`",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
}

#[test]
fn a_jsonl_row_without_its_answer_field_names_the_line() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("hub");
    let rows = "{\"problem\": \"1+1?\", \"answer\": \"2\", \"solution\": \"\", \"unique_id\": \"a\"}\n\
                {\"problem\": \"2+2?\", \"gold\": \"4\", \"solution\": \"\", \"unique_id\": \"b\"}\n";
    hub_with(
        &root,
        "HuggingFaceH4/MATH-500",
        "test.jsonl",
        rows.as_bytes(),
    );
    let err = load_err(&root, "math500");
    for want in [
        "preset math500",
        "test.jsonl: line 2",
        "missing field `answer`",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
}

#[test]
fn dapo_rows_without_the_wrapper_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("hub");
    // verl rows whose prompt is the bare problem (the local copy's layout) at the hub path
    let verl = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../rlvr-tasks/tests/fixtures/polaris_tiny.parquet");
    hub_with(
        &root,
        "BytedTsinghua-SIA/DAPO-Math-17k",
        "data/dapo-math-17k.parquet",
        &std::fs::read(verl).unwrap(),
    );
    let err = load_err(&root, "dapo_math_17k");
    for want in [
        "preset dapo_math_17k",
        "dapo-math-17k.parquet: row 0",
        "field `prompt.0.content`: not DAPO's prompt wrapper",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
}

/// One LiveCodeBench row with `field` set to `value` (the other fields valid).
fn lcb_row(field: &str, value: Value) -> String {
    let mut row = serde_json::json!({
        "question_title": "t", "question_content": "Print 1.", "platform": "atcoder",
        "question_id": "q1", "contest_id": "c1", "contest_date": "2024-08-01T00:00:00",
        "starter_code": "", "difficulty": "easy",
        "public_test_cases": "[{\"input\": \"\", \"output\": \"1\", \"testtype\": \"stdin\"}]",
        "private_test_cases": "[]", "metadata": "{}",
    });
    if value.is_null() {
        row.as_object_mut().unwrap().remove(field);
    } else {
        row[field] = value;
    }
    format!("{row}\n")
}

/// base64(zlib(bytes)), LiveCodeBench's outer encoding.
fn b64_zlib(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(bytes).unwrap();
    base64::engine::general_purpose::STANDARD.encode(z.finish().unwrap())
}

/// The Python-made pickle of fixture `name` (rlvr-tasks/tests/fixtures/pickles.json).
fn python_pickle(name: &str) -> Vec<u8> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../rlvr-tasks/tests/fixtures/pickles.json");
    let all: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let e = all.iter().find(|e| e["name"] == name).unwrap();
    let hex = e["hex"].as_str().unwrap();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn livecodebench_layout_errors_name_the_preset_file_line_and_field_or_opcode() {
    let cases: [(&str, Value, &[&str]); 4] = [
        (
            "question_content",
            Value::Null,
            &["line 1", "missing field `question_content`"],
        ),
        (
            "private_test_cases",
            Value::String(b64_zlib(&python_pickle("exploit-global-reduce-p2"))),
            &[
                "line 1",
                "field `private_test_cases`",
                "0x63 GLOBAL",
                "pickle byte 2",
            ],
        ),
        (
            "private_test_cases",
            Value::String(b64_zlib(&python_pickle("list-p4"))),
            &["field `private_test_cases`", "EMPTY_LIST"],
        ),
        (
            "public_test_cases",
            Value::from(3),
            &["field `public_test_cases`: expected a string, found a number"],
        ),
    ];
    for (i, (field, value, wants)) in cases.into_iter().enumerate() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("hub");
        let row = lcb_row(field, value);
        hub_with(
            &root,
            "livecodebench/code_generation_lite",
            "test6.jsonl",
            row.as_bytes(),
        );
        let err = load_err(&root, "livecodebench_v6");
        for want in [
            "preset livecodebench_v6",
            "livecodebench/code_generation_lite",
            "test6.jsonl",
        ]
        .iter()
        .chain(wants)
        {
            assert!(err.contains(want), "case {i}: {want:?} not in {err}");
        }
    }
}

/// AMC 2023's hub parquet with `answer` a list of strings (`["27", "28"]`) where the preset
/// reads a float column; `id` and `question` as the hub has them.
fn amc23_with_list_answer() -> Vec<u8> {
    use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use std::sync::Arc;
    let schema = "message m { required int64 id; required binary question (UTF8); \
                  optional group answer (LIST) { repeated group list { \
                  optional binary element (UTF8); } } }";
    let schema = Arc::new(parse_message_type(schema).unwrap());
    let mut out = Vec::new();
    let mut w =
        SerializedFileWriter::new(&mut out, schema, Arc::new(WriterProperties::default())).unwrap();
    let mut group = w.next_row_group().unwrap();
    let mut col = group.next_column().unwrap().unwrap();
    col.typed::<Int64Type>()
        .write_batch(&[0], None, None)
        .unwrap();
    col.close().unwrap();
    let mut col = group.next_column().unwrap().unwrap();
    col.typed::<ByteArrayType>()
        .write_batch(&[ByteArray::from("How far?")], None, None)
        .unwrap();
    col.close().unwrap();
    // one row, a list of two present elements: definition level 3, repetition 0 then 1
    let mut col = group.next_column().unwrap().unwrap();
    col.typed::<ByteArrayType>()
        .write_batch(
            &[ByteArray::from("27"), ByteArray::from("28")],
            Some(&[3, 3]),
            Some(&[0, 1]),
        )
        .unwrap();
    col.close().unwrap();
    assert!(group.next_column().unwrap().is_none());
    group.close().unwrap();
    w.close().unwrap();
    out
}

#[test]
fn an_answer_column_whose_type_changed_is_refused() {
    // amc23's float `answer` replaced by a list: refused, not read as "27, 28"
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("hub");
    hub_with(
        &root,
        "math-ai/amc23",
        "test-00000-of-00001.parquet",
        &amc23_with_list_answer(),
    );
    let err = load_err(&root, "amc23");
    for want in [
        "preset amc23",
        "math-ai/amc23",
        "test-00000-of-00001.parquet: row 0",
        "field `answer`: expected a number, found a list",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    // and by a string (the same row with `answer` a string column)
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("hub");
    let bytes = parquet_bytes(&["id", "question", "answer"], &["0", "How far?", "27"]);
    hub_with(
        &root,
        "math-ai/amc23",
        "test-00000-of-00001.parquet",
        &bytes,
    );
    let err = load_err(&root, "amc23");
    assert!(
        err.contains("preset amc23") && err.contains("expected a number, found a string"),
        "{err}"
    );
    // MATH-500's string answers as numbers, in jsonl
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("hub");
    let rows = "{\"problem\": \"1+1?\", \"answer\": 2, \"solution\": \"\", \"unique_id\": \"a\"}\n";
    hub_with(
        &root,
        "HuggingFaceH4/MATH-500",
        "test.jsonl",
        rows.as_bytes(),
    );
    let err = load_err(&root, "math500");
    for want in [
        "preset math500",
        "test.jsonl: line 1",
        "field `answer`: expected a string, found an integer",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
}
