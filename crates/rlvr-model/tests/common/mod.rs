//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use rlvr_model::{init_random, ChatTokenizer, Decoder, DecoderConfig, TokenBatch};

pub mod reference;
#[allow(unused_imports)] // not every test binary uses the reference
pub use reference::Reference;

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join(name)
}

pub fn reference(name: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(fixture(name).join("reference.json")).expect("reference.json");
    serde_json::from_str(&text).expect("reference.json is JSON")
}

/// A fresh, empty directory under the system temp dir, unique to this process and `name`.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rlvr-model-test-{}-{name}", std::process::id()));
    if d.exists() {
        std::fs::remove_dir_all(&d).unwrap();
    }
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The byte-level BPE tokenizer of the fixtures (vocab 272, no chat template).
pub fn fixture_tokenizer() -> ChatTokenizer {
    let mut t = ChatTokenizer::from_dir(&fixture("qwen3-tiny")).unwrap();
    t.chat_template = None;
    t
}

/// A small config of each switch: Qwen2 (biases, tied) or Qwen3 (qk-norm, untied).
pub fn small_config(arch: &str, vocab: usize) -> DecoderConfig {
    let mut c = DecoderConfig::tiny(vocab);
    c.hidden_size = 32;
    c.intermediate_size = 48;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 8;
    if arch == "qwen3" {
        c.architecture = rlvr_model::Architecture::Qwen3;
        c.attention_bias = false;
        c.qk_norm = true;
        c.tie_word_embeddings = false;
        c.head_dim = 12;
    }
    c
}

/// A random model whose weights are scaled up (std ~0.3) so log-probs are far from uniform.
pub fn peaky_model(cfg: &DecoderConfig, seed: u64, dtype: DType) -> (Decoder, candle_nn::VarMap) {
    let (_, varmap) = init_random(cfg, seed, dtype, &Device::Cpu).unwrap();
    for (name, var) in varmap.data().lock().unwrap().iter() {
        if !name.ends_with("norm.weight") && !name.ends_with(".bias") {
            var.set(&(var.as_tensor() * 15.0).unwrap()).unwrap();
        }
    }
    let model = Decoder::new(
        cfg,
        candle_nn::VarBuilder::from_varmap(&varmap, dtype, &Device::Cpu),
    )
    .unwrap();
    (model, varmap)
}

/// [`peaky_model`] with the biases and norm weights random too: `init_random` makes them 0
/// and 1, values under which a path that drops a bias or a norm's weight (q/k norms included)
/// computes the same numbers as one that applies them. Biases are uniform in [-0.5, 0.5],
/// norm weights in [0.5, 1.5], from a fixed generator seeded by `seed` (the same on every
/// machine).
pub fn every_weight_random(
    cfg: &DecoderConfig,
    seed: u64,
    dtype: DType,
) -> (Decoder, candle_nn::VarMap) {
    let (_, varmap) = peaky_model(cfg, seed, dtype);
    // splitmix64, in the VarMap's name order so the values do not depend on its hashing
    let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
    let mut uniform = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    for (name, var) in sorted_vars(&varmap) {
        let offset = if name.ends_with("norm.weight") {
            1.0
        } else if name.ends_with(".bias") {
            0.0
        } else {
            continue;
        };
        let values: Vec<f64> = (0..var.elem_count()).map(|_| offset + uniform()).collect();
        let t = candle_core::Tensor::from_vec(values, var.shape(), &Device::Cpu)
            .unwrap()
            .to_dtype(dtype)
            .unwrap();
        var.set(&t).unwrap();
    }
    let model = Decoder::new(
        cfg,
        candle_nn::VarBuilder::from_varmap(&varmap, dtype, &Device::Cpu),
    )
    .unwrap();
    (model, varmap)
}

/// Three (prompt, response) pairs of mixed lengths, one response empty.
pub fn pairs(vocab: u32) -> Vec<(Vec<u32>, Vec<u32>)> {
    let ids = |n: usize, k: u32| {
        (0..n as u32)
            .map(|i| (i * 7 + k * 13 + 3) % vocab)
            .collect::<Vec<_>>()
    };
    vec![
        (ids(3, 1), ids(5, 2)),
        (ids(6, 3), ids(2, 4)),
        (ids(1, 5), ids(7, 6)),
        (ids(4, 7), vec![]),
    ]
}

pub fn batch(vocab: u32) -> TokenBatch {
    TokenBatch::new(&pairs(vocab), 0, &Device::Cpu).unwrap()
}

pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// The variables of `varmap` with their names, sorted by name.
pub fn sorted_vars(varmap: &candle_nn::VarMap) -> Vec<(String, candle_core::Var)> {
    let data = varmap.data().lock().unwrap();
    let mut vars: Vec<_> = data.iter().map(|(n, v)| (n.clone(), v.clone())).collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    vars
}

fn flat_f64(var: &candle_core::Var) -> Vec<f64> {
    var.as_tensor()
        .flatten_all()
        .unwrap()
        .to_vec1::<f64>()
        .unwrap()
}

fn set_element(var: &candle_core::Var, i: usize, value: f64) {
    let mut v = flat_f64(var);
    v[i] = value;
    var.set(&candle_core::Tensor::from_vec(v, var.shape(), &Device::Cpu).unwrap())
        .unwrap();
}

/// Checks a gradient of an f64 model against central differences of its loss: for the first,
/// middle and last entry `i` of every variable `x` (sorted by name), with `h = 1e-5`,
/// `fd = (loss(x_i + h) - loss(x_i - h)) / 2h` must satisfy
/// `|fd - g_i| < 1e-6 + 1e-5 max(|fd|, |g_i|)`, `g = grad(name, var)` flattened.
/// The variables are restored after each probe.
pub fn assert_matches_central_differences(
    varmap: &candle_nn::VarMap,
    grad: impl Fn(&str, &candle_core::Var) -> Vec<f64>,
    loss: impl Fn() -> f64,
    what: &str,
) {
    let h = 1e-5;
    for (name, var) in sorted_vars(varmap) {
        let g = grad(&name, &var);
        let n = g.len();
        for i in [0, n / 2, n - 1] {
            let x = flat_f64(&var)[i];
            set_element(&var, i, x + h);
            let up = loss();
            set_element(&var, i, x - h);
            let down = loss();
            set_element(&var, i, x);
            let fd = (up - down) / (2.0 * h);
            let tol = 1e-6 + 1e-5 * fd.abs().max(g[i].abs());
            assert!(
                (fd - g[i]).abs() < tol,
                "{what} {name}[{i}]: gradient {} vs finite difference {fd}",
                g[i]
            );
        }
    }
}
