//! The real SmolLM2-135M-Instruct of `scripts/real-model.sh` for the tests that need it
//! (real_model.rs, bf16_products.rs): where it is, the conversations they score, and the
//! masks and flattening their comparisons use.

use candle_core::{DType, Tensor};
use rlvr_model::{ChatMessage, LoadedModel, TokenBatch};

/// The model directory named by `RLVR_REAL_MODEL` (skipped without it, a failure under
/// `CI=true`).
pub fn model_dir() -> Option<String> {
    rlvr_test_support::real_model_dir().map(|d| d.display().to_string())
}

/// Prompts in the model's chat template with responses it could give, the conversations of
/// scripts/model/real_model_reference.py (checked through the token ids): (prompt ids, response
/// ids).
pub fn pairs(m: &LoadedModel) -> Vec<(Vec<u32>, Vec<u32>)> {
    let convs: [(&str, &str); 3] = [
        ("What is 7 times 8?", "7 times 8 is 56."),
        (
            "Solve for x: 2x + 3 = 11. Put the answer in \\boxed{}.",
            "Subtract 3 from both sides: 2x = 8, so x = 4. The answer is \\boxed{4}.",
        ),
        (
            "Name three prime numbers.",
            "Three prime numbers are 2, 3 and 5.",
        ),
    ];
    convs
        .iter()
        .map(|(q, a)| {
            let prompt = m
                .tokenizer
                .apply_chat_template(&[ChatMessage::new("user", *q)], true)
                .unwrap();
            let p = m.tokenizer.encode(&prompt, false).unwrap();
            let r = m
                .tokenizer
                .encode(&format!("{a}<|im_end|>"), false)
                .unwrap();
            (p, r)
        })
        .collect()
}

/// The `[B, width]` response outputs' mask, row-major: 1 where a row has a response token.
pub fn response_mask(batch: &TokenBatch, width: usize) -> Vec<f64> {
    batch
        .response_len
        .iter()
        .flat_map(|&n| (0..width).map(move |j| if j < n { 1.0 } else { 0.0 }))
        .collect()
}

/// A tensor's elements in f64, flattened.
pub fn flat(t: &Tensor) -> Vec<f64> {
    t.to_dtype(DType::F64)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f64>()
        .unwrap()
}
