//! Problems written in verl's RL dataset layout, the parquet (or jsonl) that verl's
//! `data.train_files` / `data.val_files` read (`verl.utils.dataset.rl_dataset.RLHFDataset`):
//!
//! | column | type | holds |
//! |---|---|---|
//! | `prompt` | list of `{content, role}` | the chat messages verl renders with the tokenizer's chat template |
//! | `data_source` | string | the preset or file the problem comes from |
//! | `ability` | string | `math` or `code` |
//! | `reward_model` | `{ground_truth, style}` | the gold answer (code: the tests as JSON), `style = "rule"` |
//! | `extra_info` | `{id, index, split}` | rlvr's problem id, the row index, `train` or `test` |
//!
//! rlvr reads the file back with [`FieldMap::verl`](crate::FieldMap::verl) (the round trip is
//! tested), and verl scores it with `rlvr.compute_score` (the Python package) as its
//! `custom_reward_function`.

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
}

/// The parquet schema of the layout (3-level lists, as pyarrow writes them).
const SCHEMA: &str = "
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
    if name.ends_with(".parquet") {
        write_parquet(path, rows)
    } else if name.ends_with(".jsonl") || name.ends_with(".json") {
        write_jsonl(path, rows)
    } else {
        Err(io_error(
            path,
            "the output must end in .parquet or .jsonl (the formats verl's RLHFDataset reads)",
        ))
    }
}

fn bytes(s: &str) -> ByteArray {
    ByteArray::from(s.as_bytes().to_vec())
}

fn write_parquet(path: &Path, rows: &[VerlRow]) -> Result<(), DataError> {
    let schema = Arc::new(parse_message_type(SCHEMA).map_err(|e| io_error(path, e))?);
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build(),
    );
    let file = File::create(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
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
    let strings = |f: &dyn Fn(&VerlRow) -> &str| rows.iter().map(|r| bytes(f(r))).collect();
    let flat: [Vec<ByteArray>; 6] = [
        strings(&|r| &r.data_source),
        strings(&|r| &r.ability),
        strings(&|r| &r.ground_truth),
        rows.iter().map(|_| bytes("rule")).collect(),
        strings(&|r| &r.id),
        strings(&|r| &r.split),
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
            // leaves in schema order: data_source, ability, ground_truth, style, id, index, split
            7 => col.typed::<Int64Type>().write_batch(&index, None, None),
            2..=6 => col
                .typed::<ByteArrayType>()
                .write_batch(&flat[leaf - 2], None, None),
            _ => col
                .typed::<ByteArrayType>()
                .write_batch(&flat[5], None, None),
        };
        written.map_err(|e| io_error(path, e))?;
        col.close().map_err(|e| io_error(path, e))?;
        leaf += 1;
    }
    rg.close().map_err(|e| io_error(path, e))?;
    writer.close().map_err(|e| io_error(path, e))?;
    Ok(())
}

fn write_jsonl(path: &Path, rows: &[VerlRow]) -> Result<(), DataError> {
    let file = File::create(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = BufWriter::new(file);
    for (index, r) in rows.iter().enumerate() {
        let line = serde_json::json!({
            "prompt": r.prompt.iter().map(|m| serde_json::json!({"content": m.content, "role": m.role})).collect::<Vec<_>>(),
            "data_source": r.data_source,
            "ability": r.ability,
            "reward_model": {"ground_truth": r.ground_truth, "style": "rule"},
            "extra_info": {"id": r.id, "index": index, "split": r.split},
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

    #[test]
    fn other_extensions_are_refused_by_name() {
        let err = write(Path::new("out.csv"), &rows())
            .unwrap_err()
            .to_string();
        assert!(err.contains("out.csv") && err.contains(".parquet"), "{err}");
    }
}
