//! The one error type of rlvr-core.

/// What went wrong, and at which input position.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CoreError {
    /// A reward, advantage or log-prob that is NaN or infinite.
    #[error("{what} at index {index} is not finite ({value})")]
    NotFinite {
        /// Which input (`"reward"`, `"advantage"`, ...).
        what: &'static str,
        /// Position in the input slice.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// Two slices that must have one entry per sequence differ in length.
    #[error("length mismatch: {left_name} has {left} entries, {right_name} has {right}")]
    LengthMismatch {
        /// Name of the first slice.
        left_name: &'static str,
        /// Its length.
        left: usize,
        /// Name of the second slice.
        right_name: &'static str,
        /// Its length.
        right: usize,
    },
    /// A parameter outside its domain.
    #[error("invalid {name}: {reason}")]
    InvalidParameter {
        /// The parameter's name as users type it.
        name: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// A name that is not one of the known ones (rule, estimator, ...).
    #[error("unknown {kind} {name:?}; expected one of: {expected}")]
    UnknownName {
        /// What kind of name (`"aggregation rule"`, ...).
        kind: &'static str,
        /// What was given.
        name: String,
        /// The accepted names, comma-separated.
        expected: String,
    },
}

/// Checks that every value is finite; the error names the first one that is not.
pub(crate) fn ensure_finite(what: &'static str, values: &[f64]) -> Result<(), CoreError> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(index) => Err(CoreError::NotFinite {
            what,
            index,
            value: values[index],
        }),
    }
}
