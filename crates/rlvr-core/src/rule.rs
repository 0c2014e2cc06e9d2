//! The names of the aggregation rules.

use std::fmt;
use std::str::FromStr;

use crate::CoreError;

/// How per-token loss terms become one scalar (docs/architecture.md §2). Every rule is a per-sequence
/// weight `w_i`; see [`crate::aggregation::weights`] for each formula.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AggRule {
    /// `token-mean`: `w_i = 1/N` (DAPO, verl default, TRL `dapo`).
    TokenMean,
    /// `seq-mean-token-mean`: `w_i = 1/(n·|o_i|)` (original GRPO, TRL `grpo`).
    SeqMeanTokenMean,
    /// `seq-mean-token-sum`: `w_i = 1/n` (verl).
    SeqMeanTokenSum,
    /// `seq-mean-token-sum-norm`: `w_i = 1/(n·L)` (Dr.GRPO, TRL `dr_grpo`).
    SeqMeanTokenSumNorm,
    /// `group-token-mean`: `w_i = (1/B)·1/N_g` (per-prompt token mean).
    GroupTokenMean,
    /// `balanced`: Balanced Aggregation, `w_i = (1/B)·(|S|/G_g)/N_S` for the sign class `S ∋ i`.
    Balanced,
    /// `balanced-mass`: BA with advantage-mass sign weights, `w_i = (1/B)·(M_±/G_g)/Σ_{j∈S±}|A_j|·|o_j|`.
    BalancedMass,
}

impl AggRule {
    /// Every rule, in the order of docs/architecture.md's table.
    pub const ALL: [AggRule; 7] = [
        AggRule::TokenMean,
        AggRule::SeqMeanTokenMean,
        AggRule::SeqMeanTokenSum,
        AggRule::SeqMeanTokenSumNorm,
        AggRule::GroupTokenMean,
        AggRule::Balanced,
        AggRule::BalancedMass,
    ];

    /// The name users type (config `loss_agg_mode`, CLI, JSON keys).
    pub fn as_str(self) -> &'static str {
        match self {
            AggRule::TokenMean => "token-mean",
            AggRule::SeqMeanTokenMean => "seq-mean-token-mean",
            AggRule::SeqMeanTokenSum => "seq-mean-token-sum",
            AggRule::SeqMeanTokenSumNorm => "seq-mean-token-sum-norm",
            AggRule::GroupTokenMean => "group-token-mean",
            AggRule::Balanced => "balanced",
            AggRule::BalancedMass => "balanced-mass",
        }
    }

    /// True for the rules whose weights of a batch without empty responses satisfy
    /// `Σ_i w_i·|o_i| = 1` (a mean over tokens, sequences or groups).
    pub fn is_mean(self) -> bool {
        matches!(
            self,
            AggRule::TokenMean
                | AggRule::SeqMeanTokenMean
                | AggRule::GroupTokenMean
                | AggRule::Balanced
        )
    }
}

impl fmt::Display for AggRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AggRule {
    type Err = CoreError;

    /// Parses a rule name. TRL's names `dapo`, `grpo`, `dr_grpo` and underscores for hyphens
    /// are accepted as aliases.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let canonical = s.trim().replace('_', "-");
        let alias = match canonical.as_str() {
            "dapo" => Some(AggRule::TokenMean),
            "grpo" => Some(AggRule::SeqMeanTokenMean),
            "dr-grpo" => Some(AggRule::SeqMeanTokenSumNorm),
            _ => None,
        };
        alias
            .or_else(|| AggRule::ALL.into_iter().find(|r| r.as_str() == canonical))
            .ok_or_else(|| CoreError::UnknownName {
                kind: "aggregation rule",
                name: s.to_string(),
                expected: AggRule::ALL.map(AggRule::as_str).join(", "),
            })
    }
}

impl serde::Serialize for AggRule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for AggRule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for rule in AggRule::ALL {
            assert_eq!(rule.as_str().parse::<AggRule>().unwrap(), rule);
            assert_eq!(rule.to_string(), rule.as_str());
        }
    }

    #[test]
    fn trl_aliases() {
        assert_eq!("dapo".parse::<AggRule>().unwrap(), AggRule::TokenMean);
        assert_eq!(
            "grpo".parse::<AggRule>().unwrap(),
            AggRule::SeqMeanTokenMean
        );
        assert_eq!(
            "dr_grpo".parse::<AggRule>().unwrap(),
            AggRule::SeqMeanTokenSumNorm
        );
        assert_eq!(
            "seq_mean_token_mean".parse::<AggRule>().unwrap(),
            AggRule::SeqMeanTokenMean
        );
    }

    #[test]
    fn unknown_name_lists_the_known_ones() {
        let err = "token-sum".parse::<AggRule>().unwrap_err().to_string();
        assert!(err.contains("\"token-sum\""), "{err}");
        assert!(err.contains("balanced-mass"), "{err}");
    }
}
