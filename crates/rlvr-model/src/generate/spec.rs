//! [`SamplingSpec`]: how each response is drawn, the settings training rollouts, evaluation and
//! `rlvr generate` share, checked in one place.
//!
//! Each caller builds one from its own settings (`[rollout]`, `[eval]`, the command line) with
//! [`SamplingSpec::new`], names the offending key from the [`SamplingSetting`] of a
//! [`SamplingError`] (the setting comes from the type, never from the message), and turns it into
//! the [`SamplingParams`] of one generation call with [`SamplingSpec::params`]. A new sampler
//! setting is a field here, its check in `check`, its use in `sampler.rs`, and its key in each
//! caller's table.

use super::SamplingParams;

/// One setting of a [`SamplingSpec`], for a caller to name in its own terms (`rollout.top_p`,
/// `--top-p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplingSetting {
    /// The softmax temperature.
    Temperature,
    /// The nucleus mass.
    TopP,
    /// The number of most likely tokens kept.
    TopK,
    /// The most new tokens of a response.
    MaxNewTokens,
    /// The strings that end a response.
    StopStrings,
}

/// A setting out of its range: which one, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{reason}")]
pub struct SamplingError {
    /// The setting at fault.
    pub setting: SamplingSetting,
    /// What its value must be, and what it was.
    pub reason: String,
}

/// Whether a temperature of 0 (greedy decoding) is allowed: not where the log-probs of a
/// sampling distribution are needed (training rollouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Greedy {
    /// T = 0 decodes greedily.
    Allowed,
    /// T must be positive.
    Refused,
}

/// How each response is drawn, in range by construction ([`SamplingSpec::new`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingSpec {
    temperature: f64,
    top_p: f64,
    top_k: Option<usize>,
    max_new_tokens: usize,
    stop_strings: Vec<String>,
}

impl SamplingSpec {
    /// The settings, checked: `temperature` finite and at least 0 (above 0 with
    /// [`Greedy::Refused`]), `top_p` in (0, 1], `top_k` at least 1 when set, `max_new_tokens`
    /// at least 1, no empty stop string.
    pub fn new(
        temperature: f64,
        top_p: f64,
        top_k: Option<usize>,
        max_new_tokens: usize,
        stop_strings: Vec<String>,
        greedy: Greedy,
    ) -> Result<Self, SamplingError> {
        check(temperature, top_p, top_k)?;
        let err = |setting, reason: String| Err(SamplingError { setting, reason });
        if greedy == Greedy::Refused && temperature == 0.0 {
            return err(
                SamplingSetting::Temperature,
                "must be positive (greedy decoding has no sampling distribution to train on)"
                    .into(),
            );
        }
        if max_new_tokens < 1 {
            return err(SamplingSetting::MaxNewTokens, "must be at least 1".into());
        }
        if let Some(i) = stop_strings.iter().position(String::is_empty) {
            return err(
                SamplingSetting::StopStrings,
                format!("stop string {i} is empty (it would end every response at once)"),
            );
        }
        Ok(Self {
            temperature,
            top_p,
            top_k,
            max_new_tokens,
            stop_strings,
        })
    }

    /// The softmax temperature (0: greedy).
    pub fn temperature(&self) -> f64 {
        self.temperature
    }

    /// The nucleus mass (1: off).
    pub fn top_p(&self) -> f64 {
        self.top_p
    }

    /// The most likely tokens kept (None: off).
    pub fn top_k(&self) -> Option<usize> {
        self.top_k
    }

    /// The most new tokens of a response.
    pub fn max_new_tokens(&self) -> usize {
        self.max_new_tokens
    }

    /// The strings that end a response.
    pub fn stop_strings(&self) -> &[String] {
        &self.stop_strings
    }

    /// The parameters of one generation call: `n` responses a prompt, ending at
    /// `eos_token_ids`, drawn from `seed`.
    pub fn params(&self, n: usize, eos_token_ids: &[u32], seed: u64) -> SamplingParams {
        SamplingParams {
            n,
            temperature: self.temperature,
            top_p: self.top_p,
            top_k: self.top_k,
            max_new_tokens: self.max_new_tokens,
            eos_token_ids: eos_token_ids.to_vec(),
            stop_strings: self.stop_strings.clone(),
            seed,
        }
    }
}

/// The ranges the sampler itself needs, for a [`SamplingSpec`] and for [`SamplingParams`]
/// built by hand (`generate` checks them again): `temperature` finite and at least 0, `top_p`
/// in (0, 1], `top_k` at least 1 when set.
pub(crate) fn check(
    temperature: f64,
    top_p: f64,
    top_k: Option<usize>,
) -> Result<(), SamplingError> {
    let err = |setting, reason: String| Err(SamplingError { setting, reason });
    if !(temperature >= 0.0 && temperature.is_finite()) {
        return err(
            SamplingSetting::Temperature,
            format!("must be a finite number >= 0, got {temperature}"),
        );
    }
    if !(top_p > 0.0 && top_p <= 1.0) {
        return err(
            SamplingSetting::TopP,
            format!("must be in (0, 1], got {top_p}"),
        );
    }
    if top_k == Some(0) {
        return err(SamplingSetting::TopK, "must be at least 1".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(
        t: f64,
        p: f64,
        k: Option<usize>,
        m: usize,
        stop: &[&str],
        g: Greedy,
    ) -> Result<SamplingSpec, SamplingError> {
        SamplingSpec::new(t, p, k, m, stop.iter().map(|s| s.to_string()).collect(), g)
    }

    #[test]
    fn each_bad_value_names_its_setting() {
        use SamplingSetting::*;
        let cases = [
            (
                spec(f64::NAN, 1.0, None, 8, &[], Greedy::Allowed),
                Temperature,
            ),
            (spec(-0.5, 1.0, None, 8, &[], Greedy::Allowed), Temperature),
            (
                spec(f64::INFINITY, 1.0, None, 8, &[], Greedy::Allowed),
                Temperature,
            ),
            (spec(0.0, 1.0, None, 8, &[], Greedy::Refused), Temperature),
            (spec(1.0, 0.0, None, 8, &[], Greedy::Allowed), TopP),
            (spec(1.0, 1.5, None, 8, &[], Greedy::Allowed), TopP),
            (spec(1.0, f64::NAN, None, 8, &[], Greedy::Allowed), TopP),
            (spec(1.0, 1.0, Some(0), 8, &[], Greedy::Allowed), TopK),
            (spec(1.0, 1.0, None, 0, &[], Greedy::Allowed), MaxNewTokens),
            (
                spec(1.0, 1.0, None, 8, &["</s>", ""], Greedy::Allowed),
                StopStrings,
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got.expect_err("out of range").setting, want);
        }
    }

    #[test]
    fn a_spec_in_range_gives_the_params_of_a_call() {
        let s = spec(0.0, 0.9, Some(5), 16, &["\n\n"], Greedy::Allowed).unwrap();
        let p = s.params(4, &[2, 7], 11);
        assert_eq!(
            p,
            SamplingParams {
                n: 4,
                temperature: 0.0,
                top_p: 0.9,
                top_k: Some(5),
                max_new_tokens: 16,
                eos_token_ids: vec![2, 7],
                stop_strings: vec!["\n\n".into()],
                seed: 11,
            }
        );
    }
}
