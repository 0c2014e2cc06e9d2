//! Reading a file's records as JSON values, within bounds: jsonl line by line, json arrays
//! whole, parquet row by row ([`for_each_record`], [`read_records`]); only regular files, each
//! format under the limits named here.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;

use super::DataError;

/// File formats [`load_file`](super::load_file) reads, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Jsonl,
    JsonArray,
    Parquet,
}

impl FileFormat {
    pub fn from_path(path: &Path) -> Result<Self, DataError> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("jsonl") | Some("ndjson") => Ok(FileFormat::Jsonl),
            Some("json") => Ok(FileFormat::JsonArray),
            Some("parquet") => Ok(FileFormat::Parquet),
            _ => Err(DataError::BadFile {
                path: path.to_path_buf(),
                reason: "unknown format: expected a .jsonl, .json or .parquet file".into(),
            }),
        }
    }
}

/// The longest line of a jsonl file [`read_records`] reads (64 MiB, the newline not counted):
/// a longer line is an error naming the file and line, read no further than one byte past
/// the limit, so a file without newlines cannot exhaust memory before parsing.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The largest `.json` file read whole (a json array of records; `rlvr diagnose`'s wandb
/// tables): 256 MiB. A larger file is an error naming it, before anything is read.
pub const MAX_JSON_FILE_BYTES: u64 = 256 << 20;

/// Bytes of JSON text per value (or object key) a text may hold on average, beyond
/// [`JSON_BASE_VALUES`]: a text of `L` bytes may hold at most `L / 8 + 131,072` values and
/// keys, counted in one scan before it is parsed ([`check_json_values`]). Each parsed value
/// takes at most about 128 bytes of memory, so parsing a jsonl line or a `.json` file of `L`
/// bytes takes at most about `17 L + 16 MiB` (its strings, about `L`, plus 16 bytes per byte
/// of text for the values): shapes that are cheap to write and costly to hold (`[[],[],...]`,
/// `{"a":0,"b":0,...}`, 3 to 8 bytes each) are refused with the file and line.
pub const JSON_BYTES_PER_VALUE: usize = 8;

/// How many values an object's `{` counts for in [`check_json_values`]: 6. A non-empty object
/// is a map whose first entry allocates a tree node of about 600 bytes, where other values take
/// at most about 128: a line of one-key objects counted as three values each (`{`, `:`, `,`)
/// held 29 times its size (a 64 MiB line, 1.93 GB). With `{` as six, such an object counts as
/// eight values and the line holds 12.6 times its size (measured,
/// `input_bounds::the_densest_accepted_lines_take_memory_within_the_stated_factor`).
pub const JSON_OBJECT_WEIGHT: usize = 6;

/// Values and keys any JSON text may hold whatever its size (see [`JSON_BYTES_PER_VALUE`]).
pub const JSON_BASE_VALUES: usize = 1 << 17;

/// How many times its size a parquet file's data may grow when decoded: the uncompressed
/// sizes its metadata announces (checked before any page is read) and the records decoded
/// from it (counted row by row, as strings plus 32 bytes per value) may each reach at most
/// `PARQUET_MAX_EXPANSION x` the file's size plus [`PARQUET_BASE_BYTES`]. Real datasets
/// stay far below (text compresses 2 to 10 times, a dictionary of repeated prompts about 30
/// times); a file of a few kilobytes that decodes to gigabytes is refused with the file (and
/// the row at which the limit was passed).
pub const PARQUET_MAX_EXPANSION: u64 = 128;

/// The decoded bytes any parquet file may hold whatever its size (see
/// [`PARQUET_MAX_EXPANSION`]): 64 MiB.
pub const PARQUET_BASE_BYTES: u64 = 64 << 20;

/// The uncompressed size no parquet file's metadata may announce, whatever the file's size:
/// 16 GiB.
pub const PARQUET_MAX_BYTES: u64 = 16 << 30;

/// Opens `path` for reading, refusing anything but a regular file (a FIFO, a device such as
/// `/dev/zero`, a socket) with an error naming it. The open does not block: a FIFO is opened
/// non-blocking, seen to be one and refused, instead of waiting for a writer forever.
pub fn open_regular_file(path: &Path) -> Result<File, DataError> {
    let io = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "a FIFO, device or socket"
        };
        return Err(DataError::BadFile {
            path: path.to_path_buf(),
            reason: format!("not a regular file ({kind}): data is read only from regular files"),
        });
    }
    #[cfg(unix)]
    {
        // back to blocking reads (no effect on a regular file, but stated, not assumed)
        use std::os::unix::io::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor this function owns, with integer arguments only
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    Ok(file)
}

/// Reads a whole regular file ([`open_regular_file`]) of at most `max` bytes; a larger one is
/// an error naming it and the limit, read no further than one byte past it.
pub fn read_regular_file(path: &Path, max: u64) -> Result<Vec<u8>, DataError> {
    let file = open_regular_file(path)?;
    let io = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let too_big = || DataError::BadFile {
        path: path.to_path_buf(),
        reason: format!("larger than {max} bytes, the most rlvr reads of such a file"),
    };
    let len = file.metadata().map_err(io)?.len();
    if len > max {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(too_big());
    }
    Ok(bytes)
}

/// What [`read_line_bounded`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundedLine {
    /// The end of the input: nothing was read.
    End,
    /// A line, in the buffer without its `\n` (or `\r\n`).
    Line,
    /// A line longer than the limit; the buffer holds its first `max + 1` bytes.
    TooLong,
}

/// Reads one line of at most `max` bytes (the newline not counted) into `buf` (cleared
/// first), reading no further than one byte past the limit, so an endless line
/// (`/dev/zero`) costs `max` bytes of memory, not all of it.
pub fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<BoundedLine> {
    buf.clear();
    let n = reader.take(max as u64 + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(BoundedLine::End);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        return Ok(BoundedLine::Line);
    }
    if buf.len() > max {
        return Ok(BoundedLine::TooLong);
    }
    Ok(BoundedLine::Line)
}

/// The most JSON values and object keys a text of `len` bytes may hold (see
/// [`JSON_BYTES_PER_VALUE`]).
pub fn max_json_values(len: usize) -> usize {
    (len / JSON_BYTES_PER_VALUE).saturating_add(JSON_BASE_VALUES)
}

/// Counts, in one scan and without parsing, the JSON values and object keys `text` would
/// parse into (at most: every `[`, `,` and `:` outside strings, plus one, and every `{` as
/// [`JSON_OBJECT_WEIGHT`] values for the map it makes), and refuses a
/// text holding more than [`max_json_values`] of its length, so that parsing it into a
/// `serde_json::Value` takes memory proportional to its size (the factor in
/// [`JSON_BYTES_PER_VALUE`]).
pub fn check_json_values(text: &[u8]) -> Result<(), String> {
    let limit = max_json_values(text.len());
    let mut count = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' | b',' | b':' => {
                count += if b == b'{' { JSON_OBJECT_WEIGHT } else { 1 };
                if count > limit {
                    return Err(format!(
                        "more than {limit} JSON values and keys in {} bytes (at most one per \
                         {JSON_BYTES_PER_VALUE} bytes plus {JSON_BASE_VALUES}): a shape that \
                         would take far more memory than its size",
                        text.len()
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Reads every record of a file as a JSON value, with its location (`line N`/`row N`/...)
/// and its 0-based index. Jsonl lines must be UTF-8 and at most [`MAX_LINE_BYTES`] long;
/// either error names the file and the line (a json file that is not UTF-8: the line and
/// column of the first invalid byte). Only regular files are read ([`open_regular_file`]);
/// a jsonl line or json file holding more values than its size allows
/// ([`check_json_values`]), a json file over [`MAX_JSON_FILE_BYTES`] and a parquet file that
/// decodes to more than its size allows ([`PARQUET_MAX_EXPANSION`]) are errors naming the
/// file (and line or row).
pub fn read_records(path: &Path) -> Result<Vec<(String, usize, Value)>, DataError> {
    let mut out = Vec::new();
    for_each_record(path, |at, index, v| {
        out.push((at, index, v));
        Ok(())
    })?;
    Ok(out)
}

/// Calls `f` on every record of a file in order (see [`read_records`]) without holding them
/// all: a large file (DAPO-Math-17k's 1.79M-row hub parquet) is read in constant memory.
pub fn for_each_record(
    path: &Path,
    mut f: impl FnMut(String, usize, Value) -> Result<(), DataError>,
) -> Result<(), DataError> {
    try_for_each_record(path, |at, i, v| f(at, i, v).map(|()| Flow::Continue(())))
}

/// The first record of a file with its location (None: the file has none), read as
/// [`read_records`] reads it, and without reading past it where the format allows (jsonl,
/// parquet): what a loader looks at to tell a file's layout.
pub fn first_record(path: &Path) -> Result<Option<(String, Value)>, DataError> {
    let mut first = None;
    try_for_each_record(path, |at, _, v| {
        first = Some((at, v));
        Ok(Flow::Break(()))
    })?;
    Ok(first)
}

/// Whether a reader goes on to the next record.
type Flow = std::ops::ControlFlow<()>;

/// [`for_each_record`], stopping where `f` says [`Flow::Break`].
fn try_for_each_record(
    path: &Path,
    mut f: impl FnMut(String, usize, Value) -> Result<Flow, DataError>,
) -> Result<(), DataError> {
    match FileFormat::from_path(path)? {
        FileFormat::Jsonl => {
            let mut index = 0;
            for_each_jsonl_line(
                path,
                MAX_LINE_BYTES,
                ", the most a jsonl record may hold",
                |at, v| {
                    let flow = f(at, index, v)?;
                    index += 1;
                    Ok(flow)
                },
            )
        }
        FileFormat::JsonArray => {
            let bytes = read_regular_file(path, MAX_JSON_FILE_BYTES)?;
            let text = String::from_utf8(bytes).map_err(|e| {
                let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
                let column =
                    valid.len() - valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
                DataError::BadFile {
                    path: path.to_path_buf(),
                    reason: format!("not UTF-8 (invalid byte at line {line} column {column})"),
                }
            })?;
            check_json_values(text.as_bytes()).map_err(|reason| DataError::BadFile {
                path: path.to_path_buf(),
                reason,
            })?;
            let v: Value = serde_json::from_str(&text).map_err(|e| DataError::BadFile {
                path: path.to_path_buf(),
                reason: format!(
                    "invalid JSON at line {} column {}: {e}",
                    e.line(),
                    e.column()
                ),
            })?;
            let Value::Array(items) = v else {
                return Err(DataError::BadFile {
                    path: path.to_path_buf(),
                    reason: "expected a JSON array of records".into(),
                });
            };
            for (i, v) in items.into_iter().enumerate() {
                if f(format!("element {i}"), i, v)?.is_break() {
                    break;
                }
            }
            Ok(())
        }
        FileFormat::Parquet => for_each_parquet_row(path, f),
    }
}

/// Calls `f` on every line of a jsonl file in order, parsed, with its location (`line N`,
/// 1-based), until `f` says [`Flow::Break`]; blank lines are skipped. Only a regular file is
/// read ([`open_regular_file`]); a line longer than `max` bytes (the error says so, then
/// `too_long`), one that is not UTF-8 and one holding more values than its size allows
/// ([`check_json_values`]) are errors naming the file and the line.
pub(super) fn for_each_jsonl_line(
    path: &Path,
    max: usize,
    too_long: &str,
    mut f: impl FnMut(String, Value) -> Result<Flow, DataError>,
) -> Result<(), DataError> {
    let io = |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::new(open_regular_file(path)?);
    let mut buf = Vec::new();
    for i in 1.. {
        let at = format!("line {i}");
        let bad = |reason: String| DataError::BadRecord {
            path: path.to_path_buf(),
            at: at.clone(),
            reason,
        };
        // at most one byte past the limit is read, so an endless line costs `max` bytes
        match read_line_bounded(&mut reader, &mut buf, max).map_err(io)? {
            BoundedLine::End => break,
            BoundedLine::Line => {}
            BoundedLine::TooLong => {
                return Err(bad(format!(
                    "the line is longer than {max} bytes{too_long}"
                )))
            }
        }
        let line = std::str::from_utf8(&buf).map_err(|e| {
            bad(format!(
                "not UTF-8 (invalid byte at column {})",
                e.valid_up_to() + 1
            ))
        })?;
        if line.trim().is_empty() {
            continue;
        }
        check_json_values(line.as_bytes()).map_err(&bad)?;
        let v: Value = serde_json::from_str(line).map_err(|e| bad(format!("invalid JSON: {e}")))?;
        if f(at, v)?.is_break() {
            break;
        }
    }
    Ok(())
}

/// The decoded size of a record, as [`PARQUET_MAX_EXPANSION`] counts it: the bytes of its
/// strings and keys plus 32 per value.
fn decoded_bytes(v: &Value) -> u64 {
    32 + match v {
        Value::String(s) => s.len() as u64,
        Value::Array(a) => a.iter().map(decoded_bytes).sum(),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| k.len() as u64 + decoded_bytes(v))
            .sum(),
        _ => 0,
    }
}

fn for_each_parquet_row(
    path: &Path,
    mut f: impl FnMut(String, usize, Value) -> Result<Flow, DataError>,
) -> Result<(), DataError> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let bad = |reason: String| DataError::BadFile {
        path: path.to_path_buf(),
        reason,
    };
    let file = open_regular_file(path)?;
    let file_len = file
        .metadata()
        .map_err(|source| DataError::Io {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    let budget = file_len
        .saturating_mul(PARQUET_MAX_EXPANSION)
        .saturating_add(PARQUET_BASE_BYTES)
        .min(PARQUET_MAX_BYTES);
    let reader =
        SerializedFileReader::new(file).map_err(|e| bad(format!("not a parquet file: {e}")))?;
    // what the metadata announces, before any page is read or decompressed
    let mut announced: u64 = 0;
    for rg in reader.metadata().row_groups() {
        for col in rg.columns() {
            let size = u64::try_from(col.uncompressed_size()).map_err(|_| {
                bad(format!(
                    "column {} announces a negative uncompressed size",
                    col.column_path()
                ))
            })?;
            announced = announced.saturating_add(size);
        }
    }
    if announced > budget {
        return Err(bad(format!(
            "its metadata announces {announced} bytes uncompressed, more than the {budget} a \
             file of {file_len} bytes may hold ({PARQUET_MAX_EXPANSION} x its size + \
             {PARQUET_BASE_BYTES}, at most {PARQUET_MAX_BYTES})"
        )));
    }
    let rows = reader
        .get_row_iter(None)
        .map_err(|e| bad(format!("cannot read rows: {e}")))?;
    let mut decoded: u64 = 0;
    for (i, row) in rows.enumerate() {
        let row = row.map_err(|e| DataError::BadRecord {
            path: path.to_path_buf(),
            at: format!("row {i}"),
            reason: format!("cannot decode: {e}"),
        })?;
        let v = row_to_json(&row);
        decoded = decoded.saturating_add(decoded_bytes(&v));
        if decoded > budget {
            return Err(DataError::BadRecord {
                path: path.to_path_buf(),
                at: format!("row {i}"),
                reason: format!(
                    "the rows so far decode to {decoded} bytes, more than the {budget} a file \
                     of {file_len} bytes may hold ({PARQUET_MAX_EXPANSION} x its size + \
                     {PARQUET_BASE_BYTES})"
                ),
            });
        }
        if f(format!("row {i}"), i, v)?.is_break() {
            break;
        }
    }
    Ok(())
}

fn row_to_json(row: &parquet::record::Row) -> Value {
    let mut map = serde_json::Map::new();
    for (name, f) in row.get_column_iter() {
        map.insert(name.clone(), field_to_json(f));
    }
    Value::Object(map)
}

fn field_to_json(f: &parquet::record::Field) -> Value {
    use parquet::record::Field;
    match f {
        Field::Null => Value::Null,
        Field::Bool(b) => Value::Bool(*b),
        Field::Byte(x) => (*x).into(),
        Field::Short(x) => (*x).into(),
        Field::Int(x) => (*x).into(),
        Field::Long(x) => (*x).into(),
        Field::UByte(x) => (*x).into(),
        Field::UShort(x) => (*x).into(),
        Field::UInt(x) => (*x).into(),
        Field::ULong(x) => (*x).into(),
        Field::Float(x) => {
            serde_json::Number::from_f64(f64::from(*x)).map_or(Value::Null, Value::Number)
        }
        Field::Double(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
        Field::Str(s) => Value::String(s.clone()),
        Field::Group(r) => row_to_json(r),
        Field::ListInternal(l) => Value::Array(l.elements().iter().map(field_to_json).collect()),
        Field::MapInternal(m) => Value::Object(
            m.entries()
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string().trim_matches('"').to_string(),
                        field_to_json(v),
                    )
                })
                .collect(),
        ),
        other => Value::String(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{load_file, FieldMap};
    use crate::Prompt;

    /// Writes `rows` of (problem, answer) as a parquet file with `codec`.
    fn write_parquet(path: &Path, rows: &[(&str, &str)], codec: parquet::basic::Compression) {
        use parquet::data_type::{ByteArray, ByteArrayType};
        use parquet::file::properties::WriterProperties;
        use parquet::file::writer::SerializedFileWriter;
        use parquet::schema::parser::parse_message_type;
        use std::sync::Arc;
        let schema = Arc::new(
            parse_message_type(
                "message m { required binary problem (UTF8); required binary answer (UTF8); }",
            )
            .unwrap(),
        );
        let props = Arc::new(WriterProperties::builder().set_compression(codec).build());
        let mut w = SerializedFileWriter::new(File::create(path).unwrap(), schema, props).unwrap();
        let mut group = w.next_row_group().unwrap();
        let mut column = 0;
        while let Some(mut col) = group.next_column().unwrap() {
            let values: Vec<ByteArray> = rows
                .iter()
                .map(|r| ByteArray::from(if column == 0 { r.0 } else { r.1 }))
                .collect();
            col.typed::<ByteArrayType>()
                .write_batch(&values, None, None)
                .unwrap();
            col.close().unwrap();
            column += 1;
        }
        group.close().unwrap();
        w.close().unwrap();
    }

    /// `first_record` gives the first record of each format with its location, and reads no
    /// further: a jsonl whose later line is not JSON, a parquet file of many rows; a file with
    /// no record gives None, and an unreadable first record is the same error as a full read.
    #[test]
    fn first_record_reads_the_first_record_and_no_further() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("a.jsonl");
        std::fs::write(&jsonl, "\n  \n{\"problem\": \"p\"}\nnot json\n").unwrap();
        let (at, v) = first_record(&jsonl).unwrap().unwrap();
        assert_eq!((at.as_str(), v["problem"].as_str()), ("line 3", Some("p")));
        assert!(
            read_records(&jsonl).is_err(),
            "the later line is an error when read"
        );
        let json = dir.path().join("a.json");
        std::fs::write(&json, r#"[{"answer": 1}, {"answer": 2}]"#).unwrap();
        let (at, v) = first_record(&json).unwrap().unwrap();
        assert_eq!((at.as_str(), v["answer"].as_i64()), ("element 0", Some(1)));
        let parquet = dir.path().join("a.parquet");
        let rows: Vec<(String, String)> = (0..5000)
            .map(|i| (format!("q{i}"), i.to_string()))
            .collect();
        let refs: Vec<(&str, &str)> = rows.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        write_parquet(&parquet, &refs, parquet::basic::Compression::SNAPPY);
        let (at, v) = first_record(&parquet).unwrap().unwrap();
        assert_eq!((at.as_str(), v["problem"].as_str()), ("row 0", Some("q0")));
        for (name, text) in [("empty.jsonl", "\n\n"), ("empty.json", "[]")] {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            assert_eq!(first_record(&p).unwrap(), None, "{name}");
        }
        let bad = dir.path().join("bad.jsonl");
        std::fs::write(&bad, "{\"problem\": \n").unwrap();
        let err = first_record(&bad).unwrap_err().to_string();
        assert!(err.contains("bad.jsonl") && err.contains("line 1"), "{err}");
    }

    /// Parquet files as pandas/pyarrow (snappy), polars (zstd) and others (gzip, lz4) write
    /// them load to the same problems as an uncompressed one.
    #[test]
    fn parquet_codecs_round_trip() {
        use parquet::basic::{Compression, GzipLevel, ZstdLevel};
        let dir = tempfile::tempdir().unwrap();
        let rows = [
            ("What is $1+1$?", "2"),
            ("Compute $\\frac{1}{2}+\\frac{1}{3}$.", "\\frac{5}{6}"),
            ("An empty-ish one: 0", "0"),
        ];
        let codecs = [
            ("none", Compression::UNCOMPRESSED),
            ("snappy", Compression::SNAPPY),
            ("zstd", Compression::ZSTD(ZstdLevel::default())),
            ("gzip", Compression::GZIP(GzipLevel::default())),
            ("lz4", Compression::LZ4_RAW),
        ];
        for (name, codec) in codecs {
            let p = dir.path().join(format!("{name}.parquet"));
            write_parquet(&p, &rows, codec);
            let ds = load_file(&p, &FieldMap::problem_answer()).unwrap();
            let got: Vec<(String, String)> = ds
                .problems
                .iter()
                .map(|q| match &q.prompt {
                    Prompt::Text(t) => (t.clone(), q.answer.clone()),
                    other => panic!("{name}: {other:?}"),
                })
                .collect();
            let want: Vec<(String, String)> = rows
                .iter()
                .map(|(q, a)| (q.to_string(), a.to_string()))
                .collect();
            assert_eq!(got, want, "{name}");
            assert_eq!(ds.problems[2].id, format!("{name}-2"), "{name}");
        }
    }
}
