//! GRPO steps of a random Qwen2.5-0.5B-shaped policy (24 layers, vocabulary 151,936) with long
//! responses, for the GPU smoke check (scripts/gpu-smoke.sh): prints sampling and training
//! tokens/s per step. No network, no data files: the tokenizer is a word-level one with one
//! token per id (`t0` .. `t151935`), prompts are random ids, and the reward is a hash of the
//! response text (so groups have reward variation whatever the random model writes).
//!
//!     cargo run --release -p rlvr-bench --features cuda --example grpo_smoke -- \
//!         [--device cuda] [--dtype bf16] [--steps 3] [--response-len 1024] [--layers 24]
//!
//! Defaults: cuda, bf16, 3 steps, 1024-token responses, 8 prompts x 8 responses, micro-batch 8.

use std::sync::Arc;
use std::time::Instant;

use candle_core::{DType, Device};
use rlvr_model::{init_random, ChatTokenizer, DecoderConfig};
use rlvr_tasks::{Problem, Prompt, Score, Verifier};
use rlvr_train::optim::Params;
use rlvr_train::policy::Policy;
use rlvr_train::task::Task;
use rlvr_train::{TrainConfig, Trainer};

/// Reward 1 when the FNV-1a hash of the response text is odd.
struct HashVerifier;

impl Verifier for HashVerifier {
    fn score(&self, response: &str, _problem: &Problem) -> Score {
        let h = response.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
        let correct = h % 2 == 1;
        Score {
            reward: if correct { 1.0 } else { 0.0 },
            correct,
            extracted: None,
            reason: "hash parity".into(),
        }
    }
}

fn word_tokenizer(vocab: usize) -> tokenizers::Tokenizer {
    let words: serde_json::Map<String, serde_json::Value> = (0..vocab)
        .map(|i| (format!("t{i}"), (i as u64).into()))
        .collect();
    let json = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [{
            "id": vocab - 1, "content": format!("t{}", vocab - 1), "single_word": false,
            "lstrip": false, "rstrip": false, "normalized": false, "special": true
        }],
        "normalizer": null,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null,
        "decoder": null,
        "model": {"type": "WordLevel", "vocab": words, "unk_token": "t0"}
    });
    json.to_string().parse().expect("valid tokenizer JSON")
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}: cannot parse {v:?}"))
        })
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let device_name: String = arg(&args, "--device", "cuda".to_string());
    let dtype: String = arg(&args, "--dtype", "bf16".to_string());
    let steps: usize = arg(&args, "--steps", 3);
    let response_len: usize = arg(&args, "--response-len", 1024);
    let layers: usize = arg(&args, "--layers", 24);
    let device = match device_name.as_str() {
        "cpu" => Device::Cpu,
        _ => Device::new_cuda(0).expect("a CUDA device (build with --features cuda)"),
    };
    let dtype = match dtype.as_str() {
        "f32" => DType::F32,
        "bf16" => DType::BF16,
        other => panic!("--dtype f32 or bf16, got {other}"),
    };
    let mut cfg = DecoderConfig::qwen25_05b_shaped(layers);
    let eos = cfg.vocab_size as u32 - 1;
    cfg.eos_token_ids = vec![eos];
    let t0 = Instant::now();
    let (model, varmap) = init_random(&cfg, 0, dtype, &device).expect("init");
    let tokenizer = ChatTokenizer::new(word_tokenizer(cfg.vocab_size), Some(&format!("t{eos}")))
        .expect("tokenizer");
    println!(
        "policy: Qwen2.5-0.5B shape, {layers} layers, {dtype:?} on {device_name}, init {:.1}s",
        t0.elapsed().as_secs_f64()
    );
    let policy = Policy {
        params: Params::from_varmap(&varmap),
        model,
        varmap,
        config: cfg.clone(),
        tokenizer,
        device: device.clone(),
        dtype,
    };
    // 64 random 32-token prompts
    let mut state = 12345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % (cfg.vocab_size as u64 - 1)) as u32
    };
    let prompts: Vec<Vec<u32>> = (0..64).map(|_| (0..32).map(|_| next()).collect()).collect();
    let problems: Vec<Problem> = (0..prompts.len())
        .map(|i| Problem {
            id: format!("p{i}"),
            prompt: Prompt::Text(String::new()),
            answer: String::new(),
            solution: None,
            data_source: "smoke".into(),
            choices: None,
        })
        .collect();
    let task = Task {
        environment: None,
        name: "smoke".into(),
        problems,
        prompts,
        verifier: Arc::new(HashVerifier),
    };
    let mut tc = TrainConfig::default();
    tc.trainer.train_batch_size = 8;
    tc.trainer.total_training_steps = steps;
    tc.rollout.num_generations = 8;
    tc.rollout.max_response_length = response_len;
    tc.rollout.temperature = 1.0;
    tc.algorithm.ppo_mini_batch_size = 8;
    tc.algorithm.ppo_micro_batch_size = 8;
    tc.optim.lr = 1e-6;
    let mut trainer =
        Trainer::new(tc, policy, task, rlvr_train::grpo::Start::Fresh, None).expect("trainer");
    for s in 1..=steps {
        let t = Instant::now();
        let r = trainer.step().expect("step").line;
        println!(
            "step {s}: reward {:.3}, response length {:.0} (truncated {:.2}), sampling {:.0} tok/s, \
             training {:.0} tok/s, rollout {:.1}s, train {:.1}s, wall {:.1}s{}",
            r.reward_mean,
            r.response_length_mean,
            r.truncated_share,
            r.rollout_tokens_per_s,
            r.train_tokens_per_s,
            r.time_rollout_s,
            r.time_train_s,
            t.elapsed().as_secs_f64(),
            r.skip_reason
                .map(|w| format!(" (skipped: {w})"))
                .unwrap_or_default()
        );
    }
}
