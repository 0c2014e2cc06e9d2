//! Loading presets: [`load_preset`] from a data directory, [`load_hub_files`] from the files
//! of a hub copy, with the preset's post-processing ([`Preset::dedup`]), and the layouts
//! presets have of their own (DAPO's wrapped prompts, LiveCodeBench, MathArena).

use std::path::{Path, PathBuf};

use super::presets::{preset, HubLayout, HubSource, Preset, DAPO_PREFIX, DAPO_SUFFIX};
use super::readers::{for_each_jsonl_line, for_each_record};
use super::records::{file_stem, load_file, to_problem, FieldMap, RecordError};
use super::DataError;
use crate::{Dataset, Problem, Prompt};

/// Loads a named preset from its local copy in `data_dir`. A missing file is a
/// [`DataError::PresetMissing`] that says which file to put where (this function does not
/// download; see [`hub_source`](super::hub_source) and [`load_hub_files`]).
pub fn load_preset(name: &str, data_dir: &Path) -> Result<Dataset, DataError> {
    let p = preset(name)?;
    let path = data_dir.join(p.file);
    if !path.exists() {
        let source_hint = match &p.hub {
            Some(h) => format!(
                "{}; or leave it out and the hub copy is read (hub dataset {} revision {})",
                p.source, h.repo, h.revision
            ),
            None => p.source.to_string(),
        };
        return Err(DataError::PresetMissing {
            preset: p.name.to_string(),
            expected: path,
            data_dir: data_dir.to_path_buf(),
            file: p.file.to_string(),
            source_hint,
        });
    }
    load_preset_file(name, &path)
}

/// Loads preset `name`'s records from `path`, a file in the local copy's layout, with the
/// preset's fields, name and [`Preset::dedup`].
pub fn load_preset_file(name: &str, path: &Path) -> Result<Dataset, DataError> {
    let p = preset(name)?;
    if let Some(
        hub @ HubSource {
            layout: HubLayout::LiveCodeBench,
            ..
        },
    ) = &p.hub
    {
        // the local copy is a folder holding the hub's files
        let files: Vec<PathBuf> = hub.files.iter().map(|f| path.join(f)).collect();
        return load_hub_files(name, &files);
    }
    let ds = if p.name == "matharena_aime25" {
        load_matharena(path)
    } else {
        load_file(path, &p.fields())
    }
    .map_err(|e| DataError::InLocalCopy {
        preset: p.name.to_string(),
        source: Box::new(e),
    })?;
    Ok(finish(p, ds, &[path]))
}

/// Loads preset `name` from the files of its hub copy, downloaded: `files[i]` is the local
/// path of `hub.files[i]`. Rows are read in the layout of [`HubSource::layout`]; an error
/// names the preset, the repository, the file and the row and field at fault.
pub fn load_hub_files(name: &str, files: &[PathBuf]) -> Result<Dataset, DataError> {
    let p = preset(name)?;
    let hub = p.hub.as_ref().ok_or_else(|| DataError::NoHubSource {
        preset: p.name.to_string(),
    })?;
    if files.len() != hub.files.len() {
        return Err(DataError::InPreset {
            preset: p.name.to_string(),
            repo: hub.repo.to_string(),
            source: Box::new(DataError::BadFile {
                path: PathBuf::from(hub.files.join(", ")),
                reason: format!("expected {} files, got {}", hub.files.len(), files.len()),
            }),
        });
    }
    let in_preset = |e: DataError| DataError::InPreset {
        preset: p.name.to_string(),
        repo: hub.repo.to_string(),
        source: Box::new(e),
    };
    let mut all = Dataset {
        name: p.name.to_string(),
        problems: Vec::new(),
        skipped: Vec::new(),
        duplicates: 0,
    };
    for path in files {
        let ds = match hub.layout {
            HubLayout::Fields(fields) => load_file(path, &fields()),
            HubLayout::DapoWrapped => load_dapo_wrapped(path),
            HubLayout::LiveCodeBench => load_livecodebench(path),
        }
        .map_err(in_preset)?;
        let file = path
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().to_string());
        all.problems.extend(ds.problems);
        all.duplicates += ds.duplicates;
        all.skipped
            .extend(ds.skipped.into_iter().map(|s| format!("{file}: {s}")));
    }
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    Ok(finish(p, all, &paths))
}

/// The preset's name, data source and de-duplication, for either copy.
fn finish(p: &Preset, mut ds: Dataset, paths: &[&Path]) -> Dataset {
    ds.name = p.name.to_string();
    let stems: Vec<String> = paths.iter().map(|path| file_stem(path)).collect();
    for prob in &mut ds.problems {
        if prob.data_source.is_empty() || stems.contains(&prob.data_source) {
            prob.data_source = p.name.to_string();
        }
    }
    if p.dedup {
        let mut seen = std::collections::HashSet::new();
        let before = ds.problems.len();
        ds.problems.retain(|q| seen.insert(dedup_key(q)));
        ds.duplicates += before - ds.problems.len();
    }
    ds
}

/// The key of [`Preset::dedup`]: the prompt text with runs of whitespace made one space and
/// the ends trimmed, the trimmed answer (DAPO-Math-17k's local copy differs from the hub
/// copy only in whitespace around some problems), and the options, each so squeezed (None
/// without options: the same question with other options is another problem).
pub fn dedup_key(p: &Problem) -> (String, String, Option<Vec<String>>) {
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    (
        squeeze(p.prompt.text()),
        p.answer.trim().to_string(),
        p.choices
            .as_ref()
            .map(|c| c.iter().map(|o| squeeze(o)).collect()),
    )
}

/// verl parquet rows whose user message is DAPO's wrapper around the problem: the wrapper is
/// removed (see [`HubLayout::DapoWrapped`]). Rows are de-duplicated as they are read
/// ([`dedup_key`]), so the 100 repeats of the hub file never sit in memory.
fn load_dapo_wrapped(path: &Path) -> Result<Dataset, DataError> {
    let fields = FieldMap::verl();
    let stem = file_stem(path);
    let mut problems = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut duplicates = 0;
    for_each_record(path, |at, index, value| {
        let bad = |reason: String| DataError::BadRecord {
            path: path.to_path_buf(),
            at: at.clone(),
            reason,
        };
        let mut prob = match to_problem(&value, &fields, &stem, index) {
            Ok(p) => p,
            Err(RecordError::NoAnswer(reason)) => {
                skipped.push(format!("{at}: {reason}"));
                return Ok(());
            }
            Err(RecordError::Bad(reason)) => return Err(bad(reason)),
        };
        let Prompt::Chat(msgs) = &mut prob.prompt else {
            return Err(bad(
                "field `prompt`: expected a list of chat messages".into()
            ));
        };
        let Some((i, user)) = msgs
            .iter_mut()
            .enumerate()
            .rev()
            .find(|(_, m)| m.role == "user")
        else {
            return Err(bad("field `prompt`: no message with role `user`".into()));
        };
        let bare = user
            .content
            .strip_prefix(DAPO_PREFIX)
            .and_then(|t| t.strip_suffix(DAPO_SUFFIX))
            .ok_or_else(|| {
                bad(format!(
                    "field `prompt.{i}.content`: not DAPO's prompt wrapper (expected the text to \
                     start with {DAPO_PREFIX:?} and end with {DAPO_SUFFIX:?})"
                ))
            })?;
        user.content = bare.to_string();
        if seen.insert(dedup_key(&prob)) {
            problems.push(prob);
        } else {
            duplicates += 1;
        }
        Ok(())
    })?;
    Ok(Dataset {
        name: stem,
        problems,
        skipped,
        duplicates,
    })
}

/// The longest line of a LiveCodeBench jsonl file (256 MiB: its rows carry every private
/// test, compressed, in one string); a longer line is an error naming the file and line.
pub const MAX_LIVECODEBENCH_LINE_BYTES: usize = 256 << 20;

/// LiveCodeBench's jsonl, read line by line ([`crate::livecodebench`]) under the bounds of
/// [`for_each_record`] (a regular file, [`MAX_LIVECODEBENCH_LINE_BYTES`] per line, values
/// per line by [`check_json_values`](super::check_json_values)).
fn load_livecodebench(path: &Path) -> Result<Dataset, DataError> {
    use crate::livecodebench::{row_to_problem, RowOutcome};
    let mut problems = Vec::new();
    let mut skipped = Vec::new();
    for_each_jsonl_line(path, MAX_LIVECODEBENCH_LINE_BYTES, "", |at, v| {
        let bad = |reason: String| DataError::BadRecord {
            path: path.to_path_buf(),
            at: at.clone(),
            reason,
        };
        match row_to_problem(&v).map_err(bad)? {
            RowOutcome::Problem(p) => problems.push(*p),
            RowOutcome::Skipped(why) => skipped.push(format!("{at}: {why}")),
        }
        Ok(std::ops::ControlFlow::Continue(()))
    })?;
    Ok(Dataset {
        name: file_stem(path),
        problems,
        skipped,
        duplicates: 0,
    })
}

/// MathArena's layout: `<dir>/<competition>/answers.csv` (`id,answer`) and
/// `<dir>/<competition>/problems/<id>.tex`, for every competition folder in name order.
pub fn load_matharena(dir: &Path) -> Result<Dataset, DataError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DataError::Io { path, source }
    };
    let mut comps: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("answers.csv").is_file())
        .collect();
    comps.sort();
    let mut problems = Vec::new();
    for comp in comps {
        let csv = comp.join("answers.csv");
        let text = std::fs::read_to_string(&csv).map_err(io(&csv))?;
        let comp_name = file_stem(&comp);
        for (i, line) in text.lines().enumerate().skip(1) {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |reason: String| DataError::BadRecord {
                path: csv.clone(),
                at: format!("line {}", i + 1),
                reason,
            };
            let (id, answer) = line
                .split_once(',')
                .ok_or_else(|| bad("expected `id,answer`".into()))?;
            let tex = comp.join("problems").join(format!("{}.tex", id.trim()));
            let problem = std::fs::read_to_string(&tex).map_err(io(&tex))?;
            problems.push(Problem {
                id: format!("{comp_name}-{}", id.trim()),
                prompt: Prompt::Text(problem.trim().to_string()),
                answer: answer.trim().to_string(),
                solution: None,
                data_source: "matharena_aime25".into(),
                choices: None,
            });
        }
    }
    Ok(Dataset {
        name: "matharena_aime25".into(),
        problems,
        skipped: Vec::new(),
        duplicates: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::write;
    use serde_json::Value;

    #[test]
    fn dapo_hub_rows_are_unwrapped_and_deduplicated() {
        let dir = tempfile::tempdir().unwrap();
        let wrap = |q: &str| format!("{DAPO_PREFIX}{q}{DAPO_SUFFIX}");
        let rows: Vec<Value> = [
            (wrap("What is $1+1$?"), "2"),
            (wrap("What is $2+2$?"), "4"),
            (wrap(" What  is $1+1$?\n"), "2"), // whitespace variant: a duplicate
            (wrap("What is $1+1$?"), "3"),     // same text, other answer: kept
            (wrap("What is $1+1$?"), "2"),
        ]
        .iter()
        .map(|(p, a)| {
            serde_json::json!({"prompt": [{"role": "user", "content": p}],
                               "reward_model": {"ground_truth": a}, "data_source": "math_dapo"})
        })
        .collect();
        let p = write(dir.path(), "d.json", &Value::Array(rows).to_string());
        let ds = load_hub_files("dapo_math_17k", &[p]).unwrap();
        let got: Vec<(&str, &str)> = ds
            .problems
            .iter()
            .map(|q| (q.prompt.text(), q.answer.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("What is $1+1$?", "2"),
                ("What is $2+2$?", "4"),
                ("What is $1+1$?", "3")
            ]
        );
        assert_eq!(ds.duplicates, 2);
        assert_eq!(ds.name, "dapo_math_17k");
        // a row without the wrapper names the row and the field
        let p = write(
            dir.path(),
            "e.json",
            r#"[{"prompt": [{"role": "user", "content": "bare"}], "reward_model": {"ground_truth": "1"}}]"#,
        );
        let err = load_hub_files("dapo_math_17k", &[p])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("preset dapo_math_17k (hub dataset BytedTsinghua-SIA/DAPO-Math-17k):")
                && err.contains("e.json: element 0: field `prompt.0.content`: not DAPO's"),
            "{err}"
        );
    }

    /// LiveCodeBench's jsonl is read line by line: blank lines skipped, rows the code task
    /// cannot score listed with their line, and a bad line an error naming the file and line.
    #[test]
    fn livecodebench_files_are_read_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let row = |id: &str, private: &str| {
            serde_json::json!({
                "question_id": id, "question_content": "Add two numbers.", "starter_code": "",
                "public_test_cases": r#"[{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]"#,
                "private_test_cases": private, "metadata": "{}",
            })
            .to_string()
        };
        let mixed = r#"[{"input": "[1]", "output": "1", "testtype": "functional"}]"#;
        let text = format!("{}\n\n{}\n", row("a1", "[]"), row("a2", mixed));
        let p = write(dir.path(), "test6.jsonl", &text);
        let ds = load_hub_files("livecodebench_v6", &[p]).unwrap();
        assert_eq!(ds.name, "livecodebench_v6");
        assert_eq!(ds.problems.len(), 1);
        assert_eq!(ds.problems[0].id, "livecodebench-a1");
        assert_eq!(ds.skipped.len(), 1);
        assert!(
            ds.skipped[0].starts_with("test6.jsonl: line 3: question_id a2:"),
            "{:?}",
            ds.skipped
        );
        let p = write(
            dir.path(),
            "bad.jsonl",
            &format!("{}\n{{oops\n", row("a1", "[]")),
        );
        let err = load_hub_files("livecodebench_v6", &[p])
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad.jsonl: line 2: invalid JSON"), "{err}");
    }

    #[test]
    fn missing_preset_says_what_to_put_where() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_preset("polaris", dir.path()).unwrap_err().to_string();
        assert!(err.contains("polaris/polaris-data-53K.parquet"), "{err}");
        assert!(err.contains("POLARIS"), "{err}");
        let err = load_preset("nope", dir.path()).unwrap_err().to_string();
        assert!(err.contains("math500"), "{err}");
    }

    #[test]
    fn dedup_key_tells_problems_with_other_options_apart() {
        let problem = |text: &str, choices: Option<[&str; 2]>| Problem {
            id: "p".into(),
            prompt: Prompt::Text(text.into()),
            answer: "A".into(),
            solution: None,
            data_source: "d".into(),
            choices: choices.map(|c| c.map(String::from).to_vec()),
        };
        let key = dedup_key(&problem("Pick one.", Some(["x  y", "z"])));
        assert_eq!(key, dedup_key(&problem(" Pick\none. ", Some(["x y", "z"]))));
        assert_ne!(key, dedup_key(&problem("Pick one.", Some(["z", "x y"]))));
        assert_ne!(key, dedup_key(&problem("Pick one.", None)));
        assert_eq!(key.2, Some(vec!["x y".to_string(), "z".to_string()]));
    }
}
