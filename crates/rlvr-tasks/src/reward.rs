//! Rewards routed by data source: one [`RewardFn`] scores every problem of a run or an
//! evaluation with the scorer its data source calls for, as verl's default reward function
//! (`verl/utils/reward_score/__init__.py`, `default_compute_score`) picks one per row from
//! `data_source`.
//!
//! # Routing
//! [`RewardKind::Auto`] (the default) decides per problem, in this order:
//! 1. `data_source == "testbed"` -> the testbed verifier ([`crate::testbed::TestbedVerifier`]);
//! 2. a code source ([`CODE_SOURCES`]: the `codeforces` and `leetcode` presets, and the names
//!    verl sends to its sandbox, `codecontests`, `apps`, `taco`, ...) -> the sandboxed code
//!    runner ([`crate::code`]);
//! 3. any other problem whose answer is code tests ([`looks_like_code_tests`]: a JSON list of
//!    `{input, output}`, `{"functional": ...}` or `{"inputs": [...], "outputs": [...]}`) -> the
//!    code runner (a user's own code file, whose data source is its file name);
//! 4. everything else -> the math checker ([`crate::math::verify_problem`]: a problem with
//!    options, [`Problem::choices`], is scored by [`crate::math::verify_with_choices`], the
//!    right option's letter or text; any other by [`crate::math::verify`]).
//!
//! `math`, `code` or `testbed` (config `reward.kind`, `rlvr eval --reward`) send every problem
//! to that scorer. Unlike verl, an unknown data source is not an error: it is math unless its
//! answer is code tests.
//!
//! # Checks before scoring ([`RewardFn::check`])
//! A mismatch between data and scorer would otherwise show up only as rewards of 0 for a whole
//! dataset. Before a run or an evaluation starts, every problem is checked against its route:
//! a code problem must have non-empty tests that parse; a testbed problem an integer answer; a
//! problem sent to the math checker by an explicit `math` must not hold code tests, and a
//! multiple-choice one must have a gold that names one of its options (its letter, or an
//! option's text: an index such as MMLU's `answer: 2` names none); and when
//! any problem goes to the code runner, a probe program must run in the sandbox (so a missing
//! `python3` is an error before the first step, naming the interpreter and `RLVR_PYTHON`, and
//! so is a machine where the sandbox cannot isolate programs, unless
//! [`SandboxConfig::allow_unsandboxed`]).
//! Every error names the problem id and its data source, or the setting at fault.
//!
//! # Parallelism and determinism
//! [`RewardFn::score_batch`] scores on a pool of `workers` threads (default: the number of
//! cores), one response per task. A code response runs its tests one after another in one
//! sandbox at a time, so at most `workers` sandboxes run at once (and never more than
//! [`crate::code::MAX_CONCURRENT_SANDBOXES`] per process). Scores come back in input order, and
//! each depends only on its (response, problem), so the output does not depend on the number
//! of workers or on scheduling. A failure of the sandbox itself (not of the program it runs)
//! is an `Err` naming the problem, never a silent 0.

use std::path::PathBuf;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::code::{self, CodeVerifier, RewardMode, SandboxConfig, SandboxError, Tests};
use crate::testbed::TestbedVerifier;
use crate::{MathVerifier, Problem, Score, Verifier};

/// Data sources whose problems go to the code runner under [`RewardKind::Auto`] (compared
/// case-insensitively): rlvr's code presets and the code sources of verl's
/// `default_compute_score` and of rllm/DeepCoder's data.
pub const CODE_SOURCES: &[&str] = &[
    "codeforces",
    "leetcode",
    "codecontests",
    "apps",
    "taco",
    "livecodebench",
    "primeintellect",
    "kodcode",
    "humanevalplus",
    "mbpp",
];

/// Which scorer rewards a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RewardKind {
    /// Per problem, by data source (module docs).
    #[default]
    Auto,
    /// The math checker.
    Math,
    /// The sandboxed code runner.
    Code,
    /// The testbed verifier.
    Testbed,
}

impl RewardKind {
    /// Names accepted by [`RewardKind::from_str`](std::str::FromStr) and in configs.
    pub const NAMES: [&'static str; 4] = ["auto", "math", "code", "testbed"];

    pub fn as_str(self) -> &'static str {
        match self {
            RewardKind::Auto => "auto",
            RewardKind::Math => "math",
            RewardKind::Code => "code",
            RewardKind::Testbed => "testbed",
        }
    }
}

impl std::fmt::Display for RewardKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RewardKind {
    type Err = RewardError;
    fn from_str(s: &str) -> Result<Self, RewardError> {
        match s {
            "auto" => Ok(RewardKind::Auto),
            "math" => Ok(RewardKind::Math),
            "code" => Ok(RewardKind::Code),
            "testbed" => Ok(RewardKind::Testbed),
            _ => Err(RewardError::UnknownKind(s.to_string())),
        }
    }
}

/// Errors of reward setup and scoring. Wrong responses are never errors (they score 0).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RewardError {
    #[error("unknown reward kind {0:?} (expected one of: auto, math, code, testbed)")]
    UnknownKind(String),
    /// A problem its scorer cannot score (no tests, bad tests, a non-integer testbed answer).
    #[error("problem {id} (data_source {data_source:?}, reward {kind}): {reason}")]
    BadProblem {
        id: String,
        data_source: String,
        kind: RewardKind,
        reason: String,
    },
    /// Code problems need the sandbox and its probe program did not run.
    #[error(
        "code rewards need the sandbox, but it cannot run Python ({}): {reason}. Install python3 \
         there or set RLVR_PYTHON to an interpreter that an unprivileged user can run \
         (first code problem: {problem})",
        .python.display()
    )]
    SandboxUnavailable {
        python: PathBuf,
        reason: String,
        problem: String,
    },
    /// Code problems need the sandbox, and this process cannot create its namespaces (see
    /// [`crate::code::isolation_available`]), and unsandboxed runs are not allowed.
    #[error(
        "code rewards run model-written programs, and this process cannot isolate them: {reason} \
         (first code problem: {problem})"
    )]
    Unsandboxed { reason: String, problem: String },
    /// The sandbox failed while scoring a response (not the program: the sandbox itself).
    #[error("problem {id}: the code sandbox failed: {source}")]
    Sandbox { id: String, source: SandboxError },
    /// More scoring threads than [`max_workers`] allows.
    #[error(
        "num_workers = {workers}: at most {max} scoring threads here (4 per core, and never fewer \
         than the {} sandboxes a process may run at once); 0 means one per core",
        crate::code::MAX_CONCURRENT_SANDBOXES
    )]
    TooManyWorkers { workers: usize, max: usize },
}

/// The most scoring threads [`RewardFn::new`] starts: 4 per core, and at least
/// [`crate::code::MAX_CONCURRENT_SANDBOXES`] (code tests mostly wait on their sandbox, so a
/// pool can usefully exceed the cores up to the sandbox slots). A larger count is refused
/// instead of spending minutes and gigabytes of stacks starting threads.
pub fn max_workers() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores
        .saturating_mul(4)
        .max(crate::code::MAX_CONCURRENT_SANDBOXES)
}

impl RewardError {
    /// True when the user must fix the data, the settings or the machine (everything but a
    /// sandbox failure in the middle of scoring).
    pub fn is_user_input(&self) -> bool {
        !matches!(self, RewardError::Sandbox { .. })
    }
}

/// Settings of a [`RewardFn`]: the `[reward]` section of a run config, read as it is (its
/// field names are the config's keys).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RewardConfig {
    /// `auto` (per problem by data source, as verl's `default_compute_score`: `testbed` to the
    /// testbed verifier, code presets and code tests to the sandboxed code runner, the rest to
    /// the math checker), or `math`, `code`, `testbed` for every problem.
    pub kind: RewardKind,
    /// Code rewards: `all-or-nothing` (1 when every test passes; rllm/DeepCoder's sparse
    /// reward) or `fraction` (passed / run tests; verl's `default_compute_score` passes
    /// `continuous=True`, which is `fraction` over at most 10 tests).
    pub code_mode: RewardMode,
    /// Code rewards: run at most this many stdin/stdout tests per response (0 = all).
    pub code_max_tests: usize,
    /// Threads scoring a step's responses, and so the most sandboxes at once (0 = the number
    /// of cores; at most [`max_workers`]).
    pub num_workers: usize,
    /// Code rewards: run programs even where the kernel refuses the sandbox's namespaces (not
    /// root and no unprivileged user namespaces), without isolation: a program can then read
    /// the data set (expected outputs included), write the user's files and reach the
    /// network. Default false: such a machine is an error before the first step
    /// ([`SandboxConfig::allow_unsandboxed`]).
    pub allow_unsandboxed: bool,
}

impl Default for RewardConfig {
    fn default() -> Self {
        RewardConfig {
            kind: RewardKind::Auto,
            code_mode: RewardMode::AllOrNothing,
            code_max_tests: 0,
            num_workers: 0,
            allow_unsandboxed: false,
        }
    }
}

impl RewardConfig {
    /// The sandbox these settings describe: the interpreter from `RLVR_PYTHON`, else
    /// `/usr/bin/python3`, the default limits, and `allow_unsandboxed`.
    pub fn sandbox(&self) -> SandboxConfig {
        SandboxConfig {
            allow_unsandboxed: self.allow_unsandboxed,
            ..SandboxConfig::default()
        }
    }
}

/// Whether `answer` is code tests: it parses with [`code::parse_tests`] into at least one test.
pub fn looks_like_code_tests(answer: &str) -> bool {
    let a = answer.trim_start();
    (a.starts_with('[') || a.starts_with('{'))
        && match code::parse_tests(a) {
            Ok(Tests::Io(t)) => !t.is_empty(),
            Ok(Tests::Functional(c)) => !c.trim().is_empty(),
            Err(_) => false,
        }
}

/// The reward function of a run: routes each problem to its scorer (module docs).
pub struct RewardFn {
    kind: RewardKind,
    code: CodeVerifier,
    workers: usize,
    pool: rayon::ThreadPool,
}

impl std::fmt::Debug for RewardFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RewardFn")
            .field("kind", &self.kind)
            .field("code", &self.code)
            .field("workers", &self.workers)
            .finish()
    }
}

impl RewardFn {
    /// A reward function with `cfg` and its sandbox ([`RewardConfig::sandbox`]); fails when
    /// `cfg.num_workers` is above [`max_workers`] ([`RewardError::TooManyWorkers`]) or the
    /// thread pool cannot be made.
    pub fn new(cfg: &RewardConfig) -> Result<Self, RewardError> {
        Self::with_sandbox(cfg, cfg.sandbox())
    }

    /// As [`RewardFn::new`], with another sandbox (an interpreter or limits of the caller's;
    /// `cfg.allow_unsandboxed` is then not read).
    pub fn with_sandbox(cfg: &RewardConfig, sandbox: SandboxConfig) -> Result<Self, RewardError> {
        let workers = if cfg.num_workers == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            cfg.num_workers
        };
        let max = max_workers();
        if workers > max {
            return Err(RewardError::TooManyWorkers { workers, max });
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(workers)
            .thread_name(|i| format!("rlvr-reward-{i}"))
            .build()
            .map_err(|e| RewardError::Sandbox {
                id: "(none)".into(),
                source: SandboxError::Setup(format!("cannot start {workers} reward threads: {e}")),
            })?;
        Ok(RewardFn {
            kind: cfg.kind,
            code: CodeVerifier {
                mode: cfg.code_mode,
                sandbox,
                max_tests: (cfg.code_max_tests > 0).then_some(cfg.code_max_tests),
            },
            workers,
            pool,
        })
    }

    /// The sandbox settings of code rewards.
    pub fn sandbox(&self) -> &SandboxConfig {
        &self.code.sandbox
    }

    /// The configured kind (`auto` or a fixed scorer).
    pub fn kind(&self) -> RewardKind {
        self.kind
    }

    /// Threads (and so sandboxes at once) of [`RewardFn::score_batch`].
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The scorer `problem` goes to (never [`RewardKind::Auto`]).
    pub fn route(&self, problem: &Problem) -> RewardKind {
        match self.kind {
            RewardKind::Auto => auto_route(problem),
            k => k,
        }
    }

    /// Checks every problem against its scorer and, when any goes to the code runner, that the
    /// sandbox runs (module docs). Returns how many problems go to each scorer.
    pub fn check(&self, problems: &[Problem]) -> Result<RouteCounts, RewardError> {
        let mut counts = RouteCounts::default();
        let mut first_code: Option<&Problem> = None;
        for p in problems {
            let kind = self.route(p);
            let bad = |reason: String| RewardError::BadProblem {
                id: p.id.clone(),
                data_source: p.data_source.clone(),
                kind,
                reason,
            };
            match kind {
                RewardKind::Code => {
                    match code::parse_tests(&p.answer) {
                        Ok(Tests::Io(t)) if t.is_empty() => {
                            return Err(bad(
                                "a code problem without tests (the list is empty)".into()
                            ))
                        }
                        Ok(Tests::Functional(c)) if c.trim().is_empty() => {
                            return Err(bad(
                                "a code problem without tests (`functional` is empty)".into()
                            ))
                        }
                        Ok(_) => {}
                        Err(e) => {
                            return Err(bad(format!("a code problem without usable tests: {e}")))
                        }
                    }
                    first_code.get_or_insert(p);
                    counts.code += 1;
                }
                RewardKind::Testbed => {
                    if p.answer.trim().parse::<i64>().is_err() {
                        return Err(bad(format!(
                            "the testbed verifier needs an integer answer, got {:?}",
                            short(&p.answer)
                        )));
                    }
                    counts.testbed += 1;
                }
                RewardKind::Math | RewardKind::Auto => {
                    if looks_like_code_tests(&p.answer) {
                        return Err(bad(
                            "its answer is code tests, which the math checker would score 0; \
                             use reward kind `auto` or `code`"
                                .into(),
                        ));
                    }
                    if let Some(choices) = &p.choices {
                        if !crate::math::gold_names_option(&p.answer, choices) {
                            return Err(bad(format!(
                                "its answer {:?} names none of its {} options (neither a letter \
                                 A to {} nor an option's text): the record and its options \
                                 disagree",
                                short(&p.answer),
                                choices.len(),
                                char::from(b'A' + choices.len().clamp(1, 26) as u8 - 1)
                            )));
                        }
                    }
                    counts.math += 1;
                }
            }
        }
        if let Some(p) = first_code {
            self.probe_sandbox(&p.id)?;
        }
        Ok(counts)
    }

    /// Runs `print(6 * 7)` in the sandbox; anything but `42` is [`RewardError::SandboxUnavailable`]
    /// ([`RewardError::Unsandboxed`] where the sandbox cannot isolate and that is not allowed).
    pub fn probe_sandbox(&self, problem: &str) -> Result<(), RewardError> {
        let unavailable = |reason: String| RewardError::SandboxUnavailable {
            python: self.code.sandbox.python.clone(),
            reason,
            problem: problem.to_string(),
        };
        match code::run_python("print(6 * 7)\n", "", &self.code.sandbox) {
            Ok(o) if o.success() && o.stdout.trim() == "42" => Ok(()),
            Ok(o) => Err(unavailable(format!(
                "the probe program failed: {}",
                o.reason()
            ))),
            Err(e @ SandboxError::NoIsolation) => Err(RewardError::Unsandboxed {
                reason: e.to_string(),
                problem: problem.to_string(),
            }),
            Err(e) => Err(unavailable(e.to_string())),
        }
    }

    /// The score of one response; `Err` when the problem cannot be scored by its route or the
    /// sandbox itself failed.
    pub fn try_score(&self, response: &str, problem: &Problem) -> Result<Score, RewardError> {
        let kind = self.route(problem);
        match kind {
            RewardKind::Math | RewardKind::Auto => Ok(MathVerifier.score(response, problem)),
            RewardKind::Testbed => Ok(TestbedVerifier.score(response, problem)),
            RewardKind::Code => {
                let tests =
                    code::parse_tests(&problem.answer).map_err(|e| RewardError::BadProblem {
                        id: problem.id.clone(),
                        data_source: problem.data_source.clone(),
                        kind,
                        reason: format!("a code problem without usable tests: {e}"),
                    })?;
                self.code
                    .try_score_tests(response, &tests)
                    .map_err(|source| RewardError::Sandbox {
                        id: problem.id.clone(),
                        source,
                    })
            }
        }
    }
}

/// The [`RewardKind::Auto`] route of one problem (module docs).
fn auto_route(p: &Problem) -> RewardKind {
    let src = p.data_source.trim().to_ascii_lowercase();
    if src == crate::testbed::NAME {
        RewardKind::Testbed
    } else if CODE_SOURCES.contains(&src.as_str()) || looks_like_code_tests(&p.answer) {
        RewardKind::Code
    } else {
        RewardKind::Math
    }
}

fn short(s: &str) -> String {
    let t: String = s.chars().take(60).collect();
    if t.len() < s.len() {
        format!("{t}...")
    } else {
        t
    }
}

/// How many problems go to each scorer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouteCounts {
    pub math: usize,
    pub code: usize,
    pub testbed: usize,
}

impl std::fmt::Display for RouteCounts {
    /// `math 500` / `code 200` / `math 3, code 2`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = [
            ("math", self.math),
            ("code", self.code),
            ("testbed", self.testbed),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
        if parts.is_empty() {
            f.write_str("no problems")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

impl Verifier for RewardFn {
    /// Infallible form of [`RewardFn::try_score`]: an error becomes a 0 score whose reason
    /// says what failed. Training and evaluation use [`Verifier::score_batch`], which fails.
    fn score(&self, response: &str, problem: &Problem) -> Score {
        self.try_score(response, problem)
            .unwrap_or_else(|e| Score::binary(false, None, format!("error: {e}")))
    }

    /// Scores on this function's pool of `workers` threads; input order; the first error in
    /// input order, if any.
    fn score_batch(&self, items: &[(&str, &Problem)]) -> Result<Vec<Score>, RewardError> {
        let results: Vec<Result<Score, RewardError>> = self.pool.install(|| {
            items
                .par_iter()
                .map(|(r, p)| self.try_score(r, p))
                .collect()
        });
        results.into_iter().collect()
    }

    fn scorer(&self, problem: &Problem) -> Option<RewardKind> {
        Some(self.route(problem))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Prompt;

    fn problem(id: &str, source: &str, answer: &str) -> Problem {
        Problem {
            id: id.into(),
            prompt: Prompt::Text("q".into()),
            answer: answer.into(),
            solution: None,
            data_source: source.into(),
            choices: None,
        }
    }

    const IO: &str = r#"[{"input": "1 2\n", "output": "3\n"}]"#;

    #[test]
    fn auto_routes_by_data_source_then_answer_shape() {
        let f = RewardFn::new(&RewardConfig::default()).unwrap();
        let cases = [
            (problem("a", "math500", "\\frac12"), RewardKind::Math),
            (problem("b", "testbed", "12"), RewardKind::Testbed),
            (problem("c", "leetcode", "not json"), RewardKind::Code),
            (problem("d", "CodeForces", IO), RewardKind::Code),
            (problem("e", "mine", IO), RewardKind::Code),
            (
                problem("f", "mine", r#"{"functional": "check(f)"}"#),
                RewardKind::Code,
            ),
            (problem("g", "mine", "[1, 2]"), RewardKind::Math),
            (problem("h", "mine", "[]"), RewardKind::Math),
            (problem("i", "mine", "{1, 2}"), RewardKind::Math),
        ];
        for (p, want) in &cases {
            assert_eq!(f.route(p), *want, "{}", p.id);
        }
        let fixed = RewardFn::new(&RewardConfig {
            kind: RewardKind::Math,
            ..RewardConfig::default()
        })
        .unwrap();
        assert!(cases
            .iter()
            .all(|(p, _)| fixed.route(p) == RewardKind::Math));
    }

    #[test]
    fn kinds_parse_and_unknown_names_the_choices() {
        for n in RewardKind::NAMES {
            assert_eq!(n.parse::<RewardKind>().unwrap().as_str(), n);
        }
        let e = "sandbox".parse::<RewardKind>().unwrap_err().to_string();
        assert!(
            e.contains("\"sandbox\"") && e.contains("auto, math, code, testbed"),
            "{e}"
        );
    }

    #[test]
    fn check_names_the_problem_at_fault() {
        let f = RewardFn::new(&RewardConfig::default()).unwrap();
        let e = f
            .check(&[
                problem("ok", "math500", "2"),
                problem("lc-7", "leetcode", "[]"),
            ])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("lc-7") && e.contains("leetcode") && e.contains("without tests"),
            "{e}"
        );
        let e = f
            .check(&[problem("cf-1", "codeforces", "{\"functional\": 3}")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cf-1") && e.contains("functional"), "{e}");
        let tb = RewardFn::new(&RewardConfig {
            kind: RewardKind::Testbed,
            ..RewardConfig::default()
        })
        .unwrap();
        let e = tb
            .check(&[problem("m", "math500", "\\frac12")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("problem m") && e.contains("integer"), "{e}");
        let m = RewardFn::new(&RewardConfig {
            kind: RewardKind::Math,
            ..RewardConfig::default()
        })
        .unwrap();
        let e = m
            .check(&[problem("x", "mine", IO)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("problem x") && e.contains("code tests"), "{e}");
        let counts = f
            .check(&[problem("a", "math500", "2"), problem("b", "testbed", "3")])
            .unwrap();
        assert_eq!(
            counts,
            RouteCounts {
                math: 1,
                code: 0,
                testbed: 1
            }
        );
        assert_eq!(counts.to_string(), "math 1, testbed 1");
    }

    #[test]
    fn a_sandbox_that_cannot_start_is_an_error_not_a_zero() {
        let f = RewardFn::with_sandbox(
            &RewardConfig::default(),
            SandboxConfig {
                python: "/no/such/python3".into(),
                ..SandboxConfig::default()
            },
        )
        .unwrap();
        let p = problem("cf-3", "codeforces", IO);
        let e = f.check(std::slice::from_ref(&p)).unwrap_err().to_string();
        assert!(
            e.contains("/no/such/python3") && e.contains("RLVR_PYTHON") && e.contains("cf-3"),
            "{e}"
        );
        // math-only data never needs the sandbox
        f.check(&[problem("a", "math500", "2")]).unwrap();
        // while scoring: an error naming the problem, not a reward of 0
        let e = f
            .score_batch(&[("```python\nprint(3)\n```", &p)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cf-3") && e.contains("sandbox"), "{e}");
        // a response without code is a wrong answer, not a sandbox failure
        let s = f.score_batch(&[("no code here", &p)]).unwrap();
        assert_eq!(
            (s[0].reward, s[0].reason.as_str()),
            (0.0, "no code block found")
        );
    }
}
