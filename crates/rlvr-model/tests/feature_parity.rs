//! Every forward path over the same weights implements every decoder feature the configuration
//! accepts, so a feature that one path lacks fails here.
//!
//! The features: q/k/v biases, Qwen3's per-head q/k norms, a tied or untied vocabulary head,
//! grouped-query attention (key-value heads = heads, heads / 2, 1), an explicit `head_dim`
//! other than `hidden_size / heads`, RoPE's `rope_theta` and its scaling (`default`, `linear`,
//! `llama3` with frequencies in each of its three branches; the length-dependent kinds and a
//! partial rotary factor are refused at parsing, tested below). Each
//! (bias, qk-norm) pair is built on every architecture that can express it in config.json
//! (Qwen2: biases; Qwen3: q/k norms, biases optional; Llama: biases optional), crossed with
//! every head and key-value head choice: 30 tiny models whose every weight is random (biases
//! and norm weights included, so dropping one changes the numbers).
//!
//! The paths, each against the plain autograd decoder of tests/common/reference.rs (written
//! from the configuration, not from the model's code), f32, within 1e-4:
//! * the training forward's log-probs and entropies (`response_logprobs_no_grad`) on the fused
//!   CPU kernels (`cpu/layer.rs`) and on the device-generic tensor-op layer (`generic/`, the
//!   GPU path, run on the CPU with `set_force_generic`);
//! * the training step (`loss_and_grads`) on both: its log-probs and every weight's gradient
//!   (the fused path's backward is hand-written, so each feature has a backward of its own);
//! * the KV-cached sampling forward (`forward_cached`) on the CPU decode (`cpu/decode.rs`) and
//!   on the device-generic decode (`generic/decode.rs`): token by token, in uneven chunks
//!   (prefill, one token, two tokens on a filled cache) and in one prefill, the whole
//!   next-token distribution at every position it returns;
//! * save then load: the configuration and the log-probs come back unchanged.

mod common;

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use common::*;
use rlvr_model::{
    init_random, load_model, save_model, Architecture, Decoder, DecoderConfig, KvCache,
    RopeScaling, TokenBatch, TrainForwardOptions,
};

const TOL: f32 = 1e-4;
/// Two rows of this many tokens.
const T: usize = 7;
const ROWS: usize = 2;

/// The (architecture, attention bias, qk-norm) triples config.json can express.
const SWITCHES: [(Architecture, bool, bool); 5] = [
    (Architecture::Qwen2, true, false),
    (Architecture::Llama, false, false),
    (Architecture::Llama, true, false),
    (Architecture::Qwen3, false, true),
    (Architecture::Qwen3, true, true),
];

/// Every feature combination (module docs), each with a name for the failure messages.
fn combinations(vocab: usize) -> Vec<(String, DecoderConfig)> {
    let mut out = Vec::new();
    for (arch, bias, qk_norm) in SWITCHES {
        for tied in [false, true] {
            for kv_heads in [4, 2, 1] {
                let i = out.len();
                let mut c = small_config("qwen2", vocab);
                c.architecture = arch;
                c.attention_bias = bias;
                c.qk_norm = qk_norm;
                c.tie_word_embeddings = tied;
                c.num_attention_heads = 4;
                c.num_key_value_heads = kv_heads;
                // hidden 32: head_dim 8 is hidden / heads, 12 is not
                c.head_dim = if i % 2 == 0 { 8 } else { 12 };
                // a small theta turns even the slow dimensions within 7 positions
                c.rope_theta = if (i / 2) % 2 == 0 { 10_000.0 } else { 30.0 };
                // Llama 3's bounds 32 / 4 and 32 / 1 put theta 30's wavelengths (6.3, 14.7,
                // 34, 81 at head_dim 8) in every branch: kept, smoothed, divided
                c.rope_scaling = match i % 3 {
                    0 => RopeScaling::Default,
                    1 => RopeScaling::Linear { factor: 2.5 },
                    _ => RopeScaling::Llama3 {
                        factor: 4.0,
                        low_freq_factor: 1.0,
                        high_freq_factor: 4.0,
                        original_max_position_embeddings: 32,
                    },
                };
                let name = format!(
                    "{arch:?} bias={bias} qk_norm={qk_norm} tied={tied} heads=4/{kv_heads} \
                     head_dim={} rope_theta={} rope={}",
                    c.head_dim,
                    c.rope_theta,
                    c.rope_scaling.rope_type()
                );
                out.push((name, c));
            }
        }
    }
    out
}

/// The fixed token rows every path reads.
fn sequences(vocab: usize) -> Vec<Vec<u32>> {
    (0..ROWS)
        .map(|r| {
            (0..T)
                .map(|i| ((i * 11 + r * 17 + 5) % vocab) as u32)
                .collect()
        })
        .collect()
}

/// The sequences as a training batch: a one-token prompt, the rest the response.
fn seq_batch(seqs: &[Vec<u32>]) -> TokenBatch {
    let pairs: Vec<_> = seqs
        .iter()
        .map(|s| (s[..1].to_vec(), s[1..].to_vec()))
        .collect();
    TokenBatch::new(&pairs, 0, &Device::Cpu).unwrap()
}

fn model(cfg: &DecoderConfig, seed: u64) -> (Decoder, candle_nn::VarMap) {
    every_weight_random(cfg, seed, DType::F32)
}

/// The reference's log-softmax `[rows][position][vocab]` of the sequences.
fn reference_logprobs(reference: &Reference, seqs: &[Vec<u32>]) -> Vec<Vec<Vec<f32>>> {
    let ids = Tensor::new(seqs.to_vec(), &Device::Cpu).unwrap();
    let mask = Tensor::ones((seqs.len(), T), DType::U32, &Device::Cpu).unwrap();
    candle_nn::ops::log_softmax(&reference.logits(&ids, &mask), 2)
        .unwrap()
        .to_vec3::<f32>()
        .unwrap()
}

fn flat(t: &Tensor) -> Vec<f32> {
    t.to_dtype(DType::F32)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap()
}

fn path_name(generic: bool) -> &'static str {
    if generic {
        "device-generic"
    } else {
        "CPU fused"
    }
}

/// The training forward's next-token log-probs and entropies equal the reference's on the
/// fused CPU layer and on the device-generic layer, for every feature combination.
#[test]
fn training_forward_matches_the_reference_for_every_feature() {
    let vocab = 40;
    let seqs = sequences(vocab);
    let batch = seq_batch(&seqs);
    for (i, (name, cfg)) in combinations(vocab).into_iter().enumerate() {
        let (mut m, varmap) = model(&cfg, 100 + i as u64);
        let want = Reference::new(&cfg, &varmap).response_logprobs(&batch, 1.0);
        let (want_lp, want_ent) = (flat(&want.logprobs), flat(&want.entropy.unwrap()));
        for generic in [false, true] {
            m.set_force_generic(generic);
            let got = m.response_logprobs_no_grad(&batch, true, 1.0).unwrap();
            let what = format!("{name}, {} training forward", path_name(generic));
            let d = max_abs_diff(&flat(&got.logprobs), &want_lp);
            assert!(d < TOL, "{what}: log-probs differ by {d}");
            let d = max_abs_diff(&flat(&got.entropy.unwrap()), &want_ent);
            assert!(d < TOL, "{what}: entropies differ by {d}");
        }
    }
}

/// The training step's log-probs and the gradient of every weight equal autograd through the
/// reference, on both layers, for every feature combination (loss: weighted log-probs plus
/// entropies at temperature 0.8).
#[test]
fn training_step_gradients_match_the_reference_for_every_feature() {
    let vocab = 40;
    let seqs = sequences(vocab);
    let batch = seq_batch(&seqs);
    let r = batch.max_response_len();
    let w: Vec<f32> = (0..ROWS * r)
        .map(|i| ((i * 5 % 7) as f32 - 3.0) / 3.0)
        .collect();
    let w = Tensor::from_vec(w, (ROWS, r), &Device::Cpu).unwrap();
    let loss_of = |lp: &Tensor, ent: &Tensor| -> candle_core::Result<Tensor> {
        (lp * &w)?.sum_all()? + (ent * 0.3)?.sum_all()?
    };
    let opts = TrainForwardOptions {
        temperature: 0.8,
        with_entropy: true,
        gradient_checkpointing: false,
    };
    for (i, (name, cfg)) in combinations(vocab).into_iter().enumerate() {
        let (mut m, varmap) = model(&cfg, 200 + i as u64);
        let want = Reference::new(&cfg, &varmap).response_logprobs(&batch, opts.temperature);
        let want_grads = loss_of(&want.logprobs, want.entropy.as_ref().unwrap())
            .unwrap()
            .backward()
            .unwrap();
        for generic in [false, true] {
            m.set_force_generic(generic);
            let what = format!("{name}, {} training step", path_name(generic));
            let step = m
                .loss_and_grads::<rlvr_model::Error, _>(&batch, &opts, |out| {
                    Ok(loss_of(&out.logprobs, out.entropy.as_ref().unwrap())?)
                })
                .unwrap();
            let d = max_abs_diff(&flat(&step.out.logprobs), &flat(&want.logprobs));
            assert!(d < TOL, "{what}: log-probs differ by {d}");
            for (wname, var) in sorted_vars(&varmap) {
                let got = step
                    .grads
                    .get(var.as_tensor())
                    .unwrap_or_else(|| panic!("{what}: no gradient for {wname}"));
                let want = flat(want_grads.get(var.as_tensor()).unwrap());
                let scale = want.iter().fold(1e-6f32, |m, x| m.max(x.abs()));
                let d = max_abs_diff(&flat(got), &want) / scale;
                assert!(
                    d < TOL,
                    "{what}: gradient of {wname} differs by {d} (relative to {scale})"
                );
            }
        }
    }
}

/// One KV-cached pass over the sequences in chunks of `schedule` tokens: the log-softmax of
/// the logits each call returns, keyed by the position they predict from.
fn decode(m: &Decoder, seqs: &[Vec<u32>], schedule: &[usize]) -> Vec<(usize, Vec<Vec<f32>>)> {
    let mut cache = KvCache::new(m.config().num_hidden_layers);
    let mut out = Vec::new();
    let mut start = 0;
    for &len in schedule {
        let ids: Vec<Vec<u32>> = seqs
            .iter()
            .map(|s| s[start..start + len].to_vec())
            .collect();
        let positions = vec![(start as u32..(start + len) as u32).collect::<Vec<_>>(); ROWS];
        let logits = m
            .forward_cached(
                &Tensor::new(ids, &Device::Cpu).unwrap(),
                &positions,
                &vec![vec![true; len]; ROWS],
                &mut cache,
            )
            .unwrap();
        let lp = candle_nn::ops::log_softmax(&logits, 1)
            .unwrap()
            .to_vec2::<f32>()
            .unwrap();
        start += len;
        out.push((start - 1, lp));
    }
    assert_eq!(start, T, "a schedule covers the sequence");
    out
}

/// The KV-cached sampling forward gives the reference's next-token distributions on the CPU
/// decode and on the device-generic decode, for every feature combination: token by token
/// (every position), in uneven chunks (a prefill, then one token, then two on a filled cache)
/// and in one prefill of the whole sequence.
#[test]
fn kv_cached_decode_matches_the_reference_for_every_feature() {
    let vocab = 40;
    let seqs = sequences(vocab);
    let schedules: [&[usize]; 3] = [&[1; T], &[3, 1, 2, 1], &[T]];
    for (i, (name, cfg)) in combinations(vocab).into_iter().enumerate() {
        let (mut m, varmap) = model(&cfg, 300 + i as u64);
        let want = reference_logprobs(&Reference::new(&cfg, &varmap), &seqs);
        for generic in [false, true] {
            m.set_force_generic(generic);
            let path = if generic {
                "device-generic decode"
            } else {
                "CPU decode"
            };
            for schedule in schedules {
                for (pos, rows) in decode(&m, &seqs, schedule) {
                    for (r, got) in rows.iter().enumerate() {
                        let d = max_abs_diff(got, &want[r][pos]);
                        assert!(
                            d < TOL,
                            "{name}, {path}, chunks {schedule:?}: row {r} position {pos} \
                             differs by {d}"
                        );
                    }
                }
            }
        }
    }
}

/// Save then load keeps every feature: the configuration read back equals the one saved, and
/// the loaded model's log-probs equal the saved model's bit for bit.
#[test]
fn save_then_load_keeps_every_feature() {
    let tok = fixture_tokenizer();
    let vocab = tok.tokenizer.get_vocab_size(true);
    let seqs = sequences(vocab);
    let batch = seq_batch(&seqs);
    let root = temp_dir("feature-parity");
    for (i, (name, cfg)) in combinations(vocab).into_iter().enumerate() {
        let (m, varmap) = model(&cfg, 400 + i as u64);
        let dir = root.join(format!("m{i}"));
        save_model(&dir, &varmap, &cfg, &tok).unwrap();
        let loaded = load_model(dir.to_str().unwrap(), DType::F32, &Device::Cpu).unwrap();
        assert_eq!(
            loaded.config, cfg,
            "{name}: configuration after save -> load"
        );
        let lp = |m: &Decoder| {
            flat(
                &m.response_logprobs_no_grad(&batch, true, 1.0)
                    .unwrap()
                    .logprobs,
            )
        };
        assert_eq!(
            lp(&loaded.model),
            lp(&m),
            "{name}: log-probs after save -> load"
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// A configuration built in code whose switches config.json cannot express (so it would save
/// as another model) is refused before any kernel runs, naming the key.
#[test]
fn switches_config_json_cannot_express_are_refused() {
    let base = small_config("qwen2", 40);
    let cases: [(Architecture, bool, bool, &str); 4] = [
        (Architecture::Qwen2, false, false, "attention_bias"),
        (Architecture::Qwen2, true, true, "qk_norm"),
        (Architecture::Llama, false, true, "qk_norm"),
        (Architecture::Qwen3, false, false, "qk_norm"),
    ];
    for (arch, bias, qk_norm, key) in cases {
        let mut c = base.clone();
        c.architecture = arch;
        c.attention_bias = bias;
        c.qk_norm = qk_norm;
        let err = init_random(&c, 0, DType::F32, &Device::Cpu)
            .err()
            .unwrap_or_else(|| panic!("{arch:?} bias={bias} qk_norm={qk_norm} must be refused"))
            .to_string();
        assert!(
            err.contains("model config") && err.contains(key),
            "{arch:?} bias={bias} qk_norm={qk_norm}: {err}"
        );
    }
}

/// Every RoPE variant other than the default one is refused when config.json is read, under
/// either key and either spelling of the type, naming the type: no path implements them, so
/// none may run a model that needs one. So is a partial rotary factor.
#[test]
fn rope_scaling_and_partial_rotary_are_refused() {
    let base = serde_json::json!({
        "architectures": ["LlamaForCausalLM"], "vocab_size": 40, "hidden_size": 32,
        "intermediate_size": 48, "num_hidden_layers": 1, "num_attention_heads": 4,
        "num_key_value_heads": 2, "max_position_embeddings": 256});
    let parse = |v: &serde_json::Value| DecoderConfig::from_json(v, Path::new("m/config.json"));
    assert!(parse(&base).is_ok());
    let llama3 = serde_json::json!({"factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 64, "rope_theta": 1e4});
    for key in ["rope_scaling", "rope_parameters"] {
        for type_key in ["rope_type", "type"] {
            // the length-dependent kinds are refused by name
            for kind in ["dynamic", "yarn", "longrope", "su"] {
                let mut v = base.clone();
                v[key] = serde_json::json!({type_key: kind, "factor": 4.0, "rope_theta": 1e4});
                let err = parse(&v)
                    .expect_err(&format!("{key}.{type_key} = {kind} must be refused"))
                    .to_string();
                assert!(
                    err.contains("m/config.json") && err.contains(kind) && err.contains(key),
                    "{key}.{type_key} = {kind}: {err}"
                );
            }
            // linear and llama3 are read, each key they need named when missing
            let mut v = base.clone();
            v[key] = serde_json::json!({type_key: "linear", "factor": 4.0});
            assert_eq!(
                parse(&v).unwrap().rope_scaling,
                RopeScaling::Linear { factor: 4.0 }
            );
            let mut v = base.clone();
            v[key] = llama3.clone();
            v[key][type_key] = "llama3".into();
            let c = parse(&v).unwrap();
            assert_eq!(
                c.rope_scaling,
                RopeScaling::Llama3 {
                    factor: 8.0,
                    low_freq_factor: 1.0,
                    high_freq_factor: 4.0,
                    original_max_position_embeddings: 64
                }
            );
            for missing in [
                "factor",
                "low_freq_factor",
                "high_freq_factor",
                "original_max_position_embeddings",
            ] {
                let mut w = v.clone();
                w[key].as_object_mut().unwrap().remove(missing);
                let err = parse(&w).expect_err(missing).to_string();
                assert!(
                    err.contains(&format!("{key}.{missing}")) && err.contains("missing"),
                    "{err}"
                );
            }
        }
    }
    // values out of range name their key
    for (field, value, named) in [
        ("factor", serde_json::json!(0.5), "factor"),
        ("low_freq_factor", serde_json::json!(0.0), "low_freq_factor"),
        (
            "high_freq_factor",
            serde_json::json!(1.0),
            "high_freq_factor",
        ),
        (
            "original_max_position_embeddings",
            serde_json::json!(0),
            "original_max_position_embeddings",
        ),
        (
            "original_max_position_embeddings",
            serde_json::json!(64.5),
            "original_max_position_embeddings",
        ),
        ("factor", serde_json::json!("8"), "factor"),
    ] {
        let mut v = base.clone();
        v["rope_parameters"] = llama3.clone();
        v["rope_parameters"]["rope_type"] = "llama3".into();
        v["rope_parameters"][field] = value.clone();
        let err = parse(&v)
            .expect_err(&format!("{field} = {value}"))
            .to_string();
        assert!(err.contains(named), "{field} = {value}: {err}");
    }
    // rope_scaling and rope_parameters that disagree mean two models
    let mut v = base.clone();
    v["rope_parameters"] = serde_json::json!({"rope_type": "default", "rope_theta": 1e4});
    v["rope_scaling"] = serde_json::json!({"rope_type": "linear", "factor": 2.0});
    let err = parse(&v).expect_err("disagreeing rope keys").to_string();
    assert!(
        err.contains("rope_scaling") && err.contains("disagrees"),
        "{err}"
    );
    let mut v = base.clone();
    v["rope_scaling"] = serde_json::json!({"rope_type": "default"});
    assert!(parse(&v).is_ok(), "the default RoPE is accepted");
    for (key, nested) in [
        ("partial_rotary_factor", false),
        ("rope_parameters", true),
        ("rope_scaling", true),
    ] {
        let mut v = base.clone();
        v[key] = if nested {
            serde_json::json!({"rope_type": "default", "partial_rotary_factor": 0.5})
        } else {
            0.5.into()
        };
        let err = parse(&v)
            .expect_err(&format!("{key}: partial rotary factor 0.5 must be refused"))
            .to_string();
        assert!(err.contains("partial_rotary_factor"), "{key}: {err}");
        let mut v = base.clone();
        v[key] = if nested {
            serde_json::json!({"rope_type": "default", "partial_rotary_factor": 1.0})
        } else {
            1.0.into()
        };
        assert!(parse(&v).is_ok(), "{key}: factor 1.0 is the default RoPE");
    }
}
