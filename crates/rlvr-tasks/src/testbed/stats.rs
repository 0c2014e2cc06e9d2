//! Length statistics of a regime's warm-start solutions ([`solution_stats`]): accuracy,
//! length CV and the within-group pos-neg gap.

use rand::rngs::StdRng;
use rand::SeedableRng;

use super::problems::{sample_terms, Split, TestbedConfig};
use super::solutions::worked_solution;

/// Length statistics of the warm-start solution distribution, measured by sampling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolutionStats {
    /// Fraction of correct solutions.
    pub accuracy: f64,
    /// Coefficient of variation of solution lengths over all samples.
    pub length_cv: f64,
    /// Mean over groups with both right and wrong solutions of `L+ - L-` (right minus wrong).
    pub pos_neg_gap: f64,
    /// Mean over those groups of `L- / L+` (wrong over right).
    pub neg_pos_ratio: f64,
    /// Groups with both right and wrong solutions.
    pub mixed_groups: usize,
    /// Mean solution length over all samples.
    pub mean_length: f64,
}

/// Samples `g` warm-start solutions for each of `prompts` training problems and measures the
/// length CV and the within-group pos-neg gap; `length` measures a solution (characters, or
/// tokens with a tokenizer).
pub fn solution_stats(
    cfg: &TestbedConfig,
    prompts: usize,
    g: usize,
    length: &dyn Fn(&str) -> usize,
) -> SolutionStats {
    let mut rng = StdRng::seed_from_u64(cfg.seed ^ 0x7374_6174);
    let (mut all, mut right_count) = (Vec::new(), 0usize);
    let (mut gaps, mut ratios) = (Vec::new(), Vec::new());
    for _ in 0..prompts {
        let terms = sample_terms(cfg, Split::Train, &mut rng);
        let (mut pos, mut neg) = (Vec::new(), Vec::new());
        for _ in 0..g {
            let (text, ok) = worked_solution(cfg, &terms, &mut rng);
            let l = length(&text) as f64;
            all.push(l);
            if ok {
                right_count += 1;
                pos.push(l);
            } else {
                neg.push(l);
            }
        }
        if !pos.is_empty() && !neg.is_empty() {
            let (lp, ln) = (mean(&pos), mean(&neg));
            gaps.push(lp - ln);
            ratios.push(ln / lp);
        }
    }
    let m = mean(&all);
    let sd = (all.iter().map(|l| (l - m) * (l - m)).sum::<f64>() / all.len().max(1) as f64).sqrt();
    SolutionStats {
        accuracy: right_count as f64 / all.len().max(1) as f64,
        length_cv: if m > 0.0 { sd / m } else { 0.0 },
        pos_neg_gap: mean(&gaps),
        neg_pos_ratio: mean(&ratios),
        mixed_groups: gaps.len(),
        mean_length: m,
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::super::study;
    use super::*;
    use crate::testbed::{
        testbed_tokenizer, write_rechecked_solution, Regime, VERDICT_NO, VERDICT_OK,
    };

    #[test]
    fn regimes_differ_as_claimed() {
        let tok = testbed_tokenizer(&TestbedConfig::default()).unwrap();
        let tokens = |s: &str| tok.encode(s, false).unwrap().get_ids().len();
        let lv = solution_stats(
            &TestbedConfig {
                regime: Regime::LengthVariation,
                ..Default::default()
            },
            400,
            8,
            &tokens,
        );
        let gap = solution_stats(
            &TestbedConfig {
                regime: Regime::PosNegGap,
                ..Default::default()
            },
            400,
            8,
            &tokens,
        );
        eprintln!("length-variation: {lv:?}\npos-neg-gap: {gap:?}");
        // (a) high length variation, small within-group gap
        assert!(lv.length_cv > 0.35, "{lv:?}");
        assert!((lv.neg_pos_ratio - 1.0).abs() < 0.1, "{lv:?}");
        // (b) wrong answers 1.5-2x longer than right ones for the same prompt
        assert!(
            gap.neg_pos_ratio > 1.4 && gap.neg_pos_ratio < 2.2,
            "{gap:?}"
        );
        assert!(gap.pos_neg_gap < -10.0, "{gap:?}");
        // reward off the ceiling and off the floor in both
        for s in [lv, gap] {
            assert!(s.accuracy > 0.5 && s.accuracy < 0.95, "{s:?}");
        }
    }

    /// `solution_stats` of a study regime's warm-start data (2,000 problems x 8 solutions, in
    /// tokens of its tokenizer), and the token count of a text.
    fn token_stats(regime: Regime) -> (SolutionStats, impl Fn(&str) -> usize) {
        let cfg = study(regime);
        let tok = testbed_tokenizer(&cfg).unwrap();
        let tokens = move |s: &str| tok.encode(s, false).unwrap().get_ids().len();
        let s = solution_stats(&cfg, 2000, 8, &tokens);
        eprintln!("{} {s:?}", regime.as_str());
        (s, tokens)
    }

    #[test]
    fn study_regimes_tie_length_to_the_kind_of_error() {
        let tok = testbed_tokenizer(&study(Regime::Control)).unwrap();
        let tokens = |s: &str| tok.encode(s, false).unwrap().get_ids().len();
        let stats = |r| solution_stats(&study(r), 600, 8, &tokens);
        let (wl, rl, hv, ctl) = (
            stats(Regime::WrongLong),
            stats(Regime::RightLong),
            stats(Regime::HighVariation),
            stats(Regime::Control),
        );
        eprintln!("wrong-long {wl:?}\nright-long {rl:?}\nhigh-variation {hv:?}\ncontrol {ctl:?}");
        for s in [wl, rl, hv, ctl] {
            // 40% of solutions carry one mistake
            assert!((s.accuracy - 0.6).abs() < 0.03, "{s:?}");
            assert!(s.mixed_groups > 400, "{s:?}");
        }
        // wrong answers longer by at least a third of the mean length
        assert!(wl.pos_neg_gap / wl.mean_length < -0.33, "{wl:?}");
        // right answers longer by at least a quarter
        assert!(rl.pos_neg_gap / rl.mean_length > 0.25, "{rl:?}");
        // no gap (within 2% of the mean length), high against low variation
        for s in [hv, ctl] {
            assert!((s.pos_neg_gap / s.mean_length).abs() < 0.02, "{s:?}");
        }
        assert!(
            hv.length_cv > 0.15 && ctl.length_cv < 0.06,
            "{hv:?} {ctl:?}"
        );
    }

    /// The checked regime's warm-start data: with a slip in each pass at rate q = 0.3, a
    /// solution is right when both first passes are clean (0.49) or they disagree (everything
    /// but both clean and both slipped by the same delta, 0.09 / 4) and the third is clean:
    /// 0.49 + (1 - 0.49 - 0.0225) * 0.7 = 0.831. Wrong answers are the longer ones, and every
    /// checked solution fits the study's 96-token responses.
    #[test]
    fn the_checked_regime_makes_wrong_answers_longer() {
        let (s, tokens) = token_stats(Regime::WrongLongRecheck);
        assert!((s.accuracy - 0.831).abs() < 0.015, "{s:?}");
        assert!(s.mixed_groups > 1000, "{s:?}");
        assert!(s.pos_neg_gap / s.mean_length < -0.15, "{s:?}");
        // "check" is one token, and the longest solution (three passes, two-digit sums) plus
        // eos fits in 96 tokens
        assert_eq!(tokens(" check"), 2);
        let longest = write_rechecked_solution(&[9, 9, 9, 9], [Some((0, 1)), None, Some((0, 1))]).0;
        assert!(tokens(&longest) < 96, "{} tokens and eos", tokens(&longest));
    }

    /// The step-checked regime's warm-start data: 40% of solutions slip once and stop at the
    /// slipped step (a uniform one of three), so right answers are the longer ones.
    #[test]
    fn the_step_checked_regime_makes_right_answers_longer() {
        let (s, tokens) = token_stats(Regime::RightLongAbort);
        assert!((s.accuracy - 0.6).abs() < 0.015, "{s:?}");
        assert!(s.mixed_groups > 1500, "{s:?}");
        assert!(s.pos_neg_gap / s.mean_length > 0.25, "{s:?}");
        assert_eq!(tokens(" stop"), 2);
    }

    /// The verified regimes' warm-start data: with retries every solution ends right (a wrong
    /// answer needs the response-length limit, which only a live rollout has); with aborts 40%
    /// stop at their slip, so right answers are the longer ones. `ok` and `no` are one token.
    #[test]
    fn the_verified_regimes_warm_start_data() {
        let (s, tokens) = token_stats(Regime::VerifiedAbort);
        assert!((s.accuracy - 0.6).abs() < 0.015, "{s:?}");
        assert!(s.pos_neg_gap / s.mean_length > 0.25, "{s:?}");
        assert_eq!((tokens(VERDICT_OK), tokens(VERDICT_NO)), (1, 1));

        let (s, tokens) = token_stats(Regime::VerifiedRetry);
        assert!(s.accuracy > 0.99, "{s:?}");
        assert!(s.length_cv > 0.15, "retries vary the length: {s:?}");
        assert_eq!((tokens(VERDICT_OK), tokens(VERDICT_NO)), (1, 1));
    }
}
