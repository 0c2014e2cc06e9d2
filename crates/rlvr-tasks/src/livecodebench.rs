//! LiveCodeBench's code-generation rows (`livecodebench/code_generation_lite`, one JSON object
//! per line of `test.jsonl` ... `test6.jsonl`) as code [`Problem`]s.
//!
//! # Row layout (the fields read; others are ignored)
//! | field | type | use |
//! |---|---|---|
//! | `question_id` | string | the problem id (`livecodebench-<question_id>`) |
//! | `question_content` | string | the problem statement |
//! | `starter_code` | string (may be empty) | the code to complete (LeetCode rows) |
//! | `public_test_cases` | string: JSON list of `{input, output, testtype}` | tests |
//! | `private_test_cases` | string: the same list as JSON, or base64 of zlib of a pickle of that JSON string | tests |
//! | `metadata` | string: a JSON object, `func_name` for functional tests | the method to call |
//!
//! The private tests are decoded without unpickling: base64, then zlib with the output bounded
//! by [`MAX_DECODED_TESTS_BYTES`], then [`crate::pickle::read_single_str`], which accepts only
//! a pickle holding one `str` (the way LiveCodeBench's own loader tries plain JSON first).
//!
//! # Tests
//! Public and private tests together (as LiveCodeBench evaluates). `testtype` `stdin` tests
//! become the code task's stdin/stdout list (`[{input, output}]`, [`crate::code`]).
//! `functional` tests (LeetCode: each input line is one JSON argument, the output is JSON)
//! become a `{"functional": ...}` check that calls `Solution().<func_name>(*args)` and compares
//! the result with `==` after turning a returned tuple into a list, as LiveCodeBench's grader
//! does. A row whose tests mix both kinds, have no tests, or name no usable `func_name` is
//! skipped and listed in [`Dataset::skipped`](crate::Dataset::skipped) with its reason.
//!
//! # Prompt
//! LiveCodeBench's generic prompt (`lcb_runner/prompts/code_generation.py`): `### Question:`,
//! the statement, `### Format:` with the starter code (or the stdin/stdout instruction and a
//! `# YOUR CODE HERE` block), then `### Answer: (use the provided format with backticks)`. The
//! system message of that file is not included (a config's chat template decides turns).

use std::io::Read;

use base64::Engine;
use serde_json::Value;

use crate::data::json_kind as kind;
use crate::{Problem, Prompt};

/// The most bytes the private tests of one row may decompress to (a larger row is an error,
/// never a partial read).
pub const MAX_DECODED_TESTS_BYTES: usize = 512 << 20;

/// `data_source` of the rows (routed to the code runner, [`crate::reward::CODE_SOURCES`]).
pub const DATA_SOURCE: &str = "livecodebench";

const FORMAT_WITH_STARTER: &str = "You will use the following starter code to write the \
     solution to the problem and enclose your code within delimiters.";
const FORMAT_WITHOUT_STARTER: &str = "Read the inputs from stdin solve the problem and write \
     the answer to stdout (do not directly test on the sample inputs). Enclose your code within \
     delimiters as follows. Ensure that when the python program runs, it reads the inputs, runs \
     the algorithm and writes output to STDOUT.";

/// What became of one row.
#[derive(Debug)]
pub enum RowOutcome {
    Problem(Box<Problem>),
    /// Left out, with the reason (a row the code task cannot score).
    Skipped(String),
}

/// Decodes a `private_test_cases` value to its JSON text: the value itself when it parses as
/// JSON, else base64 -> zlib (at most `max` bytes) -> a pickle of one `str`.
pub fn decode_private_tests(value: &str, max: usize) -> Result<String, String> {
    if serde_json::from_str::<Value>(value).is_ok() {
        return Ok(value.to_string());
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(value.trim().as_bytes())
        .map_err(|e| format!("neither JSON nor base64: {e}"))?;
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(raw.as_slice())
        .take(max as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("base64 decoded, but not zlib data: {e}"))?;
    if out.len() > max {
        return Err(format!(
            "zlib data decompresses to more than {max} bytes (the bound of one row's tests)"
        ));
    }
    crate::pickle::read_single_str(&out, max).map_err(|e| format!("zlib-decoded {e}"))
}

fn text<'v>(row: &'v Value, field: &str) -> Result<&'v str, String> {
    match row.get(field) {
        None => Err(format!("missing field `{field}`")),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!(
            "field `{field}`: expected a string, found {}",
            kind(other)
        )),
    }
}

/// One test as LiveCodeBench writes it.
struct RawTest {
    input: String,
    output: String,
    functional: bool,
}

fn parse_tests(json: &str, field: &str) -> Result<Vec<RawTest>, String> {
    let v: Value =
        serde_json::from_str(json).map_err(|e| format!("field `{field}`: not JSON: {e}"))?;
    let Value::Array(items) = v else {
        return Err(format!(
            "field `{field}`: expected a JSON list of tests, found {}",
            kind(&v)
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let get = |k: &str| match t.get(k) {
                Some(Value::String(s)) => Ok(s.clone()),
                _ => Err(format!("field `{field}`: test {i}: `{k}` is not a string")),
            };
            let testtype = get("testtype")?;
            let functional = match testtype.as_str() {
                "stdin" => false,
                "functional" => true,
                other => {
                    return Err(format!(
                        "field `{field}`: test {i}: unknown testtype {other:?} (expected \
                         \"stdin\" or \"functional\")"
                    ))
                }
            };
            Ok(RawTest {
                input: get("input")?,
                output: get("output")?,
                functional,
            })
        })
        .collect()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The Python check of functional tests (see the module docs).
fn functional_check(func_name: &str, tests: &[RawTest]) -> String {
    let pairs: Vec<[&str; 2]> = tests
        .iter()
        .map(|t| [t.input.as_str(), t.output.as_str()])
        .collect();
    // a JSON string literal is a valid Python string literal for everything serde_json writes
    let literal = Value::String(serde_json::to_string(&pairs).unwrap_or_default()).to_string();
    format!(
        "import json as _lcb_json\n\
         _LCB_TESTS = _lcb_json.loads({literal})\n\
         def check(candidate):\n\
         \x20   for _inp, _out in _LCB_TESTS:\n\
         \x20       _args = [_lcb_json.loads(_line) for _line in _inp.split(\"\\n\")]\n\
         \x20       _got = candidate(*_args)\n\
         \x20       if isinstance(_got, tuple):\n\
         \x20           _got = list(_got)\n\
         \x20       assert _got == _lcb_json.loads(_out)\n\
         \n\
         check(Solution().{func_name})"
    )
}

/// The prompt text of a row (see the module docs).
pub fn prompt_text(question: &str, starter_code: &str) -> String {
    let mut p = format!("### Question:\n{question}\n\n");
    if starter_code.trim().is_empty() {
        p += &format!("### Format: {FORMAT_WITHOUT_STARTER}\n```python\n# YOUR CODE HERE\n```\n\n");
    } else {
        p += &format!("### Format: {FORMAT_WITH_STARTER}\n```python\n{starter_code}\n```\n\n");
    }
    p += "### Answer: (use the provided format with backticks)\n\n";
    p
}

/// One row as a code problem, a skipped row (with its reason), or an error (a row that does
/// not have LiveCodeBench's layout: the message names the field).
pub fn row_to_problem(row: &Value) -> Result<RowOutcome, String> {
    if !row.is_object() {
        return Err(format!("expected a JSON object, found {}", kind(row)));
    }
    let id = text(row, "question_id")?;
    let question = text(row, "question_content")?;
    let starter = match row.get("starter_code") {
        None | Some(Value::Null) => "",
        Some(_) => text(row, "starter_code")?,
    };
    let mut tests = parse_tests(text(row, "public_test_cases")?, "public_test_cases")?;
    let private = decode_private_tests(text(row, "private_test_cases")?, MAX_DECODED_TESTS_BYTES)
        .map_err(|e| format!("field `private_test_cases`: {e}"))?;
    tests.extend(parse_tests(&private, "private_test_cases")?);
    let skip = |why: String| Ok(RowOutcome::Skipped(format!("question_id {id}: {why}")));
    if tests.is_empty() {
        return skip("no tests".into());
    }
    let n_functional = tests.iter().filter(|t| t.functional).count();
    let answer = if n_functional == 0 {
        let io: Vec<Value> = tests
            .iter()
            .map(|t| serde_json::json!({"input": t.input, "output": t.output}))
            .collect();
        Value::Array(io).to_string()
    } else if n_functional == tests.len() {
        let meta_text = text(row, "metadata")?;
        let meta: Value = serde_json::from_str(meta_text)
            .map_err(|e| format!("field `metadata`: not JSON: {e}"))?;
        let Some(func) = meta.get("func_name").and_then(Value::as_str) else {
            return skip("functional tests but no `func_name` in `metadata`".into());
        };
        if !is_identifier(func) {
            return skip(format!(
                "`metadata.func_name` {func:?} is not a Python name"
            ));
        }
        serde_json::json!({ "functional": functional_check(func, &tests) }).to_string()
    } else {
        return skip(format!(
            "{n_functional} functional and {} stdin tests in one problem (the code task runs \
             one kind per problem)",
            tests.len() - n_functional
        ));
    };
    Ok(RowOutcome::Problem(Box::new(Problem {
        id: format!("{DATA_SOURCE}-{id}"),
        prompt: Prompt::Text(prompt_text(question, starter)),
        answer,
        solution: None,
        data_source: DATA_SOURCE.to_string(),
        choices: None,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn encode(pickle: &[u8]) -> String {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(pickle).unwrap();
        base64::engine::general_purpose::STANDARD.encode(z.finish().unwrap())
    }

    /// A protocol-4 pickle of `s` as Python writes a short string.
    fn pickle_str(s: &str) -> Vec<u8> {
        let mut body = vec![0x8c, s.len() as u8];
        body.extend_from_slice(s.as_bytes());
        body.extend_from_slice(&[0x94, b'.']);
        let mut out = vec![0x80, 4, 0x95];
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend(body);
        out
    }

    fn row(public: &str, private: &str, meta: &str, starter: &str) -> Value {
        serde_json::json!({
            "question_title": "t", "question_content": "Add two numbers.", "platform": "atcoder",
            "question_id": "abc001_a", "contest_id": "abc001", "contest_date": "2023-05-01T00:00:00",
            "starter_code": starter, "difficulty": "easy",
            "public_test_cases": public, "private_test_cases": private, "metadata": meta,
        })
    }

    #[test]
    fn stdin_rows_keep_public_then_private_tests() {
        let public = r#"[{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]"#;
        let private = r#"[{"input": "2 2\n", "output": "4\n", "testtype": "stdin"}]"#;
        let r = row(public, &encode(&pickle_str(private)), "{}", "");
        let RowOutcome::Problem(p) = row_to_problem(&r).unwrap() else {
            panic!("skipped")
        };
        assert_eq!(p.id, "livecodebench-abc001_a");
        assert_eq!(p.data_source, "livecodebench");
        let tests = crate::code::parse_tests(&p.answer).unwrap();
        assert_eq!(
            tests,
            crate::code::Tests::Io(vec![
                crate::code::IoTest {
                    input: "1 2\n".into(),
                    output: "3\n".into()
                },
                crate::code::IoTest {
                    input: "2 2\n".into(),
                    output: "4\n".into()
                },
            ])
        );
        let text = p.prompt.text();
        assert!(text.starts_with(
            "### Question:\nAdd two numbers.\n\n### Format: Read the inputs from stdin"
        ));
        assert!(text.contains("# YOUR CODE HERE"));
        // plain JSON private tests (LiveCodeBench's loader tries JSON first)
        let r = row(public, private, "{}", "");
        let RowOutcome::Problem(p2) = row_to_problem(&r).unwrap() else {
            panic!("skipped")
        };
        assert_eq!(p2.answer, p.answer);
    }

    #[test]
    fn functional_rows_become_a_check_and_mixed_rows_are_skipped() {
        let public = r#"[{"input": "[1, 2]\n3", "output": "[0, 1]", "testtype": "functional"}]"#;
        let r = row(
            public,
            "[]",
            r#"{"func_name": "twoSum"}"#,
            "class Solution:\n    def twoSum(self, nums, target):\n        ",
        );
        let RowOutcome::Problem(p) = row_to_problem(&r).unwrap() else {
            panic!("skipped")
        };
        let crate::code::Tests::Functional(check) = crate::code::parse_tests(&p.answer).unwrap()
        else {
            panic!("not functional")
        };
        assert!(check.ends_with("check(Solution().twoSum)"), "{check}");
        assert!(p.prompt.text().contains("class Solution:"));
        let r = row(public, "[]", r#"{"func_name": "os.system"}"#, "x");
        assert!(
            matches!(row_to_problem(&r).unwrap(), RowOutcome::Skipped(s) if s.contains("not a Python name"))
        );
        let r = row(public, "[]", "{}", "x");
        assert!(
            matches!(row_to_problem(&r).unwrap(), RowOutcome::Skipped(s) if s.contains("func_name"))
        );
        let mixed = r#"[{"input": "1", "output": "1", "testtype": "stdin"}]"#;
        let r = row(public, mixed, r#"{"func_name": "f"}"#, "x");
        assert!(
            matches!(row_to_problem(&r).unwrap(), RowOutcome::Skipped(s) if s.contains("1 functional and 1 stdin"))
        );
        let r = row("[]", "[]", "{}", "");
        assert!(
            matches!(row_to_problem(&r).unwrap(), RowOutcome::Skipped(s) if s.contains("no tests"))
        );
    }

    #[test]
    fn layout_errors_name_the_field() {
        let mut r = row("[]", "[]", "{}", "");
        r.as_object_mut().unwrap().remove("question_content");
        assert_eq!(
            row_to_problem(&r).unwrap_err(),
            "missing field `question_content`"
        );
        let r = row("[]", "%%%", "{}", "");
        let e = row_to_problem(&r).unwrap_err();
        assert!(
            e.contains("`private_test_cases`") && e.contains("base64"),
            "{e}"
        );
        let r = row(
            r#"[{"input": "1", "output": "1", "testtype": "x"}]"#,
            "[]",
            "{}",
            "",
        );
        let e = row_to_problem(&r).unwrap_err();
        assert!(
            e.contains("`public_test_cases`: test 0: unknown testtype"),
            "{e}"
        );
        // a pickle of something other than one str
        let list_p2 = b"\x80\x02]q\x00X\x01\x00\x00\x00aq\x01a.";
        let r = row("[]", &encode(list_p2), "{}", "");
        let e = row_to_problem(&r).unwrap_err();
        assert!(e.contains("EMPTY_LIST"), "{e}");
    }

    #[test]
    fn decompression_is_bounded() {
        let big = "x".repeat(200);
        let mut p = vec![0x80, 2, b'X'];
        p.extend_from_slice(&(big.len() as u32).to_le_bytes());
        p.extend_from_slice(big.as_bytes());
        p.push(b'.');
        let enc = encode(&p);
        assert_eq!(decode_private_tests(&enc, 1000).unwrap(), big);
        let e = decode_private_tests(&enc, 100).unwrap_err();
        assert!(e.contains("more than 100 bytes"), "{e}");
    }
}
