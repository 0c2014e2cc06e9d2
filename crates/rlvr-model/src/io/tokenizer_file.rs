//! Reading a `tokenizer.json` safely: its size bounded, the rules that grow text checked, the
//! tokenizers crate's panics caught, and a probe text encoded in bounded time when the file is
//! loaded ([`load_tokenizer_json`]), so that a hostile file is refused before a prompt meets it.

use std::path::Path;

use serde_json::Value;
use tokenizers::Tokenizer;

use crate::error::{Error, Result};

/// The largest `tokenizer.json` read: 512 MiB (the largest published ones, with vocabularies
/// of a few hundred thousand tokens, are under 40 MiB).
pub const MAX_TOKENIZER_JSON_BYTES: u64 = 512 << 20;

/// The longest text a `Replace` rule (normalizer, pre-tokenizer or decoder) may put in place
/// of one match, and a `Prepend` normalizer may prepend: 16 bytes (real ones write `▁`, a
/// space or a newline). With it, and with the empty pattern refused, a replacement grows a
/// text by at most 16 bytes per matched byte.
pub const MAX_REPLACEMENT_BYTES: usize = 16;

/// The most a tokenizer's normalizer may grow the probe text [`load_tokenizer_json`] runs it
/// on, as a factor of the probe's size (real normalizers: under 2; a rule that replaces every
/// position with a long string: its length).
pub const MAX_NORMALIZER_GROWTH: usize = 8;

/// The longest a tokenizer may take to encode the probe text (about 2 KB): 2 s (real
/// tokenizers take well under 10 ms); a slower one has a pattern that backtracks
/// catastrophically and is refused when it is loaded.
pub const MAX_PROBE_SECS: f64 = 2.0;

/// Text that exercises a tokenizer's normalizer, pre-tokenizer and model when it is loaded:
/// words, digits, whitespace runs, punctuation, LaTeX, accents and CJK, and runs of one
/// character (what backtracking patterns explode on).
fn probe_text() -> String {
    let mut t = String::from(
        "Hello, World! The answer is $\\frac{1}{2} + x^2 = 42$.\n\n\tÉté ünïcode: 数学 ∑ ≤ ≠ \
         don't 'quote' \"double\" 12345678901234567890 3.14159 -7e10\r\n",
    );
    for c in ['a', ' ', '1', '\n', '!', 'é'] {
        t.extend(std::iter::repeat_n(c, 200));
        t.push('#');
    }
    t
}

/// Runs `f`, a call into the tokenizers crate, turning its error or its panic into an
/// [`Error::Tokenizer`] naming `source` (the tokenizer's file) and `what` it was doing.
pub(super) fn guarded<T>(
    source: Option<&str>,
    what: &str,
    f: impl FnOnce() -> tokenizers::Result<T>,
) -> Result<T> {
    let name = source.unwrap_or("the tokenizer");
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Error::Tokenizer(format!("{name}: {what}: {e}"))),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            Err(Error::Tokenizer(format!(
                "{name}: {what}: the tokenizer failed inside the tokenizers crate (a pattern \
                 too complex for its regex engine, or a broken file): {msg}"
            )))
        }
    }
}

/// Checks a parsed `tokenizer.json` for rules that grow text without bound: every `Replace`
/// (normalizer, pre-tokenizer, decoder) must have a non-empty pattern and a content of at
/// most [`MAX_REPLACEMENT_BYTES`], every `Prepend` at most that much. `at` is the JSON path
/// so far, named in the error.
fn check_growth_rules(v: &Value, at: &str) -> std::result::Result<(), String> {
    match v {
        Value::Object(m) => {
            let kind = m.get("type").and_then(Value::as_str);
            if kind == Some("Replace") {
                let content = m.get("content").and_then(Value::as_str).unwrap_or("");
                if content.len() > MAX_REPLACEMENT_BYTES {
                    return Err(format!(
                        "{at}: a Replace rule writes {} bytes per match, more than the \
                         {MAX_REPLACEMENT_BYTES} allowed (it could grow a text many times over)",
                        content.len()
                    ));
                }
                let pattern = m.get("pattern");
                let empty = match pattern {
                    Some(Value::Object(p)) => p
                        .get("String")
                        .or_else(|| p.get("Regex"))
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty),
                    _ => true,
                };
                if empty {
                    return Err(format!(
                        "{at}: a Replace rule with an empty or missing pattern (it would match \
                         between every two characters)"
                    ));
                }
            }
            if kind == Some("Prepend") {
                let prepend = m.get("prepend").and_then(Value::as_str).unwrap_or("");
                if prepend.len() > MAX_REPLACEMENT_BYTES {
                    return Err(format!(
                        "{at}: a Prepend rule adds {} bytes, more than the \
                         {MAX_REPLACEMENT_BYTES} allowed",
                        prepend.len()
                    ));
                }
            }
            for (k, child) in m {
                // the vocabulary and merges hold no rules: skip them (they are most of the file)
                if k == "vocab" || k == "merges" || k == "added_tokens" {
                    continue;
                }
                check_growth_rules(child, &format!("{at}.{k}"))?;
            }
            Ok(())
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                check_growth_rules(child, &format!("{at}.{i}"))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The most rules a `Sequence` (normalizers, pre-tokenizers, decoders) may hold: 64 (real
/// ones hold a handful). Each rule is a pass over the whole text, and a `Prepend` re-aligns it:
/// 100,000 of them took 55.6 s on a 2 KB text.
pub const MAX_SEQUENCE_RULES: usize = 64;

/// The most a chain of rules may grow a text in the worst case, as a factor, checked from the
/// file before any text meets it: 256 (real tokenizers: at most 3, `" "` to `"▁"`). Each
/// `Replace` may grow a text by its content over its shortest match, and rules in a `Sequence`
/// multiply: eight 16-fold rules (each within [`MAX_REPLACEMENT_BYTES`]) would grow the 2 KB
/// probe to 8 TB (seen: an abort on a 1.7 GB allocation).
pub const MAX_WORST_CASE_GROWTH: f64 = 256.0;

/// The worst-case growth factor of the rule `v` (a `Replace`: its content's length over its
/// pattern's, a regex pattern counted as one byte; a `Sequence`: the product of its rules';
/// anything else: 1), or an error naming `at` for a `Sequence` of more than
/// [`MAX_SEQUENCE_RULES`].
fn worst_case_growth(v: &Value, at: &str) -> std::result::Result<f64, String> {
    let Some(m) = v.as_object() else {
        return Ok(1.0);
    };
    match m.get("type").and_then(Value::as_str) {
        Some("Replace") => {
            let content = m.get("content").and_then(Value::as_str).map_or(0, str::len);
            let pattern = match m.get("pattern") {
                Some(Value::Object(p)) => p
                    .get("String")
                    .and_then(Value::as_str)
                    .map_or(1, |s| s.len().max(1)),
                _ => 1,
            };
            Ok((content as f64 / pattern as f64).max(1.0))
        }
        Some("Sequence") => {
            let rules = ["normalizers", "pretokenizers", "decoders"]
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_array).map(|a| (*k, a)));
            let Some((key, rules)) = rules else {
                return Ok(1.0);
            };
            if rules.len() > MAX_SEQUENCE_RULES {
                return Err(format!(
                    "{at}: a Sequence of {} rules, more than the {MAX_SEQUENCE_RULES} allowed",
                    rules.len()
                ));
            }
            let mut product = 1.0f64;
            for (i, r) in rules.iter().enumerate() {
                product *= worst_case_growth(r, &format!("{at}.{key}.{i}"))?;
            }
            Ok(product)
        }
        _ => Ok(1.0),
    }
}

/// Checks the normalizer, pre-tokenizer and decoder of a parsed `tokenizer.json` against
/// [`MAX_WORST_CASE_GROWTH`] and [`MAX_SEQUENCE_RULES`].
fn check_worst_case_growth(json: &Value) -> std::result::Result<(), String> {
    for part in ["normalizer", "pre_tokenizer", "decoder"] {
        let Some(v) = json.get(part) else { continue };
        let at = format!("tokenizer.json.{part}");
        let growth = worst_case_growth(v, &at)?;
        if growth > MAX_WORST_CASE_GROWTH {
            return Err(format!(
                "{at}: its rules can grow a text {growth:.0} times over in the worst case, more \
                 than the {MAX_WORST_CASE_GROWTH} allowed (Replace rules in a Sequence multiply)"
            ));
        }
    }
    Ok(())
}

/// Reads and validates a `tokenizer.json`, every failure an [`Error::BadFile`] naming it: at
/// most [`MAX_TOKENIZER_JSON_BYTES`]; rules that grow text checked
/// ([`MAX_REPLACEMENT_BYTES`], [`MAX_WORST_CASE_GROWTH`], [`MAX_SEQUENCE_RULES`]); parsed
/// with any panic of the tokenizers crate caught; then
/// the probe text (`probe_text`) normalized (growth at most [`MAX_NORMALIZER_GROWTH`]
/// times) and encoded (in at most [`MAX_PROBE_SECS`], without a panic), so that a hostile
/// file is refused when it is loaded, not when a prompt meets it.
pub fn load_tokenizer_json(path: &Path) -> Result<Tokenizer> {
    use std::io::Read;
    let bad = |reason: String| Error::BadFile {
        path: path.to_path_buf(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(bad("not a regular file".into()));
    }
    if meta.len() > MAX_TOKENIZER_JSON_BYTES {
        return Err(bad(format!(
            "{} bytes, more than the {MAX_TOKENIZER_JSON_BYTES} a tokenizer.json may hold",
            meta.len()
        )));
    }
    let mut text = String::new();
    file.take(MAX_TOKENIZER_JSON_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| bad(format!("cannot read as UTF-8 text: {e}")))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| bad(format!("invalid JSON: {e}")))?;
    check_growth_rules(&json, "tokenizer.json").map_err(&bad)?;
    check_worst_case_growth(&json).map_err(&bad)?;
    drop(json);
    let source = path.display().to_string();
    let tokenizer: Tokenizer =
        guarded(Some(&source), "load", || text.parse()).map_err(|e| bad(e.to_string()))?;
    let probe = probe_text();
    if let Some(n) = tokenizer.get_normalizer() {
        use tokenizers::{NormalizedString, Normalizer};
        let mut ns = NormalizedString::from(probe.as_str());
        guarded(Some(&source), "normalize a probe text", || {
            n.normalize(&mut ns)
        })
        .map_err(|e| bad(e.to_string()))?;
        let grown = ns.get().len();
        if grown > probe.len() * MAX_NORMALIZER_GROWTH {
            return Err(bad(format!(
                "its normalizer grows a {}-byte probe text to {grown} bytes, more than \
                 {MAX_NORMALIZER_GROWTH} times (a rule that blows text up)",
                probe.len()
            )));
        }
    }
    let t = std::time::Instant::now();
    guarded(Some(&source), "encode a probe text", || {
        tokenizer.encode(probe.as_str(), true)
    })
    .map_err(|e| bad(e.to_string()))?;
    let secs = t.elapsed().as_secs_f64();
    if secs > MAX_PROBE_SECS {
        return Err(bad(format!(
            "encoding a {}-byte probe text took {secs:.1} s (more than {MAX_PROBE_SECS} s): a \
             pattern that backtracks catastrophically",
            probe.len()
        )));
    }
    Ok(tokenizer)
}
