//! Evaluation: k sampled responses per held-out problem, scored by the task's reward function
//! (`rlvr_tasks::reward`: the math checker, the sandboxed code runner or the testbed verifier,
//! by data source; in parallel across cores).
//!
//! The phases are separate functions so that scoring can be checked on known responses:
//! [`evaluate`] samples, then [`score_responses`] scores, then [`summarize`] computes the metrics.
//!
//! `mean@k` is the mean over problems of the share of correct samples (the sampled accuracy);
//! `pass@k` the unbiased estimate of at least one correct in k (rlvr-core's estimators; with
//! n = k samples it is the share of problems with a correct sample).

use std::time::Instant;

use rlvr_core::estimators::{mean_at_k, pass_at_k};
use rlvr_model::{generate_within, kv_cache_budget, SamplingSpec};

use crate::policy::Policy;
use crate::task::Task;
use crate::TrainError;
use rlvr_core::metrics::EvalLine;

/// Sampling settings of an evaluation.
#[derive(Debug, Clone)]
pub struct EvalSpec {
    pub k: usize,
    /// How each response is drawn.
    pub sampling: SamplingSpec,
    /// Prompts per generation call.
    pub batch_size: usize,
    pub seed: u64,
    /// KV-cache bytes per generation call (see `rlvr_model::generate_within`); `None`: the
    /// sampler's default.
    pub kv_cache_bytes: Option<usize>,
}

/// The result on one dataset.
#[derive(Debug, Clone)]
pub struct EvalResult {
    pub dataset: String,
    pub k: usize,
    pub n_problems: usize,
    /// Distinct problem ids among the `n_problems`.
    pub distinct_problems: usize,
    pub mean_at_k: f64,
    pub pass_at_k: f64,
    /// Correct samples per problem.
    pub correct: Vec<usize>,
    /// Every sample, problem-major (`k` per problem, in problem order).
    pub samples: Vec<EvalSample>,
    /// Mean response length in tokens.
    pub response_length_mean: f64,
    pub secs: f64,
}

/// One sampled response of an evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalSample {
    /// Index of the problem in the task.
    pub problem: usize,
    /// The decoded response.
    pub text: String,
    /// Response length in tokens.
    pub tokens: usize,
    /// Cut off by the token limit.
    pub truncated: bool,
    /// The verifier's verdict.
    pub correct: bool,
    /// The verifier's reward (code with `fraction`: the share of tests passed).
    pub reward: f64,
    /// Which scorer decided (`math`, `code`, `testbed`), when the verifier routes.
    pub scorer: Option<String>,
    /// The verifier's reason (`3/3 tests passed`, `test 1: wrong output`, `numeric match`, ...).
    pub reason: String,
}

/// A sampled response before scoring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Index of the problem in the task.
    pub problem: usize,
    pub text: String,
    /// Length in tokens.
    pub tokens: usize,
    pub truncated: bool,
}

impl EvalResult {
    /// `"400 problems"`, or `"400 problems (101 distinct)"` when some repeat.
    pub fn problems_text(&self) -> String {
        if self.distinct_problems > 0 && self.distinct_problems < self.n_problems {
            format!(
                "{} problems ({} distinct)",
                self.n_problems, self.distinct_problems
            )
        } else {
            format!("{} problems", self.n_problems)
        }
    }

    /// The metrics line at `step`.
    pub fn line(&self, step: usize) -> EvalLine {
        EvalLine {
            step,
            dataset: self.dataset.clone(),
            k: self.k,
            n_problems: self.n_problems,
            distinct_problems: self.distinct_problems,
            mean_at_k: self.mean_at_k,
            pass_at_k: self.pass_at_k,
        }
    }
}

/// Samples `spec.k` responses for every problem of `task` and scores them. `progress` is
/// called with the number of problems done after each generation call.
pub fn evaluate(
    policy: &Policy,
    task: &Task,
    spec: &EvalSpec,
    mut progress: impl FnMut(usize),
) -> Result<EvalResult, TrainError> {
    let t = Instant::now();
    let mut samples = Vec::with_capacity(task.len() * spec.k);
    let idx: Vec<usize> = (0..task.len()).collect();
    for (c, chunk) in idx.chunks(spec.batch_size.max(1)).enumerate() {
        let prompts: Vec<Vec<u32>> = chunk.iter().map(|&i| task.prompts[i].clone()).collect();
        let params = spec.sampling.params(
            spec.k,
            &policy.tokenizer.eos_token_ids,
            crate::seed::mix_seed(spec.seed, &[2, c as u64]),
        );
        let kv_bytes = spec
            .kv_cache_bytes
            .unwrap_or_else(|| kv_cache_budget(policy.model.device()));
        let env = crate::environment::ForProblems {
            env: task.environment.as_deref(),
            problems: chunk,
        };
        let gens = generate_within(&policy.model, None, &prompts, &params, kv_bytes, &env)?;
        let mut responses = Vec::with_capacity(gens.len());
        for (j, &i) in chunk.iter().enumerate() {
            for g in &gens[j * spec.k..(j + 1) * spec.k] {
                responses.push(Response {
                    problem: i,
                    text: policy.decode(&g.tokens)?,
                    tokens: crate::grpo::policy_tokens(g),
                    truncated: g.truncated,
                });
            }
        }
        samples.extend(score_responses(task, responses)?);
        progress(samples.len() / spec.k);
    }
    summarize(task, spec.k, samples, t.elapsed().as_secs_f64())
}

/// Scores `responses` with the task's verifier in one batch (in parallel; results in input
/// order). A scorer failure (a sandbox that cannot run) is an error, never a 0.
pub fn score_responses(
    task: &Task,
    responses: Vec<Response>,
) -> Result<Vec<EvalSample>, TrainError> {
    if let Some(r) = responses.iter().find(|r| r.problem >= task.len()) {
        return Err(TrainError::Msg(format!(
            "response to problem {} but the task has {}",
            r.problem,
            task.len()
        )));
    }
    let items: Vec<(&str, &rlvr_tasks::Problem)> = responses
        .iter()
        .map(|r| (r.text.as_str(), &task.problems[r.problem]))
        .collect();
    let scores = task.verifier.score_batch(&items)?;
    Ok(responses
        .into_iter()
        .zip(scores)
        .map(|(r, s)| EvalSample {
            scorer: task
                .verifier
                .scorer(&task.problems[r.problem])
                .map(|k| k.as_str().to_string()),
            problem: r.problem,
            text: r.text,
            tokens: r.tokens,
            truncated: r.truncated,
            correct: s.correct,
            reward: s.reward,
            reason: s.reason,
        })
        .collect())
}

/// mean@k and pass@k of scored samples, problem-major with `k` per problem (as [`evaluate`]
/// makes them): `correct[p]` = correct samples of problem p, mean@k = correct / all samples,
/// pass@k = mean over problems of rlvr-core's unbiased estimate (n = k: a correct sample).
pub fn summarize(
    task: &Task,
    k: usize,
    samples: Vec<EvalSample>,
    secs: f64,
) -> Result<EvalResult, TrainError> {
    if k == 0 || !samples.len().is_multiple_of(k) {
        return Err(TrainError::Msg(format!(
            "{} samples are not k = {k} per problem",
            samples.len()
        )));
    }
    let mut correct = Vec::with_capacity(samples.len() / k);
    for chunk in samples.chunks(k) {
        if chunk.iter().any(|s| s.problem != chunk[0].problem) {
            return Err(TrainError::Msg(format!(
                "samples of problem {} are not k = {k} in a row",
                chunk[0].problem
            )));
        }
        correct.push(chunk.iter().filter(|s| s.correct).count());
    }
    let n = correct.len();
    let pass = if n == 0 {
        0.0
    } else {
        correct
            .iter()
            .map(|&c| pass_at_k(k, c, k))
            .sum::<Result<f64, _>>()?
            / n as f64
    };
    let len_sum: usize = samples.iter().map(|s| s.tokens).sum();
    Ok(EvalResult {
        dataset: task.name.clone(),
        k,
        n_problems: n,
        distinct_problems: task
            .problems
            .iter()
            .map(|p| p.id.as_str())
            .collect::<std::collections::HashSet<_>>()
            .len(),
        mean_at_k: mean_at_k(&samples.iter().map(|s| s.correct).collect::<Vec<_>>()),
        pass_at_k: pass,
        correct,
        response_length_mean: len_sum as f64 / samples.len().max(1) as f64,
        samples,
        secs,
    })
}
