//! The tests of a code problem: the formats its `answer` holds them in (see the module docs
//! of [`crate::code`]) and [`parse_tests`].

use serde::{Deserialize, Serialize};

/// One stdin/stdout test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoTest {
    pub input: String,
    pub output: String,
}

/// A problem's tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tests {
    /// Run the program on each input; compare its stdout to the output.
    Io(Vec<IoTest>),
    /// Append this code (which calls `check(...)`) to the program; pass when it exits 0.
    Functional(String),
}

/// Parses a code problem's `answer` (see the module docs).
pub fn parse_tests(answer: &str) -> Result<Tests, String> {
    let v: serde_json::Value =
        serde_json::from_str(answer).map_err(|e| format!("tests are not JSON: {e}"))?;
    match v {
        serde_json::Value::Array(_) => serde_json::from_value(v)
            .map(Tests::Io)
            .map_err(|e| format!("expected a list of {{input, output}}: {e}")),
        serde_json::Value::Object(m) => {
            if let Some(f) = m.get("functional") {
                return match f {
                    serde_json::Value::String(s) => Ok(Tests::Functional(s.clone())),
                    _ => Err("field `functional` must be a string of Python".into()),
                };
            }
            if m.get("fn_name").is_some_and(|v| !v.is_null()) {
                return Err("call-based tests (`fn_name`) are not supported: give \
                            stdin/stdout `inputs`/`outputs` or a `functional` check"
                    .into());
            }
            match (m.get("inputs"), m.get("outputs")) {
                (Some(serde_json::Value::Array(i)), Some(serde_json::Value::Array(o))) => {
                    if i.len() != o.len() {
                        return Err(format!(
                            "`inputs` has {} elements but `outputs` has {}",
                            i.len(),
                            o.len()
                        ));
                    }
                    i.iter()
                        .zip(o)
                        .enumerate()
                        .map(|(k, (i, o))| match (i.as_str(), o.as_str()) {
                            (Some(i), Some(o)) => Ok(IoTest {
                                input: i.to_string(),
                                output: o.to_string(),
                            }),
                            _ => Err(format!("test {k}: `inputs`/`outputs` must be strings")),
                        })
                        .collect::<Result<_, _>>()
                        .map(Tests::Io)
                }
                _ => Err(
                    "expected an object with `functional` (a string) or `inputs` and \
                          `outputs` (lists)"
                        .into(),
                ),
            }
        }
        _ => Err("expected a list of tests or {\"functional\": ...}".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_parse() {
        assert_eq!(
            parse_tests(r#"[{"input": "1", "output": "2"}]"#).unwrap(),
            Tests::Io(vec![IoTest {
                input: "1".into(),
                output: "2".into()
            }])
        );
        assert!(matches!(
            parse_tests(r#"{"functional": "check(f)"}"#).unwrap(),
            Tests::Functional(_)
        ));
        assert!(parse_tests("[1]").is_err());
        assert!(parse_tests("nope").is_err());
    }
}
