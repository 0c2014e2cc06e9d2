//! The chat template's environment: the budgets of one render ([`TemplateBudget`]), its bounded
//! output, and the Python-compatible functions and filters transformers' templates call
//! (`tojson`, `pprint`, `strftime_now`).

#[cfg(test)]
use serde_json::Value;

/// The limits of one chat-template render ([`super::tokenizer::ChatTokenizer::apply_chat_template`]), scaled
/// with the size of the input so that a long conversation renders while a template that
/// loops, recurses or repeats strings far beyond its input fails in well under a second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TemplateBudget {
    /// minijinja fuel: about one per instruction, plus one per 64 bytes of data the template
    /// creates or processes (so it also bounds memory, to about `64 * fuel` bytes).
    pub fuel: u64,
    /// The most bytes of output.
    pub output_bytes: usize,
    /// minijinja's recursion limit (nested blocks, loops and macro calls).
    pub recursion: usize,
}

impl TemplateBudget {
    /// Fuel with no input: one million (well under a second of work, at most 64 MiB of data;
    /// real chat templates use a few thousand per message).
    pub const BASE_FUEL: u64 = 1_000_000;
    /// Output with no input: 1 MiB (a template's own text, system prompts, tool schemas).
    pub const BASE_OUTPUT_BYTES: usize = 1 << 20;
    /// Nesting depth: real templates nest a few levels; minijinja's own default is 500.
    pub const RECURSION: usize = 200;

    /// The budget of a render whose messages, template kwargs and special tokens hold
    /// `input_bytes` bytes: [`Self::BASE_FUEL`] plus one fuel per input byte (each byte may be
    /// copied or scanned about 64 times), [`Self::BASE_OUTPUT_BYTES`] plus 4 output bytes per
    /// input byte, and [`Self::RECURSION`].
    pub fn for_input(input_bytes: usize) -> Self {
        TemplateBudget {
            fuel: Self::BASE_FUEL.saturating_add(input_bytes as u64),
            output_bytes: Self::BASE_OUTPUT_BYTES.saturating_add(input_bytes.saturating_mul(4)),
            recursion: Self::RECURSION,
        }
    }
}

/// A `Vec<u8>` writer that fails, and remembers it, once its contents would pass `limit`.
pub(super) struct BoundedWriter {
    pub(super) buf: Vec<u8>,
    pub(super) limit: usize,
    pub(super) exceeded: bool,
}

impl std::io::Write for BoundedWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len().saturating_add(data.len()) > self.limit {
            self.exceeded = true;
            return Err(std::io::Error::other(
                "chat template output budget exceeded",
            ));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// minijinja's `pprint` (the value's pretty debug form) written into at most `limit` bytes:
/// a list nested 30 times that holds its inner list twice prints to gigabytes (seen: an abort
/// on a 1.2 GB allocation); past `limit` it is an error, and the formatting stops there.
pub(super) fn pprint(
    v: &minijinja::Value,
    limit: usize,
) -> std::result::Result<String, minijinja::Error> {
    struct Limited {
        out: String,
        limit: usize,
    }
    impl std::fmt::Write for Limited {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            if self.out.len().saturating_add(s.len()) > self.limit {
                return Err(std::fmt::Error);
            }
            self.out.push_str(s);
            Ok(())
        }
    }
    let mut w = Limited {
        out: String::new(),
        limit,
    };
    std::fmt::Write::write_fmt(&mut w, format_args!("{v:#?}")).map_err(|_| {
        minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("pprint: the value prints to more than the output budget of {limit} bytes"),
        )
    })?;
    Ok(w.out)
}

/// transformers' `tojson`: `json.dumps(x, ensure_ascii=False)` with optional `indent`,
/// written straight from the template's value into a buffer of at most `limit` bytes (the
/// render's output budget): a value too large to print (a list doubled into billions of
/// items) is an error once `limit` bytes are written, not a serialization of all of it.
pub(super) fn tojson(
    v: minijinja::Value,
    indent: Option<usize>,
    limit: usize,
) -> std::result::Result<minijinja::Value, minijinja::Error> {
    let mut buf = BoundedWriter {
        buf: Vec::new(),
        limit,
        exceeded: false,
    };
    let written = match indent {
        Some(n) => {
            let ind = vec![b' '; n];
            let fmt = serde_json::ser::PrettyFormatter::with_indent(&ind);
            let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
            serde::Serialize::serialize(&v, &mut ser)
        }
        None => {
            let mut ser = serde_json::Serializer::with_formatter(&mut buf, PythonFormatter);
            serde::Serialize::serialize(&v, &mut ser)
        }
    };
    if buf.exceeded {
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("tojson: the value's JSON passes the output budget of {limit} bytes"),
        ));
    }
    written.map_err(|e| {
        minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string())
    })?;
    let text = String::from_utf8(buf.buf).map_err(|e| {
        minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string())
    })?;
    Ok(minijinja::Value::from_safe_string(text))
}

/// `json.dumps`' default separators (", " and ": ") for serde_json's compact output.
struct PythonFormatter;

impl serde_json::ser::Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

/// `json.dumps` default separators (", " and ": ") of a JSON value.
#[cfg(test)]
pub(super) fn python_json(v: &Value) -> String {
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, PythonFormatter);
    serde::Serialize::serialize(v, &mut ser).expect("a JSON value serializes");
    String::from_utf8(buf).expect("JSON is UTF-8")
}

/// transformers' `strftime_now(fmt)`: the current UTC time in strftime's codes (templates print
/// today's date with it); an unknown code is a template error, not a panic.
pub(super) fn strftime_now(fmt: &str) -> std::result::Result<String, minijinja::Error> {
    use std::fmt::Write;
    let mut out = String::new();
    write!(out, "{}", chrono::Utc::now().format(fmt)).map_err(|_| {
        minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("strftime_now: {fmt:?} is not a strftime format"),
        )
    })?;
    Ok(out)
}
