//! Writing worked solutions: the two styles ([`write_solution`]), the checked and
//! step-checked solutions, the verified regimes' solutions with the environment's verdicts,
//! and [`worked_solution`], one warm-start solution drawn from a regime.

use rand::rngs::StdRng;
use rand::RngExt;

use super::checker::{VERDICT_NO, VERDICT_OK};
use super::problems::TestbedConfig;
use super::regime::OnFailedStep;
use super::slip::{draw_mistake, ErrorKind, Mistake, Style, MAX_ATTEMPTS};

/// A solution of a verified regime as the environment's verdicts make it: each step
/// ` a+b=c ` is followed by `ok` or `no`; `slip(step)` is called for every attempt at a step
/// (0-based) and gives the amount its sum is off by (`None`: right; the sum is not written
/// below 0). After a `no` the step is done again ([`OnFailedStep::Retry`], at most
/// `max_attempts` attempts per step, after which the solution ends there without an answer) or
/// the solution ends ([`OnFailedStep::End`]). Returns the text (the verdicts included) and the
/// answer it states.
///
/// ```text
/// no slip:                  " 7+9=16 ok 16+5=21 ok Answer: 21"
/// Retry, step 1 off by -1:  " 7+9=16 ok 16+5=20 no 16+5=21 ok Answer: 21"
/// End, step 1 off by -1:    " 7+9=16 ok 16+5=20 no"
/// ```
pub fn write_verified_solution(
    terms: &[u32],
    on_fail: OnFailedStep,
    max_attempts: usize,
    mut slip: impl FnMut(usize) -> Option<i64>,
) -> (String, Option<i64>) {
    let mut out = String::new();
    let mut acc = i64::from(terms[0]);
    for (step, &t) in terms[1..].iter().enumerate() {
        let right = acc + i64::from(t);
        let mut passed = false;
        for _ in 0..max_attempts.max(1) {
            let next = slip(step).map_or(right, |d| (right + d).max(0));
            passed = next == right;
            let verdict = if passed { VERDICT_OK } else { VERDICT_NO };
            out.push_str(&format!(" {acc}+{t}={next} {verdict}"));
            if passed || on_fail == OnFailedStep::End {
                break;
            }
        }
        if !passed {
            return (out, None);
        }
        acc = right;
    }
    out.push_str(&format!(" Answer: {acc}"));
    (out, Some(acc))
}

/// A worked solution written in `style`, with at most one `mistake`. Returns the text and the
/// final answer it states.
///
/// ```text
/// none:                      " 7+9=16 16+5=21 Answer: 21"
/// Slip { step: 0, delta: 1 }: " 7+9=17 17+5=22 Answer: 22"
/// Repeat { step: 0, times: 1 }: " 7+9=16 16+9=25 25+5=30 Answer: 30"
/// StopAfter { steps: 1 }:     " 7+9=16 Answer: 16"
/// ```
pub fn write_solution(terms: &[u32], style: Style, mistake: Option<Mistake>) -> (String, i64) {
    let mut out = String::new();
    if style == Style::Verbose {
        out.push_str(" Step by step.");
    }
    let write_step = |out: &mut String, acc: i64, t: u32, next: i64| match style {
        Style::Concise => out.push_str(&format!(" {acc}+{t}={next}")),
        Style::Verbose => out.push_str(&format!(" {acc}+{t}={next}, so {next}.")),
    };
    let mut acc = i64::from(terms[0]);
    for (step, &t) in terms[1..].iter().enumerate() {
        if mistake == Some(Mistake::StopAfter { steps: step }) {
            break;
        }
        let mut next = acc + i64::from(t);
        if let Some(Mistake::Slip { step: s, delta }) = mistake {
            if s == step {
                next = (next + delta).max(0);
            }
        }
        write_step(&mut out, acc, t, next);
        acc = next;
        if let Some(Mistake::Repeat { step: s, times }) = mistake {
            if s == step {
                for _ in 0..times {
                    let again = acc + i64::from(t);
                    write_step(&mut out, acc, t, again);
                    acc = again;
                }
            }
        }
    }
    out.push_str(&format!(" Answer: {acc}"));
    (out, acc)
}

/// The most passes of a checked solution ([`write_rechecked_solution`]).
pub const RECHECK_PASSES: usize = 3;

/// A checked solution: pass 0 adds the terms in order, pass 1 (` check`) adds them in reverse
/// order; when the two sums agree the solution answers, otherwise pass 2 (` check`, in order
/// again) is made and its sum is the answer. `slips[p] = Some((step, delta))` writes the
/// running sum after step `step` (0-based) of pass `p` off by `delta` (not below 0), carried
/// to the end of that pass. Returns the text and the answer it states.
///
/// ```text
/// no slip:            " 7+9=16 16+5=21 check 5+9=14 14+7=21 Answer: 21"
/// pass 0, (0, +1):    " 7+9=17 17+5=22 check 5+9=14 14+7=21 check 7+9=16 16+5=21 Answer: 21"
/// pass 1, (1, -1) and
/// pass 2, (0, +2):    " 7+9=16 16+5=21 check 5+9=14 14+7=20 check 7+9=18 18+5=23 Answer: 23"
/// ```
///
/// A wrong answer needs two slipped passes, one of them the last pass, so it is three passes
/// long, unless passes 0 and 1 slip to the same wrong sum.
pub fn write_rechecked_solution(
    terms: &[u32],
    slips: [Option<(usize, i64)>; RECHECK_PASSES],
) -> (String, i64) {
    let mut out = String::new();
    let mut sums = Vec::with_capacity(RECHECK_PASSES);
    for (pass, slip) in slips.iter().enumerate() {
        if pass == 2 && sums[0] == sums[1] {
            break;
        }
        if pass > 0 {
            out.push_str(" check");
        }
        let order: Vec<u32> = if pass % 2 == 0 {
            terms.to_vec()
        } else {
            terms.iter().rev().copied().collect()
        };
        let mut acc = i64::from(order[0]);
        for (step, &t) in order[1..].iter().enumerate() {
            let mut next = acc + i64::from(t);
            if let Some((s, delta)) = *slip {
                if s == step {
                    next = (next + delta).max(0);
                }
            }
            out.push_str(&format!(" {acc}+{t}={next}"));
            acc = next;
        }
        sums.push(acc);
    }
    let answer = *sums.last().expect("at least two passes");
    out.push_str(&format!(" Answer: {answer}"));
    (out, answer)
}

/// A solution whose every step is checked by subtracting its term again: the check gives back
/// the previous running sum, or, after a slipped step (`slip = Some((step, delta))`, the sum
/// written off by `delta`, not below 0), it does not, and the solution stops there without an
/// answer. Returns the text and the answer it states (`None` when it stopped).
///
/// ```text
/// no slip:  " 7+9=16 16-9=7 16+5=21 21-5=16 Answer: 21"
/// (1, -1):  " 7+9=16 16-9=7 16+5=20 20-5=15 stop"
/// ```
pub fn write_step_checked_solution(
    terms: &[u32],
    slip: Option<(usize, i64)>,
) -> (String, Option<i64>) {
    let mut out = String::new();
    let mut acc = i64::from(terms[0]);
    for (step, &t) in terms[1..].iter().enumerate() {
        let mut next = acc + i64::from(t);
        if let Some((s, delta)) = slip {
            if s == step {
                next = (next + delta).max(0);
            }
        }
        let back = next - i64::from(t);
        out.push_str(&format!(" {acc}+{t}={next} {next}-{t}={back}"));
        if back != acc {
            out.push_str(" stop");
            return (out, None);
        }
        acc = next;
    }
    out.push_str(&format!(" Answer: {acc}"));
    (out, Some(acc))
}

/// One warm-start solution for `terms`, drawn from the regime's [`ErrorModel`](super::ErrorModel):
/// the style, then the mistake (for [`ErrorKind::Recheck`], a slip or none for each pass,
/// independently). Returns the text (without EOS) and whether it is correct.
pub fn worked_solution(cfg: &TestbedConfig, terms: &[u32], rng: &mut StdRng) -> (String, bool) {
    let model = cfg.regime.error_model();
    let truth: i64 = terms.iter().map(|&t| i64::from(t)).sum();
    // a checked solution's slip in one pass (concise style only)
    let draw_slip =
        |rng: &mut StdRng| match draw_mistake(&model, Style::Concise, terms.len() - 1, rng) {
            Some(Mistake::Slip { step, delta }) => Some((step, delta)),
            _ => None,
        };
    if model.kind == ErrorKind::Recheck {
        let slips: [Option<(usize, i64)>; RECHECK_PASSES] = std::array::from_fn(|_| draw_slip(rng));
        let (text, answer) = write_rechecked_solution(terms, slips);
        return (text, answer == truth);
    }
    if model.kind == ErrorKind::CheckStep {
        let (text, answer) = write_step_checked_solution(terms, draw_slip(rng));
        return (text, answer == Some(truth));
    }
    if let Some(on_fail) = cfg.regime.on_failed_step() {
        let (text, answer) = match on_fail {
            OnFailedStep::Retry => {
                let rate = model.rate_concise;
                write_verified_solution(terms, on_fail, MAX_ATTEMPTS, |_| {
                    if !rng.random_bool(rate) {
                        return None;
                    }
                    let d = rng.random_range(1..=2i64);
                    Some(if rng.random_bool(0.5) { d } else { -d })
                })
            }
            OnFailedStep::End => {
                let slip = draw_slip(rng);
                write_verified_solution(terms, on_fail, 1, |step| {
                    slip.and_then(|(s, d)| (s == step).then_some(d))
                })
            }
        };
        return (text, answer == Some(truth));
    }
    let style = if rng.random_bool(model.p_verbose) {
        Style::Verbose
    } else {
        Style::Concise
    };
    let mistake = draw_mistake(&model, style, terms.len() - 1, rng);
    let (text, answer) = write_solution(terms, style, mistake);
    (text, answer == truth)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testbed::{parse_prompt, problem, prompt_text, TestbedVerifier};
    use crate::Verifier;

    #[test]
    fn solutions_by_hand() {
        assert_eq!(
            write_solution(&[7, 9, 5], Style::Concise, None),
            (" 7+9=16 16+5=21 Answer: 21".into(), 21)
        );
        assert_eq!(
            write_solution(&[7, 9, 5], Style::Verbose, None).0,
            " Step by step. 7+9=16, so 16. 16+5=21, so 21. Answer: 21"
        );
        // a slip of +1 at the first step carries on
        assert_eq!(
            write_solution(
                &[7, 9, 5],
                Style::Concise,
                Some(Mistake::Slip { step: 0, delta: 1 })
            ),
            (" 7+9=17 17+5=22 Answer: 22".into(), 22)
        );
        // a repeated step adds its term again and is longer
        assert_eq!(
            write_solution(
                &[7, 9, 5],
                Style::Concise,
                Some(Mistake::Repeat { step: 0, times: 2 })
            ),
            (" 7+9=16 16+9=25 25+9=34 34+5=39 Answer: 39".into(), 39)
        );
        // stopping early answers a partial sum and is shorter
        assert_eq!(
            write_solution(
                &[7, 9, 5],
                Style::Concise,
                Some(Mistake::StopAfter { steps: 1 })
            ),
            (" 7+9=16 Answer: 16".into(), 16)
        );
        assert_eq!(
            write_solution(
                &[7, 9, 5],
                Style::Verbose,
                Some(Mistake::StopAfter { steps: 0 })
            ),
            (" Step by step. Answer: 7".into(), 7)
        );
        assert_eq!(prompt_text(&[7, 9, 5]), "Add: 7 9 5 =");
        assert_eq!(parse_prompt("Add: 7 9 5 ="), Some(vec![7, 9, 5]));
        assert_eq!(parse_prompt("Add: 7 ="), None);
    }

    #[test]
    fn rechecked_solutions_by_hand() {
        let none = [None; RECHECK_PASSES];
        assert_eq!(
            write_rechecked_solution(&[7, 9, 5], none),
            (" 7+9=16 16+5=21 check 5+9=14 14+7=21 Answer: 21".into(), 21)
        );
        // a slipped first pass disagrees with the check: a third pass decides
        assert_eq!(
            write_rechecked_solution(&[7, 9, 5], [Some((0, 1)), None, None]),
            (
                " 7+9=17 17+5=22 check 5+9=14 14+7=21 check 7+9=16 16+5=21 Answer: 21".into(),
                21
            )
        );
        // the check slips and so does the third pass: wrong, and three passes long
        assert_eq!(
            write_rechecked_solution(&[7, 9, 5], [None, Some((1, -1)), Some((0, 2))]),
            (
                " 7+9=16 16+5=21 check 5+9=14 14+7=20 check 7+9=18 18+5=23 Answer: 23".into(),
                23
            )
        );
        // the first two passes slip to the same sum: they agree, wrong after two passes
        assert_eq!(
            write_rechecked_solution(&[7, 9, 5], [Some((1, 2)), Some((0, 2)), Some((0, 1))]),
            (" 7+9=16 16+5=23 check 5+9=16 16+7=23 Answer: 23".into(), 23)
        );
        // a slip never goes below 0
        assert_eq!(
            write_rechecked_solution(&[1, 1], [Some((0, -2)), None, None]).0,
            " 1+1=0 check 1+1=2 check 1+1=2 Answer: 2"
        );
    }

    #[test]
    fn step_checked_solutions_by_hand() {
        assert_eq!(
            write_step_checked_solution(&[7, 9, 5], None),
            (" 7+9=16 16-9=7 16+5=21 21-5=16 Answer: 21".into(), Some(21))
        );
        assert_eq!(
            write_step_checked_solution(&[7, 9, 5], Some((1, -1))),
            (" 7+9=16 16-9=7 16+5=20 20-5=15 stop".into(), None)
        );
        // a slip below 0 is written as 0 and its check is negative
        assert_eq!(
            write_step_checked_solution(&[1, 1], Some((0, -2))).0,
            " 1+1=0 0-1=-1 stop"
        );
        // the verifier finds no answer in a stopped solution
        let p = problem(&[7, 9, 5]);
        let stopped = write_step_checked_solution(&[7, 9, 5], Some((0, 2))).0;
        assert_eq!(TestbedVerifier.score(&stopped, &p).reward, 0.0);
    }

    #[test]
    fn verified_solutions_by_hand() {
        let none = |_| None;
        assert_eq!(
            write_verified_solution(&[7, 9, 5], OnFailedStep::Retry, 4, none),
            (" 7+9=16 ok 16+5=21 ok Answer: 21".into(), Some(21))
        );
        // step 1 slips at its first attempt only
        let mut calls = Vec::new();
        let first_of_step_1 = |step: usize| {
            calls.push(step);
            (step == 1 && calls.iter().filter(|&&s| s == 1).count() == 1).then_some(-1)
        };
        assert_eq!(
            write_verified_solution(&[7, 9, 5], OnFailedStep::Retry, 4, first_of_step_1),
            (
                " 7+9=16 ok 16+5=20 no 16+5=21 ok Answer: 21".into(),
                Some(21)
            )
        );
        assert_eq!(calls, [0, 1, 1]);
        assert_eq!(
            write_verified_solution(&[7, 9, 5], OnFailedStep::End, 4, |s| (s == 1).then_some(-1)),
            (" 7+9=16 ok 16+5=20 no".into(), None)
        );
        // out of attempts: the solution ends at the step, without an answer
        assert_eq!(
            write_verified_solution(&[7, 9], OnFailedStep::Retry, 2, |_| Some(2)),
            (" 7+9=18 no 7+9=18 no".into(), None)
        );
        // a slip below 0 is written as 0
        assert_eq!(
            write_verified_solution(&[1, 1], OnFailedStep::End, 1, |_| Some(-3)).0,
            " 1+1=0 no"
        );
    }
}
