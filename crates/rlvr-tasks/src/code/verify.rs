//! The code verifier: the program in a response ([`extract_code`]), run on the problem's
//! tests in the sandbox and scored by [`CodeVerifier`].

use serde::{Deserialize, Serialize};

use super::sandbox::{run_python, SandboxConfig, SandboxError};
use super::test_cases::{parse_tests, Tests};
use crate::{Problem, Score, Verifier};

/// The program in a response: the last fenced block tagged `python`/`py`/`python3`, else the
/// last fenced block, else None.
pub fn extract_code(response: &str) -> Option<String> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut rest = response;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let Some(nl) = after.find('\n') else { break };
        let tag = after[..nl].trim().to_ascii_lowercase();
        let body = &after[nl + 1..];
        let Some(end) = body.find("```") else { break };
        blocks.push((tag, body[..end].to_string()));
        rest = &body[end + 3..];
    }
    let is_py = |t: &str| matches!(t, "python" | "py" | "python3");
    blocks
        .iter()
        .rev()
        .find(|(t, _)| is_py(t))
        .or(blocks.last())
        .map(|(_, b)| b.clone())
}

/// Whether a program's output matches the expected output: the same whitespace-separated
/// tokens (trailing spaces and newlines, `\r\n` and blank lines do not matter).
pub fn outputs_match(expected: &str, got: &str) -> bool {
    expected.split_whitespace().eq(got.split_whitespace())
}

/// How passed tests become a reward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RewardMode {
    /// Passed tests / all tests.
    #[default]
    Fraction,
    /// 1 when every test passes, else 0 (`prime_code` with `continuous=False`; rllm).
    AllOrNothing,
}

/// Scores a response's Python program against the problem's tests in the sandbox.
#[derive(Debug, Clone, Default)]
pub struct CodeVerifier {
    pub mode: RewardMode,
    pub sandbox: SandboxConfig,
    /// Run at most this many tests (None: all).
    pub max_tests: Option<usize>,
}

/// Put before functional (LeetCode) tests: the imports their reference solutions assume.
pub const FUNCTIONAL_PRELUDE: &str = "from typing import *\nimport collections, heapq, math, itertools, bisect, functools, string, re\nfrom collections import *\nfrom functools import *\nfrom itertools import *\nfrom heapq import *\nfrom bisect import *\nfrom math import *\nfrom string import *\n";

impl CodeVerifier {
    /// Runs `program` on `tests`: (passed, total, first failure reason). A sandbox that fails
    /// to run counts as a failed test here; [`CodeVerifier::try_run_tests`] returns it instead.
    pub fn run_tests(&self, program: &str, tests: &Tests) -> (usize, usize, Option<String>) {
        let n = match tests {
            Tests::Io(list) => self.max_tests.map_or(list.len(), |m| m.min(list.len())),
            Tests::Functional(_) => 1,
        };
        self.try_run_tests(program, tests)
            .unwrap_or_else(|e| (0, n, Some(e.to_string())))
    }

    /// Like [`CodeVerifier::run_tests`], but an error of the sandbox itself (the interpreter
    /// cannot be started, a temporary directory cannot be made) is an `Err`, never a failed
    /// test: the program's own failures (wrong output, exceptions, limits) are `Ok`.
    pub fn try_run_tests(
        &self,
        program: &str,
        tests: &Tests,
    ) -> Result<(usize, usize, Option<String>), SandboxError> {
        match tests {
            Tests::Io(list) => {
                let n = self.max_tests.map_or(list.len(), |m| m.min(list.len()));
                let mut passed = 0;
                let mut first_fail = None;
                for (i, t) in list.iter().take(n).enumerate() {
                    let o = run_python(program, &t.input, &self.sandbox)?;
                    if o.success() && outputs_match(&t.output, &o.stdout) {
                        passed += 1;
                        continue;
                    }
                    let why = if o.success() {
                        "wrong output".into()
                    } else {
                        o.reason()
                    };
                    first_fail.get_or_insert(format!("test {i}: {why}"));
                    if self.mode == RewardMode::AllOrNothing {
                        break;
                    }
                }
                Ok((passed, n, first_fail))
            }
            Tests::Functional(check) => {
                let full = format!("{FUNCTIONAL_PRELUDE}\n{program}\n\n{check}\n");
                let o = run_python(&full, "", &self.sandbox)?;
                Ok(if o.success() {
                    (1, 1, None)
                } else {
                    (0, 1, Some(o.reason()))
                })
            }
        }
    }

    /// The score of `response` on `tests`; `Err` only when the sandbox itself failed (see
    /// [`CodeVerifier::try_run_tests`]). No code block scores 0 with reason
    /// `no code block found`.
    pub fn try_score_tests(&self, response: &str, tests: &Tests) -> Result<Score, SandboxError> {
        let Some(program) = extract_code(response) else {
            return Ok(Score::binary(false, None, "no code block found"));
        };
        let (passed, total, fail) = self.try_run_tests(&program, tests)?;
        let all = total > 0 && passed == total;
        let reward = match self.mode {
            RewardMode::AllOrNothing => f64::from(u8::from(all)),
            RewardMode::Fraction if total > 0 => passed as f64 / total as f64,
            RewardMode::Fraction => 0.0,
        };
        Ok(Score {
            reward,
            correct: all,
            extracted: Some(program),
            reason: match fail {
                None => format!("{passed}/{total} tests passed"),
                Some(f) => format!("{passed}/{total} tests passed; {f}"),
            },
        })
    }
}

impl Verifier for CodeVerifier {
    fn score(&self, response: &str, problem: &Problem) -> Score {
        let tests = match parse_tests(&problem.answer) {
            Ok(t) => t,
            Err(e) => return Score::binary(false, None, format!("bad tests: {e}")),
        };
        self.try_score_tests(response, &tests)
            .unwrap_or_else(|e| Score::binary(false, None, e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_extraction_and_output_comparison() {
        let r = "text\n```\nprint(0)\n```\nmore\n```python\nprint(1)\n```\n```text\nout\n```";
        assert_eq!(extract_code(r).as_deref(), Some("print(1)\n"));
        assert_eq!(extract_code("```\nx=1\n```").as_deref(), Some("x=1\n"));
        assert_eq!(extract_code("no code"), None);
        assert_eq!(extract_code("```python\nunterminated"), None);
        assert!(outputs_match("1 2\n3\n", "1 2 \r\n3"));
        assert!(!outputs_match("1 2", "1 3"));
    }
}
