//! Each preset's answer column has one type (docs/data.md): a local copy whose answer holds
//! another type (a list where a number is read, a float where an integer is, a string where a
//! list is) is an error naming the preset, the file, the line and the field, never read as a
//! joined or reformatted string; the types the presets document are read as they say.

use std::path::Path;

use rlvr_tasks::data::{AnswerSource, AnswerType};
use rlvr_tasks::{load_file, load_preset, FieldMap};

/// A data directory holding `rel` with `rows`.
fn data_dir_with(dir: &Path, rel: &str, rows: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, rows).unwrap();
}

#[test]
fn a_local_copy_whose_answer_type_changed_names_preset_file_line_and_field() {
    let cases = [
        (
            "amc23",
            "amc23/test.jsonl",
            r#"{"id": 0, "problem": "How far?", "answer": 27.0}
{"id": 1, "problem": "How far?", "answer": ["27", "28"]}
"#,
            "line 2: field `answer`: expected a number, found a list",
        ),
        (
            "aime25",
            "aime25/train.jsonl",
            r#"{"problem_idx": 1, "problem": "Find b.", "answer": 70.5}
"#,
            "line 1: field `answer`: expected an integer, found a float",
        ),
        (
            "olympiadbench",
            "olympiadbench/test.jsonl",
            r#"{"id": 1, "question": "Find N.", "final_answer": "$7$", "context": null}
"#,
            "line 1: field `final_answer`: expected a list of strings, found a string",
        ),
        (
            "olympiadbench",
            "olympiadbench/test.jsonl",
            r#"{"id": 1, "question": "Find N.", "final_answer": ["$7$", 8], "context": null}
"#,
            "field `final_answer`: expected a list of strings, found a list with an element",
        ),
        (
            "math500",
            "math500/test.jsonl",
            r#"{"problem": "1+1?", "answer": {"value": "2"}, "unique_id": "a"}
"#,
            "line 1: field `answer`: expected a string, found an object",
        ),
    ];
    for (preset, rel, rows, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        data_dir_with(dir.path(), rel, rows);
        let err = load_preset(preset, dir.path()).unwrap_err().to_string();
        for w in [&format!("preset {preset} (local copy)"), rel, want] {
            assert!(err.contains(w), "{preset}: {w:?} not in {err}");
        }
    }
}

#[test]
fn the_documented_answer_types_are_read_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    data_dir_with(
        dir.path(),
        "amc23/test.jsonl",
        "{\"id\": 0, \"problem\": \"How far?\", \"answer\": 27.0}\n\
         {\"id\": 1, \"problem\": \"How far?\", \"answer\": 3}\n",
    );
    data_dir_with(
        dir.path(),
        "aime25/train.jsonl",
        "{\"problem_idx\": 1, \"problem\": \"Find b.\", \"answer\": 70}\n",
    );
    data_dir_with(
        dir.path(),
        "olympiadbench/test.jsonl",
        "{\"id\": 1, \"question\": \"Find N.\", \"final_answer\": [\"$7$\", \"$8$\"], \"context\": null}\n",
    );
    data_dir_with(
        dir.path(),
        "aime24/test.jsonl",
        "{\"id\": 60, \"problem\": \"Find x.\", \"answer\": \"033\"}\n",
    );
    let answers = |preset: &str| -> Vec<String> {
        load_preset(preset, dir.path())
            .unwrap_or_else(|e| panic!("{preset}: {e}"))
            .problems
            .into_iter()
            .map(|p| p.answer)
            .collect()
    };
    // a float column as JSON writes the number; an integer is a number too
    assert_eq!(answers("amc23"), ["27.0", "3"]);
    assert_eq!(answers("aime25"), ["70"]);
    assert_eq!(answers("olympiadbench"), ["$7$, $8$"]);
    assert_eq!(answers("aime24"), ["033"]);
    // a null answer is still skipped and listed, not a type error
    data_dir_with(
        dir.path(),
        "amc23/test.jsonl",
        "{\"id\": 0, \"problem\": \"How far?\", \"answer\": null}\n\
         {\"id\": 1, \"problem\": \"How far?\", \"answer\": 3}\n",
    );
    let ds = load_preset("amc23", dir.path()).unwrap();
    assert_eq!(ds.problems.len(), 1);
    assert_eq!(ds.skipped.len(), 1, "{:?}", ds.skipped);
}

/// A field map of a user's own file can ask for a type too; the untyped `Field` keeps
/// reading any scalar or list.
#[test]
fn a_typed_field_map_checks_and_an_untyped_one_joins() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mine.jsonl");
    std::fs::write(&p, "{\"problem\": \"q\", \"answer\": [1, 2]}\n").unwrap();
    let untyped = FieldMap::problem_answer();
    assert_eq!(load_file(&p, &untyped).unwrap().problems[0].answer, "1, 2");
    let typed = FieldMap {
        answer: AnswerSource::Typed("answer".into(), AnswerType::Number),
        ..FieldMap::problem_answer()
    };
    let err = load_file(&p, &typed).unwrap_err().to_string();
    assert!(
        err.contains("mine.jsonl: line 1: field `answer`: expected a number, found a list"),
        "{err}"
    );
}
