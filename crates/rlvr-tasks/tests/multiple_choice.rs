//! Multiple choice from the data to the reward: the readers take a problem's options from
//! `choices` or `options` (a list of strings, or ARC's `{"text": [...], "label": [...]}`) in
//! jsonl, json and parquet files into [`Problem::choices`]; malformed options are errors that
//! name the file, the line (element, row) and the field; and the reward router scores a
//! problem with options by its right option's letter or text
//! ([`rlvr_tasks::math::verify_with_choices`]), end to end on the multiple-choice responses of
//! the hand-graded real-response set.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rlvr_tasks::{load_file, FieldMap, Problem, Prompt, RewardConfig, RewardFn, Verifier};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn problem(answer: &str, choices: Option<&[&str]>) -> Problem {
    Problem {
        id: "p".into(),
        prompt: Prompt::Text("q".into()),
        answer: answer.into(),
        solution: None,
        data_source: "mine".into(),
        choices: choices.map(strings),
    }
}

/// Each problem's gold answer and options, in file order.
fn answers_and_choices(ds: &rlvr_tasks::Dataset) -> Vec<(&str, Option<Vec<String>>)> {
    ds.problems
        .iter()
        .map(|q| (q.answer.as_str(), q.choices.clone()))
        .collect()
}

#[test]
fn jsonl_and_json_read_lists_of_options_and_arc_objects() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "mc.jsonl",
        concat!(
            r#"{"problem": "MMLU", "answer": "B", "choices": ["3", "1/2", "Paris", "7"]}"#,
            "\n",
            r#"{"problem": "MMLU-Pro", "answer": "C", "options": ["x", "y", "z", 12]}"#,
            "\n",
            r#"{"problem": "AQuA", "answer": "B", "options": ["A)21", "B)21.5", "C)22"]}"#,
            "\n",
            r#"{"problem": "ARC", "answer": "2", "choices": {"text": ["red", "blue"], "label": ["1", "2"]}}"#,
            "\n",
            r#"{"problem": "ARC letters", "answer": "A", "choices": {"text": ["red", "blue"], "label": ["A", "B"]}}"#,
            "\n",
            r#"{"problem": "open", "answer": "5"}"#,
            "\n",
            r#"{"problem": "null options", "answer": "5", "choices": null}"#,
            "\n",
        ),
    );
    let ds = load_file(&p, &FieldMap::problem_answer()).unwrap();
    let got = answers_and_choices(&ds);
    assert_eq!(
        got,
        [
            ("B", Some(strings(&["3", "1/2", "Paris", "7"]))),
            ("C", Some(strings(&["x", "y", "z", "12"]))),
            // AQuA's labels removed, so the text `21.5` names option B
            ("B", Some(strings(&["21", "21.5", "22"]))),
            // ARC's label `2` is the second option: B
            ("B", Some(strings(&["red", "blue"]))),
            ("A", Some(strings(&["red", "blue"]))),
            ("5", None),
            ("5", None),
        ]
    );
    // a json array reads the same, and a field named otherwise is read when the map says so
    let p = write(
        dir.path(),
        "mc.json",
        r#"[{"problem": "q", "answer": "A", "answers_to_pick": ["yes", "no"]}]"#,
    );
    let plain = load_file(&p, &FieldMap::problem_answer()).unwrap();
    assert_eq!(plain.problems[0].choices, None);
    let named = FieldMap {
        choices: vec!["answers_to_pick".into()],
        ..FieldMap::problem_answer()
    };
    let ds = load_file(&p, &named).unwrap();
    assert_eq!(ds.problems[0].choices, Some(strings(&["yes", "no"])));
    // no option fields named: options are never read
    let none = FieldMap {
        choices: Vec::new(),
        ..FieldMap::problem_answer()
    };
    let ds = load_file(
        &write(
            dir.path(),
            "x.jsonl",
            r#"{"problem": "q", "answer": "A", "choices": ["1", "2"]}"#,
        ),
        &none,
    )
    .unwrap();
    assert_eq!(ds.problems[0].choices, None);
}

#[test]
fn malformed_options_name_the_file_the_line_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let good = r#"{"problem": "q", "answer": "A", "choices": ["1", "2"]}"#;
    let many: Vec<String> = (0..27).map(|i| format!("\"{i}\"")).collect();
    let many = format!(
        r#"{{"problem": "q", "answer": "A", "options": [{}]}}"#,
        many.join(", ")
    );
    let cases = [
        (
            r#"{"problem": "q", "answer": "A", "choices": "AB"}"#.to_string(),
            "field `choices`: expected a list of strings or an object",
        ),
        (
            r#"{"problem": "q", "answer": "A", "options": ["1", true]}"#.to_string(),
            "field `options.1`: expected a string, found a boolean",
        ),
        (
            r#"{"problem": "q", "answer": "A", "options": ["1", null]}"#.to_string(),
            "field `options.1`: expected a string, found null",
        ),
        (
            r#"{"problem": "q", "answer": "A", "choices": ["1", ["2"]]}"#.to_string(),
            "field `choices.1`: expected a string, found a list",
        ),
        (
            r#"{"problem": "q", "answer": "A", "choices": []}"#.to_string(),
            "field `choices`: an empty list of options",
        ),
        (
            many,
            "field `options`: 27 options, more than the 26 that the letters A to Z name",
        ),
        (
            r#"{"problem": "q", "answer": "A", "choices": {"text": ["1", "2"]}}"#.to_string(),
            "field `choices.label`: missing",
        ),
        (
            r#"{"problem": "q", "answer": "A", "choices": {"text": ["1", "2"], "label": ["A"]}}"#
                .to_string(),
            "field `choices`: 2 texts and 1 labels",
        ),
        (
            r#"{"problem": "q", "answer": "A", "choices": {"text": "12", "label": ["A"]}}"#
                .to_string(),
            "field `choices.text`: expected a list of strings, found a string",
        ),
    ];
    for (i, (line, want)) in cases.iter().enumerate() {
        let p = write(
            dir.path(),
            &format!("bad{i}.jsonl"),
            &format!("{good}\n{line}\n"),
        );
        let err = load_file(&p, &FieldMap::problem_answer())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("bad{i}.jsonl: line 2: {want}")),
            "case {i}: {err}"
        );
    }
    // a json array names the element
    let p = write(
        dir.path(),
        "bad.json",
        &format!(
            "[{good}, {}]",
            r#"{"problem": "q", "answer": "A", "choices": 3}"#
        ),
    );
    let err = load_file(&p, &FieldMap::problem_answer())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "bad.json: element 1: field `choices`: expected a list of strings or an object"
        ) && err.contains("found a number"),
        "{err}"
    );
}

/// Writes a parquet file of `problem` and `answer` strings and one option column whose
/// schema is `options_schema` and whose list leaves are `leaves` (values, definition and
/// repetition levels, in schema order).
fn write_parquet(
    path: &Path,
    rows: &[(&str, &str)],
    options_schema: &str,
    leaves: &[(Vec<&str>, Vec<i16>, Vec<i16>)],
) {
    use parquet::data_type::{ByteArray, ByteArrayType};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    let schema = format!(
        "message m {{ required binary problem (UTF8); required binary answer (UTF8); {options_schema} }}"
    );
    let schema = Arc::new(parse_message_type(&schema).unwrap());
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(File::create(path).unwrap(), schema, props).unwrap();
    let mut group = w.next_row_group().unwrap();
    let mut column = 0;
    while let Some(mut col) = group.next_column().unwrap() {
        let bytes =
            |v: &[&str]| -> Vec<ByteArray> { v.iter().map(|s| ByteArray::from(*s)).collect() };
        let typed = col.typed::<ByteArrayType>();
        match column {
            0 => typed.write_batch(
                &bytes(&rows.iter().map(|r| r.0).collect::<Vec<_>>()),
                None,
                None,
            ),
            1 => typed.write_batch(
                &bytes(&rows.iter().map(|r| r.1).collect::<Vec<_>>()),
                None,
                None,
            ),
            k => {
                let (values, def, rep) = &leaves[k - 2];
                typed.write_batch(&bytes(values), Some(def), Some(rep))
            }
        }
        .unwrap();
        col.close().unwrap();
        column += 1;
    }
    group.close().unwrap();
    w.close().unwrap();
}

#[test]
fn parquet_reads_option_lists_and_arc_structs() {
    let dir = tempfile::tempdir().unwrap();
    let list = |name: &str| {
        format!(
            "optional group {name} (LIST) {{ repeated group list {{ required binary element (UTF8); }} }}"
        )
    };
    // MMLU-Pro's `options: list<string>`; the third row's list is null: not multiple choice
    let p = dir.path().join("mmlu_pro.parquet");
    write_parquet(
        &p,
        &[("q1", "B"), ("q2", "A"), ("q3", "7")],
        &list("options"),
        &[(
            vec!["1", "2", "3", "yes", "no"],
            vec![2, 2, 2, 2, 2, 0],
            vec![0, 1, 1, 0, 1, 0],
        )],
    );
    let ds = load_file(&p, &FieldMap::problem_answer()).unwrap();
    let got: Vec<Option<Vec<String>>> = ds.problems.iter().map(|q| q.choices.clone()).collect();
    assert_eq!(
        got,
        [
            Some(strings(&["1", "2", "3"])),
            Some(strings(&["yes", "no"])),
            None
        ]
    );
    // ARC's `choices: struct<text: list<string>, label: list<string>>`
    let p = dir.path().join("arc.parquet");
    write_parquet(
        &p,
        &[("q1", "3"), ("q2", "B")],
        &format!(
            "required group choices {{ {} {} }}",
            list("text"),
            list("label")
        ),
        &[
            (
                vec!["red", "green", "blue", "sun", "moon"],
                vec![2; 5],
                vec![0, 1, 1, 0, 1],
            ),
            (
                vec!["1", "2", "3", "A", "B"],
                vec![2; 5],
                vec![0, 1, 1, 0, 1],
            ),
        ],
    );
    let ds = load_file(&p, &FieldMap::problem_answer()).unwrap();
    let got = answers_and_choices(&ds);
    assert_eq!(
        got,
        [
            ("C", Some(strings(&["red", "green", "blue"]))),
            ("B", Some(strings(&["sun", "moon"])))
        ]
    );
    // an empty list in a row is an error naming the row
    let p = dir.path().join("empty.parquet");
    write_parquet(
        &p,
        &[("q1", "A"), ("q2", "A")],
        &list("options"),
        &[(vec!["1"], vec![2, 1], vec![0, 0])],
    );
    let err = load_file(&p, &FieldMap::problem_answer())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("empty.parquet: row 1: field `options`: an empty list of options"),
        "{err}"
    );
}

#[test]
fn with_options_the_right_letter_or_text_scores_and_nothing_else() {
    let f = RewardFn::new(&RewardConfig::default()).unwrap();
    let opts: &[&str] = &["3", "\\frac{1}{2}", "Paris", "7"];
    for gold in ["B", "0.5", "(B)"] {
        let p = problem(gold, Some(opts));
        for right in [
            "The answer is (B).",
            "So the answer is $0.5$.",
            "\\boxed{\\frac12}",
        ] {
            assert_eq!(f.score(right, &p).reward, 1.0, "gold {gold}: {right}");
        }
        for wrong in [
            "The answer is (A).",
            "The answer is 3.",
            "\\boxed{D}",
            "Paris",
        ] {
            assert_eq!(f.score(wrong, &p).reward, 0.0, "gold {gold}: {wrong}");
        }
    }
    // the batch path routes the same way
    let p = problem("C", Some(opts));
    let batch = f
        .score_batch(&[("Answer: Paris", &p), ("Answer: C", &p), ("Answer: 7", &p)])
        .unwrap();
    let rewards: Vec<f64> = batch.iter().map(|s| s.reward).collect();
    assert_eq!(rewards, [1.0, 1.0, 0.0]);
    // without options, a letter gold is compared as a letter
    let p = problem("B", None);
    assert_eq!(f.score("\\boxed{B}", &p).reward, 1.0);
    assert_eq!(f.score("So the answer is $0.5$.", &p).reward, 0.0);
    assert_eq!(rlvr_tasks::MathVerifier.score("\\boxed{B}", &p).reward, 1.0);
    assert_eq!(
        rlvr_tasks::MathVerifier
            .score("\\boxed{0.5}", &problem("B", Some(opts)))
            .reward,
        1.0
    );
}

#[test]
fn a_gold_that_names_no_option_is_refused_before_scoring() {
    let f = RewardFn::new(&RewardConfig::default()).unwrap();
    let opts: &[&str] = &["3", "5", "7", "9"];
    f.check(&[problem("B", Some(opts)), problem("7", Some(opts))])
        .unwrap();
    // MMLU's `answer` is an index: 2 is neither a letter nor an option's text here
    let e = f
        .check(&[problem("2", Some(opts))])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("problem p")
            && e.contains("names none of its 4 options")
            && e.contains("A to D"),
        "{e}"
    );
    let e = f
        .check(&[problem("E", Some(opts))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("names none"), "{e}");
}

#[test]
fn problems_round_trip_through_serde_and_older_records_read() {
    let with = problem("B", Some(&["1", "2"]));
    let text = serde_json::to_string(&with).unwrap();
    assert!(text.contains(r#""choices":["1","2"]"#), "{text}");
    assert_eq!(serde_json::from_str::<Problem>(&text).unwrap(), with);
    let without = problem("5", None);
    let text = serde_json::to_string(&without).unwrap();
    assert!(!text.contains("choices"), "{text}");
    assert_eq!(serde_json::from_str::<Problem>(&text).unwrap(), without);
    // a problem written before options existed (and without `solution`) still reads
    let old = r#"{"id": "p", "prompt": {"Text": "q"}, "answer": "5", "data_source": "mine"}"#;
    assert_eq!(serde_json::from_str::<Problem>(old).unwrap(), without);
}

#[derive(serde::Deserialize)]
struct Response {
    id: usize,
    source: String,
    gold: String,
    response: String,
    choices: Option<Vec<String>>,
}

#[derive(serde::Deserialize)]
struct Label {
    id: usize,
    label: bool,
}

fn read<T: serde::de::DeserializeOwned>(text: &str) -> Vec<T> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The 470 multiple-choice responses of the hand-graded set (AQuA, MMLU-Pro, Kojima et al.'s
/// logs), written as a dataset in their sources' own shape (AQuA's options with their `A)`
/// labels back on, as AQuA ships them), read by the jsonl reader and scored by the reward
/// router: every verdict is the checker's own on the options, and none is a false positive
/// against the hand labels.
#[test]
fn real_multiple_choice_responses_score_through_the_reader_and_the_router() {
    let responses: Vec<Response> = read(include_str!("fixtures/real_responses.jsonl"));
    let labels: std::collections::HashMap<usize, bool> =
        read::<Label>(include_str!("fixtures/real_responses_labels.jsonl"))
            .into_iter()
            .map(|l| (l.id, l.label))
            .collect();
    let mc: Vec<&Response> = responses
        .iter()
        .filter(|r| r.choices.as_ref().is_some_and(|c| !c.is_empty()))
        .collect();
    assert_eq!(mc.len(), 470);
    let mut lines = String::new();
    for r in &mc {
        let choices = r.choices.as_ref().unwrap();
        let options: Vec<String> = if r.source.starts_with("pot-aqua") {
            choices
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{}){c}", char::from(b'A' + i as u8)))
                .collect()
        } else {
            choices.clone()
        };
        let row = serde_json::json!({"problem": "q", "answer": r.gold, "options": options, "id": r.id.to_string()});
        lines.push_str(&format!("{row}\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let ds = load_file(
        &write(dir.path(), "real_mc.jsonl", &lines),
        &FieldMap::problem_answer(),
    )
    .unwrap();
    assert_eq!(ds.len(), mc.len());
    let f = RewardFn::new(&RewardConfig::default()).unwrap();
    // every gold names one of its options
    assert_eq!(f.check(&ds.problems).unwrap().math, mc.len());
    let items: Vec<(&str, &Problem)> = mc
        .iter()
        .zip(&ds.problems)
        .map(|(r, p)| (r.response.as_str(), p))
        .collect();
    let scores = f.score_batch(&items).unwrap();
    let (mut right, mut false_pos) = (0, 0);
    for ((r, p), s) in mc.iter().zip(&ds.problems).zip(&scores) {
        assert_eq!(p.choices.as_ref(), r.choices.as_ref(), "{}", r.id);
        let direct = rlvr_tasks::math::verify_with_choices(
            &r.gold,
            &r.response,
            r.choices.as_ref().unwrap(),
        );
        assert_eq!(s.correct, direct.correct, "response {}", r.id);
        let label = labels[&r.id];
        right += usize::from(s.correct == label);
        false_pos += usize::from(s.correct && !label);
    }
    assert_eq!(false_pos, 0);
    assert!(right * 100 >= mc.len() * 98, "{right} of {}", mc.len());
}
