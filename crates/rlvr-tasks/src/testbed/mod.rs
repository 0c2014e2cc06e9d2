//! The CPU testbed: generated multi-step addition problems that a model of a few million
//! parameters learns in minutes on two cores, with a difficulty knob, a seed, and the two
//! regimes of the paper's analysis.
//!
//! A problem is `Add: 7 9 5 =`; its worked solution writes the running sum step by step and
//! ends with `Answer: <sum>`:
//!
//! ```text
//! concise:  " 7+9=16 16+5=21 Answer: 21"
//! verbose:  " Step by step. 7+9=16, so 16. 16+5=21, so 21. Answer: 21"
//! ```
//!
//! Solutions used for the supervised warm start contain *slips*: at each step, with a
//! per-step probability that depends on the style, the running sum is written off by 1 or 2,
//! and the solution carries on from the wrong value, so its final answer is wrong. A model
//! warm-started on them samples right and wrong solutions at rates RL can improve.
//!
//! Regimes ([`Regime`]). Two put a run in the paper's two regimes through the style of the
//! warm-start solutions (per-step slips, more frequent in the verbose style):
//! - `length-variation`: one (concise) style, 2..=difficulty terms. Length grows with the
//!   number of terms, so lengths vary a lot across prompts (CV about 0.4 for difficulty 8), but
//!   right and wrong answers to the same prompt have the same length: a small pos-neg gap.
//! - `pos-neg-gap`: the style is chosen at the first response token (verbose with probability
//!   [`ErrorModel::p_verbose`]); verbose solutions are about twice as long and slip far more
//!   often, so for the same prompt wrong answers are about 1.5-2x longer than right ones.
//!
//! Four more tie the length of a wrong answer to the *kind* of error, so that the sign of the
//! pos-neg gap is a property of the task, not of a style the policy can drop during training
//! (each has one error kind, [`ErrorKind`]; arithmetic is otherwise exact):
//! - `wrong-long` (runaway repetition): a wrong solution adds one term again, one or more
//!   times (` 7+9=16 16+9=25 25+5=30`), so it is wrong and longer by whole steps.
//! - `right-long` (skipped work): a wrong solution stops early and answers a partial sum, so
//!   it is wrong and shorter; right answers are the longer ones.
//! - `high-variation`: a wrong solution slips one running sum by 1 or 2 (same length); half
//!   the solutions are verbose, half concise, with the same error rate: high length CV, no gap.
//! - `control`: slips as in `high-variation`, concise only: low length CV, no gap.
//!
//! Held-out problems are disjoint from training problems by construction: a term sequence is
//! held out iff its FNV-1a hash is divisible by [`HELDOUT_MODULUS`].
//!
//! The tokenizer ([`train_tokenizer`]) is a small BPE trained with the `tokenizers` crate on
//! generated text: digits stay single characters, words may merge, spaces are their own tokens,
//! and `<|endoftext|>` / `<|pad|>` are special tokens. It round-trips through `tokenizer.json`,
//! so the testbed model loads through the same path as a Hugging Face checkpoint.

mod checker;
mod problems;
mod regime;
mod slip;
mod solutions;
mod stats;
mod tokenizer;
mod verify;

pub use checker::{checker_verdict, VERDICT_NO, VERDICT_OK};
pub use problems::{
    distinct_problems, parse_prompt, problem, problems, prompt_text, sample_terms, split_of,
    KnobError, Split, TestbedConfig, ENUMERATE_LIMIT, HELDOUT_MODULUS, NAME,
};
pub use regime::{OnFailedStep, Regime};
pub use slip::{draw_mistake, ErrorKind, ErrorModel, Mistake, Style, MAX_ATTEMPTS, MAX_REPEATS};
pub use solutions::{
    worked_solution, write_rechecked_solution, write_solution, write_step_checked_solution,
    write_verified_solution, RECHECK_PASSES,
};
pub use stats::{solution_stats, SolutionStats};
pub use tokenizer::{testbed_tokenizer, train_tokenizer, EOS, PAD};
pub use verify::{extract_answer, TestbedVerifier};

/// The study's problem space: sums of exactly 4 single-digit terms, 1 in 4 held out.
#[cfg(test)]
fn study(regime: Regime) -> TestbedConfig {
    TestbedConfig {
        regime,
        difficulty: 4,
        min_terms: 4,
        heldout_modulus: 4,
        ..Default::default()
    }
}
