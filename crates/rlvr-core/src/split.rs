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
//! multiply each rank's loss by the world size so that the average equals the sum.

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

/// Splits by a budget of PADDED tokens, for batches that are right-padded to their longest
/// sequence (no remove-padding): a micro-batch of `n` sequences whose longest has `L` tokens
/// costs `n * L`. Sequences are dealt to ranks contiguously as in [`by_count`]; on each rank
/// they are taken longest first (ties in index order) and a micro-batch is filled while
/// `(n + 1) * L_first <= max_tokens` (the first sequence of a micro-batch is its longest). A
/// sequence longer than the budget gets a micro-batch of its own. Sorting by length is what
/// saves the padding: neighbours have similar lengths.
///
/// Like every plan, each index appears exactly once, so the summed loss (and gradient) is the
/// same as for any other plan of the same batch.
pub fn by_padded_tokens(
    tokens: &[usize],
    ranks: usize,
    max_tokens: usize,
) -> Result<SplitPlan, CoreError> {
    // (sequences, longest): the first sequence of a micro-batch is its longest
    longest_first(
        tokens,
        (ranks, max_tokens),
        |n| (1, n),
        |(count, longest), _| {
            let fits = (*count + 1) * *longest <= max_tokens;
            *count += usize::from(fits);
            fits
        },
    )
}

/// Splits by a budget of PACKED token slots, for micro-batches packed without padding
/// ([`pack_rows`], `model.use_remove_padding`): sequences are dealt to ranks contiguously as
/// in [`by_count`]; on each rank they are taken longest first (ties in index order), and each
/// joins the current micro-batch while the micro-batch's packed rows, `rows * width` with
/// `width` its first (longest) sequence, stay within `max_tokens`. Taken in this order, each
/// sequence lands where [`pack_rows`] puts it, so every micro-batch computes at most
/// `max_tokens` slots: its real tokens plus the little padding first-fit decreasing leaves. A
/// sequence longer than the budget gets a micro-batch of its own.
pub fn by_packed_tokens(
    tokens: &[usize],
    ranks: usize,
    max_tokens: usize,
) -> Result<SplitPlan, CoreError> {
    longest_first(
        tokens,
        (ranks, max_tokens),
        |n| {
            let mut rows = Rows::new(n);
            rows.place(n);
            rows
        },
        |rows, n| {
            let fits = (rows.used.len() + usize::from(rows.first_fit(n).is_none())) * rows.width
                <= max_tokens;
            if fits {
                rows.place(n);
            }
            fits
        },
    )
}

/// The plan shared by the token-budget splits: sequences dealt to ranks contiguously as in
/// [`by_count`]; on each rank taken longest first (ties in index order), each joining the
/// current micro-batch (its state made by `start` from the first sequence's tokens) when `add`
/// takes it, else starting the next one.
fn longest_first<S>(
    tokens: &[usize],
    (ranks, max_tokens): (usize, usize),
    start: impl Fn(usize) -> S,
    add: impl Fn(&mut S, usize) -> bool,
) -> Result<SplitPlan, CoreError> {
    positive("ranks", ranks)?;
    positive("max_tokens", max_tokens)?;
    Ok(rank_ranges(tokens.len(), ranks)
        .map(|range| {
            let mut order: Vec<usize> = range.collect();
            order.sort_by_key(|&i| std::cmp::Reverse(tokens[i]));
            let mut micros: Vec<(Vec<usize>, S)> = Vec::new();
            for i in order {
                let joined = match micros.last_mut() {
                    Some((m, state)) => {
                        add(state, tokens[i]) && {
                            m.push(i);
                            true
                        }
                    }
                    None => false,
                };
                if !joined {
                    micros.push((vec![i], start(tokens[i])));
                }
            }
            micros.into_iter().map(|(m, _)| m).collect()
        })
        .collect())
}

/// Rows `width` tokens wide being filled first fit: the tokens used in each.
struct Rows {
    width: usize,
    used: Vec<usize>,
}

impl Rows {
    fn new(width: usize) -> Self {
        Self {
            width,
            used: Vec::new(),
        }
    }

    /// The first row with room for `n` tokens.
    fn first_fit(&self, n: usize) -> Option<usize> {
        self.used.iter().position(|&u| u + n <= self.width)
    }

    /// Puts `n` tokens in the first row with room (a new row when none has): `(row, column)`.
    fn place(&mut self, n: usize) -> (usize, usize) {
        let row = self.first_fit(n).unwrap_or_else(|| {
            self.used.push(0);
            self.used.len() - 1
        });
        let col = self.used[row];
        self.used[row] += n;
        (row, col)
    }
}

/// The padded tokens of a plan: `Σ_micro |micro| * max_{i ∈ micro} tokens[i]`.
pub fn padded_tokens(plan: &SplitPlan, tokens: &[usize]) -> usize {
    plan.iter()
        .flatten()
        .map(|m| m.len() * m.iter().map(|&i| tokens[i]).max().unwrap_or(0))
        .sum()
}

/// How one micro-batch's sequences sit in packed rows (padding-free micro-batches, verl's
/// `use_remove_padding`): rows `width` tokens wide, `width` the longest sequence, sequence `i`
/// at row `place[i].0` from column `place[i].1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedRows {
    pub width: usize,
    pub rows: usize,
    pub place: Vec<(usize, usize)>,
}

impl PackedRows {
    /// Token slots computed, `rows * width`, padding included.
    pub fn computed_tokens(&self) -> usize {
        self.rows * self.width
    }
}

/// Packs sequences of `tokens[i]` tokens into rows as wide as the longest, first fit in order
/// of decreasing length (ties in index order): each sequence goes into the first row with
/// `width - used >= tokens[i]` room, else a new row. First-fit decreasing leaves every row but
/// one more than half full, so `rows * width < 2 Σ tokens + width`; on a spread of lengths it
/// is close to `Σ tokens`. No sequence is split.
pub fn pack_rows(tokens: &[usize]) -> PackedRows {
    let mut rows = Rows::new(tokens.iter().copied().max().unwrap_or(0));
    let mut order: Vec<usize> = (0..tokens.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(tokens[i]));
    let mut place = vec![(0, 0); tokens.len()];
    for i in order {
        place[i] = rows.place(tokens[i]);
    }
    PackedRows {
        width: rows.width,
        rows: rows.used.len(),
        place,
    }
}

/// The token slots of a plan whose micro-batches are packed ([`pack_rows`]):
/// `Σ_micro rows(micro) * max_{i ∈ micro} tokens[i]`.
pub fn packed_tokens(plan: &SplitPlan, tokens: &[usize]) -> usize {
    plan.iter()
        .flatten()
        .map(|m| pack_rows(&m.iter().map(|&i| tokens[i]).collect::<Vec<_>>()).computed_tokens())
        .sum()
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
    fn by_padded_tokens_by_hand() {
        // longest first: 10 | 4, 3 (2 x 4 = 8 <= 8) | 2, 1, 1 (3 x 2 = 6; a 4th would be 8 but
        // there is none) -> padded 10 + 8 + 6 = 24, against 6 x 10 = 60 in one micro-batch
        let lens = [3, 4, 10, 1, 1, 2];
        let plan = by_padded_tokens(&lens, 1, 8).unwrap();
        assert_eq!(plan, vec![vec![vec![2], vec![1, 0], vec![5, 3, 4]]]);
        assert_eq!(padded_tokens(&plan, &lens), 24);
        assert_eq!(padded_tokens(&by_count(6, 1, 6).unwrap(), &lens), 60);
        // two ranks: 0..3 and 3..6, each sorted on its own
        let plan = by_padded_tokens(&lens, 2, 8).unwrap();
        assert_eq!(plan, vec![vec![vec![2], vec![1, 0]], vec![vec![5, 3, 4]]]);
        // every micro-batch within the budget unless it is a single over-long sequence
        for budget in 1..30 {
            let plan = by_padded_tokens(&lens, 1, budget).unwrap();
            let mut all = flatten(&plan);
            all.sort();
            assert_eq!(all, (0..6).collect::<Vec<_>>());
            for m in plan.iter().flatten() {
                let cost = m.len() * m.iter().map(|&i| lens[i]).max().unwrap();
                assert!(cost <= budget || m.len() == 1, "{budget}: {m:?}");
            }
        }
    }

    /// Padding on a synthetic DAPO-like length mix (a fixed LCG): mini-batches of 32 prompts x
    /// 16 responses, prompts of 100..400 tokens, responses 500..6000 tokens with a quarter cut
    /// at 8192. Count-based micro-batches of 8 sequences against a budget of the same worst
    /// case, 8 x 9216 padded tokens. Prints both; the budget must save at least a fifth.
    #[test]
    fn padded_tokens_saved_on_a_long_tail_mix() {
        let mut state = 12345u64;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        let (mut by_cnt, mut by_tok, mut real, mut micros) = (0, 0, 0, (0, 0));
        for _ in 0..16 {
            let mut lens = Vec::new();
            for _ in 0..32 {
                let prompt = 100 + next(300) as usize;
                for _ in 0..16 {
                    let resp = if next(4) == 0 {
                        8192
                    } else {
                        500 + next(5500) as usize
                    };
                    lens.push(prompt + resp);
                }
            }
            real += lens.iter().sum::<usize>();
            let c = by_count(lens.len(), 1, 8).unwrap();
            let t = by_padded_tokens(&lens, 1, 8 * 9216).unwrap();
            by_cnt += padded_tokens(&c, &lens);
            by_tok += padded_tokens(&t, &lens);
            micros.0 += c[0].len();
            micros.1 += t[0].len();
        }
        eprintln!(
            "real tokens {real}; padded: by count (8 sequences) {by_cnt} in {} micro-batches ({:.1}% padding), by budget (73728) {by_tok} in {} ({:.1}% padding): {} fewer padded tokens ({:.1}%)",
            micros.0,
            100.0 * (by_cnt - real) as f64 / by_cnt as f64,
            micros.1,
            100.0 * (by_tok - real) as f64 / by_tok as f64,
            by_cnt - by_tok,
            100.0 * (by_cnt - by_tok) as f64 / by_cnt as f64
        );
        assert!(by_tok >= real && by_cnt >= real);
        assert!((by_cnt - by_tok) * 5 > by_cnt, "{by_cnt} vs {by_tok}");
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
    fn pack_rows_by_hand() {
        // decreasing: 0 (4) row 0; 4 (3) row 1; 1 (2) row 2; 3 (2) row 2; 2 (1) row 1
        let p = pack_rows(&[4, 2, 1, 2, 3]);
        assert_eq!(p.place, [(0, 0), (2, 0), (1, 3), (2, 2), (1, 0)]);
        assert_eq!((p.width, p.rows, p.computed_tokens()), (4, 3, 12));
        assert_eq!(pack_rows(&[]).computed_tokens(), 0);
        let plan = vec![vec![vec![0, 1], vec![2, 3, 4]]];
        // [4, 2]: two rows of 4; [1, 2, 3]: two rows of 3 (3 | 2 + 1)
        assert_eq!(packed_tokens(&plan, &[4, 2, 1, 2, 3]), 8 + 6);
        assert_eq!(padded_tokens(&plan, &[4, 2, 1, 2, 3]), 8 + 9);
    }

    #[test]
    fn by_packed_tokens_by_hand() {
        // longest first: 8, 5, 4, 3, 2, 1 (indices 1, 3, 0, 5, 2, 4); budget 16 = two rows of 8
        let tokens = [4, 8, 2, 5, 1, 3];
        let plan = by_packed_tokens(&tokens, 1, 16).unwrap();
        // rows of 8: [8], [5]; 4 fits neither and a third row costs 24 > 16: a new micro-batch
        // of width 4: [4], [3], then 2 opens a third row (12 <= 16), then 1 joins the 3
        assert_eq!(plan, vec![vec![vec![1, 3], vec![0, 5, 2, 4]]]);
        assert_eq!(packed_tokens(&plan, &tokens), 16 + 12);
        // a sequence over the budget gets its own micro-batch
        let plan = by_packed_tokens(&[20, 3, 3], 1, 10).unwrap();
        assert_eq!(plan, vec![vec![vec![0], vec![1, 2]]]);
    }

    proptest::proptest! {
        /// Each packed micro-batch computes at most the budget (unless it is one sequence
        /// over it), and every index appears once.
        #[test]
        fn by_packed_tokens_keeps_its_budget(
            tokens in proptest::collection::vec(1usize..60, 0..60),
            ranks in 1usize..4,
            budget in 1usize..200,
        ) {
            let plan = by_packed_tokens(&tokens, ranks, budget).unwrap();
            let mut seen: Vec<usize> = plan.iter().flatten().flatten().copied().collect();
            seen.sort_unstable();
            proptest::prop_assert_eq!(seen, (0..tokens.len()).collect::<Vec<_>>());
            for m in plan.iter().flatten() {
                let lens: Vec<usize> = m.iter().map(|&i| tokens[i]).collect();
                let computed = pack_rows(&lens).computed_tokens();
                proptest::prop_assert!(computed <= budget || m.len() == 1, "{:?}: {}", lens, computed);
            }
        }

        /// Every sequence sits inside its row, no two overlap, and first-fit decreasing keeps
        /// its bound `rows * width < 2 Σ tokens + width`.
        #[test]
        fn packed_rows_hold_every_sequence_once(
            tokens in proptest::collection::vec(1usize..50, 1..40)
        ) {
            let p = pack_rows(&tokens);
            let mut cells = vec![vec![false; p.width]; p.rows];
            for (i, &(row, col)) in p.place.iter().enumerate() {
                proptest::prop_assert!(row < p.rows && col + tokens[i] <= p.width);
                for c in &mut cells[row][col..col + tokens[i]] {
                    proptest::prop_assert!(!*c, "overlap at sequence {}", i);
                    *c = true;
                }
            }
            let real: usize = tokens.iter().sum();
            proptest::prop_assert!(p.computed_tokens() < 2 * real + p.width);
            proptest::prop_assert!(p.computed_tokens() <= tokens.len() * p.width);
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
        assert!(by_padded_tokens(&[1], 1, 0)
            .unwrap_err()
            .to_string()
            .contains("max_tokens"));
    }
}
