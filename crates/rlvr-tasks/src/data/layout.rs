//! Which fields a data file given by path is read with: told by its first record, so that a
//! Hugging Face dataset's file loads as it is published, in any of the three formats.
//!
//! | the first record has | read as | prompt | answer |
//! |---|---|---|---|
//! | `reward_model` | verl's layout ([`FieldMap::verl`]; what `rlvr export data` writes) | `prompt` | `reward_model.ground_truth` |
//! | `tests` and no `answer` | the code presets' layout | `problem` | `tests` as code-task JSON |
//! | `problem` and `answer` | the MATH layout ([`FieldMap::problem_answer`]) | `problem` | `answer` |
//! | `problem` and `solution`, no `answer` | Hendrycks MATH | `problem` | the solution's last `\boxed{}` (a record without one is skipped and listed) |
//! | `question`, and an `answer` text holding `####` | GSM8K | `question` | the text after the last `####` |
//! | `question` | question/answer | `question` | `answer` |
//! | `prompt` and `answer` | prompt/answer | `prompt` (text or chat messages) | `answer` |
//! | none of these | verl's layout for parquet, the MATH layout for json/jsonl | | |
//!
//! Every layout but the code one reads a multiple-choice problem's options from `choices` or
//! `options` ([`CHOICE_FIELDS`]; verl's also `extra_info.choices`), and an `id` where there is
//! one. A file whose first record cannot be read gets its format's last-row layout, so that
//! loading it reports the error with the fields it looked for.

use std::path::Path;

use serde_json::Value;

use super::presets::fm;
use super::{first_record, AnswerSource, FieldMap, CHOICE_FIELDS};

/// The fields `path` is read with (module docs): its first record decides, read alone.
pub fn file_fields(path: &Path) -> FieldMap {
    let first = first_record(path).ok().flatten().map(|(_, v)| v);
    let parquet = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
    fields_for(first.as_ref(), parquet)
}

/// [`file_fields`] of a file whose first record is `first` (None: none could be read).
pub fn fields_for(first: Option<&Value>, parquet: bool) -> FieldMap {
    let has = |key: &str| first.is_some_and(|v| v.get(key).is_some());
    let text = |key: &str| first.and_then(|v| v.get(key)).and_then(Value::as_str);
    let with = |prompt: &str, answer: AnswerSource, solution: Option<&str>| FieldMap {
        choices: CHOICE_FIELDS.map(String::from).to_vec(),
        ..fm(prompt, answer, solution, Some("id"))
    };
    if has("reward_model") {
        FieldMap::verl()
    } else if has("tests") && !has("answer") {
        FieldMap {
            prompt: "problem".into(),
            answer: AnswerSource::Json("tests".into()),
            solution: Some("solutions".into()),
            id: Some("id".into()),
            data_source: Some("data_source".into()),
            context: None,
            choices: Vec::new(),
        }
    } else if has("problem") {
        if !has("answer") && has("solution") {
            with(
                "problem",
                AnswerSource::LastBoxedOrSkip("solution".into()),
                Some("solution"),
            )
        } else {
            FieldMap::problem_answer()
        }
    } else if has("question") {
        if text("answer").is_some_and(|a| a.contains("####")) {
            with(
                "question",
                AnswerSource::AfterHashes("answer".into()),
                Some("answer"),
            )
        } else {
            with("question", AnswerSource::Field("answer".into()), None)
        }
    } else if has("prompt") && has("answer") {
        with("prompt", AnswerSource::Field("answer".into()), None)
    } else if parquet {
        FieldMap::verl()
    } else {
        FieldMap::problem_answer()
    }
}

/// Checks the layout [`file_fields`] read `path` in against every record, where the first
/// record alone could have misled it: a question/answer file (the first answer without `####`)
/// one of whose answers holds GSM8K's `\n####` would score every problem against its whole
/// solution text (right answers 0), so it is an error naming the file and the problem.
pub fn check_layout(
    path: &Path,
    fields: &FieldMap,
    problems: &[crate::Problem],
) -> Result<(), crate::DataError> {
    let question_answer =
        fields.prompt == "question" && fields.answer == AnswerSource::Field("answer".into());
    if !question_answer {
        return Ok(());
    }
    if let Some((i, p)) = problems
        .iter()
        .enumerate()
        .find(|(_, p)| p.answer.contains("####"))
    {
        return Err(crate::DataError::BadRecord {
            path: path.to_path_buf(),
            at: format!("problem {} (number {i})", p.id),
            reason: "its answer holds GSM8K's `####` but the first record's does not, so the \
                     file was read as question/answer and every answer would be the whole \
                     solution text: give every record its `#### answer` line, or use answers \
                     without one"
                .into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each row of the module's table picks its layout, and the layouts differ where the
    /// table says they do.
    #[test]
    fn a_gsm8k_file_whose_first_answer_lacks_hashes_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mixed.jsonl");
        std::fs::write(
            &path,
            "{\"question\": \"q1\", \"answer\": \"it is 3\"}\n\
             {\"question\": \"q2\", \"answer\": \"3 + 4 = 7\\n#### 7\"}\n",
        )
        .unwrap();
        let fields = file_fields(&path);
        let ds = crate::load_file(&path, &fields).unwrap();
        let err = check_layout(&path, &fields, &ds.problems)
            .unwrap_err()
            .to_string();
        assert!(err.contains("mixed.jsonl") && err.contains("####"), "{err}");
        // a plain question/answer file passes
        std::fs::write(&path, "{\"question\": \"q1\", \"answer\": \"3\"}\n").unwrap();
        let ds = crate::load_file(&path, &fields).unwrap();
        check_layout(&path, &fields, &ds.problems).unwrap();
    }

    #[test]
    fn each_first_record_picks_its_row_of_the_table() {
        let pick = |v: Value, parquet: bool| fields_for(Some(&v), parquet);
        let verl = pick(
            json!({"prompt": [], "reward_model": {"ground_truth": "1"}}),
            false,
        );
        assert_eq!(
            verl.answer,
            AnswerSource::Field("reward_model.ground_truth".into())
        );
        let code = pick(json!({"problem": "p", "tests": {}}), false);
        assert_eq!(code.answer, AnswerSource::Json("tests".into()));
        let math = pick(json!({"problem": "p", "answer": "1", "tests": 3}), true);
        assert_eq!(math.answer, AnswerSource::Field("answer".into()));
        assert_eq!(math.prompt, "problem");
        let hendrycks = pick(json!({"problem": "p", "solution": "so \\boxed{1}"}), false);
        assert_eq!(
            hendrycks.answer,
            AnswerSource::LastBoxedOrSkip("solution".into())
        );
        let gsm8k = pick(
            json!({"question": "q", "answer": "3 + 4 = 7\n#### 7"}),
            false,
        );
        assert_eq!(gsm8k.answer, AnswerSource::AfterHashes("answer".into()));
        let qa = pick(json!({"question": "q", "answer": "7"}), false);
        assert_eq!(
            (qa.prompt.as_str(), qa.answer),
            ("question", AnswerSource::Field("answer".into()))
        );
        let pa = pick(json!({"prompt": "q", "answer": 7}), false);
        assert_eq!(pa.prompt, "prompt");
        for (v, parquet, want) in [
            (json!({"text": "q"}), true, "prompt"),
            (json!({"text": "q"}), false, "problem"),
        ] {
            assert_eq!(pick(v, parquet).prompt, want);
        }
        assert_eq!(fields_for(None, true).prompt, "prompt");
        assert_eq!(fields_for(None, false).prompt, "problem");
        // every layout but the code one reads options
        for f in [verl, math, hendrycks, gsm8k, pa] {
            assert!(f.choices.iter().any(|c| c == "choices"), "{f:?}");
        }
        assert!(code.choices.is_empty());
    }
}
