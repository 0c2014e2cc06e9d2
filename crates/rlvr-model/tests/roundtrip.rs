//! Save -> load reproduces the model bit for bit; loading fails clearly on bad checkpoints;
//! hub ids resolve through the local cache.

mod common;

use std::path::Path;

use candle_core::{DType, Device};
use common::*;
use rlvr_hub::resolve_in_cache;
use rlvr_model::{init_random, load_model, save_model, Decoder, DecoderConfig};

fn logprobs(model: &Decoder, vocab: u32) -> Vec<Vec<f32>> {
    model
        .response_logprobs_no_grad(&batch(vocab), true, 1.0)
        .unwrap()
        .logprobs
        .to_vec2::<f32>()
        .unwrap()
}

fn load(dir: &Path, dtype: DType) -> rlvr_model::Result<rlvr_model::LoadedModel> {
    load_model(dir.to_str().unwrap(), dtype, &Device::Cpu)
}

/// init_random -> save -> load gives bit-identical log-probs, in f32 and bf16, and the saved
/// config round-trips. The same seed gives the same weights.
#[test]
fn save_then_load_is_bit_identical() {
    let tok = fixture_tokenizer();
    let vocab = tok.tokenizer.get_vocab_size(true);
    for dtype in [DType::F32, DType::BF16] {
        let cfg = DecoderConfig::tiny(vocab);
        let (model, varmap) = init_random(&cfg, 7, dtype, &Device::Cpu).unwrap();
        let before = logprobs(&model, vocab as u32);
        let dir = temp_dir(&format!("save-{dtype:?}")).join("ckpt");
        save_model(&dir, &varmap, &cfg, &tok).unwrap();
        let loaded = load(&dir, dtype).unwrap();
        assert_eq!(logprobs(&loaded.model, vocab as u32), before, "{dtype:?}");
        let mut want = cfg.clone();
        want.dtype = loaded.config.dtype.clone();
        assert_eq!(loaded.config, want);
        // saving again over the existing directory (the per-file rename path) also round-trips
        save_model(&dir, &loaded.varmap, &loaded.config, &loaded.tokenizer).unwrap();
        assert_eq!(
            logprobs(&load(&dir, dtype).unwrap().model, vocab as u32),
            before
        );
        let (again, _) = init_random(&cfg, 7, dtype, &Device::Cpu).unwrap();
        assert_eq!(
            logprobs(&again, vocab as u32),
            before,
            "init_random must be seeded"
        );
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }
}

/// Hugging Face checkpoints (bf16 tied Qwen2 with a chat template, sharded f32 Qwen3) survive
/// load -> save -> load exactly, keeping their chat template and config keys.
#[test]
fn transformers_checkpoints_round_trip() {
    for name in ["qwen2-tiny", "qwen3-tiny"] {
        let a = load(&fixture(name), DType::F32).unwrap();
        let dir = temp_dir(&format!("rt-{name}")).join("ckpt");
        a.save(&dir).unwrap();
        let b = load(&dir, DType::F32).unwrap();
        assert_eq!(logprobs(&b.model, 272), logprobs(&a.model, 272), "{name}");
        assert_eq!(b.tokenizer.chat_template, a.tokenizer.chat_template);
        assert_eq!(b.tokenizer.eos_token_ids, a.tokenizer.eos_token_ids);
        assert_eq!(b.config, a.config);
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn bad_checkpoints_fail_with_named_errors() {
    let root = temp_dir("bad");
    let expect_err = |dir: &Path, needles: &[&str]| {
        let err = match load(dir, DType::F32) {
            Ok(_) => panic!("{}: loaded", dir.display()),
            Err(e) => e.to_string(),
        };
        for n in needles {
            assert!(err.contains(n), "error {err:?} should mention {n:?}");
        }
    };
    // missing files
    let d = root.join("no-config");
    copy_dir(&fixture("qwen2-tiny"), &d);
    std::fs::remove_file(d.join("config.json")).unwrap();
    expect_err(&d, &["config.json", "no-config"]);
    let d = root.join("no-weights");
    copy_dir(&fixture("qwen2-tiny"), &d);
    std::fs::remove_file(d.join("model.safetensors")).unwrap();
    expect_err(&d, &["model.safetensors"]);
    let d = root.join("no-shard");
    copy_dir(&fixture("qwen3-tiny"), &d);
    std::fs::remove_file(d.join("model-00002-of-00002.safetensors")).unwrap();
    expect_err(&d, &["model-00002-of-00002.safetensors"]);
    let d = root.join("no-tokenizer");
    copy_dir(&fixture("qwen2-tiny"), &d);
    std::fs::remove_file(d.join("tokenizer.json")).unwrap();
    expect_err(&d, &["tokenizer.json"]);
    // unsupported architecture
    let edit = |name: &str, f: &dyn Fn(&mut serde_json::Value)| {
        let d = root.join(name);
        copy_dir(&fixture("qwen2-tiny"), &d);
        let p = d.join("config.json");
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        f(&mut v);
        std::fs::write(&p, v.to_string()).unwrap();
        d
    };
    let d = edit("arch", &|v| {
        v["architectures"] = serde_json::json!(["GPT2LMHeadModel"])
    });
    expect_err(&d, &["unsupported", "GPT2LMHeadModel", "config.json"]);
    // shape mismatch names the tensor
    let d = edit("shape", &|v| v["intermediate_size"] = 64.into());
    expect_err(
        &d,
        &[
            "model.layers.0.mlp.gate_proj.weight",
            "[64, 32]",
            "[48, 32]",
        ],
    );
    // a tensor the config needs is absent (untied head expected, checkpoint is tied)
    let d = edit("untied", &|v| v["tie_word_embeddings"] = false.into());
    expect_err(&d, &["lm_head.weight", "missing"]);
    // not a directory and not a hub id
    expect_err(&root.join("does/not/exist"), &["does/not/exist"]);
    std::fs::remove_dir_all(&root).unwrap();
}

/// A directory whose weights are PyTorch pickles (`pytorch_model.bin`, `*.pt`) is refused
/// with the conversion commands; the pickle is never opened (here it is a pickle that would
/// run `os.system` if loaded, and the error is the same as for any other name).
#[test]
fn pickle_checkpoints_are_refused_with_the_conversion() {
    let root = temp_dir("pickle");
    // protocol-0 pickle of os.system("touch pwned")
    let payload = b"cos\nsystem\n(S'touch pwned'\ntR.";
    for file in ["pytorch_model.bin", "weights.pt", "model.pth", "last.ckpt"] {
        let d = root.join(file.replace('.', "-"));
        copy_dir(&fixture("qwen2-tiny"), &d);
        std::fs::remove_file(d.join("model.safetensors")).unwrap();
        std::fs::write(d.join(file), payload).unwrap();
        let err = match load(&d, DType::F32) {
            Ok(_) => panic!("{file}: loaded"),
            Err(e) => e,
        };
        assert!(err.is_user_input());
        let msg = err.to_string();
        for needle in [
            file,
            "pickle",
            "not loaded",
            "save_pretrained",
            "safe_serialization=True",
            "safetensors.torch import save_file",
            "model.safetensors",
        ] {
            assert!(
                msg.contains(needle),
                "{file}: {msg:?} should mention {needle:?}"
            );
        }
        assert!(!d.join("pwned").exists());
    }
    // safetensors next to a pickle: the safetensors load, the pickle is ignored
    let d = root.join("both");
    copy_dir(&fixture("qwen2-tiny"), &d);
    std::fs::write(d.join("pytorch_model.bin"), payload).unwrap();
    assert!(load(&d, DType::F32).is_ok());
    std::fs::remove_dir_all(&root).unwrap();
}

/// A hub id resolves to `<cache>/models--owner--name/snapshots/<refs/main>/`; an uncached id is
/// an error naming the files needed and where (no network is touched).
#[test]
fn hub_ids_resolve_through_the_cache() {
    let cache = temp_dir("hub");
    let repo = cache.join("models--tiny-org--qwen2-tiny");
    copy_dir(
        &fixture("qwen2-tiny"),
        &repo.join("snapshots").join("abc123"),
    );
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::write(repo.join("refs").join("main"), "abc123").unwrap();
    let dir = resolve_in_cache("tiny-org/qwen2-tiny", &cache).unwrap();
    assert_eq!(dir, repo.join("snapshots").join("abc123"));
    assert!(load(&dir, DType::F32).is_ok());

    let err = resolve_in_cache("Qwen/Qwen3-1.7B", &cache)
        .unwrap_err()
        .to_string();
    for needle in [
        "Qwen/Qwen3-1.7B",
        "config.json",
        "tokenizer.json",
        "model.safetensors",
        "models--Qwen--Qwen3-1.7B",
    ] {
        assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    }
    std::fs::remove_dir_all(&cache).unwrap();
}
