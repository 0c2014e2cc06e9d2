//! Inputs that are cheap to write and costly to read, through the public readers: jsonl lines
//! and json files whose values amplify in memory, parquet files that decode to far more than
//! their size, FIFOs and devices in place of data files, and a response that hides a wrong
//! final answer more than 64 KiB before a right number. Each is refused with an error naming
//! the file (and line or row), or scored wrong; the memory a parse takes is measured against
//! the factor [`JSON_BYTES_PER_VALUE`] states.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rlvr_tasks::data::{
    check_json_values, read_records, JSON_BASE_VALUES, JSON_BYTES_PER_VALUE, JSON_OBJECT_WEIGHT,
    PARQUET_BASE_BYTES,
};

/// The global allocator of this test binary: the system's, counting the bytes each thread
/// holds and the most it held, so a test can measure what one parse costs.
struct Counting;

thread_local! {
    static HELD: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn add_held(n: usize) {
    let _ = HELD.try_with(|h| {
        let v = h.get().saturating_add(n);
        h.set(v);
        let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
    });
}

fn sub_held(n: usize) {
    let _ = HELD.try_with(|h| h.set(h.get().saturating_sub(n)));
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counters are
// thread-local cells with constant initializers (no allocation, no destructor).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add_held(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        sub_held(layout.size());
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add_held(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            sub_held(layout.size());
            add_held(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The most bytes this thread held while `f` ran, above what it held before.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = HELD.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let out = f();
    (out, PEAK.with(Cell::get) - before)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

const GOOD: &str = r#"{"problem": "1+1?", "answer": "2"}"#;

/// `[` + `item` repeated to about `bytes` + `]`, the items separated by commas.
fn array_line(item: &str, bytes: usize) -> String {
    let n = bytes / (item.len() + 1);
    let mut s = String::with_capacity(bytes + 2);
    s.push('[');
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(item);
    }
    s.push(']');
    s
}

/// `{"0":0,"1":0,...}` with distinct (hex) keys, about `bytes` long: two counted tokens
/// (`:` and `,`) per 10 bytes or less.
fn object_line(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 16);
    s.push('{');
    let mut i = 0u64;
    while s.len() < bytes {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("\"{i:x}\":0"));
        i += 1;
    }
    s.push('}');
    s
}

#[test]
fn json_lines_that_amplify_are_refused_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    // 3 bytes a value ("[]," and "0,"-like shapes); an object of 2 counted tokens per 15 bytes
    for (name, line) in [
        ("lists", array_line("[]", 3 << 20)),
        ("zeros", array_line("0", 3 << 20)),
        ("maps", array_line("{}", 3 << 20)),
        ("keys", object_line(8 << 20)),
    ] {
        let text = format!("{GOOD}\n{{\"problem\": {line}, \"answer\": \"1\"}}\n");
        let p = write(dir.path(), &format!("{name}.jsonl"), text.as_bytes());
        let t = Instant::now();
        let (res, peak) = peak_of(|| read_records(&p));
        let err = res.unwrap_err().to_string();
        assert!(
            err.contains(&format!("{name}.jsonl: line 2: more than")) && err.contains("values"),
            "{name}: {err}"
        );
        // refused by the scan, before a value was built: the line buffer (grown by doubling)
        // and little else
        assert!(
            peak < 2 * text.len() + (1 << 20),
            "{name}: {peak} bytes held"
        );
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{name}: {:?}",
            t.elapsed()
        );
        // the same shape as a json array file: refused naming the file
        let p = write(
            dir.path(),
            &format!("{name}.json"),
            format!("[{GOOD}, {{\"problem\": {line}, \"answer\": \"1\"}}]").as_bytes(),
        );
        let err = read_records(&p).unwrap_err().to_string();
        assert!(
            err.contains(&format!("{name}.json: more than")),
            "{name}: {err}"
        );
    }
}

/// Lines as dense as the limit allows (one value or key per [`JSON_BYTES_PER_VALUE`] bytes)
/// parse, and what their parse holds stays within the stated `17 L + 16 MiB`.
#[test]
fn the_densest_accepted_lines_take_memory_within_the_stated_factor() {
    let dir = tempfile::tempdir().unwrap();
    let pad = |item: &str, width: usize| format!("{item:<width$}");
    for (name, line) in [
        (
            "numbers",
            array_line(&pad("0", JSON_BYTES_PER_VALUE - 1), 4 << 20),
        ),
        (
            "lists",
            array_line(&pad("[]", 2 * JSON_BYTES_PER_VALUE - 1), 4 << 20),
        ),
        (
            "maps",
            array_line(
                &pad("{}", (JSON_OBJECT_WEIGHT + 1) * JSON_BYTES_PER_VALUE - 1),
                4 << 20,
            ),
        ),
        (
            // one key each: the costliest accepted shape before objects were weighted (29 x)
            "one-key maps",
            array_line(
                &pad(
                    "{\"kkkkkkkkkkkk\":0}",
                    (JSON_OBJECT_WEIGHT + 2) * JSON_BYTES_PER_VALUE - 1,
                ),
                4 << 20,
            ),
        ),
        (
            "strings",
            array_line(&pad("\"abcdef\"", JSON_BYTES_PER_VALUE - 1), 4 << 20),
        ),
        ("keys", {
            // two counted tokens (`:` and `,`) per 16 bytes
            let n = (4 << 20) / 16;
            let items: Vec<String> = (0..n).map(|i| format!("\"k{i:010}\":  0")).collect();
            format!("{{{}}}", items.join(","))
        }),
    ] {
        assert!(check_json_values(line.as_bytes()).is_ok(), "{name}");
        let text = format!("{{\"problem\": {line}, \"answer\": \"1\"}}\n");
        let p = write(dir.path(), &format!("{name}.jsonl"), text.as_bytes());
        let (res, peak) = peak_of(|| read_records(&p));
        let recs = res.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(recs.len(), 1);
        let bound = 17 * text.len() + (16 << 20);
        eprintln!(
            "{name}: {} bytes, peak {peak} ({:.1} x)",
            text.len(),
            peak as f64 / text.len() as f64
        );
        assert!(
            peak <= bound,
            "{name}: a {}-byte line held {peak} bytes at its peak, over 17 L + 16 MiB = {bound}",
            text.len()
        );
        drop(recs);
    }
    // the base allowance: a short line may hold JSON_BASE_VALUES values whatever its size
    let small = array_line("0", 2 * JSON_BASE_VALUES - 10);
    assert!(check_json_values(small.as_bytes()).is_ok());
    let over = array_line("0", 4 * JSON_BASE_VALUES);
    assert!(check_json_values(over.as_bytes()).is_err());
}

fn parquet_strings(path: &Path, values: &[parquet::data_type::ByteArray], dictionary: bool) {
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::data_type::ByteArrayType;
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    let schema = Arc::new(
        parquet::schema::parser::parse_message_type(
            "message m { required binary problem (UTF8); required binary answer (UTF8); }",
        )
        .unwrap(),
    );
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).unwrap()))
            .set_dictionary_enabled(dictionary)
            .set_dictionary_page_size_limit(64 << 20)
            .set_data_page_size_limit(64 << 20)
            .build(),
    );
    let file = std::fs::File::create(path).unwrap();
    let mut w = SerializedFileWriter::new(file, schema, props).unwrap();
    let mut rg = w.next_row_group().unwrap();
    let answers: Vec<parquet::data_type::ByteArray> = values.iter().map(|_| "1".into()).collect();
    for col in [values, &answers[..]] {
        let mut c = rg.next_column().unwrap().unwrap();
        c.typed::<ByteArrayType>()
            .write_batch(col, None, None)
            .unwrap();
        c.close().unwrap();
    }
    rg.close().unwrap();
    w.close().unwrap();
}

#[test]
fn a_tiny_parquet_that_decodes_to_far_more_than_its_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let big: parquet::data_type::ByteArray = "a".repeat(2 << 20).into_bytes().into();
    // plain: the metadata announces the 128 MiB it decompresses to; refused before decoding
    let p = dir.path().join("announced.parquet");
    parquet_strings(&p, &vec![big.clone(); 64], false);
    let size = std::fs::metadata(&p).unwrap().len();
    assert!(size < 64 << 10, "the fixture is {size} bytes");
    let t = Instant::now();
    let (res, peak) = peak_of(|| read_records(&p));
    let err = res.unwrap_err().to_string();
    assert!(
        err.contains("announced.parquet: its metadata announces"),
        "{err}"
    );
    assert!(peak < 16 << 20, "{peak} bytes held before refusing");
    assert!(t.elapsed() < Duration::from_secs(5));
    // dictionary-encoded: one 2 MiB value (announced once) read into every row; refused at the
    // row where the decoded rows pass 128 x the file's size + 64 MiB
    let p = dir.path().join("dictionary.parquet");
    parquet_strings(&p, &vec![big; 200], true);
    let size = std::fs::metadata(&p).unwrap().len();
    assert!(size < 64 << 10, "the fixture is {size} bytes");
    let err = read_records(&p).unwrap_err().to_string();
    assert!(
        err.contains("dictionary.parquet: row ") && err.contains("decode to"),
        "{err}"
    );
    let row: usize = err
        .split("row ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|r| r.parse().ok())
        .unwrap();
    let budget = PARQUET_BASE_BYTES + 128 * size;
    assert_eq!(row as u64, budget / (2 << 20), "{err}");
    // a small honest parquet reads
    let p = dir.path().join("ok.parquet");
    parquet_strings(&p, &["1+1?".into(), "2+2?".into()], true);
    assert_eq!(read_records(&p).unwrap().len(), 2);
}

#[test]
fn fifos_and_devices_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["pipe.jsonl", "pipe.json", "pipe.parquet"] {
        let p = dir.path().join(name);
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path and a mode
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let q = p.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_records(&q).map(|r| r.len()).map_err(|e| e.to_string()));
        });
        let got = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("{name}: reading a FIFO blocked"));
        let err = got.unwrap_err();
        assert!(
            err.contains(name) && err.contains("not a regular file"),
            "{name}: {err}"
        );
    }
    let err = rlvr_tasks::data::read_regular_file(Path::new("/dev/zero"), 1 << 20)
        .unwrap_err()
        .to_string();
    assert!(err.contains("/dev/zero: not a regular file"), "{err}");
}

/// A response whose final (boxed) answer is wrong and that pads 64 KiB before a second number,
/// the right one, is scored wrong: the verifier reads the whole response; one it does not
/// read whole (over `MAX_RESPONSE_BYTES`) scores wrong too.
#[test]
fn a_wrong_answer_padded_before_a_right_number_is_scored_wrong() {
    use rlvr_tasks::math::{verify, MAX_RESPONSE_BYTES};
    let padded = format!(
        "The answer is \\boxed{{41}}.{}Note: 42",
        " ".repeat(64 * 1024 + 10)
    );
    let s = verify("42", &padded);
    assert!(!s.correct, "{:?}", s.extracted);
    assert_eq!(s.extracted.as_deref(), Some("41"));
    // and the boxed right answer so padded is still found and scored right
    let right = format!(
        "The answer is \\boxed{{42}}.{}Note: 41",
        " ".repeat(64 * 1024 + 10)
    );
    assert!(verify("42", &right).correct);
    // a response longer than the verifier reads is wrong, whatever it ends with
    let huge = format!("{}\\boxed{{42}}", "x".repeat(MAX_RESPONSE_BYTES));
    let s = verify("42", &huge);
    assert!(!s.correct && s.extracted.is_none(), "{:?}", s.extracted);
    assert!(s.reason.contains("not read"), "{}", s.reason);
    // reading a response whole stays fast at the limit
    let t = Instant::now();
    let long = format!(
        "{}\\boxed{{42}}",
        "1 + $x$ = \\frac{2}{3}, the answer is 7. ".repeat(MAX_RESPONSE_BYTES / 50)
    );
    assert!(verify("42", &long).correct);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}
