//! Prompt + response batches for the training forward (right-padded, or packed without
//! padding), and its output.

use candle_core::{Device, Tensor};

use crate::error::{Error, Result};

/// A right-padded batch of `prompt ++ response` sequences.
///
/// Row `b` holds its prompt ids at `0..response_start[b]`, its response ids at
/// `response_start[b]..response_start[b] + response_len[b]`, then `pad_id` up to `T`.
#[derive(Debug, Clone)]
pub struct TokenBatch {
    /// `[B, T]` u32 token ids, right-padded.
    pub input_ids: Tensor,
    /// `[B, T]` u32, 1 for real tokens and 0 for padding.
    pub attention_mask: Tensor,
    /// Index of the first response token in each row (= the prompt length, at least 1).
    pub response_start: Vec<usize>,
    /// Number of response tokens in each row (may be 0).
    pub response_len: Vec<usize>,
    /// `None`: one sequence per row, as above. `Some`: several sequences per row
    /// ([`TokenBatch::packed`]); `response_start` and `response_len` then count from the
    /// start of each sequence, wherever it sits.
    pub packing: Option<Packing>,
}

/// Where the sequences of a packed batch sit ([`TokenBatch::packed`]).
///
/// A row holds several `prompt ++ response` sequences one after the other, then padding. Each
/// token attends only to the earlier tokens of its own sequence (and itself), and its RoPE
/// position counts from 0 at the start of its sequence, so every sequence is computed exactly
/// as it would be alone in a right-padded row (verl's `use_remove_padding`, flash-attention's
/// variable-length attention).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packing {
    /// Per sequence (in the order of the pairs given): its row and the column of its first
    /// token.
    pub place: Vec<(usize, usize)>,
    /// `[rows][T]`: each token's position inside its own sequence (padding: its column).
    pub positions: Vec<Vec<u32>>,
    /// `[rows][T]`: the sequence each token belongs to; [`Packing::PAD`] for padding.
    pub segments: Vec<Vec<u32>>,
}

impl Packing {
    /// The segment of padding tokens: no real token attends to it.
    pub const PAD: u32 = u32::MAX;
}

impl TokenBatch {
    /// Builds a batch from `(prompt ids, response ids)` pairs. Every prompt needs at least one
    /// token (the first response token is predicted from the last prompt token).
    pub fn new(pairs: &[(Vec<u32>, Vec<u32>)], pad_id: u32, device: &Device) -> Result<Self> {
        check_pairs("TokenBatch::new", pairs)?;
        let t = pairs
            .iter()
            .map(|(p, r)| p.len() + r.len())
            .max()
            .unwrap_or(0);
        let b = pairs.len();
        let mut ids = Vec::with_capacity(b * t);
        let mut mask = Vec::with_capacity(b * t);
        for (p, r) in pairs {
            let n = p.len() + r.len();
            ids.extend(
                p.iter()
                    .chain(r)
                    .copied()
                    .chain(std::iter::repeat_n(pad_id, t - n)),
            );
            mask.extend(std::iter::repeat_n(1u32, n).chain(std::iter::repeat_n(0, t - n)));
        }
        Ok(Self {
            input_ids: Tensor::from_vec(ids, (b, t), device)?,
            attention_mask: Tensor::from_vec(mask, (b, t), device)?,
            response_start: pairs.iter().map(|(p, _)| p.len()).collect(),
            response_len: pairs.iter().map(|(_, r)| r.len()).collect(),
            packing: None,
        })
    }

    /// Builds a packed batch from `(prompt ids, response ids)` pairs: rows as wide as the
    /// longest sequence `T`, filled first-fit in order of decreasing length
    /// (`rlvr_core::split::pack_rows`), so that a row holds as many sequences as fit and the
    /// padding left is what no sequence fits into. The results ([`ResponseLogProbs`], `[B, R]` per sequence in the
    /// order given) are those of [`TokenBatch::new`] on the same pairs: only where each
    /// sequence is computed changes. Every prompt needs at least one token.
    pub fn packed(pairs: &[(Vec<u32>, Vec<u32>)], pad_id: u32, device: &Device) -> Result<Self> {
        check_pairs("TokenBatch::packed", pairs)?;
        let lens: Vec<usize> = pairs.iter().map(|(p, r)| p.len() + r.len()).collect();
        let rlvr_core::split::PackedRows {
            width: t,
            rows,
            place,
        } = rlvr_core::split::pack_rows(&lens);
        let mut ids = vec![pad_id; rows * t];
        let mut mask = vec![0u32; rows * t];
        let mut positions: Vec<Vec<u32>> = (0..rows).map(|_| (0..t as u32).collect()).collect();
        let mut segments = vec![vec![Packing::PAD; t]; rows];
        for (i, ((p, r), &(row, col))) in pairs.iter().zip(&place).enumerate() {
            for (k, &id) in p.iter().chain(r).enumerate() {
                ids[row * t + col + k] = id;
                mask[row * t + col + k] = 1;
                positions[row][col + k] = k as u32;
                segments[row][col + k] = i as u32;
            }
        }
        Ok(Self {
            input_ids: Tensor::from_vec(ids, (rows, t), device)?,
            attention_mask: Tensor::from_vec(mask, (rows, t), device)?,
            response_start: pairs.iter().map(|(p, _)| p.len()).collect(),
            response_len: pairs.iter().map(|(_, r)| r.len()).collect(),
            packing: Some(Packing {
                place,
                positions,
                segments,
            }),
        })
    }

    /// Token slots the forward computes, `rows x T` (padding included).
    pub fn computed_tokens(&self) -> usize {
        self.input_ids.elem_count()
    }

    /// Number of sequences (of rows when not packed).
    pub fn len(&self) -> usize {
        self.response_start.len()
    }

    /// True for a batch without sequences (never built by [`TokenBatch::new`]).
    pub fn is_empty(&self) -> bool {
        self.response_start.is_empty()
    }

    /// `R`, the longest response.
    pub fn max_response_len(&self) -> usize {
        self.response_len.iter().copied().max().unwrap_or(0)
    }

    /// `[B, R]` f32 mask, 1 at response tokens and 0 at padding (the loss mask).
    pub fn response_mask(&self) -> Result<Tensor> {
        let r = self.max_response_len();
        let m: Vec<f32> = self
            .response_len
            .iter()
            .flat_map(|&l| (0..r).map(move |k| if k < l { 1.0 } else { 0.0 }))
            .collect();
        Ok(Tensor::from_vec(
            m,
            (self.len(), r),
            self.input_ids.device(),
        )?)
    }
}

/// At least one pair, and no empty prompt (the first response token is predicted from the
/// last prompt token).
fn check_pairs(what: &str, pairs: &[(Vec<u32>, Vec<u32>)]) -> Result<()> {
    if pairs.is_empty() {
        return Err(Error::InvalidArgument(format!("{what}: no sequences")));
    }
    if let Some(i) = pairs.iter().position(|(p, _)| p.is_empty()) {
        return Err(Error::InvalidArgument(format!(
            "{what}: prompt {i} is empty"
        )));
    }
    if pairs.len() > Packing::PAD as usize {
        return Err(Error::InvalidArgument(format!(
            "{what}: {} sequences (at most {})",
            pairs.len(),
            Packing::PAD
        )));
    }
    Ok(())
}

/// Output of the training forward.
#[derive(Debug, Clone)]
pub struct ResponseLogProbs {
    /// `[B, R]` f32: log-prob of each response token, 0 at padding. Differentiable.
    pub logprobs: Tensor,
    /// `[B, R]` f32: entropy (nats) of the next-token distribution at each response position,
    /// 0 at padding; present when requested.
    pub entropy: Option<Tensor>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_pads_and_records_spans() {
        let pairs = vec![
            (vec![5, 6], vec![7]),
            (vec![1], vec![2, 3, 4]),
            (vec![9], vec![]),
        ];
        let b = TokenBatch::new(&pairs, 0, &Device::Cpu).unwrap();
        assert_eq!(
            b.input_ids.to_vec2::<u32>().unwrap(),
            [[5, 6, 7, 0], [1, 2, 3, 4], [9, 0, 0, 0]]
        );
        assert_eq!(
            b.attention_mask.to_vec2::<u32>().unwrap(),
            [[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 0]]
        );
        assert_eq!(
            (b.response_start.as_slice(), b.response_len.as_slice()),
            (&[2, 1, 1][..], &[1, 3, 0][..])
        );
        assert_eq!(
            b.response_mask().unwrap().to_vec2::<f32>().unwrap()[0],
            [1.0, 0.0, 0.0]
        );
    }

    #[test]
    fn packs_first_fit_by_decreasing_length() {
        // lengths 4, 2, 1, 2, 3: rows of width 4 hold [0], [4, 2 or 3 .. ]
        let pairs = vec![
            (vec![1, 2], vec![3, 4]),
            (vec![5], vec![6]),
            (vec![7], vec![]),
            (vec![8, 9], vec![]),
            (vec![10], vec![11, 12]),
        ];
        let b = TokenBatch::packed(&pairs, 0, &Device::Cpu).unwrap();
        let p = b.packing.as_ref().unwrap();
        // decreasing length: 0 (4) -> row 0; 4 (3) -> row 1; 1 (2) -> row 2; 3 (2) -> row 2;
        // 2 (1) -> row 1 after sequence 4
        assert_eq!(p.place, [(0, 0), (2, 0), (1, 3), (2, 2), (1, 0)]);
        assert_eq!(
            b.input_ids.to_vec2::<u32>().unwrap(),
            [[1, 2, 3, 4], [10, 11, 12, 7], [5, 6, 8, 9]]
        );
        assert_eq!(
            b.attention_mask.to_vec2::<u32>().unwrap(),
            [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]
        );
        assert_eq!(p.positions, [[0, 1, 2, 3], [0, 1, 2, 0], [0, 1, 0, 1]]);
        assert_eq!(p.segments, [[0, 0, 0, 0], [4, 4, 4, 2], [1, 1, 3, 3]]);
        assert_eq!(b.len(), 5);
        assert_eq!(b.computed_tokens(), 12);
        assert_eq!(b.response_start, [2, 1, 1, 2, 1]);
        assert_eq!(b.response_len, [2, 1, 0, 0, 2]);
        assert_eq!(b.response_mask().unwrap().dims(), [5, 2]);
    }

    #[test]
    fn packed_rows_pad_what_no_sequence_fits() {
        let pairs = vec![(vec![1, 2], vec![3]), (vec![4], vec![5])];
        let b = TokenBatch::packed(&pairs, 9, &Device::Cpu).unwrap();
        let p = b.packing.as_ref().unwrap();
        assert_eq!(
            b.input_ids.to_vec2::<u32>().unwrap(),
            [[1, 2, 3], [4, 5, 9]]
        );
        assert_eq!(b.attention_mask.to_vec2::<u32>().unwrap()[1], [1, 1, 0]);
        assert_eq!(p.segments[1], [1, 1, Packing::PAD]);
    }

    #[test]
    fn empty_prompt_is_an_error() {
        let err = TokenBatch::new(&[(vec![], vec![1])], 0, &Device::Cpu).unwrap_err();
        assert!(err.to_string().contains("prompt 0 is empty"));
        let pairs = [(vec![1], vec![]), (vec![], vec![1])];
        let err = TokenBatch::packed(&pairs, 0, &Device::Cpu).unwrap_err();
        assert!(
            err.to_string().contains("packed: prompt 1 is empty"),
            "{err}"
        );
        let err = TokenBatch::packed(&[], 0, &Device::Cpu).unwrap_err();
        assert!(err.to_string().contains("no sequences"), "{err}");
    }
}
