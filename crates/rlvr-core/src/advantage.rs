//! Group-relative advantage estimators: `grpo`, `dr-grpo`, `rloo`.
//!
//! Input: one group id and one reward per response of the batch (groups need not be
//! contiguous). Output: one advantage `A_i` per response, in input order.
//!
//! | estimator | `A_i` |
//! |---|---|
//! | `grpo` | `(r_i - mean_g) / (std + ε)`; `std` over the group (`std_scope = group`), over the whole batch (`batch`), or no division (`none`) |
//! | `dr-grpo` | `r_i - mean_g` (Dr.GRPO: no std normalization; `std_scope` is not read) |
//! | `rloo` | `r_i - mean_{j≠i, j∈g} r_j = G/(G-1)·(r_i - mean_g)` (`std_scope` is not read) |
//!
//! `std` is the unbiased (n-1) standard deviation by default, as `torch.std` in verl and TRL;
//! `unbiased_std = false` gives the population one. `ε = 1e-6` by default.
//!
//! Groups of one and groups whose rewards are all equal get `A_i = 0` exactly (never NaN,
//! never a rounding residue). A reward that is NaN or infinite is an error naming its index.

use std::str::FromStr;

use crate::error::ensure_finite;
use crate::CoreError;

/// Which baseline (and normalization) turns rewards into advantages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AdvEstimator {
    /// Group mean baseline, divided by a standard deviation (see [`StdScope`]).
    Grpo,
    /// Group mean baseline only (Dr.GRPO).
    DrGrpo,
    /// Leave-one-out mean baseline (RLOO).
    Rloo,
}

/// Over which rewards `grpo` takes its standard deviation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StdScope {
    /// The response's own group (GRPO; verl `norm_adv_by_std_in_grpo = true`).
    Group,
    /// Every reward of the batch (TRL `scale_rewards = "batch"`).
    Batch,
    /// No division (verl `norm_adv_by_std_in_grpo = false`, TRL `scale_rewards = "none"`).
    None,
}

/// Settings of [`compute`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdvantageConfig {
    /// The estimator.
    pub estimator: AdvEstimator,
    /// Std scope of `grpo`.
    pub std_scope: StdScope,
    /// Unbiased (n-1) standard deviation if true, population (n) if false.
    pub unbiased_std: bool,
    /// `ε` added to the standard deviation.
    pub eps: f64,
}

impl Default for AdvantageConfig {
    /// `grpo`, group std, unbiased, `ε = 1e-6`.
    fn default() -> Self {
        Self {
            estimator: AdvEstimator::Grpo,
            std_scope: StdScope::Group,
            unbiased_std: true,
            eps: 1e-6,
        }
    }
}

/// Advantages of a batch of responses; see the module doc for the formulas.
///
/// `groups[i]` is the group (prompt) id of response `i`, `rewards[i]` its reward.
pub fn compute(
    cfg: &AdvantageConfig,
    groups: &[usize],
    rewards: &[f64],
) -> Result<Vec<f64>, CoreError> {
    if groups.len() != rewards.len() {
        return Err(CoreError::LengthMismatch {
            left_name: "groups",
            left: groups.len(),
            right_name: "rewards",
            right: rewards.len(),
        });
    }
    ensure_finite("reward", rewards)?;
    if !(cfg.eps.is_finite() && cfg.eps >= 0.0) {
        return Err(CoreError::InvalidParameter {
            name: "eps",
            reason: format!("{} is not a finite value >= 0", cfg.eps),
        });
    }
    // Members of each group, in order of first appearance.
    let mut index = std::collections::HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, &g) in groups.iter().enumerate() {
        let slot = *index.entry(g).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[slot].push(i);
    }
    let batch_std = std_dev(rewards, cfg.unbiased_std);
    let mut adv = vec![0.0; rewards.len()];
    for m in &members {
        let r: Vec<f64> = m.iter().map(|&i| rewards[i]).collect();
        if r.len() < 2 || r.iter().all(|&x| x == r[0]) {
            continue; // groups of one and all-equal groups: A = 0 exactly
        }
        let mean = r.iter().sum::<f64>() / r.len() as f64;
        let scale = match cfg.estimator {
            AdvEstimator::Grpo => match cfg.std_scope {
                StdScope::Group => 1.0 / (std_dev(&r, cfg.unbiased_std) + cfg.eps),
                StdScope::Batch => 1.0 / (batch_std + cfg.eps),
                StdScope::None => 1.0,
            },
            AdvEstimator::DrGrpo => 1.0,
            AdvEstimator::Rloo => r.len() as f64 / (r.len() - 1) as f64,
        };
        for (&i, &ri) in m.iter().zip(&r) {
            adv[i] = (ri - mean) * scale;
        }
    }
    Ok(adv)
}

/// Standard deviation of `x`: `sqrt(Σ(x - mean)² / (n - 1))` if `unbiased`, else `/ n`.
/// 0 for fewer than two values.
pub fn std_dev(x: &[f64], unbiased: bool) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let ss: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    let dof = if unbiased { x.len() - 1 } else { x.len() };
    (ss / dof as f64).sqrt()
}

impl AdvEstimator {
    /// The name users type.
    pub fn as_str(self) -> &'static str {
        match self {
            AdvEstimator::Grpo => "grpo",
            AdvEstimator::DrGrpo => "dr-grpo",
            AdvEstimator::Rloo => "rloo",
        }
    }
}

impl FromStr for AdvEstimator {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().replace('_', "-").as_str() {
            "grpo" => Ok(AdvEstimator::Grpo),
            "dr-grpo" => Ok(AdvEstimator::DrGrpo),
            "rloo" => Ok(AdvEstimator::Rloo),
            _ => Err(CoreError::UnknownName {
                kind: "advantage estimator",
                name: s.into(),
                expected: "grpo, dr-grpo, rloo".into(),
            }),
        }
    }
}

impl StdScope {
    /// The name users type.
    pub fn as_str(self) -> &'static str {
        match self {
            StdScope::Group => "group",
            StdScope::Batch => "batch",
            StdScope::None => "none",
        }
    }
}

impl FromStr for StdScope {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "group" => Ok(StdScope::Group),
            "batch" => Ok(StdScope::Batch),
            "none" => Ok(StdScope::None),
            _ => Err(CoreError::UnknownName {
                kind: "std scope",
                name: s.into(),
                expected: "group, batch, none".into(),
            }),
        }
    }
}

macro_rules! serde_by_name {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d)?
                    .parse()
                    .map_err(serde::de::Error::custom)
            }
        }
    };
}
serde_by_name!(AdvEstimator);
serde_by_name!(StdScope);

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(estimator: AdvEstimator, std_scope: StdScope, unbiased_std: bool) -> AdvantageConfig {
        AdvantageConfig {
            estimator,
            std_scope,
            unbiased_std,
            eps: 1e-6,
        }
    }

    #[test]
    fn grpo_unbiased_by_hand() {
        // rewards 1, 0, 0, 0: mean 0.25, unbiased std = sqrt(0.75/3) = 0.5.
        let a = compute(&AdvantageConfig::default(), &[0; 4], &[1.0, 0.0, 0.0, 0.0]).unwrap();
        let s = 0.5 + 1e-6;
        assert_eq!(a, [0.75 / s, -0.25 / s, -0.25 / s, -0.25 / s]);
    }

    #[test]
    fn grpo_population_std_by_hand() {
        // population std of (1,0,0,0) = sqrt(3)/4.
        let a = compute(
            &cfg(AdvEstimator::Grpo, StdScope::Group, false),
            &[0; 4],
            &[1.0, 0.0, 0.0, 0.0],
        )
        .unwrap();
        let s = 3f64.sqrt() / 4.0 + 1e-6;
        assert!((a[0] - 0.75 / s).abs() < 1e-12 && (a[1] + 0.25 / s).abs() < 1e-12);
    }

    #[test]
    fn batch_scope_divides_by_the_batch_std() {
        // two groups: (1, 0) and (3, 3). Batch std (unbiased) of (1,0,3,3) = sqrt(6.75/3) = 1.5.
        let a = compute(
            &cfg(AdvEstimator::Grpo, StdScope::Batch, true),
            &[0, 0, 1, 1],
            &[1.0, 0.0, 3.0, 3.0],
        )
        .unwrap();
        let s = 1.5 + 1e-6;
        assert_eq!(a, [0.5 / s, -0.5 / s, 0.0, 0.0]);
        let none = compute(
            &cfg(AdvEstimator::Grpo, StdScope::None, true),
            &[0, 0, 1, 1],
            &[1.0, 0.0, 3.0, 3.0],
        )
        .unwrap();
        assert_eq!(none, [0.5, -0.5, 0.0, 0.0]);
    }

    #[test]
    fn dr_grpo_and_rloo_by_hand() {
        let r = [1.0, 0.0, 0.0, 0.0];
        let dr = compute(
            &cfg(AdvEstimator::DrGrpo, StdScope::Group, true),
            &[0; 4],
            &r,
        )
        .unwrap();
        assert_eq!(dr, [0.75, -0.25, -0.25, -0.25]);
        // rloo: 1 - mean(0,0,0) = 1; 0 - mean(1,0,0) = -1/3.
        let rl = compute(&cfg(AdvEstimator::Rloo, StdScope::Group, true), &[0; 4], &r).unwrap();
        assert!(
            (rl[0] - 1.0).abs() < 1e-15 && (rl[1] + 1.0 / 3.0).abs() < 1e-15,
            "{rl:?}"
        );
    }

    #[test]
    fn singletons_and_equal_groups_are_exactly_zero() {
        for est in [AdvEstimator::Grpo, AdvEstimator::DrGrpo, AdvEstimator::Rloo] {
            for scope in [StdScope::Group, StdScope::Batch, StdScope::None] {
                let a = compute(
                    &cfg(est, scope, true),
                    &[5, 6, 6, 6, 7],
                    &[0.3, 0.1, 0.1, 0.1, 2.0],
                )
                .unwrap();
                assert_eq!(a, [0.0; 5], "{est:?} {scope:?}");
            }
        }
    }

    #[test]
    fn interleaved_groups_match_contiguous_ones() {
        let a = compute(
            &AdvantageConfig::default(),
            &[0, 1, 0, 1],
            &[1.0, 0.0, 0.0, 1.0],
        )
        .unwrap();
        let b = compute(
            &AdvantageConfig::default(),
            &[0, 0, 1, 1],
            &[1.0, 0.0, 0.0, 1.0],
        )
        .unwrap();
        assert_eq!([a[0], a[2], a[1], a[3]], [b[0], b[1], b[2], b[3]]);
    }

    #[test]
    fn nan_reward_is_an_error_naming_its_index() {
        let err = compute(
            &AdvantageConfig::default(),
            &[0, 0, 0],
            &[1.0, f64::NAN, 0.0],
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "reward at index 1 is not finite (NaN)");
        let err = compute(&AdvantageConfig::default(), &[0, 0], &[1.0]).unwrap_err();
        assert!(matches!(err, CoreError::LengthMismatch { .. }));
    }

    #[test]
    fn names_parse() {
        assert_eq!(
            "dr_grpo".parse::<AdvEstimator>().unwrap(),
            AdvEstimator::DrGrpo
        );
        assert!("ppo"
            .parse::<AdvEstimator>()
            .unwrap_err()
            .to_string()
            .contains("rloo"));
        assert_eq!("batch".parse::<StdScope>().unwrap(), StdScope::Batch);
    }
}
