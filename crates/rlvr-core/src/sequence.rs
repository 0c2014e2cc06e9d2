//! The per-sequence facts that aggregation and diagnostics need.

/// One response of an optimizer batch, as aggregation sees it.
///
/// `group` identifies the prompt the response was sampled for (any `usize`; groups need not be
/// contiguous or numbered densely). `advantage` is `A_i`. `tokens` is `|o_i|`, the number of
/// loss-mask tokens of the response (0 for an empty or fully masked response).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sequence {
    /// Group (prompt) id.
    pub group: usize,
    /// The advantage `A_i`, shared by all tokens of the response.
    pub advantage: f64,
    /// `|o_i|`: loss-mask tokens of the response.
    pub tokens: usize,
}

impl Sequence {
    /// A sequence of `group` with advantage `advantage` and `tokens` loss tokens.
    pub fn new(group: usize, advantage: f64, tokens: usize) -> Self {
        Self {
            group,
            advantage,
            tokens,
        }
    }
}

/// The sign class of an advantage: `S+` (`A > 0`), `S-` (`A < 0`) or `S0` (`A = 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum SignClass {
    Positive = 0,
    Negative = 1,
    Zero = 2,
}

impl SignClass {
    pub(crate) fn of(advantage: f64) -> Self {
        if advantage > 0.0 {
            SignClass::Positive
        } else if advantage < 0.0 {
            SignClass::Negative
        } else {
            SignClass::Zero
        }
    }
}

/// Maps arbitrary group ids to dense indices `0..B` in order of first appearance, and returns
/// `(dense index per sequence, B)`.
pub(crate) fn dense_groups(seqs: &[Sequence]) -> (Vec<usize>, usize) {
    let mut map = std::collections::HashMap::new();
    let dense = seqs
        .iter()
        .map(|s| {
            let next = map.len();
            *map.entry(s.group).or_insert(next)
        })
        .collect();
    (dense, map.len())
}
