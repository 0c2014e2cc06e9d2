//! verl's parquet layout, on a committed 4-row fixture in the Polaris-53K layout
//! (written by scripts/tasks/make_polaris_fixture.py with pyarrow).

use std::path::Path;

use rlvr_tasks::{load_file, load_preset, FieldMap, MathVerifier, Prompt, Verifier};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/polaris_tiny.parquet"
);

#[test]
fn polaris_preset_reads_verl_layout() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("polaris")).unwrap();
    std::fs::copy(FIXTURE, dir.path().join("polaris/polaris-data-53K.parquet")).unwrap();
    let ds = load_preset("polaris", dir.path()).unwrap();
    assert_eq!(ds.name, "polaris");
    assert_eq!(ds.len(), 4);
    let p = &ds.problems[1];
    assert_eq!(p.answer, "\\frac{3}{4}");
    assert_eq!(p.id, "1");
    assert_eq!(p.data_source, "polaris");
    match &p.prompt {
        Prompt::Chat(m) => {
            assert_eq!(m.len(), 1);
            assert_eq!(m[0].role, "user");
            assert!(m[0].content.starts_with("Simplify"));
        }
        other => panic!("expected chat, got {other:?}"),
    }
    let s = MathVerifier.score("so it is \\boxed{0.75}", p);
    assert!(s.correct, "{s:?}");
    let s = MathVerifier.score("\\boxed{(-1,1)}", &ds.problems[3]);
    assert!(s.correct, "{s:?}");
}

#[test]
fn parquet_with_other_field_names() {
    let fields = FieldMap {
        prompt: "prompt.0.content".into(),
        answer: rlvr_tasks::AnswerSource::Field("reward_model.ground_truth".into()),
        solution: None,
        id: None,
        data_source: Some("ability".into()),
        context: None,
        choices: Vec::new(),
    };
    let ds = load_file(Path::new(FIXTURE), &fields).unwrap();
    assert_eq!(
        ds.problems[0].prompt,
        Prompt::Text(ds.problems[0].prompt.text().to_string())
    );
    assert_eq!(ds.problems[0].data_source, "math");
    assert_eq!(ds.problems[2].id, "polaris_tiny-2");
    let bad = FieldMap {
        answer: rlvr_tasks::AnswerSource::Field("reward_model.nope".into()),
        ..fields
    };
    let err = load_file(Path::new(FIXTURE), &bad).unwrap_err().to_string();
    assert!(
        err.contains("polaris_tiny.parquet: row 0: missing field `reward_model.nope`"),
        "{err}"
    );
}

#[test]
fn truncated_parquet_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("broken.parquet");
    let bytes = std::fs::read(FIXTURE).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    let err = load_file(&p, &FieldMap::verl()).unwrap_err().to_string();
    assert!(err.contains("broken.parquet"), "{err}");
}
