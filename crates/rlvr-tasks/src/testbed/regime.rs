//! The regimes of the testbed ([`Regime`]): their names, how each one's warm-start solutions
//! go wrong, and what the environment does after a failed step in the verified ones.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::slip::{ErrorKind, ErrorModel};

/// Which length regime the warm-start solutions put a run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Regime {
    /// High response-length variation, small pos-neg gap (per-step slips, one style).
    LengthVariation,
    /// Large pos-neg gap: a verbose style that slips more often.
    PosNegGap,
    /// Wrong answers longer: the error repeats a step.
    WrongLong,
    /// Right answers longer: the error stops early.
    RightLong,
    /// No gap, high length variation: two styles with the same error rate.
    HighVariation,
    /// No gap, low length variation: one style, errors that keep the length.
    Control,
    /// Wrong answers longer, through the model's own slips: every solution checks its sum by a
    /// second pass in reverse order and, when the two disagree, makes a third pass and answers
    /// it ([`write_rechecked_solution`](super::write_rechecked_solution)). A wrong answer needs a
    /// disagreement, so it is always three passes long; a right one is two passes unless it was
    /// rescued.
    WrongLongRecheck,
    /// Right answers longer, through the model's own slips: every step is checked by a
    /// subtraction, and a step whose check fails stops the solution without an answer
    /// ([`write_step_checked_solution`](super::write_step_checked_solution)). A wrong answer is cut
    /// short at its slip.
    RightLongAbort,
    /// Wrong answers longer, through a checker the policy cannot write for itself: after every
    /// step the environment inserts its verdict (`ok` / `no`,
    /// [`checker_verdict`](super::checker_verdict)) and a failed step is done again
    /// ([`write_verified_solution`](super::write_verified_solution)). Every answer that finishes is
    /// right; a wrong one runs out of tokens at the response-length limit, so it is the longest.
    VerifiedRetry,
    /// Right answers longer, through a checker the policy cannot write for itself: as
    /// [`Regime::VerifiedRetry`], but the environment ends the response at its first `no`, so
    /// a wrong answer is cut short at its slip.
    VerifiedAbort,
}

impl Regime {
    /// Every regime.
    pub const ALL: [Regime; 10] = [
        Regime::LengthVariation,
        Regime::PosNegGap,
        Regime::WrongLong,
        Regime::RightLong,
        Regime::HighVariation,
        Regime::Control,
        Regime::WrongLongRecheck,
        Regime::RightLongAbort,
        Regime::VerifiedRetry,
        Regime::VerifiedAbort,
    ];

    /// The name users type.
    pub fn as_str(self) -> &'static str {
        match self {
            Regime::LengthVariation => "length-variation",
            Regime::PosNegGap => "pos-neg-gap",
            Regime::WrongLong => "wrong-long",
            Regime::RightLong => "right-long",
            Regime::HighVariation => "high-variation",
            Regime::Control => "control",
            Regime::WrongLongRecheck => "wrong-long-recheck",
            Regime::RightLongAbort => "right-long-abort",
            Regime::VerifiedRetry => "verified-retry",
            Regime::VerifiedAbort => "verified-abort",
        }
    }

    /// How the regime's warm-start solutions go wrong.
    pub fn error_model(self) -> ErrorModel {
        let per_solution = |kind, p_verbose| ErrorModel {
            p_verbose,
            kind,
            rate_concise: 0.4,
            rate_verbose: 0.4,
        };
        match self {
            Regime::LengthVariation => ErrorModel {
                p_verbose: 0.0,
                kind: ErrorKind::StepSlip,
                rate_concise: 0.05,
                rate_verbose: 0.05,
            },
            Regime::PosNegGap => ErrorModel {
                p_verbose: 0.5,
                kind: ErrorKind::StepSlip,
                rate_concise: 0.02,
                rate_verbose: 0.25,
            },
            Regime::WrongLong => per_solution(ErrorKind::Repeat, 0.0),
            Regime::RightLong => per_solution(ErrorKind::StopEarly, 0.0),
            Regime::HighVariation => per_solution(ErrorKind::Slip, 0.5),
            Regime::Control => per_solution(ErrorKind::Slip, 0.0),
            Regime::WrongLongRecheck => ErrorModel {
                p_verbose: 0.0,
                kind: ErrorKind::Recheck,
                rate_concise: 0.3,
                rate_verbose: 0.3,
            },
            Regime::RightLongAbort => per_solution(ErrorKind::CheckStep, 0.0),
            Regime::VerifiedRetry => ErrorModel {
                p_verbose: 0.0,
                kind: ErrorKind::Verified,
                rate_concise: 0.2,
                rate_verbose: 0.2,
            },
            Regime::VerifiedAbort => per_solution(ErrorKind::Verified, 0.0),
        }
    }

    /// What the environment does after a failed step, for the regimes whose steps it checks
    /// ([`checker_verdict`](super::checker_verdict)); `None` for the others.
    pub fn on_failed_step(self) -> Option<OnFailedStep> {
        match self {
            Regime::VerifiedRetry => Some(OnFailedStep::Retry),
            Regime::VerifiedAbort => Some(OnFailedStep::End),
            _ => None,
        }
    }
}

/// What follows the environment's `no` in a verified regime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFailedStep {
    /// The policy does the step again.
    Retry,
    /// The environment ends the response (no answer).
    End,
}

impl FromStr for Regime {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Regime::ALL
            .into_iter()
            .find(|r| r.as_str() == s.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Regime::ALL.iter().map(|r| r.as_str()).collect();
                format!(
                    "unknown testbed regime {s:?}; expected one of {}",
                    names.join(", ")
                )
            })
    }
}
