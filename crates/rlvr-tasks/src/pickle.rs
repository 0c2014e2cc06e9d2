//! A reader for the one kind of Python pickle rlvr accepts: a stream that holds exactly one
//! `str`. Nothing is ever unpickled: the bytes are walked opcode by opcode, and only the
//! opcodes a pickled `str` uses at protocols 1 to 5 are known:
//!
//! | opcode | byte | argument |
//! |---|---|---|
//! | `PROTO` | `0x80` | 1 byte, the protocol (at most 5); only as the first opcode |
//! | `FRAME` | `0x95` | 8-byte little-endian length of the frame that follows |
//! | `SHORT_BINUNICODE` | `0x8c` | 1-byte length, then UTF-8 |
//! | `BINUNICODE` | `X` | 4-byte little-endian length, then UTF-8 |
//! | `BINUNICODE8` | `0x8d` | 8-byte little-endian length, then UTF-8 |
//! | `MEMOIZE` | `0x94` | none |
//! | `BINPUT` | `q` | 1-byte memo index |
//! | `LONG_BINPUT` | `r` | 4-byte memo index |
//! | `STOP` | `.` | none |
//!
//! Everything else is refused with a [`PickleError`] that names the opcode and its offset:
//! any other opcode (`GLOBAL`, `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`, ... the ways
//! a pickle runs code; lists, ints, bytes, protocol 0's text opcodes), a second object, a
//! memo opcode with nothing to store, a length that runs past the end of the stream or past
//! the caller's size bound, bytes that are not UTF-8, a stream that ends without `STOP`, and
//! any byte after `STOP`.

use std::fmt;

/// Why a stream is not a pickle of one `str`. `offset` is the byte offset of the opcode at
/// fault (for a stream that ends early, the end of the stream).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickleError {
    pub offset: usize,
    pub reason: String,
}

impl fmt::Display for PickleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pickle byte {}: {}", self.offset, self.reason)
    }
}

impl std::error::Error for PickleError {}

/// The name of an opcode byte, for errors (`0x63 GLOBAL`); unknown bytes are shown as hex.
pub fn opcode_name(op: u8) -> String {
    let name = match op {
        0x80 => "PROTO",
        0x95 => "FRAME",
        0x8c => "SHORT_BINUNICODE",
        b'X' => "BINUNICODE",
        0x8d => "BINUNICODE8",
        0x94 => "MEMOIZE",
        b'q' => "BINPUT",
        b'r' => "LONG_BINPUT",
        b'.' => "STOP",
        b'c' => "GLOBAL",
        0x93 => "STACK_GLOBAL",
        b'R' => "REDUCE",
        b'b' => "BUILD",
        b'i' => "INST",
        b'o' => "OBJ",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        b'(' => "MARK",
        b')' => "EMPTY_TUPLE",
        0x85 => "TUPLE1",
        0x86 => "TUPLE2",
        0x87 => "TUPLE3",
        b't' => "TUPLE",
        b']' => "EMPTY_LIST",
        b'l' => "LIST",
        b'a' => "APPEND",
        b'e' => "APPENDS",
        b'}' => "EMPTY_DICT",
        b'd' => "DICT",
        b's' => "SETITEM",
        b'u' => "SETITEMS",
        b'K' => "BININT1",
        b'M' => "BININT2",
        b'J' => "BININT",
        b'I' => "INT",
        b'L' => "LONG",
        0x8a => "LONG1",
        0x8b => "LONG4",
        b'N' => "NONE",
        0x88 => "NEWTRUE",
        0x89 => "NEWFALSE",
        b'G' => "BINFLOAT",
        b'F' => "FLOAT",
        b'V' => "UNICODE",
        b'S' => "STRING",
        b'T' => "BINSTRING",
        b'U' => "SHORT_BINSTRING",
        b'B' => "BINBYTES",
        b'C' => "SHORT_BINBYTES",
        0x8e => "BINBYTES8",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        b'p' => "PUT",
        b'g' => "GET",
        b'h' => "BINGET",
        b'j' => "LONG_BINGET",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x8f => "EMPTY_SET",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        _ => "",
    };
    if name.is_empty() {
        format!("0x{op:02x} (not a pickle opcode)")
    } else {
        format!("0x{op:02x} {name}")
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: u64, at: usize, what: &str) -> Result<&'a [u8], PickleError> {
        let left = (self.bytes.len() - self.pos) as u64;
        if n > left {
            return Err(PickleError {
                offset: at,
                reason: format!(
                    "{what} needs {n} bytes but the stream has {left} left (truncated or \
                     over-long length)"
                ),
            });
        }
        let s = &self.bytes[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    fn le(&mut self, n: usize, at: usize, what: &str) -> Result<u64, PickleError> {
        let b = self.take(n as u64, at, what)?;
        Ok(b.iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }
}

/// The `str` that `bytes` pickles, if `bytes` is a pickle of exactly one `str` no longer than
/// `max_len` bytes of UTF-8 (see the module docs for what is refused).
pub fn read_single_str(bytes: &[u8], max_len: usize) -> Result<String, PickleError> {
    let mut c = Cursor { bytes, pos: 0 };
    let mut value: Option<String> = None;
    let mut memoized = false;
    let mut frame_end: Option<usize> = None;
    let err = |offset: usize, reason: String| PickleError { offset, reason };
    loop {
        let at = c.pos;
        let Some(&op) = bytes.get(at) else {
            return Err(err(at, "the stream ends without STOP (truncated)".into()));
        };
        c.pos += 1;
        match op {
            0x80 => {
                if at != 0 {
                    return Err(err(at, "PROTO after the first opcode".into()));
                }
                let v = c.le(1, at, "PROTO")?;
                if !(2..=5).contains(&v) {
                    return Err(err(
                        at,
                        format!("unsupported protocol {v} (expected 2 to 5)"),
                    ));
                }
            }
            0x95 => {
                if frame_end.is_some_and(|end| at < end) {
                    return Err(err(at, "FRAME inside an unfinished frame".into()));
                }
                let n = c.le(8, at, "FRAME")?;
                let left = (bytes.len() - c.pos) as u64;
                if n > left {
                    return Err(err(
                        at,
                        format!(
                            "FRAME of {n} bytes but the stream has {left} left (truncated or \
                             over-long length)"
                        ),
                    ));
                }
                frame_end = Some(c.pos + n as usize);
            }
            0x8c | b'X' | 0x8d => {
                let width = match op {
                    0x8c => 1,
                    b'X' => 4,
                    _ => 8,
                };
                let name = opcode_name(op);
                let n = c.le(width, at, &name)?;
                if value.is_some() {
                    return Err(err(
                        at,
                        format!("{name}: a second object (only one str is accepted)"),
                    ));
                }
                if n > max_len as u64 {
                    return Err(err(
                        at,
                        format!("{name}: a string of {n} bytes, over the bound of {max_len}"),
                    ));
                }
                let raw = c.take(n, at, &name)?;
                let s = std::str::from_utf8(raw)
                    .map_err(|e| err(at, format!("{name}: not UTF-8: {e}")))?;
                value = Some(s.to_string());
            }
            0x94 | b'q' | b'r' => {
                let name = opcode_name(op);
                match op {
                    b'q' => {
                        c.le(1, at, &name)?;
                    }
                    b'r' => {
                        c.le(4, at, &name)?;
                    }
                    _ => {}
                }
                if value.is_none() {
                    return Err(err(at, format!("{name} with no object to store")));
                }
                if memoized {
                    return Err(err(at, format!("{name}: the object is memoized twice")));
                }
                memoized = true;
            }
            b'.' => {
                let Some(s) = value else {
                    return Err(err(at, "STOP with no object".into()));
                };
                if c.pos != bytes.len() {
                    return Err(err(
                        c.pos,
                        format!(
                            "{} bytes after STOP (trailing data, first opcode {})",
                            bytes.len() - c.pos,
                            opcode_name(bytes[c.pos])
                        ),
                    ));
                }
                return Ok(s);
            }
            other => {
                return Err(err(
                    at,
                    format!(
                        "opcode {} is refused: only a pickled str is accepted",
                        opcode_name(other)
                    ),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_written_streams() {
        // protocol 2, BINUNICODE + BINPUT
        let p2 = b"\x80\x02X\x06\x00\x00\x00h\xc3\xa9lloq\x00.";
        assert_eq!(read_single_str(p2, 100).unwrap(), "h\u{e9}llo");
        // protocol 4, FRAME + SHORT_BINUNICODE + MEMOIZE
        let p4 = b"\x80\x04\x95\n\x00\x00\x00\x00\x00\x00\x00\x8c\x06h\xc3\xa9llo\x94.";
        assert_eq!(read_single_str(p4, 100).unwrap(), "h\u{e9}llo");
        // the bound applies to the declared length, before anything is read
        let e = read_single_str(p4, 5).unwrap_err();
        assert!(e.reason.contains("over the bound of 5"), "{e}");
        // BINUNICODE8 with a length far past the end
        let e = read_single_str(b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7f", usize::MAX)
            .unwrap_err();
        assert!(e.reason.contains("truncated or over-long"), "{e}");
        // empty stream, STOP alone, a second string, double memo
        assert!(read_single_str(b"", 10)
            .unwrap_err()
            .reason
            .contains("STOP"));
        assert!(read_single_str(b".", 10)
            .unwrap_err()
            .reason
            .contains("no object"));
        let e = read_single_str(b"\x80\x04\x8c\x01a\x8c\x01b.", 10).unwrap_err();
        assert!(e.reason.contains("second object"), "{e}");
        assert_eq!(e.offset, 5);
        let e = read_single_str(b"\x80\x04\x8c\x01a\x94\x94.", 10).unwrap_err();
        assert!(e.reason.contains("memoized twice"), "{e}");
        // invalid UTF-8
        let e = read_single_str(b"\x8c\x01\xff.", 10).unwrap_err();
        assert!(e.reason.contains("not UTF-8"), "{e}");
        // protocol 6 and PROTO in the middle
        assert!(read_single_str(b"\x80\x06\x8c\x01a.", 10)
            .unwrap_err()
            .reason
            .contains("protocol 6"));
        assert!(read_single_str(b"\x8c\x01a\x80\x04.", 10)
            .unwrap_err()
            .reason
            .contains("PROTO after"));
        // a frame longer than the stream
        let e = read_single_str(
            b"\x80\x04\x95\xff\x00\x00\x00\x00\x00\x00\x00\x8c\x01a.",
            10,
        )
        .unwrap_err();
        assert!(e.reason.contains("FRAME of 255 bytes"), "{e}");
        // the classic exploit's opcodes, right after a string and at the start
        let e = read_single_str(b"\x8c\x01aR.", 10).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pickle byte 3: opcode 0x52 REDUCE is refused: only a pickled str is accepted"
        );
        let e = read_single_str(b"cos\nsystem\n.", 10).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("pickle byte 0: opcode 0x63 GLOBAL"),
            "{e}"
        );
    }

    #[test]
    fn opcode_names() {
        assert_eq!(opcode_name(b'c'), "0x63 GLOBAL");
        assert_eq!(opcode_name(b'R'), "0x52 REDUCE");
        assert_eq!(opcode_name(0xff), "0xff (not a pickle opcode)");
    }
}
