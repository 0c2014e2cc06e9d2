//! How each engine names rlvr's aggregation rules and policy losses. Every match here is
//! exhaustive, with no catch-all arm: a new rule or loss mode does not compile until each
//! engine's form of it, or the reason it has none, is written here (and the export then refuses
//! it by name).

use rlvr_core::policy_loss::PolicyLossMode;
use rlvr_core::AggRule;

/// verl's form of an aggregation rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum VerlRule {
    /// verl's own `actor.loss_agg_mode`, with verl's advantage estimator.
    LossAggMode(&'static str),
    /// rlvr's advantage estimator (`rlvr.verl`) on verl's `token-mean`.
    Estimator(&'static str),
}

/// verl's form of `rule`, or why it has none.
pub(super) fn verl_rule(rule: AggRule) -> Result<VerlRule, &'static str> {
    match rule {
        AggRule::TokenMean => Ok(VerlRule::LossAggMode("token-mean")),
        AggRule::SeqMeanTokenMean => Ok(VerlRule::LossAggMode("seq-mean-token-mean")),
        AggRule::SeqMeanTokenSum => Ok(VerlRule::LossAggMode("seq-mean-token-sum")),
        AggRule::SeqMeanTokenSumNorm => Ok(VerlRule::LossAggMode("seq-mean-token-sum-norm")),
        AggRule::Balanced => Ok(VerlRule::Estimator("rlvr_balanced")),
        AggRule::BalancedMass => Ok(VerlRule::Estimator("rlvr_balanced_mass")),
        AggRule::GroupTokenMean => Err(
            "group-token-mean has no verl form (verl's modes: token-mean, seq-mean-token-mean, \
             seq-mean-token-sum, seq-mean-token-sum-norm; rlvr adds balanced, balanced-mass)",
        ),
    }
}

/// TRL's `loss_type` for `rule` (rlvr.trl adds the balanced ones), or why it has none.
pub(super) fn trl_loss_type(rule: AggRule) -> Result<&'static str, &'static str> {
    match rule {
        AggRule::Balanced => Ok("balanced"),
        AggRule::BalancedMass => Ok("balanced-mass"),
        AggRule::TokenMean => Ok("dapo"),
        AggRule::SeqMeanTokenMean => Ok("grpo"),
        AggRule::SeqMeanTokenSumNorm => Ok("dr_grpo"),
        AggRule::SeqMeanTokenSum => Err(
            "seq-mean-token-sum has no TRL loss_type (dapo, grpo, dr_grpo; rlvr adds balanced, \
             balanced-mass)",
        ),
        AggRule::GroupTokenMean => Err(
            "group-token-mean has no TRL loss_type (dapo, grpo, dr_grpo; rlvr adds balanced, \
             balanced-mass)",
        ),
    }
}

/// verl's `actor.policy_loss.loss_mode` for `mode` (each one exact under rlvr.verl's balanced
/// estimators: its `EXACT_LOSS_MODES`).
pub(super) fn verl_loss_mode(mode: PolicyLossMode) -> &'static str {
    match mode {
        PolicyLossMode::Vanilla => "vanilla",
        PolicyLossMode::Gspo => "gspo",
        PolicyLossMode::Cispo => "cispo",
    }
}

/// The `GRPOConfig` setting that gives TRL `mode` (None: TRL's default surrogate), or why TRL's
/// balanced path has no form of it.
pub(super) fn trl_policy_loss(
    mode: PolicyLossMode,
) -> Result<Option<(&'static str, &'static str)>, &'static str> {
    match mode {
        PolicyLossMode::Vanilla => Ok(None),
        PolicyLossMode::Gspo => Ok(Some(("importance_sampling_level", "\"sequence\""))),
        PolicyLossMode::Cispo => {
            Err("TRL's balanced path is the clipped surrogate (vanilla, gspo); cispo is a loss_type of its own")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// verl 0.9's `agg_loss` modes and the policy-loss modes rlvr.verl shows exact
    /// (python/rlvr/verl.py, EXACT_LOSS_MODES).
    const VERL_AGG_MODES: [&str; 4] = [
        "token-mean",
        "seq-mean-token-sum",
        "seq-mean-token-mean",
        "seq-mean-token-sum-norm",
    ];
    const VERL_EXACT_LOSS_MODES: [&str; 8] = [
        "vanilla",
        "gspo",
        "cispo",
        "gpg",
        "dro",
        "dppo_tv",
        "dppo_kl",
        "bypass_mode",
    ];

    #[test]
    fn every_rule_has_each_engine_s_form_or_a_reason() {
        for rule in AggRule::ALL {
            match verl_rule(rule) {
                Ok(VerlRule::LossAggMode(m)) => {
                    assert!(VERL_AGG_MODES.contains(&m), "{rule:?}: {m}");
                    // verl's names are rlvr's
                    assert_eq!(m, rule.as_str());
                }
                Ok(VerlRule::Estimator(e)) => assert!(e.starts_with("rlvr_"), "{rule:?}"),
                Err(why) => assert!(why.contains(rule.as_str()), "{rule:?}: {why}"),
            }
            match trl_loss_type(rule) {
                Ok(t) => assert!(
                    ["balanced", "balanced-mass", "dapo", "grpo", "dr_grpo"].contains(&t),
                    "{rule:?}"
                ),
                Err(why) => assert!(why.contains(rule.as_str()), "{rule:?}: {why}"),
            }
        }
    }

    #[test]
    fn every_policy_loss_is_exact_in_verl_and_carried_or_refused_in_trl() {
        for mode in [
            PolicyLossMode::Vanilla,
            PolicyLossMode::Gspo,
            PolicyLossMode::Cispo,
        ] {
            assert!(VERL_EXACT_LOSS_MODES.contains(&verl_loss_mode(mode)));
            assert_eq!(verl_loss_mode(mode), mode.name());
            let _ = trl_policy_loss(mode);
        }
        assert!(trl_policy_loss(PolicyLossMode::Cispo).is_err());
    }
}
