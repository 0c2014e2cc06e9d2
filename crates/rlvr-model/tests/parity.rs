//! Parity with Hugging Face transformers on the committed tiny random checkpoints
//! (tests/fixtures, made by scripts/model/make_fixtures.py): the training forward, the
//! sampling forward, and the plain autograd decoder the other tests use as their reference.

mod common;

use candle_core::{DType, Device, Tensor};
use common::*;
use rlvr_model::{load_model, ChatMessage, KvCache, TokenBatch};

const FIXTURES: [&str; 4] = ["qwen2-tiny", "qwen3-tiny", "llama-tiny", "llama3-tiny"];

fn ref_sequences(name: &str) -> Vec<(Vec<u32>, Vec<f32>, Vec<f32>)> {
    let r = reference(name);
    r["sequences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f = |k: &str| {
                s[k].as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap() as f32)
                    .collect()
            };
            let ids = s["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect();
            (ids, f("logprobs"), f("entropy"))
        })
        .collect()
}

/// Every next-token log-prob and entropy of every reference sequence, computed in one padded
/// batch, equals transformers' float32 values within 1e-4.
#[test]
fn training_forward_matches_transformers() {
    for name in FIXTURES {
        let m = load_model(fixture(name).to_str().unwrap(), DType::F32, &Device::Cpu).unwrap();
        let seqs = ref_sequences(name);
        let pairs: Vec<_> = seqs
            .iter()
            .map(|(ids, _, _)| (ids[..1].to_vec(), ids[1..].to_vec()))
            .collect();
        let batch = TokenBatch::new(&pairs, 0, &Device::Cpu).unwrap();
        let out = m
            .model
            .response_logprobs_no_grad(&batch, true, 1.0)
            .unwrap();
        let lp = out.logprobs.to_vec2::<f32>().unwrap();
        let ent = out.entropy.unwrap().to_vec2::<f32>().unwrap();
        for (i, (_, want_lp, want_ent)) in seqs.iter().enumerate() {
            let n = want_lp.len();
            let d = max_abs_diff(&lp[i][..n], want_lp);
            assert!(d < 1e-4, "{name} sequence {i}: log-probs differ by {d}");
            let d = max_abs_diff(&ent[i][..n], want_ent);
            assert!(d < 1e-4, "{name} sequence {i}: entropies differ by {d}");
            assert!(
                lp[i][n..].iter().all(|&x| x == 0.0),
                "{name}: padding must be 0"
            );
        }
    }
}

/// The KV-cached sampling forward, fed one token at a time, gives the same log-probs.
#[test]
fn sampling_forward_matches_training_forward() {
    for name in FIXTURES {
        let m = load_model(fixture(name).to_str().unwrap(), DType::F32, &Device::Cpu).unwrap();
        for (ids, want, _) in ref_sequences(name) {
            let mut cache = KvCache::new(m.config.num_hidden_layers);
            let mut got = Vec::new();
            // prefill two tokens, then one at a time
            let mut logits = m
                .model
                .forward_cached(
                    &Tensor::new(&[[ids[0], ids[1]]], &Device::Cpu).unwrap(),
                    &[vec![0, 1]],
                    &[vec![true; 2]],
                    &mut cache,
                )
                .unwrap();
            for (k, &tok) in ids.iter().enumerate().skip(2) {
                let row = candle_nn::ops::log_softmax(&logits, 1)
                    .unwrap()
                    .to_vec2::<f32>()
                    .unwrap();
                got.push(row[0][tok as usize]);
                let input = Tensor::new(&[[tok]], &Device::Cpu).unwrap();
                logits = m
                    .model
                    .forward_cached(&input, &[vec![k as u32]], &[vec![true]], &mut cache)
                    .unwrap();
            }
            let d = max_abs_diff(&got, &want[1..]);
            assert!(
                d < 1e-4,
                "{name}: sampling forward differs from transformers by {d}"
            );
        }
    }
}

/// The fixtures' tokenizer.json encodes like transformers' AutoTokenizer, and the ChatML
/// template renders the same string.
#[test]
fn tokenizer_and_chat_template_match_transformers() {
    for name in FIXTURES {
        let m = load_model(fixture(name).to_str().unwrap(), DType::F32, &Device::Cpu).unwrap();
        let r = reference(name);
        for e in r["encodings"].as_array().unwrap() {
            let want: Vec<u32> = e["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(
                m.tokenizer
                    .encode(e["text"].as_str().unwrap(), false)
                    .unwrap(),
                want,
                "{name}"
            );
        }
        if let Some(chat) = r.get("chat") {
            let msgs: Vec<ChatMessage> = serde_json::from_value(chat["messages"].clone()).unwrap();
            assert_eq!(
                m.tokenizer.apply_chat_template(&msgs, true).unwrap(),
                chat["with_generation_prompt"]
            );
            assert_eq!(
                m.tokenizer.apply_chat_template(&msgs, false).unwrap(),
                chat["without_generation_prompt"]
            );
        }
    }
    // eos ids merge tokenizer_config (<|im_end|> = 2) and generation_config ([2, 0])
    let m = load_model(
        fixture("qwen2-tiny").to_str().unwrap(),
        DType::F32,
        &Device::Cpu,
    )
    .unwrap();
    assert_eq!(m.tokenizer.eos_token_ids, [2, 0]);
}

/// A bf16 load runs in bf16 and stays close to the f32 reference.
#[test]
fn bf16_load_is_close_to_reference() {
    let m = load_model(
        fixture("qwen2-tiny").to_str().unwrap(),
        DType::BF16,
        &Device::Cpu,
    )
    .unwrap();
    let (ids, want, _) = ref_sequences("qwen2-tiny").remove(2);
    let batch =
        TokenBatch::new(&[(ids[..1].to_vec(), ids[1..].to_vec())], 0, &Device::Cpu).unwrap();
    let lp = m
        .model
        .response_logprobs_no_grad(&batch, false, 1.0)
        .unwrap()
        .logprobs
        .to_vec2::<f32>()
        .unwrap();
    let d = max_abs_diff(&lp[0], &want);
    assert!(d < 0.25, "bf16 differs from the f32 reference by {d}");
}

/// The tests' reference decoder (all positions, full vocabulary) agrees with transformers
/// too, on every fixture.
#[test]
fn reference_decoder_matches_transformers() {
    for name in FIXTURES {
        let m = load_model(fixture(name).to_str().unwrap(), DType::F32, &Device::Cpu).unwrap();
        let reference = Reference::new(&m.config, &m.varmap);
        for (ids, want, _) in ref_sequences(name) {
            let n = ids.len();
            let input = Tensor::from_vec(ids.clone(), (1, n), &Device::Cpu).unwrap();
            let mask = Tensor::ones((1, n), DType::U32, &Device::Cpu).unwrap();
            let logits = reference.logits(&input, &mask);
            let logp = candle_nn::ops::log_softmax(&logits, 2)
                .unwrap()
                .to_vec3::<f32>()
                .unwrap();
            let got: Vec<f32> = (0..n - 1)
                .map(|i| logp[0][i][ids[i + 1] as usize])
                .collect();
            assert!(max_abs_diff(&got, &want) < 1e-4, "{name}");
        }
    }
}

/// Llama 3's rope scaling is read and used: the `llama3-tiny` fixture's log-probs (compared with
/// transformers in `training_forward_matches_transformers`) move by far more than the parity
/// tolerance when the same weights run with the default frequencies, and its configuration
/// survives a save and a load.
#[test]
fn llama3_rope_scaling_is_used_and_kept() {
    use rlvr_model::RopeScaling;
    let dir = fixture("llama3-tiny");
    let m = load_model(dir.to_str().unwrap(), DType::F32, &Device::Cpu).unwrap();
    assert_eq!(
        m.config.rope_scaling,
        RopeScaling::Llama3 {
            factor: 8.0,
            low_freq_factor: 1.0,
            high_freq_factor: 4.0,
            original_max_position_embeddings: 64
        }
    );
    let (ids, want, _) = ref_sequences("llama3-tiny").remove(2);
    let unscaled_dir = temp_dir("llama3-unscaled");
    for f in std::fs::read_dir(&dir).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, unscaled_dir.join(f.file_name().unwrap())).unwrap();
    }
    let config = unscaled_dir.join("config.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    v["rope_parameters"] = serde_json::json!({"rope_type": "default", "rope_theta": 10000.0});
    std::fs::write(&config, v.to_string()).unwrap();
    let plain = load_model(unscaled_dir.to_str().unwrap(), DType::F32, &Device::Cpu).unwrap();
    let batch =
        TokenBatch::new(&[(ids[..1].to_vec(), ids[1..].to_vec())], 0, &Device::Cpu).unwrap();
    let lp = |model: &rlvr_model::Decoder| {
        model
            .response_logprobs_no_grad(&batch, false, 1.0)
            .unwrap()
            .logprobs
            .to_vec2::<f32>()
            .unwrap()
            .remove(0)
    };
    let scaled = max_abs_diff(&lp(&m.model), &want);
    let unscaled = max_abs_diff(&lp(&plain.model), &want);
    assert!(scaled < 1e-4, "scaled: {scaled}");
    assert!(
        unscaled > 100.0 * 1e-4,
        "the default frequencies must miss transformers' log-probs by far: {unscaled}"
    );
    // transformers 4 and 5 both read the saved configuration back the same
    let json = m.config.to_json();
    assert_eq!(json["rope_parameters"]["rope_type"], "llama3");
    assert_eq!(json["rope_scaling"]["rope_type"], "llama3");
    let back = rlvr_model::DecoderConfig::from_json(&json, std::path::Path::new("saved")).unwrap();
    assert_eq!(back, m.config);
}
