//! TensorBoard event files: scalars and text, in the format TensorBoard, tensorboardX and
//! `torch.utils.tensorboard` read and write.
//!
//! # Format
//!
//! A file `events.out.tfevents.<unix seconds>.<host>.<pid>.rlvr` in the log directory is a
//! sequence of TFRecords, each
//!
//! ```text
//! len: u64 LE | masked_crc32c(len's 8 bytes): u32 LE | data: len bytes | masked_crc32c(data): u32 LE
//! masked_crc32c(b) = ((c >> 15) | (c << 17)) + 0xa282ead8   (wrapping), c = crc32c(b)
//! ```
//!
//! whose data is one `tensorboard.Event` protocol buffer (`event.proto`, `summary.proto`,
//! `tensor.proto` of tensorboard/compat/proto: only the fields used here are declared, under
//! their numbers there). The first record is `file_version: "brain.Event:2"`; then one event
//! per [`EventWriter::scalars`] call (all its values in one `Summary`, each a `simple_value`
//! as tensorboardX writes them), [`EventWriter::text`] (a string tensor for the text plugin)
//! or [`EventWriter::session_start`] (`SessionLog{status: START}`: TensorBoard then drops the
//! values of that step and later ones written before it, as after a restart from a
//! checkpoint). Each event is written with one `write` call and flushed, so a reader watching
//! the file sees whole events as they come.
//!
//! The protocol buffers are encoded by `prost`, the checksums by `crc32c`: no crate that
//! writes event files was a fit (see docs/architecture.md, "TensorBoard").

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use prost::Message;

/// `tensorboard.Event`.
#[derive(Clone, PartialEq, prost::Message)]
struct Event {
    #[prost(double, tag = "1")]
    wall_time: f64,
    #[prost(int64, tag = "2")]
    step: i64,
    #[prost(oneof = "What", tags = "3, 5, 7")]
    what: Option<What>,
}

/// `Event.what`.
#[derive(Clone, PartialEq, prost::Oneof)]
enum What {
    #[prost(string, tag = "3")]
    FileVersion(String),
    #[prost(message, tag = "5")]
    Summary(Summary),
    #[prost(message, tag = "7")]
    SessionLog(SessionLog),
}

/// `tensorboard.SessionLog` (`status` 1 = START).
#[derive(Clone, PartialEq, prost::Message)]
struct SessionLog {
    #[prost(int32, tag = "1")]
    status: i32,
}

const SESSION_START: i32 = 1;

/// `tensorboard.Summary`.
#[derive(Clone, PartialEq, prost::Message)]
struct Summary {
    #[prost(message, repeated, tag = "1")]
    value: Vec<Value>,
}

/// `tensorboard.Summary.Value`.
#[derive(Clone, PartialEq, prost::Message)]
struct Value {
    #[prost(string, tag = "1")]
    tag: String,
    #[prost(message, optional, tag = "9")]
    metadata: Option<SummaryMetadata>,
    #[prost(oneof = "Kind", tags = "2, 8")]
    kind: Option<Kind>,
}

/// `Summary.Value.value`.
#[derive(Clone, PartialEq, prost::Oneof)]
enum Kind {
    #[prost(float, tag = "2")]
    SimpleValue(f32),
    #[prost(message, tag = "8")]
    Tensor(TensorProto),
}

/// `tensorboard.SummaryMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
struct SummaryMetadata {
    #[prost(message, optional, tag = "1")]
    plugin_data: Option<PluginData>,
}

/// `tensorboard.SummaryMetadata.PluginData`.
#[derive(Clone, PartialEq, prost::Message)]
struct PluginData {
    #[prost(string, tag = "1")]
    plugin_name: String,
}

/// `tensorboard.TensorProto` (`dtype` 7 = DT_STRING; no `tensor_shape` dims: a scalar).
#[derive(Clone, PartialEq, prost::Message)]
struct TensorProto {
    #[prost(int32, tag = "1")]
    dtype: i32,
    #[prost(message, optional, tag = "2")]
    tensor_shape: Option<TensorShapeProto>,
    #[prost(bytes = "vec", repeated, tag = "8")]
    string_val: Vec<Vec<u8>>,
}

/// `tensorboard.TensorShapeProto` with no dims (a scalar).
#[derive(Clone, PartialEq, prost::Message)]
struct TensorShapeProto {}

const DT_STRING: i32 = 7;

/// `((c >> 15) | (c << 17)) + 0xa282ead8` of `c = crc32c(bytes)`.
fn masked_crc(bytes: &[u8]) -> u32 {
    let c = crc32c::crc32c(bytes);
    c.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// One TFRecord: length, its masked CRC, the data, its masked CRC.
fn record(data: &[u8]) -> Vec<u8> {
    let len = (data.len() as u64).to_le_bytes();
    let mut out = Vec::with_capacity(data.len() + 16);
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc(&len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&masked_crc(data).to_le_bytes());
    out
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The host name for the file name: `/proc/sys/kernel/hostname`'s letters, digits, `.`, `-`
/// and `_`, else `localhost`.
fn host() -> String {
    let name: String = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .collect();
    if name.is_empty() {
        "localhost".into()
    } else {
        name
    }
}

/// Appends `bytes` to `file` whole or not at all: on a failed write (a full disk) the file is cut
/// back to its length before, so that no torn record is left (TensorBoard stops reading a file
/// at its first bad record).
pub(crate) fn append_whole(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    let before = file.metadata()?.len();
    match file.write_all(bytes).and_then(|()| file.flush()) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = file.set_len(before);
            Err(e)
        }
    }
}

/// Writes one event file in a log directory.
pub struct EventWriter {
    path: PathBuf,
    file: File,
}

impl EventWriter {
    /// Creates the directory `dir` (and its parents) and a new event file in it, starting with
    /// the file-version event. A second writer in the same directory in the same second gets a
    /// numbered name, never the first one's file.
    pub fn create(dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let stem = format!(
            "events.out.tfevents.{}.{}.{}",
            now() as u64,
            host(),
            std::process::id()
        );
        let (path, file) = (0..1000)
            .find_map(|i| {
                let name = if i == 0 {
                    format!("{stem}.rlvr")
                } else {
                    format!("{stem}.{i}.rlvr")
                };
                let path = dir.join(name);
                File::create_new(&path).ok().map(|f| (path, f))
            })
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    format!("{}: no free event file name {stem}.*", dir.display()),
                )
            })?;
        let mut w = Self { path, file };
        w.event(0, What::FileVersion("brain.Event:2".into()))?;
        Ok(w)
    }

    /// The event file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn event(&mut self, step: usize, what: What) -> std::io::Result<()> {
        let event = Event {
            wall_time: now(),
            step: step as i64,
            what: Some(what),
        };
        append_whole(&mut self.file, &record(&event.encode_to_vec()))
    }

    /// The scalars `(tag, value)` of `step`, as one event (f32, as TensorBoard stores them).
    /// Nothing is written when `values` is empty.
    pub fn scalars(&mut self, step: usize, values: &[(String, f64)]) -> std::io::Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        let value = values
            .iter()
            .map(|(tag, v)| Value {
                tag: tag.clone(),
                metadata: None,
                kind: Some(Kind::SimpleValue(*v as f32)),
            })
            .collect();
        self.event(step, What::Summary(Summary { value }))
    }

    /// A text value for TensorBoard's text plugin (a scalar string tensor).
    pub fn text(&mut self, step: usize, tag: &str, text: &str) -> std::io::Result<()> {
        let value = Value {
            tag: tag.into(),
            metadata: Some(SummaryMetadata {
                plugin_data: Some(PluginData {
                    plugin_name: "text".into(),
                }),
            }),
            kind: Some(Kind::Tensor(TensorProto {
                dtype: DT_STRING,
                tensor_shape: Some(TensorShapeProto {}),
                string_val: vec![text.as_bytes().to_vec()],
            })),
        };
        self.event(step, What::Summary(Summary { value: vec![value] }))
    }

    /// A session start at `step`: TensorBoard drops what earlier files hold for `step` and
    /// later (a resumed run redoes those steps).
    pub fn session_start(&mut self, step: usize) -> std::io::Result<()> {
        self.event(
            step,
            What::SessionLog(SessionLog {
                status: SESSION_START,
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits a file into its records, checking both checksums of each.
    fn records(bytes: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let len = u64::from_le_bytes(rest[..8].try_into().unwrap()) as usize;
            let crc = u32::from_le_bytes(rest[8..12].try_into().unwrap());
            assert_eq!(crc, masked_crc(&rest[..8]));
            let data = &rest[12..12 + len];
            let crc = u32::from_le_bytes(rest[12 + len..16 + len].try_into().unwrap());
            assert_eq!(crc, masked_crc(data));
            out.push(Event::decode(data).unwrap());
            rest = &rest[16 + len..];
        }
        out
    }

    /// The masked CRC-32C of TFRecord, by hand: crc32c("123456789") = 0xe3069283 (the
    /// standard check value); rotated right by 15 bits, 0x2507c60d; plus 0xa282ead8 (mod
    /// 2^32), 0xc78ab0e5.
    #[test]
    fn masked_crc_by_hand() {
        assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(masked_crc(b"123456789"), 0xc78a_b0e5);
    }

    /// The bytes of a scalar event, by hand from the protobuf wire format: a reader that
    /// follows event.proto reads them.
    #[test]
    fn a_scalar_event_is_the_protobuf_of_event_proto() {
        let e = Event {
            wall_time: 0.0,
            step: 3,
            what: Some(What::Summary(Summary {
                value: vec![Value {
                    tag: "a".into(),
                    metadata: None,
                    kind: Some(Kind::SimpleValue(1.0)),
                }],
            })),
        };
        // step: field 2 varint 3; summary: field 5, 10 bytes: value (field 1, 8 bytes):
        // tag (field 1, "a"), simple_value (field 2, fixed32 1.0f = 00 00 80 3f)
        let want = [
            0x10, 3, 0x2a, 10, 0x0a, 8, 0x0a, 1, b'a', 0x15, 0, 0, 0x80, 0x3f,
        ];
        assert_eq!(e.encode_to_vec(), want);
    }

    #[test]
    fn a_file_holds_the_version_then_each_event_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EventWriter::create(&dir.path().join("tb")).unwrap();
        w.scalars(1, &[("x".into(), 0.5), ("y/z".into(), -2.0)])
            .unwrap();
        w.scalars(2, &[]).unwrap();
        w.text(2, "rlvr/verdict", "no bias").unwrap();
        w.session_start(5).unwrap();
        let name = w.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("events.out.tfevents.") && name.ends_with(".rlvr"),
            "{name}"
        );
        let ev = records(&std::fs::read(w.path()).unwrap());
        assert_eq!(ev.len(), 4);
        assert_eq!(ev[0].what, Some(What::FileVersion("brain.Event:2".into())));
        let Some(What::Summary(s)) = &ev[1].what else {
            panic!("{:?}", ev[1])
        };
        assert_eq!(ev[1].step, 1);
        let got: Vec<(&str, Option<Kind>)> = s
            .value
            .iter()
            .map(|v| (v.tag.as_str(), v.kind.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("x", Some(Kind::SimpleValue(0.5))),
                ("y/z", Some(Kind::SimpleValue(-2.0)))
            ]
        );
        let Some(What::Summary(s)) = &ev[2].what else {
            panic!("{:?}", ev[2])
        };
        let v = &s.value[0];
        assert_eq!(
            v.metadata
                .as_ref()
                .unwrap()
                .plugin_data
                .as_ref()
                .unwrap()
                .plugin_name,
            "text"
        );
        let Some(Kind::Tensor(t)) = &v.kind else {
            panic!("{v:?}")
        };
        assert_eq!(
            (t.dtype, t.string_val.clone()),
            (DT_STRING, vec![b"no bias".to_vec()])
        );
        assert_eq!(
            (ev[3].step, ev[3].what.clone()),
            (5, Some(What::SessionLog(SessionLog { status: 1 })))
        );
    }

    #[test]
    fn two_writers_in_one_directory_never_share_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = EventWriter::create(dir.path()).unwrap();
        let b = EventWriter::create(dir.path()).unwrap();
        assert_ne!(a.path(), b.path());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_directory_that_cannot_be_made_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(EventWriter::create(&file.join("tb")).is_err());
    }
}
