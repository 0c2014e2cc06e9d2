//! Problems written in verl's RL dataset layout, the parquet (or jsonl) that verl's
//! `data.train_files` / `data.val_files` read (`verl.utils.dataset.rl_dataset.RLHFDataset`):
//!
//! | column | type | holds |
//! |---|---|---|
//! | `prompt` | list of `{content, role}` | the chat messages verl renders with the tokenizer's chat template |
//! | `data_source` | string | the preset or file the problem comes from |
//! | `ability` | string | `math` or `code` |
//! | `reward_model` | `{ground_truth, style}` | the gold answer (code: the tests as JSON), `style = "rule"` |
//! | `extra_info` | `{id, index, split, question[, choices]}` | rlvr's problem id, the row index, `train` or `test`, the question (the prompt's last user message); a multiple-choice problem's options |
//!
//! `extra_info.question` is where verl's own preprocessing scripts put the question:
//! `rlvr.compute_score` reads it, so that an answer restating the question's own expression
//! scores 0 as in rlvr's own runs (`rlvr_tasks::math::verify_asked`).
//!
//! `extra_info.choices` (a list of strings, option A first) is there only for options: a
//! parquet file without multiple-choice problems has no such column, and in one with some,
//! the rows without options hold null; a JSON line has the key only when its row has options. verl passes `extra_info` to its reward function,
//! and `rlvr.compute_score` checks the response against the options when they are there
//! (`rlvr_tasks::math::verify_with_choices`, as rlvr's own runs do).
//!
//! rlvr reads the file back with [`FieldMap::verl`](crate::FieldMap::verl) (the round trip is
//! tested, options included), and verl scores it with `rlvr.compute_score` (the Python
//! package) as its `custom_reward_function`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::{ChatMessage, DataError};

/// One row of the layout.
#[derive(Debug, Clone, PartialEq)]
pub struct VerlRow {
    pub prompt: Vec<ChatMessage>,
    pub data_source: String,
    pub ability: String,
    pub ground_truth: String,
    pub id: String,
    pub split: String,
    /// A multiple-choice problem's options in letter order (`extra_info.choices`); None for
    /// any other problem.
    pub choices: Option<Vec<String>>,
}

impl VerlRow {
    /// The question: the content of the prompt's last `user` message
    /// ([`crate::last_user_message`], as [`crate::Prompt::text`] reads it).
    pub fn question(&self) -> &str {
        crate::last_user_message(&self.prompt)
    }
}

/// The parquet schema of the layout (3-level lists, as pyarrow writes them); `extra_info`
/// ends with [`CHOICES_FIELD`] when some row has options.
const SCHEMA_HEAD: &str = "
message schema {
  required group prompt (LIST) {
    repeated group list {
      required group element {
        required binary content (STRING);
        required binary role (STRING);
      }
    }
  }
  required binary data_source (STRING);
  required binary ability (STRING);
  required group reward_model {
    required binary ground_truth (STRING);
    required binary style (STRING);
  }
  required group extra_info {
    required binary id (STRING);
    required int64 index;
    required binary split (STRING);
    required binary question (STRING);";

/// `extra_info.choices`: null for a row without options.
const CHOICES_FIELD: &str = "
    optional group choices (LIST) {
      repeated group list {
        required binary element (STRING);
      }
    }";

fn io_error(path: &Path, e: impl std::fmt::Display) -> DataError {
    DataError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Writes `rows` to `path`: parquet (snappy) when the name ends in `.parquet`, JSON lines when
/// it ends in `.jsonl` or `.json` (one object per line, the same fields). Any other name is an
/// error naming it.
pub fn write(path: &Path, rows: &[VerlRow]) -> Result<(), DataError> {
    let name = path.to_string_lossy();
    let parquet = name.ends_with(".parquet");
    if !parquet && !name.ends_with(".jsonl") && !name.ends_with(".json") {
        return Err(io_error(
            path,
            "the output must end in .parquet or .jsonl (the formats verl's RLHFDataset reads)",
        ));
    }
    // written whole beside the target, then renamed over it: a failed write (a full disk)
    // leaves no partial file that a script would take as present, and a symlink at `path` is
    // replaced, never followed
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let io = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let tmp = tempfile::Builder::new()
        .prefix(".rlvr-export-")
        // the mode a new file gets (0666 less the umask), not a temporary file's 0600
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(io)?;
    let file = tmp.as_file().try_clone().map_err(io)?;
    if parquet {
        write_parquet(path, file, rows)?;
    } else {
        write_jsonl(path, file, rows)?;
    }
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

fn bytes(s: &str) -> ByteArray {
    ByteArray::from(s.as_bytes().to_vec())
}

fn write_parquet(path: &Path, file: File, rows: &[VerlRow]) -> Result<(), DataError> {
    let with_choices = rows.iter().any(|r| r.choices.is_some());
    let schema = format!(
        "{SCHEMA_HEAD}{}\n  }}\n}}",
        if with_choices { CHOICES_FIELD } else { "" }
    );
    let schema = Arc::new(parse_message_type(&schema).map_err(|e| io_error(path, e))?);
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build(),
    );
    let mut writer =
        SerializedFileWriter::new(file, schema, props).map_err(|e| io_error(path, e))?;
    // the prompt's leaves: one value per message; definition level 1 for a message, 0 for an
    // empty list; repetition level 0 at a row's first entry, 1 after
    let (mut def, mut rep) = (Vec::new(), Vec::new());
    let (mut contents, mut roles) = (Vec::new(), Vec::new());
    for row in rows {
        if row.prompt.is_empty() {
            def.push(0);
            rep.push(0);
        }
        for (k, m) in row.prompt.iter().enumerate() {
            def.push(1);
            rep.push(i16::from(k > 0));
            contents.push(bytes(&m.content));
            roles.push(bytes(&m.role));
        }
    }
    // the options' leaf: definition level 0 for null, 1 for an empty list, 2 for an option
    let (mut choice_def, mut choice_rep, mut choices) = (Vec::new(), Vec::new(), Vec::new());
    for row in rows {
        match row.choices.as_deref() {
            None => {
                choice_def.push(0);
                choice_rep.push(0);
            }
            Some([]) => {
                choice_def.push(1);
                choice_rep.push(0);
            }
            Some(list) => {
                for (k, c) in list.iter().enumerate() {
                    choice_def.push(2);
                    choice_rep.push(i16::from(k > 0));
                    choices.push(bytes(c));
                }
            }
        }
    }
    let strings = |f: &dyn Fn(&VerlRow) -> &str| rows.iter().map(|r| bytes(f(r))).collect();
    // leaves 2 to 9 but 7: data_source, ability, ground_truth, style, id, (index), split,
    // question
    let flat: [Vec<ByteArray>; 7] = [
        strings(&|r| &r.data_source),
        strings(&|r| &r.ability),
        strings(&|r| &r.ground_truth),
        rows.iter().map(|_| bytes("rule")).collect(),
        strings(&|r| &r.id),
        strings(&|r| &r.split),
        strings(&|r| r.question()),
    ];
    let index: Vec<i64> = (0..rows.len() as i64).collect();
    let mut rg = writer.next_row_group().map_err(|e| io_error(path, e))?;
    let mut leaf = 0;
    while let Some(mut col) = rg.next_column().map_err(|e| io_error(path, e))? {
        let written = match leaf {
            0 => col
                .typed::<ByteArrayType>()
                .write_batch(&contents, Some(&def), Some(&rep)),
            1 => col
                .typed::<ByteArrayType>()
                .write_batch(&roles, Some(&def), Some(&rep)),
            2..=6 => col
                .typed::<ByteArrayType>()
                .write_batch(&flat[leaf - 2], None, None),
            7 => col.typed::<Int64Type>().write_batch(&index, None, None),
            8 | 9 => col
                .typed::<ByteArrayType>()
                .write_batch(&flat[leaf - 3], None, None),
            _ => col.typed::<ByteArrayType>().write_batch(
                &choices,
                Some(&choice_def),
                Some(&choice_rep),
            ),
        };
        written.map_err(|e| io_error(path, e))?;
        col.close().map_err(|e| io_error(path, e))?;
        leaf += 1;
    }
    rg.close().map_err(|e| io_error(path, e))?;
    writer.close().map_err(|e| io_error(path, e))?;
    Ok(())
}

/// A JSON line's `extra_info`: `choices` only for a row with options.
fn extra_info(r: &VerlRow, index: usize) -> serde_json::Value {
    let mut info = serde_json::json!({
        "id": r.id,
        "index": index,
        "split": r.split,
        "question": r.question(),
    });
    if let Some(c) = &r.choices {
        info["choices"] = serde_json::json!(c);
    }
    info
}

fn write_jsonl(path: &Path, file: File, rows: &[VerlRow]) -> Result<(), DataError> {
    let mut out = BufWriter::new(file);
    for (index, r) in rows.iter().enumerate() {
        let line = serde_json::json!({
            "prompt": r.prompt.iter().map(|m| serde_json::json!({"content": m.content, "role": m.role})).collect::<Vec<_>>(),
            "data_source": r.data_source,
            "ability": r.ability,
            "reward_model": {"ground_truth": r.ground_truth, "style": "rule"},
            "extra_info": extra_info(r, index),
        });
        writeln!(out, "{line}").map_err(|source| DataError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    }
    out.flush().map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{load_file, FieldMap, Prompt};

    fn rows() -> Vec<VerlRow> {
        let row = |id: &str, msgs: Vec<ChatMessage>, gold: &str| VerlRow {
            prompt: msgs,
            data_source: "math500".into(),
            ability: "math".into(),
            ground_truth: gold.into(),
            id: id.into(),
            split: "test".into(),
            choices: None,
        };
        vec![
            row("a", vec![ChatMessage::new("user", "1+1? ünïcode")], "2"),
            row(
                "b",
                vec![
                    ChatMessage::new("system", "be brief"),
                    ChatMessage::new("user", "x^2=4, x>0"),
                ],
                "\\frac{4}{2}",
            ),
            row("c", vec![ChatMessage::new("user", "")], "0"),
        ]
    }

    #[test]
    fn parquet_and_jsonl_read_back_as_verl_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["out.parquet", "out.jsonl"] {
            let path = dir.path().join(name);
            write(&path, &rows()).unwrap();
            let fields = if name.ends_with("parquet") {
                FieldMap::verl()
            } else {
                FieldMap {
                    id: Some("extra_info.id".into()),
                    ..FieldMap::verl()
                }
            };
            let ds = load_file(&path, &fields).unwrap();
            assert_eq!(ds.problems.len(), 3, "{name}");
            let p = &ds.problems[1];
            assert_eq!(p.answer, "\\frac{4}{2}");
            assert_eq!(p.data_source, "math500");
            match &p.prompt {
                Prompt::Chat(m) => {
                    assert_eq!(m.len(), 2, "{name}");
                    assert_eq!(
                        (m[0].role.as_str(), m[0].content.as_str()),
                        ("system", "be brief")
                    );
                    assert_eq!(m[1].content, "x^2=4, x>0");
                }
                other => panic!("{name}: {other:?}"),
            }
            assert_eq!(ds.problems[0].prompt.text(), "1+1? ünïcode");
        }
    }

    /// The leaf columns of a parquet file, as dotted paths.
    fn columns(path: &Path) -> Vec<String> {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        schema.columns().iter().map(|c| c.path().string()).collect()
    }

    #[test]
    fn options_round_trip_at_extra_info_choices() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = rows();
        rows[0].choices = Some(vec!["1".into(), "2".into(), "x, \\frac{1}{2} ü".into()]);
        rows[0].ground_truth = "B".into();
        rows[2].choices = Some(vec!["only".into()]);
        for name in ["mc.parquet", "mc.jsonl"] {
            let path = dir.path().join(name);
            write(&path, &rows).unwrap();
            let ds = load_file(&path, &FieldMap::verl()).unwrap();
            let got: Vec<Option<Vec<String>>> =
                ds.problems.iter().map(|p| p.choices.clone()).collect();
            let want: Vec<Option<Vec<String>>> = rows.iter().map(|r| r.choices.clone()).collect();
            assert_eq!(got, want, "{name}");
            assert_eq!(ds.problems[0].answer, "B");
            // the options are what the checker reads: the letter and the text of B are right
            for response in ["Answer: B", "Answer: 2"] {
                let s = crate::math::verify_problem(&ds.problems[0], response);
                assert!(s.correct, "{name} {response}: {s:?}");
            }
            assert!(!crate::math::verify_problem(&ds.problems[0], "Answer: A").correct);
        }
        assert!(columns(&dir.path().join("mc.parquet"))
            .contains(&"extra_info.choices.list.element".to_string()));
        // the row without options: null in parquet, no key in JSON lines
        let lines = std::fs::read_to_string(dir.path().join("mc.jsonl")).unwrap();
        let second: serde_json::Value =
            serde_json::from_str(lines.lines().nth(1).unwrap()).unwrap();
        assert!(second["extra_info"].get("choices").is_none(), "{second}");
        let first: serde_json::Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
        assert_eq!(
            first["extra_info"]["choices"],
            serde_json::json!(["1", "2", "x, \\frac{1}{2} ü"])
        );
    }

    /// `extra_info.question` holds the prompt's last user message, in both formats, where
    /// `rlvr.compute_score` reads it.
    #[test]
    fn the_question_is_at_extra_info_question() {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let dir = tempfile::tempdir().unwrap();
        let rows = rows();
        let want: Vec<String> = rows.iter().map(|r| r.question().to_string()).collect();
        assert_eq!(want[0], "1+1? ünïcode");
        let jsonl = dir.path().join("q.jsonl");
        write(&jsonl, &rows).unwrap();
        let got: Vec<String> = std::fs::read_to_string(&jsonl)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["extra_info"]["question"].as_str().unwrap().to_string()
            })
            .collect();
        assert_eq!(got, want);
        let pq = dir.path().join("q.parquet");
        write(&pq, &rows).unwrap();
        let reader = SerializedFileReader::new(File::open(&pq).unwrap()).unwrap();
        let got: Vec<String> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|row| {
                let row = row.unwrap();
                let info = row
                    .get_column_iter()
                    .find(|(name, _)| name.as_str() == "extra_info")
                    .map(|(_, f)| f.to_string())
                    .unwrap();
                info
            })
            .collect();
        for (info, q) in got.iter().zip(&want) {
            let quoted = serde_json::to_string(q).unwrap();
            assert!(
                info.contains(&format!("question: {quoted}")),
                "{info} lacks {quoted}"
            );
        }
        // a system message first: the user's message is the question
        assert_eq!(rows[1].question(), "x^2=4, x>0");
    }

    #[test]
    fn without_options_there_is_no_choices_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain.parquet");
        write(&path, &rows()).unwrap();
        let cols = columns(&path);
        assert_eq!(
            cols,
            [
                "prompt.list.element.content",
                "prompt.list.element.role",
                "data_source",
                "ability",
                "reward_model.ground_truth",
                "reward_model.style",
                "extra_info.id",
                "extra_info.index",
                "extra_info.split",
                "extra_info.question"
            ]
        );
        let ds = load_file(&path, &FieldMap::verl()).unwrap();
        assert!(ds.problems.iter().all(|p| p.choices.is_none()));
    }

    #[test]
    fn a_symlink_at_the_output_is_replaced_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("precious.txt");
        std::fs::write(&target, "keep me").unwrap();
        for ext in ["parquet", "jsonl"] {
            let out = tmp.path().join(format!("out.{ext}"));
            std::os::unix::fs::symlink(&target, &out).unwrap();
            write(&out, &rows()).unwrap();
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
            let meta = std::fs::symlink_metadata(&out).unwrap();
            assert!(meta.file_type().is_file(), "{ext}: still a link");
            let fields = FieldMap {
                id: Some("extra_info.id".into()),
                ..FieldMap::verl()
            };
            let ds = load_file(&out, &fields).unwrap();
            assert_eq!(ds.problems.len(), rows().len(), "{ext}");
        }
        // nothing left beside them
        let names: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
    }

    #[test]
    fn other_extensions_are_refused_by_name() {
        let err = write(Path::new("out.csv"), &rows())
            .unwrap_err()
            .to_string();
        assert!(err.contains("out.csv") && err.contains(".parquet"), "{err}");
    }
}
