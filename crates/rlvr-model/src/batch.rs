//! Padded prompt + response batches for the training forward, and its output.

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
}

impl TokenBatch {
    /// Builds a batch from `(prompt ids, response ids)` pairs. Every prompt needs at least one
    /// token (the first response token is predicted from the last prompt token).
    pub fn new(pairs: &[(Vec<u32>, Vec<u32>)], pad_id: u32, device: &Device) -> Result<Self> {
        if pairs.is_empty() {
            return Err(Error::InvalidArgument(
                "TokenBatch::new: no sequences".into(),
            ));
        }
        if let Some(i) = pairs.iter().position(|(p, _)| p.is_empty()) {
            return Err(Error::InvalidArgument(format!(
                "TokenBatch::new: prompt {i} is empty"
            )));
        }
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
        })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.response_start.len()
    }

    /// True for a batch without rows (never built by [`TokenBatch::new`]).
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
    fn empty_prompt_is_an_error() {
        let err = TokenBatch::new(&[(vec![], vec![1])], 0, &Device::Cpu).unwrap_err();
        assert!(err.to_string().contains("prompt 0 is empty"));
    }
}
