//! Problem generation: the testbed's settings ([`TestbedConfig`]), the train / held-out split,
//! prompts, and the problem streams ([`problems`], [`distinct_problems`]).

use std::collections::HashSet;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use super::regime::Regime;
use crate::{Problem, Prompt};

/// A term sequence is held out iff `fnv1a(terms) % HELDOUT_MODULUS == 0` (1 in 8).
pub const HELDOUT_MODULUS: u64 = 8;

/// Settings of the testbed task.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestbedConfig {
    /// The length regime.
    pub regime: Regime,
    /// Difficulty: the largest number of terms (at least 2); problems have
    /// `min_terms..=difficulty` terms.
    pub difficulty: usize,
    /// The smallest number of terms (2..=difficulty).
    #[serde(default = "default_min_terms")]
    pub min_terms: usize,
    /// Terms are drawn from 1..=max_operand.
    pub max_operand: u32,
    /// A term sequence is held out iff `fnv1a(terms) % heldout_modulus == 0` (2..=1000).
    #[serde(default = "default_heldout_modulus")]
    pub heldout_modulus: u64,
    /// Seed of the problem streams and of the warm-start solutions.
    pub seed: u64,
}

fn default_min_terms() -> usize {
    2
}

fn default_heldout_modulus() -> u64 {
    HELDOUT_MODULUS
}

impl Default for TestbedConfig {
    /// `length-variation`, 2..=8 single-digit terms, 1 in 8 held out, seed 0.
    fn default() -> Self {
        Self {
            regime: Regime::LengthVariation,
            difficulty: 8,
            min_terms: 2,
            max_operand: 9,
            heldout_modulus: HELDOUT_MODULUS,
            seed: 0,
        }
    }
}

/// A testbed setting out of its range: the knob (its name in `[testbed]`) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("testbed {knob} {message}")]
pub struct KnobError {
    pub knob: &'static str,
    pub message: String,
}

impl TestbedConfig {
    /// Checks the knobs: 2 <= min_terms <= difficulty, 1 <= max_operand <= 999,
    /// 2 <= heldout_modulus <= 1000.
    pub fn validate(&self) -> Result<(), KnobError> {
        let bad = |knob, message| Err(KnobError { knob, message });
        if self.difficulty < 2 {
            return bad(
                "difficulty",
                format!("must be at least 2 terms, got {}", self.difficulty),
            );
        }
        if !(2..=self.difficulty).contains(&self.min_terms) {
            return bad(
                "min_terms",
                format!(
                    "must be in 2..={} (the difficulty), got {}",
                    self.difficulty, self.min_terms
                ),
            );
        }
        if !(1..=999).contains(&self.max_operand) {
            return bad(
                "max_operand",
                format!("must be in 1..=999, got {}", self.max_operand),
            );
        }
        if !(2..=1000).contains(&self.heldout_modulus) {
            return bad(
                "heldout_modulus",
                format!("must be in 2..=1000, got {}", self.heldout_modulus),
            );
        }
        Ok(())
    }

    /// How many distinct term sequences the problem space has: `sum over n of max_operand^n`
    /// (saturating).
    pub fn space_size(&self) -> u64 {
        (self.min_terms.max(2)..=self.difficulty.max(2))
            .map(|n| u64::from(self.max_operand.max(1)).saturating_pow(n as u32))
            .fold(0u64, u64::saturating_add)
    }
}

/// Which side of the train / held-out split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Problems for training (warm start and RL).
    Train,
    /// Problems for evaluation only.
    Heldout,
}

/// FNV-1a over the terms (platform-independent).
fn fnv1a(terms: &[u32]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for t in terms {
        for b in t.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Which split a term sequence belongs to, with 1 in `modulus` held out.
pub fn split_of(terms: &[u32], modulus: u64) -> Split {
    if fnv1a(terms).is_multiple_of(modulus.max(2)) {
        Split::Heldout
    } else {
        Split::Train
    }
}

/// The prompt text of a term sequence: `Add: 7 9 5 =`.
pub fn prompt_text(terms: &[u32]) -> String {
    let list: Vec<String> = terms.iter().map(u32::to_string).collect();
    format!("Add: {} =", list.join(" "))
}

/// The terms of a testbed prompt (inverse of [`prompt_text`]).
pub fn parse_prompt(prompt: &str) -> Option<Vec<u32>> {
    let body = prompt
        .trim()
        .strip_prefix("Add:")?
        .trim()
        .strip_suffix('=')?;
    let terms: Option<Vec<u32>> = body.split_whitespace().map(|t| t.parse().ok()).collect();
    terms.filter(|t| t.len() >= 2)
}

/// The testbed's one name, wherever a config or a problem names it: `model.path`,
/// `data.train_files` and `eval.datasets` of a run, `rlvr eval --data`, and the `data_source`
/// of its problems (which routes them to [`TestbedVerifier`](super::TestbedVerifier) under
/// `reward.kind = "auto"`).
pub const NAME: &str = "testbed";

/// A problem from its terms.
pub fn problem(terms: &[u32]) -> Problem {
    let ids: Vec<String> = terms.iter().map(u32::to_string).collect();
    Problem {
        id: format!("{NAME}-{}", ids.join("-")),
        prompt: Prompt::Text(prompt_text(terms)),
        answer: terms.iter().map(|&t| u64::from(t)).sum::<u64>().to_string(),
        solution: None,
        data_source: NAME.into(),
        choices: None,
    }
}

/// Draws one term sequence of `split` (rejection sampling on the split hash).
pub fn sample_terms(cfg: &TestbedConfig, split: Split, rng: &mut StdRng) -> Vec<u32> {
    loop {
        let n =
            rng.random_range(cfg.min_terms.clamp(2, cfg.difficulty.max(2))..=cfg.difficulty.max(2));
        let terms: Vec<u32> = (0..n)
            .map(|_| rng.random_range(1..=cfg.max_operand.max(1)))
            .collect();
        if split_of(&terms, cfg.heldout_modulus) == split {
            return terms;
        }
    }
}

/// The seed offset of a split's problem stream (train and held-out draw from different streams).
fn stream_seed(split: Split) -> u64 {
    match split {
        Split::Train => 0x7261_696e,
        Split::Heldout => 0x6865_6c64,
    }
}

/// `count` problems of `split`, deterministic in `(cfg.seed, split, count)`. Train and held-out
/// streams use different seeds, and never share a problem.
pub fn problems(cfg: &TestbedConfig, split: Split, count: usize) -> Vec<Problem> {
    let stream = stream_seed(split);
    let mut rng = StdRng::seed_from_u64(cfg.seed ^ stream);
    (0..count)
        .map(|_| problem(&sample_terms(cfg, split, &mut rng)))
        .collect()
}

/// `count` distinct problems of `split` (the held-out evaluation set), deterministic in
/// `(cfg.seed, split)`: the split's term sequences in a seeded random order, each once; when the
/// split has fewer than `count`, the list repeats from its start (each problem then counts
/// equally often, up to one). Also returns how many are distinct.
///
/// Spaces of up to [`ENUMERATE_LIMIT`] sequences are enumerated; larger ones are drawn by
/// rejection of repeats (they have far more distinct problems than any evaluation needs).
pub fn distinct_problems(cfg: &TestbedConfig, split: Split, count: usize) -> (Vec<Problem>, usize) {
    let stream = stream_seed(split);
    let mut rng = StdRng::seed_from_u64(cfg.seed ^ stream ^ 0x6469_7374);
    let mut seqs: Vec<Vec<u32>> = Vec::new();
    if cfg.space_size() <= ENUMERATE_LIMIT {
        for n in cfg.min_terms.max(2)..=cfg.difficulty.max(2) {
            let mut terms = vec![1u32; n];
            'odometer: loop {
                if split_of(&terms, cfg.heldout_modulus) == split {
                    seqs.push(terms.clone());
                }
                // the next sequence over 1..=max_operand, last term fastest
                for i in (0..n).rev() {
                    if terms[i] < cfg.max_operand.max(1) {
                        terms[i] += 1;
                        continue 'odometer;
                    }
                    terms[i] = 1;
                }
                break;
            }
        }
        // Fisher-Yates with the seeded stream
        for i in (1..seqs.len()).rev() {
            let j = rng.random_range(0..=i);
            seqs.swap(i, j);
        }
        seqs.truncate(count);
    } else {
        let mut seen = HashSet::new();
        while seqs.len() < count {
            let terms = sample_terms(cfg, split, &mut rng);
            if seen.insert(terms.clone()) {
                seqs.push(terms);
            }
        }
    }
    let distinct = seqs.len();
    let out = (0..count)
        .filter_map(|i| seqs.get(i % distinct.max(1)))
        .map(|t| problem(t))
        .collect();
    (out, distinct)
}

/// The largest problem space [`distinct_problems`] enumerates.
pub const ENUMERATE_LIMIT: u64 = 2_000_000;

#[cfg(test)]
mod tests {
    use super::super::study;
    use super::*;

    #[test]
    fn splits_are_disjoint_and_deterministic() {
        let cfg = TestbedConfig::default();
        let train = problems(&cfg, Split::Train, 3000);
        let held = problems(&cfg, Split::Heldout, 500);
        let train_ids: HashSet<&str> = train.iter().map(|p| p.id.as_str()).collect();
        assert!(held.iter().all(|p| !train_ids.contains(p.id.as_str())));
        assert_eq!(problems(&cfg, Split::Heldout, 500), held);
        let lens: HashSet<usize> = held
            .iter()
            .map(|p| parse_prompt(p.prompt.text()).unwrap().len())
            .collect();
        assert_eq!(lens, (2..=8).collect::<HashSet<_>>(), "every size appears");
    }

    #[test]
    fn distinct_heldout_problems_are_distinct_disjoint_and_cycle_when_few() {
        let cfg = study(Regime::Control);
        assert_eq!(cfg.space_size(), 6561);
        let (held, distinct) = distinct_problems(&cfg, Split::Heldout, 1000);
        assert_eq!((held.len(), distinct), (1000, 1000));
        let ids: HashSet<&str> = held.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids.len(), 1000, "no repeats");
        assert!(held.iter().all(|p| {
            let t = parse_prompt(p.prompt.text()).unwrap();
            t.len() == 4 && split_of(&t, 4) == Split::Heldout
        }));
        let train: HashSet<String> = problems(&cfg, Split::Train, 5000)
            .into_iter()
            .map(|p| p.id)
            .collect();
        assert!(held.iter().all(|p| !train.contains(&p.id)));
        assert_eq!(distinct_problems(&cfg, Split::Heldout, 1000).0, held);
        // all held-out sequences of the space: about a quarter of 6561
        let (all, n_all) = distinct_problems(&cfg, Split::Heldout, 10_000);
        assert!((1500..1800).contains(&n_all), "{n_all}");
        assert_eq!(all.len(), 10_000);
        assert_eq!(all[n_all].id, all[0].id, "cycles from the start");
        // a small space: 2..=3 terms, 1 in 8
        let small = TestbedConfig {
            difficulty: 3,
            ..Default::default()
        };
        let (p, n) = distinct_problems(&small, Split::Heldout, 400);
        assert!(n < 150 && p.len() == 400, "{n}");
        // a space too large to enumerate is drawn without repeats
        let big = TestbedConfig {
            max_operand: 999,
            ..Default::default()
        };
        let (p, n) = distinct_problems(&big, Split::Heldout, 300);
        assert_eq!(n, 300);
        assert_eq!(p.iter().map(|p| &p.id).collect::<HashSet<_>>().len(), 300);
    }

    #[test]
    fn config_validation() {
        assert!(TestbedConfig {
            difficulty: 1,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(TestbedConfig {
            max_operand: 0,
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(TestbedConfig::default().validate().is_ok());
        assert_eq!("pos-neg-gap".parse::<Regime>().unwrap(), Regime::PosNegGap);
        assert!("gap".parse::<Regime>().is_err());
        for r in Regime::ALL {
            assert_eq!(r.as_str().parse::<Regime>().unwrap(), r);
        }
        let err = |c: TestbedConfig| c.validate().unwrap_err();
        let e = err(TestbedConfig {
            min_terms: 9,
            ..Default::default()
        });
        assert_eq!(e.knob, "min_terms");
        assert_eq!(
            e.to_string(),
            "testbed min_terms must be in 2..=8 (the difficulty), got 9"
        );
        let e = err(TestbedConfig {
            heldout_modulus: 1,
            ..Default::default()
        });
        assert_eq!(e.knob, "heldout_modulus");
        assert_eq!(
            err(TestbedConfig {
                max_operand: 1000,
                ..Default::default()
            })
            .knob,
            "max_operand"
        );
        assert_eq!(
            err(TestbedConfig {
                difficulty: 1,
                min_terms: 1,
                ..Default::default()
            })
            .knob,
            "difficulty"
        );
    }
}
