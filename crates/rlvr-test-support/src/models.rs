//! Tiny models for tests (feature `models`): a character-level tokenizer, random Qwen-layout
//! models of a few shapes saved in Hugging Face layout, and rlvr-model's committed tiny Qwen2
//! fixture (a real byte-level BPE tokenizer and chat template).
//!
//! rlvr-model's own tests build their models in its `tests/common` (they need the model's
//! internals; a dev-dependency back onto rlvr-model would be a second copy of its types).

use std::path::{Path, PathBuf};

use rlvr_model::candle_core::{DType, Device};
use rlvr_model::{ChatTokenizer, DecoderConfig};

/// rlvr-model's tiny Qwen2 fixture directory: `tokenizer.json`, `tokenizer_config.json` with a
/// chat template, `config.json` (vocab 272).
pub fn qwen2_tiny_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rlvr-model/tests/fixtures/qwen2-tiny")
}

/// A WordLevel tokenizer with one token per character of `chars` (ids in order, newlines
/// included) and `eos` (id `chars.len()`) as a special token; a character outside `chars`
/// encodes as `eos`.
pub fn char_tokenizer(chars: &[char], eos: &str) -> rlvr_model::tokenizers::Tokenizer {
    let vocab: serde_json::Map<String, serde_json::Value> = chars
        .iter()
        .enumerate()
        .map(|(i, c)| (c.to_string(), (i as u64).into()))
        .chain(std::iter::once((
            eos.to_string(),
            (chars.len() as u64).into(),
        )))
        .collect();
    let json = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [{
            "id": chars.len(), "content": eos, "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true
        }],
        "normalizer": null,
        "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "[\\s\\S]"}, "behavior": "Isolated", "invert": false},
        "post_processor": null,
        "decoder": {"type": "Fuse"},
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": eos}
    });
    json.to_string().parse().expect("valid tokenizer JSON")
}

/// The shape of a tiny random model (tied head, Qwen2 switches of `DecoderConfig::tiny`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TinyShape {
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    pub head_dim: usize,
}

impl TinyShape {
    /// Hidden 32, MLP 64, 2 layers, 2 query heads / 1 KV head of 16: trains in a second.
    pub const TWO_LAYERS: TinyShape = TinyShape {
        hidden_size: 32,
        intermediate_size: 64,
        num_hidden_layers: 2,
        num_attention_heads: 2,
        num_key_value_heads: 1,
        head_dim: 16,
    };
    /// Hidden 16, MLP 32, 1 layer, 2 query heads / 1 KV head of 8: the smallest that has
    /// every part (GQA included).
    pub const ONE_LAYER: TinyShape = TinyShape {
        hidden_size: 16,
        intermediate_size: 32,
        num_hidden_layers: 1,
        num_attention_heads: 2,
        num_key_value_heads: 1,
        head_dim: 8,
    };

    /// The model config of this shape: `vocab` tokens, `eos` its end token, `positions` its
    /// context.
    pub fn config(&self, vocab: usize, eos: u32, positions: usize) -> DecoderConfig {
        let mut cfg = DecoderConfig::tiny(vocab);
        cfg.hidden_size = self.hidden_size;
        cfg.intermediate_size = self.intermediate_size;
        cfg.num_hidden_layers = self.num_hidden_layers;
        cfg.num_attention_heads = self.num_attention_heads;
        cfg.num_key_value_heads = self.num_key_value_heads;
        cfg.head_dim = self.head_dim;
        cfg.max_position_embeddings = positions;
        cfg.eos_token_ids = vec![eos];
        cfg
    }
}

/// Saves a random f32 model of `cfg` (weights from `seed`) with `tok` into `dir` in Hugging
/// Face layout (`config.json`, `model.safetensors`, the tokenizer files).
pub fn save_random_model(dir: &Path, cfg: &DecoderConfig, tok: &ChatTokenizer, seed: u64) {
    let (_model, varmap) = rlvr_model::init_random(cfg, seed, DType::F32, &Device::Cpu)
        .unwrap_or_else(|e| panic!("random model: {e}"));
    rlvr_model::save_model(dir, &varmap, cfg, tok)
        .unwrap_or_else(|e| panic!("saving a model to {}: {e}", dir.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_char_tokenizer_has_one_id_per_character_and_eos_last() {
        let tok = char_tokenizer(&['a', 'b', '\n'], "<eos>");
        let ids = tok.encode("ba\n<eos>", false).unwrap().get_ids().to_vec();
        assert_eq!(ids, [1, 0, 2, 3]);
        assert_eq!(tok.decode(&[0, 1, 2], false).unwrap(), "ab\n");
    }

    #[test]
    fn a_saved_model_loads_back_with_its_shape() {
        let dir = tempfile::tempdir().unwrap();
        let tok = ChatTokenizer::new(char_tokenizer(&['x', 'y'], "<eos>"), Some("<eos>")).unwrap();
        let cfg = TinyShape::ONE_LAYER.config(3, 2, 32);
        save_random_model(dir.path(), &cfg, &tok, 7);
        let back = DecoderConfig::from_file(&dir.path().join("config.json")).unwrap();
        assert_eq!(
            (
                back.hidden_size,
                back.num_hidden_layers,
                back.max_position_embeddings,
                back.eos_token_ids
            ),
            (16, 1, 32, vec![2])
        );
        assert!(qwen2_tiny_dir().join("tokenizer.json").exists());
    }
}
