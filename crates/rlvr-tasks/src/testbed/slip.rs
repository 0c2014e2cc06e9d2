//! The slip model of warm-start solutions: the kinds of error ([`ErrorKind`]), a regime's
//! error rates ([`ErrorModel`]), and the one mistake a solution carries ([`draw_mistake`]).

use rand::rngs::StdRng;
use rand::RngExt;

/// The two solution styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// ` 7+9=16 16+5=21 Answer: 21`.
    Concise,
    /// ` Step by step. 7+9=16, so 16. 16+5=21, so 21. Answer: 21`.
    Verbose,
}

/// How a warm-start solution goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// At each step, with the style's rate, the running sum is written off by 1 or 2 and the
    /// solution carries on from it (at most one slip per solution).
    StepSlip,
    /// With the style's rate per solution, one running sum (uniform step) is off by 1 or 2.
    Slip,
    /// With the style's rate per solution, the term of a uniform step is added again `r` more
    /// times, `r` = 1 + Geometric(1/2), at most [`MAX_REPEATS`].
    Repeat,
    /// With the style's rate per solution, the solution answers after a uniform number of
    /// steps `s` < steps (the partial sum of the first `s + 1` terms).
    StopEarly,
    /// The solution is checked ([`write_rechecked_solution`](super::write_rechecked_solution));
    /// each pass, independently with the style's rate, has one running sum off by 1 or 2 (uniform
    /// step), carried to the end of the pass.
    Recheck,
    /// Every step is checked ([`write_step_checked_solution`](super::write_step_checked_solution));
    /// with the style's rate per solution, one running sum (uniform step) is off by 1 or 2, its
    /// check fails and the solution stops there.
    CheckStep,
    /// The environment checks every step
    /// ([`write_verified_solution`](super::write_verified_solution)): with
    /// [`OnFailedStep::Retry`](super::OnFailedStep::Retry), each attempt at a step is off by 1 or 2
    /// with the style's rate (at most [`MAX_ATTEMPTS`] attempts); with
    /// [`OnFailedStep::End`](super::OnFailedStep::End), with the style's rate per solution one step
    /// (uniform) is.
    Verified,
}

/// The most attempts at one step in a warm-start solution of
/// [`Regime::VerifiedRetry`](super::Regime::VerifiedRetry).
pub const MAX_ATTEMPTS: usize = 4;

/// The most extra steps of one [`ErrorKind::Repeat`].
pub const MAX_REPEATS: usize = 6;

/// Style and error probabilities of warm-start solutions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorModel {
    /// Probability that a solution is written in the verbose style.
    pub p_verbose: f64,
    /// The kind of error.
    pub kind: ErrorKind,
    /// Error rate of the concise style (per step for [`ErrorKind::StepSlip`], else per solution).
    pub rate_concise: f64,
    /// Error rate of the verbose style (same unit).
    pub rate_verbose: f64,
}

/// One error in a written solution (see [`write_solution`](super::write_solution)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mistake {
    /// The running sum after step `step` (0-based) is off by `delta`; the solution carries on.
    Slip { step: usize, delta: i64 },
    /// Step `step` is written, then its term is added again `times` more times.
    Repeat { step: usize, times: usize },
    /// The solution answers right after writing `steps` steps (fewer than the problem has).
    StopAfter { steps: usize },
}

/// The mistake (if any) of one warm-start solution of `steps` steps in `style`, drawn from
/// `model`.
pub fn draw_mistake(
    model: &ErrorModel,
    style: Style,
    steps: usize,
    rng: &mut StdRng,
) -> Option<Mistake> {
    let rate = match style {
        Style::Concise => model.rate_concise,
        Style::Verbose => model.rate_verbose,
    };
    let slip = |rng: &mut StdRng| {
        let d = rng.random_range(1..=2i64);
        if rng.random_bool(0.5) {
            d
        } else {
            -d
        }
    };
    if model.kind == ErrorKind::StepSlip {
        let step = (0..steps).find(|_| rng.random_bool(rate))?;
        let delta = slip(rng);
        return Some(Mistake::Slip { step, delta });
    }
    if steps == 0 || !rng.random_bool(rate) {
        return None;
    }
    let step = rng.random_range(0..steps);
    Some(match model.kind {
        // (for `Recheck`, the slip of one pass)
        ErrorKind::StepSlip
        | ErrorKind::Slip
        | ErrorKind::Recheck
        | ErrorKind::CheckStep
        | ErrorKind::Verified => Mistake::Slip {
            step,
            delta: slip(rng),
        },
        ErrorKind::Repeat => {
            let mut times = 1;
            while times < MAX_REPEATS && rng.random_bool(0.5) {
                times += 1;
            }
            Mistake::Repeat { step, times }
        }
        ErrorKind::StopEarly => Mistake::StopAfter { steps: step },
    })
}
