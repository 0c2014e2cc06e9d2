//! Cutting one optimizer batch into data-parallel ranks and micro-batches.
//!
//! The aggregation weights `w` come from the WHOLE batch ([`crate::aggregation::weights`]).
//! A piece (one micro-batch on one rank) then contributes
//!
//! ```text
//! loss_piece = Σ_{i ∈ piece} Σ_t w_i · l_{i,t}
//! ```
//!
//! and the pieces' losses (and gradients) add up to the full-batch loss exactly, because every
//! sequence lands in exactly one piece. Nothing is divided by the number of micro-batches,
//! ranks or the piece's own token count: that per-piece normalization is the classic bug this
//! design removes. When the data-parallel all-reduce AVERAGES gradients (PyTorch DDP, FSDP),
//! multiply each rank's loss by [`rank_loss_scale`] so that the average equals the sum.

use crate::CoreError;

/// Which indices of the batch each rank and micro-batch processes: `plan[rank][micro]` is a
/// list of sequence indices. Every index `0..n` appears exactly once.
pub type SplitPlan = Vec<Vec<Vec<usize>>>;

/// Splits `n` sequences over `ranks` ranks (contiguous, as even as possible: the first
/// `n % ranks` ranks get one more) and each rank's share into micro-batches of at most
/// `micro_batch_size` sequences. A rank with no sequences gets no micro-batch.
pub fn by_count(n: usize, ranks: usize, micro_batch_size: usize) -> Result<SplitPlan, CoreError> {
    positive("ranks", ranks)?;
    positive("micro_batch_size", micro_batch_size)?;
    Ok(rank_ranges(n, ranks)
        .map(|r| {
            r.collect::<Vec<_>>()
                .chunks(micro_batch_size)
                .map(<[usize]>::to_vec)
                .collect()
        })
        .collect())
}

/// Splits by a token budget, as verl's dynamic batch size does: sequences are dealt to ranks
/// contiguously as in [`by_count`]; on each rank, consecutive sequences fill a micro-batch until
/// adding the next would exceed `max_tokens` (a single sequence longer than the budget gets a
/// micro-batch of its own). `tokens[i]` is the token count that costs memory (prompt plus
/// response).
pub fn by_tokens(
    tokens: &[usize],
    ranks: usize,
    max_tokens: usize,
) -> Result<SplitPlan, CoreError> {
    positive("ranks", ranks)?;
    positive("max_tokens", max_tokens)?;
    Ok(rank_ranges(tokens.len(), ranks)
        .map(|range| {
            let mut micros: Vec<Vec<usize>> = Vec::new();
            let mut used = 0;
            for i in range {
                match micros.last_mut() {
                    Some(m) if used + tokens[i] <= max_tokens => {
                        m.push(i);
                        used += tokens[i];
                    }
                    _ => {
                        micros.push(vec![i]);
                        used = tokens[i];
                    }
                }
            }
            micros
        })
        .collect())
}

/// The factor by which one rank multiplies its loss before backward, so that the combined
/// gradient is the full-batch gradient: `world_size` if the all-reduce averages gradients,
/// 1 if it sums them.
pub fn rank_loss_scale(reduce: GradReduce, world_size: usize) -> f64 {
    match reduce {
        GradReduce::Mean => world_size as f64,
        GradReduce::Sum => 1.0,
    }
}

/// How a data-parallel all-reduce combines the ranks' gradients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GradReduce {
    /// Gradients are summed.
    Sum,
    /// Gradients are averaged over ranks (PyTorch DDP's default).
    Mean,
}

/// The loss of one piece: `Σ_{i ∈ piece} w_i · token_sums[i]`, with `token_sums[i] = Σ_t l_{i,t}`.
pub fn piece_loss(piece: &[usize], weights: &[f64], token_sums: &[f64]) -> f64 {
    piece.iter().map(|&i| weights[i] * token_sums[i]).sum()
}

fn rank_ranges(n: usize, ranks: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let (base, extra) = (n / ranks, n % ranks);
    (0..ranks).map(move |r| {
        let start = r * base + r.min(extra);
        start..start + base + usize::from(r < extra)
    })
}

fn positive(name: &'static str, v: usize) -> Result<(), CoreError> {
    if v == 0 {
        return Err(CoreError::InvalidParameter {
            name,
            reason: "must be at least 1".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flatten(plan: &SplitPlan) -> Vec<usize> {
        plan.iter().flatten().flatten().copied().collect()
    }

    #[test]
    fn by_count_by_hand() {
        let plan = by_count(7, 2, 3).unwrap();
        assert_eq!(
            plan,
            vec![vec![vec![0, 1, 2], vec![3]], vec![vec![4, 5, 6]]]
        );
        assert_eq!(
            by_count(1, 3, 2).unwrap(),
            vec![vec![vec![0]], vec![], vec![]]
        );
    }

    #[test]
    fn by_tokens_by_hand() {
        let plan = by_tokens(&[3, 4, 10, 1, 1, 2], 1, 8).unwrap();
        assert_eq!(plan, vec![vec![vec![0, 1], vec![2], vec![3, 4, 5]]]);
    }

    #[test]
    fn every_index_once() {
        for n in 0..20 {
            for ranks in 1..5 {
                for m in 1..6 {
                    assert_eq!(
                        flatten(&by_count(n, ranks, m).unwrap()),
                        (0..n).collect::<Vec<_>>()
                    );
                }
            }
        }
    }

    #[test]
    fn zero_sizes_are_errors() {
        assert!(by_count(3, 0, 1).unwrap_err().to_string().contains("ranks"));
        assert!(by_count(3, 1, 0)
            .unwrap_err()
            .to_string()
            .contains("micro_batch_size"));
        assert!(by_tokens(&[1], 1, 0)
            .unwrap_err()
            .to_string()
            .contains("max_tokens"));
    }

    #[test]
    fn rank_scale() {
        assert_eq!(rank_loss_scale(GradReduce::Mean, 8), 8.0);
        assert_eq!(rank_loss_scale(GradReduce::Sum, 8), 1.0);
    }
}
