//! A task's environment: what it writes into a response while the policy samples it (a
//! tool's output, a checker's verdict), as [`rlvr_model::Environment`] does for one generation
//! call. The inserted tokens are fed to the model like sampled ones and left out of the loss
//! and of the length statistics (verl's multi-turn `response_mask`).
//!
//! The one environment so far is the testbed's step checker for the verified regimes
//! ([`TestbedChecker`], `rlvr_tasks::testbed::checker_verdict`).

use rlvr_model::ChatTokenizer;
use rlvr_tasks::testbed::{self as tb, OnFailedStep};
use rlvr_tasks::{Problem, Prompt};

use crate::TrainError;

/// What a task's environment writes into responses, by problem.
pub trait TaskEnvironment: Send + Sync {
    /// The tokens to insert after the policy's last token of `response`, a response to the
    /// task's problem `problem` (an index into `Task::problems`); empty for none.
    fn respond(&self, problem: usize, response: &[u32]) -> Vec<u32>;
}

/// A task's environment (`None`: it writes nothing) for one generation call, whose prompt `i`
/// is the task's problem `problems[i]`.
pub(crate) struct ForProblems<'a> {
    pub env: Option<&'a dyn TaskEnvironment>,
    pub problems: &'a [usize],
}

impl rlvr_model::Environment for ForProblems<'_> {
    fn respond(&self, prompt_index: usize, response: &[u32]) -> Vec<u32> {
        match self.env {
            Some(env) => env.respond(self.problems[prompt_index], response),
            None => Vec::new(),
        }
    }
}

/// The testbed's checker: after every step the policy finishes (`a+b=c` and a space), it
/// writes `ok` or `no` ([`tb::checker_verdict`]); with [`OnFailedStep::End`] a `no` is followed
/// by the end-of-sequence token.
pub struct TestbedChecker {
    /// The terms of every problem, in the task's order.
    terms: Vec<Vec<u32>>,
    tokenizer: ChatTokenizer,
    /// The space token: a step is finished only when the policy writes one.
    space: u32,
    ok: Vec<u32>,
    no: Vec<u32>,
}

impl TestbedChecker {
    /// The checker of `problems` (testbed prompts) for the testbed tokenizer `tokenizer`,
    /// whose end-of-sequence id is `eos`.
    pub fn new(
        problems: &[Problem],
        tokenizer: &ChatTokenizer,
        eos: u32,
        on_fail: OnFailedStep,
    ) -> Result<Self, TrainError> {
        let terms = problems
            .iter()
            .map(|p| match &p.prompt {
                Prompt::Text(t) => tb::parse_prompt(t),
                Prompt::Chat(_) => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| TrainError::Msg("the testbed checker needs testbed prompts".into()))?;
        let encode = |s: &str| -> Result<Vec<u32>, TrainError> {
            let ids = tokenizer.encode(s, false)?;
            if ids.is_empty() {
                return Err(TrainError::Msg(format!(
                    "testbed checker: {s:?} has no tokens"
                )));
            }
            Ok(ids)
        };
        let space = match encode(" ")?.as_slice() {
            [one] => *one,
            more => {
                return Err(TrainError::Msg(format!(
                    "testbed checker: a space is {} tokens, not one",
                    more.len()
                )))
            }
        };
        let mut no = encode(tb::VERDICT_NO)?;
        if on_fail == OnFailedStep::End {
            no.push(eos);
        }
        Ok(TestbedChecker {
            terms,
            tokenizer: tokenizer.clone(),
            space,
            ok: encode(tb::VERDICT_OK)?,
            no,
        })
    }
}

impl TaskEnvironment for TestbedChecker {
    fn respond(&self, problem: usize, response: &[u32]) -> Vec<u32> {
        if response.last() != Some(&self.space) {
            return Vec::new();
        }
        let (Some(terms), Ok(text)) = (
            self.terms.get(problem),
            self.tokenizer.decode(response, false),
        ) else {
            return Vec::new();
        };
        match tb::checker_verdict(terms, &text) {
            Some(true) => self.ok.clone(),
            Some(false) => self.no.clone(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rlvr_tasks::testbed::{Regime, TestbedConfig};

    fn checker(on_fail: OnFailedStep) -> (TestbedChecker, ChatTokenizer, u32) {
        let cfg = TestbedConfig {
            regime: Regime::VerifiedRetry,
            difficulty: 4,
            min_terms: 4,
            ..Default::default()
        };
        let tok = crate::testbed::tokenizer(&cfg).unwrap();
        let eos = tok.eos_token_ids[0];
        let problems = [tb::problem(&[7, 9, 5, 3]), tb::problem(&[1, 2, 3, 4])];
        (
            TestbedChecker::new(&problems, &tok, eos, on_fail).unwrap(),
            tok,
            eos,
        )
    }

    #[test]
    fn the_checker_answers_finished_steps_with_its_verdict_tokens() {
        let (c, tok, eos) = checker(OnFailedStep::End);
        let ids = |s: &str| tok.encode(s, false).unwrap();
        let (ok, no) = (ids(tb::VERDICT_OK), ids(tb::VERDICT_NO));
        assert_eq!(c.respond(0, &ids(" 7+9=16 ")), ok);
        assert_eq!(
            c.respond(0, &ids(" 7+9=15 ")),
            [no.clone(), vec![eos]].concat()
        );
        assert_eq!(c.respond(1, &ids(" 1+2=3 ")), ok, "by problem");
        assert_eq!(c.respond(1, &ids(" 7+9=16 ")), [no, vec![eos]].concat());
        // not after an unfinished step, nor after anything else
        assert!(c.respond(0, &ids(" 7+9=1")).is_empty());
        assert!(c.respond(0, &ids(" 7+9=16 ok ")).is_empty());
        assert!(c.respond(0, &[]).is_empty());
        assert!(c.respond(7, &ids(" 7+9=16 ")).is_empty(), "unknown problem");
        let (retry, ..) = checker(OnFailedStep::Retry);
        assert_eq!(retry.respond(0, &ids(" 7+9=15 ")), ids(tb::VERDICT_NO));
    }

    #[test]
    fn the_checker_needs_testbed_prompts() {
        let (_, tok, eos) = checker(OnFailedStep::End);
        let mut p = tb::problem(&[1, 2]);
        p.prompt = Prompt::Text("What is 1+2?".into());
        let err = TestbedChecker::new(&[p], &tok, eos, OnFailedStep::End)
            .err()
            .unwrap();
        assert!(err.to_string().contains("testbed prompts"), "{err}");
    }
}
