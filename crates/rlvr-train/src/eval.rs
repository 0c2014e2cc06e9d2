//! Evaluation: k sampled responses per held-out problem, scored by the task's verifier.
//!
//! `mean@k` is the mean over problems of the share of correct samples (the sampled accuracy);
//! `pass@k` the unbiased estimate of at least one correct in k (rlvr-core's estimators; with
//! n = k samples it is the share of problems with a correct sample).

use std::time::Instant;

use rlvr_core::estimators::{mean_at_k, pass_at_k};
use rlvr_model::{generate, SamplingParams};

use crate::metrics::EvalLine;
use crate::policy::{Policy, Task};
use crate::TrainError;

/// Sampling settings of an evaluation.
#[derive(Debug, Clone)]
pub struct EvalSpec {
    pub k: usize,
    pub temperature: f64,
    pub top_p: f64,
    pub max_tokens: usize,
    /// Prompts per generation call.
    pub batch_size: usize,
    pub seed: u64,
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
            kind: "eval".into(),
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
    let mut correct = Vec::with_capacity(task.len());
    let mut samples = Vec::with_capacity(task.len() * spec.k);
    let (mut len_sum, mut n_resp) = (0usize, 0usize);
    let idx: Vec<usize> = (0..task.len()).collect();
    for (c, chunk) in idx.chunks(spec.batch_size.max(1)).enumerate() {
        let prompts: Vec<Vec<u32>> = chunk.iter().map(|&i| task.prompts[i].clone()).collect();
        let params = SamplingParams {
            n: spec.k,
            temperature: spec.temperature,
            top_p: spec.top_p,
            top_k: None,
            max_new_tokens: spec.max_tokens,
            eos_token_ids: policy.tokenizer.eos_token_ids.clone(),
            stop_strings: Vec::new(),
            seed: crate::checkpoint::mix_seed(spec.seed, &[2, c as u64]),
        };
        let gens = generate(&policy.model, None, &prompts, &params)?;
        for (j, &i) in chunk.iter().enumerate() {
            let mut ok = 0;
            for g in &gens[j * spec.k..(j + 1) * spec.k] {
                let text = policy.decode(&g.tokens)?;
                let right = task.verifier.score(&text, &task.problems[i]).correct;
                ok += usize::from(right);
                len_sum += g.tokens.len();
                n_resp += 1;
                samples.push(EvalSample {
                    problem: i,
                    text,
                    tokens: g.tokens.len(),
                    truncated: g.truncated,
                    correct: right,
                });
            }
            correct.push(ok);
        }
        progress(correct.len());
    }
    let n = correct.len();
    let pass = if n == 0 {
        0.0
    } else {
        correct
            .iter()
            .map(|&c| pass_at_k(spec.k, c, spec.k))
            .sum::<Result<f64, _>>()?
            / n as f64
    };
    Ok(EvalResult {
        dataset: task.name.clone(),
        k: spec.k,
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
        samples,
        response_length_mean: len_sum as f64 / n_resp.max(1) as f64,
        secs: t.elapsed().as_secs_f64(),
    })
}
