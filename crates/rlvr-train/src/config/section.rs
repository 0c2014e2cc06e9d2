//! What every section of the config has: its name, and the range checks of its own keys. An
//! error's key is built from the section's type (`Keys::<OptimConfig>` names `optim.<key>`),
//! never read back from a message; checks that combine sections are
//! [`super::TrainConfig::validate`]'s.

use std::marker::PhantomData;

use super::ConfigError;

/// A section of the config file (`[optim]`, `[rollout]`, ...).
pub trait Section {
    /// The section's name in the file: `[optim]` is `"optim"`.
    const NAME: &'static str;

    /// The ranges the section's own keys keep, each error naming its key. Combinations with
    /// other sections are checked by [`super::TrainConfig::validate`].
    fn validate(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// The keys of one section: errors that name `section.key`, and the range checks the sections
/// share, each with one message wherever it is used.
pub struct Keys<S: Section>(PhantomData<S>);

impl<S: Section> Keys<S> {
    /// The full name of a key of this section: `optim.lr`.
    pub fn name(key: &str) -> String {
        format!("{}.{key}", S::NAME)
    }

    /// The error for `key` of this section.
    pub fn invalid(key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            key: Self::name(key),
            message: message.into(),
        }
    }

    /// A count that must be at least 1.
    pub fn at_least_one(key: &str, value: usize) -> Result<(), ConfigError> {
        if value < 1 {
            return Err(Self::invalid(key, "must be at least 1"));
        }
        Ok(())
    }

    /// A number that must be finite and `>= min` (`min` = 0: "a finite number >= 0").
    pub fn finite_at_least(key: &str, value: f64, min: f64) -> Result<(), ConfigError> {
        if !(value >= min && value.is_finite()) {
            return Err(Self::invalid(
                key,
                format!("must be a finite number >= {min}, got {value}"),
            ));
        }
        Ok(())
    }

    /// A fraction in `[0, 1)`, or `[0, 1]` when `one_allowed`.
    pub fn fraction(key: &str, value: f64, one_allowed: bool) -> Result<(), ConfigError> {
        let inside = if one_allowed {
            (0.0..=1.0).contains(&value)
        } else {
            (0.0..1.0).contains(&value)
        };
        if !inside {
            let close = if one_allowed { ']' } else { ')' };
            return Err(Self::invalid(
                key,
                format!("must be in [0, 1{close}, got {value}"),
            ));
        }
        Ok(())
    }
}
