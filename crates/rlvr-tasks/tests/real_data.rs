//! Checks against the real data directory (`RLVR_DATA_DIR`; docs/data.md).
//!
//! Without a data directory these tests print why they skip; under `CI=true` a missing data
//! directory is a failure.

use std::path::PathBuf;

use rlvr_tasks::{data, load_preset, math, PRESETS};

fn data_dir() -> Option<PathBuf> {
    rlvr_test_support::or_skip(rlvr_tasks::resolve_data_dir(None), "no data directory")
}

#[test]
fn every_preset_in_the_data_dir_loads_with_its_record_count() {
    let Some(dir) = data_dir() else { return };
    for p in PRESETS {
        let Some(expected) = p.records else {
            // not in the development copy (polaris, deepscaler, livecodebench): their hub
            // layouts are tested on fixtures (rlvr-train tests/hub_presets.rs)
            assert!(load_preset(p.name, &dir).is_err() || dir.join(p.file).exists());
            continue;
        };
        let ds = load_preset(p.name, &dir).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(
            ds.len() + ds.skipped.len() + ds.duplicates,
            expected,
            "{}: record count",
            p.name
        );
        if !p.dedup {
            assert_eq!(ds.duplicates, 0, "{}", p.name);
        }
        for prob in &ds.problems {
            assert!(
                !prob.answer.trim().is_empty(),
                "{}: {} empty answer",
                p.name,
                prob.id
            );
            assert!(
                !prob.prompt.text().trim().is_empty(),
                "{}: {} empty prompt",
                p.name,
                prob.id
            );
        }
        eprintln!(
            "{:<18} {:>6} records, {} skipped {:?}",
            p.name,
            ds.len(),
            ds.skipped.len(),
            ds.skipped
        );
    }
}

#[test]
fn every_data_file_is_read() {
    let Some(dir) = data_dir() else { return };
    // every jsonl/json/parquet file of the data directory has a preset
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("jsonl" | "json" | "parquet")
            ) {
                files.push(p.strip_prefix(&dir).unwrap().to_string_lossy().to_string());
            }
        }
    }
    for f in &files {
        assert!(PRESETS.iter().any(|p| p.file == f), "{f} has no preset");
        let n = data::read_records(&dir.join(f)).unwrap().len();
        assert!(n > 0, "{f}");
    }
    assert!(files.len() >= 16, "found only {files:?}");
}

/// For every benchmark with worked solutions, the verifier accepts the reference solution.
#[test]
fn reference_solutions_score_correct() {
    let Some(dir) = data_dir() else { return };
    for p in PRESETS.iter().filter(|p| p.has_worked_solution) {
        let ds = load_preset(p.name, &dir).unwrap();
        let mut wrong = Vec::new();
        for prob in &ds.problems {
            let sol = prob.solution.as_deref().unwrap();
            let s = math::verify(&prob.answer, sol);
            if !s.correct {
                wrong.push(format!(
                    "{}: gold {:?} extracted {:?} ({})",
                    prob.id, prob.answer, s.extracted, s.reason
                ));
            }
        }
        let rate = 1.0 - wrong.len() as f64 / ds.len() as f64;
        eprintln!(
            "{:<16} {:>5} records, reference solutions correct: {:.2}%",
            p.name,
            ds.len(),
            100.0 * rate
        );
        for w in &wrong {
            eprintln!("  {w}");
        }
        assert!(rate >= 0.99, "{}: {:.4} < 0.99", p.name, rate);
    }
}

/// Gold answers verify against themselves in every benchmark (normalization is idempotent
/// enough that no gold answer is rejected as its own response).
#[test]
fn gold_answers_verify_against_themselves() {
    let Some(dir) = data_dir() else { return };
    for p in PRESETS
        .iter()
        // math presets the development copy holds (code presets hold tests, not answers)
        .filter(|p| p.records.is_some() && !matches!(p.name, "codeforces" | "leetcode"))
    {
        let ds = load_preset(p.name, &dir).unwrap();
        let bad: Vec<_> = ds
            .problems
            .iter()
            .filter(|q| {
                !math::verify(
                    &q.answer,
                    &format!("The final answer is $\\boxed{{{}}}$.", q.answer),
                )
                .correct
            })
            .map(|q| q.answer.clone())
            .collect();
        assert!(bad.is_empty(), "{}: {bad:?}", p.name);
    }
}

/// The presets' local files given by path (as a user holding a copy of the same Hugging Face
/// dataset would give it) are read in the layout their first record shows
/// (`data::file_fields`), with the answers the presets' own fields give: GSM8K's text after
/// `####`, Minerva-MATH's boxed solutions, MATH-500's and the AIME/AMC answer columns (a number
/// read as JSON writes it), MATH train's JSON array, POLARIS's verl parquet.
#[test]
fn preset_files_given_by_path_read_as_their_presets() {
    let Some(dir) = data_dir() else { return };
    for name in [
        "gsm8k",
        "minerva_math",
        "math500",
        "aime24",
        "aime25",
        "amc23",
        "math_train",
    ] {
        let preset = data::preset(name).unwrap();
        let path = dir.join(preset.file);
        let by_path = rlvr_tasks::load_file(&path, &data::file_fields(&path))
            .unwrap_or_else(|e| panic!("{name} by path: {e}"));
        let want = load_preset(name, &dir).unwrap();
        let answers: std::collections::HashMap<String, &str> = by_path
            .problems
            .iter()
            .map(|p| (format!("{:?}", p.prompt), p.answer.as_str()))
            .collect();
        assert!(by_path.len() >= want.len(), "{name}");
        for p in &want.problems {
            let got = answers.get(&format!("{:?}", p.prompt)).copied();
            assert_eq!(got, Some(p.answer.as_str()), "{name}: {}", p.id);
        }
    }
    // a verl parquet (POLARIS's AIME 2024): the same 30 answers as the jsonl copy
    let parquet = dir.join("aime24/aime24.parquet");
    let ds = rlvr_tasks::load_file(&parquet, &data::file_fields(&parquet)).unwrap();
    let mut got: Vec<String> = ds.problems.iter().map(|p| p.answer.clone()).collect();
    let mut want: Vec<String> = load_preset("aime24", &dir)
        .unwrap()
        .problems
        .iter()
        .map(|p| p.answer.trim_start_matches('0').to_string())
        .collect();
    got.iter_mut()
        .for_each(|a| *a = a.trim_start_matches('0').to_string());
    got.sort();
    want.sort();
    assert_eq!(got, want);
}
