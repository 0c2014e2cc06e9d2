//! KL-divergence estimators between the policy and a frozen reference, per token, with their
//! derivative with respect to the policy's token log-prob `logp` (Schulman's k1/k2/k3; names and
//! clamping as verl's `kl_penalty`). Training computes them on tensors in rlvr-train's
//! `loss.rs` with [`K3_CLAMP`] from here; these scalar forms are that code's tested reference.
//!
//! ```text
//! k1 = logp - ref                                         ∂/∂logp = 1
//! k2 = ½ (logp - ref)²                                    ∂/∂logp = logp - ref
//! k3 = exp(ref - logp) - (ref - logp) - 1, clamped to [-10, 10]
//!                                                         ∂/∂logp = 1 - exp(ref - logp) (0 where clamped)
//! ```
//!
//! k3 (verl `low_var_kl`) is unbiased and always >= 0; k1 is unbiased but noisy; k2 (verl `mse`)
//! is biased with low variance.

use std::str::FromStr;

use crate::CoreError;

/// Which KL estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KlEstimator {
    /// `logp - ref` (verl `kl` / `k1`).
    K1,
    /// `½(logp - ref)²` (verl `mse` / `k2`).
    K2,
    /// `exp(ref - logp) - (ref - logp) - 1` (verl `low_var_kl` / `k3`).
    K3,
}

/// The k3 value is clamped to `[-K3_CLAMP, K3_CLAMP]`, as in verl.
pub const K3_CLAMP: f64 = 10.0;

/// The estimate for one token and its derivative with respect to `logp`.
pub fn kl(estimator: KlEstimator, logp: f64, reference: f64) -> (f64, f64) {
    let d = logp - reference;
    match estimator {
        KlEstimator::K1 => (d, 1.0),
        KlEstimator::K2 => (0.5 * d * d, d),
        KlEstimator::K3 => {
            let e = (-d).exp();
            let v = e + d - 1.0;
            if v > K3_CLAMP {
                (K3_CLAMP, 0.0)
            } else {
                (v.max(-K3_CLAMP), 1.0 - e)
            }
        }
    }
}

impl KlEstimator {
    /// The name users type.
    pub fn as_str(self) -> &'static str {
        match self {
            KlEstimator::K1 => "k1",
            KlEstimator::K2 => "k2",
            KlEstimator::K3 => "k3",
        }
    }
}

impl FromStr for KlEstimator {
    type Err = CoreError;
    /// `k1`/`kl`, `k2`/`mse`, `k3`/`low_var_kl` (verl's aliases).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "k1" | "kl" => Ok(KlEstimator::K1),
            "k2" | "mse" => Ok(KlEstimator::K2),
            "k3" | "low_var_kl" => Ok(KlEstimator::K3),
            _ => Err(CoreError::UnknownName {
                kind: "KL estimator",
                name: s.into(),
                expected: "k1 (kl), k2 (mse), k3 (low_var_kl)".into(),
            }),
        }
    }
}

impl serde::Serialize for KlEstimator {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for KlEstimator {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <String as serde::Deserialize>::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn by_hand() {
        assert_eq!(kl(KlEstimator::K1, -1.0, -1.5), (0.5, 1.0));
        assert_eq!(kl(KlEstimator::K2, -1.0, -1.5), (0.125, 0.5));
        let (v, g) = kl(KlEstimator::K3, -1.0, -1.5);
        assert!((v - ((-0.5f64).exp() + 0.5 - 1.0)).abs() < 1e-15);
        assert!((g - (1.0 - (-0.5f64).exp())).abs() < 1e-15);
        // equal log-probs: every estimator is 0
        for e in [KlEstimator::K1, KlEstimator::K2, KlEstimator::K3] {
            assert_eq!(kl(e, -2.0, -2.0).0, 0.0);
        }
        // clamp
        assert_eq!(kl(KlEstimator::K3, -20.0, 0.0), (K3_CLAMP, 0.0));
    }

    #[test]
    fn verl_aliases() {
        assert_eq!(
            "low_var_kl".parse::<KlEstimator>().unwrap(),
            KlEstimator::K3
        );
        assert_eq!("mse".parse::<KlEstimator>().unwrap(), KlEstimator::K2);
        assert!("k4".parse::<KlEstimator>().is_err());
    }

    proptest! {
        #[test]
        fn derivatives_match_finite_difference(logp in -10.0f64..0.0, reference in -10.0f64..0.0) {
            for e in [KlEstimator::K1, KlEstimator::K2, KlEstimator::K3] {
                let v = kl(e, logp, reference).0;
                prop_assume!((v - K3_CLAMP).abs() > 1e-3);
                let h = 1e-6;
                let num = (kl(e, logp + h, reference).0 - kl(e, logp - h, reference).0) / (2.0 * h);
                let ana = kl(e, logp, reference).1;
                prop_assert!((num - ana).abs() < 1e-6 * (1.0 + ana.abs()), "{e:?}: fd {num} vs {ana}");
            }
        }

        #[test]
        fn k3_is_nonnegative(logp in -30.0f64..0.0, reference in -30.0f64..0.0) {
            prop_assert!(kl(KlEstimator::K3, logp, reference).0 >= 0.0);
        }
    }
}
