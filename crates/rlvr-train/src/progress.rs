//! Where a GRPO step stands while it runs: the events a progress display is given
//! ([`StepProgress`]), and their one-line text.
//!
//! ```text
//! step 3 rollout: 1,234 tokens (12/64 responses done), 340 tok/s, longest 256
//! step 3 log-probs: micro-batch 2/8
//! step 3 update: micro-batch 5/16 (mini-batch 1/2)
//! ```

use std::fmt;
use std::sync::Arc;

/// One progress event of a step. Events come from the thread that runs the step, in order;
/// an observer must be cheap (a rollout reports after every decoded token).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepProgress {
    /// Phase 2, after every decoded token of a generation round (and once at its end).
    Rollout {
        /// The step being run (1-based).
        step: usize,
        /// The generation round (0-based; more than one only with `filter_groups`).
        round: usize,
        /// Responses of the round: prompts x `num_generations`.
        responses: usize,
        /// Responses that have ended.
        finished: usize,
        /// Tokens in the round's responses so far.
        tokens: usize,
        /// The longest response so far, in tokens.
        longest: usize,
        /// Seconds since the round's generation began.
        secs: f64,
    },
    /// Phase 5, after every micro-batch of old or reference log-probs.
    LogProbs {
        step: usize,
        /// Micro-batches done, of `total` (the old and the reference passes together).
        done: usize,
        total: usize,
    },
    /// Phase 6, after every micro-batch's forward and backward.
    Update {
        step: usize,
        /// Micro-batches done over all epochs and mini-batches, of `total`.
        done: usize,
        total: usize,
        /// Optimizer mini-batches begun (1-based), of `mini_batches` (all epochs).
        mini_batch: usize,
        mini_batches: usize,
    },
}

impl StepProgress {
    /// Whether this is a phase's last event (the round's end, the last micro-batch).
    pub fn is_phase_end(&self) -> bool {
        match *self {
            StepProgress::Rollout {
                responses,
                finished,
                ..
            } => finished == responses,
            StepProgress::LogProbs { done, total, .. }
            | StepProgress::Update { done, total, .. } => done == total,
        }
    }
}

/// The observer a trainer reports to ([`crate::Trainer::progress`]).
pub type ProgressObserver = Arc<dyn Fn(&StepProgress) + Send + Sync>;

/// `1234567` as `1,234,567`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl fmt::Display for StepProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            StepProgress::Rollout {
                step,
                round,
                responses,
                finished,
                tokens,
                longest,
                secs,
            } => {
                write!(f, "step {step} rollout")?;
                if round > 0 {
                    write!(f, " (round {})", round + 1)?;
                }
                let rate = if secs > 0.0 { tokens as f64 / secs } else { 0.0 };
                write!(
                    f,
                    ": {} tokens ({finished}/{responses} responses done), {rate:.0} tok/s, longest {longest}",
                    grouped(tokens)
                )
            }
            StepProgress::LogProbs { step, done, total } => {
                write!(f, "step {step} log-probs: micro-batch {done}/{total}")
            }
            StepProgress::Update {
                step,
                done,
                total,
                mini_batch,
                mini_batches,
            } => write!(
                f,
                "step {step} update: micro-batch {done}/{total} (mini-batch {mini_batch}/{mini_batches})"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_as_documented() {
        let r = StepProgress::Rollout {
            step: 3,
            round: 0,
            responses: 64,
            finished: 12,
            tokens: 1234,
            longest: 256,
            secs: 3.63,
        };
        assert_eq!(
            r.to_string(),
            "step 3 rollout: 1,234 tokens (12/64 responses done), 340 tok/s, longest 256"
        );
        assert!(!r.is_phase_end());
        let u = StepProgress::Update {
            step: 3,
            done: 5,
            total: 16,
            mini_batch: 1,
            mini_batches: 2,
        };
        assert_eq!(
            u.to_string(),
            "step 3 update: micro-batch 5/16 (mini-batch 1/2)"
        );
        let l = StepProgress::LogProbs {
            step: 3,
            done: 8,
            total: 8,
        };
        assert_eq!(l.to_string(), "step 3 log-probs: micro-batch 8/8");
        assert!(l.is_phase_end());
    }

    #[test]
    fn thousands_are_grouped() {
        let g: Vec<String> = [0, 12, 999, 1000, 65536, 1234567].map(grouped).to_vec();
        assert_eq!(g, ["0", "12", "999", "1,000", "65,536", "1,234,567"]);
    }
}
