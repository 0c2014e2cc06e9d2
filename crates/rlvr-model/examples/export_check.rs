//! Writes checkpoints SAVED BY rlvr, with rlvr's log-probs beside them, for
//! `scripts/model/make_fixtures.py --check-saved` to load in transformers and compare.
//!
//!     cargo run -p rlvr-model --example export_check -- OUT_DIR
//!
//! OUT_DIR/fresh-tiny: `DecoderConfig::tiny` with seeded random weights and the fixtures'
//! tokenizer (plain-text mode), the way the testbed builds its model.
//! OUT_DIR/resaved-<fixture>: each transformers fixture loaded and saved again by rlvr.

use std::path::Path;

use candle_core::{DType, Device};
use rlvr_model::{
    init_random, load_model, save_model, ChatTokenizer, Decoder, DecoderConfig, TokenBatch,
};

fn logprob_json(model: &Decoder, tok: &ChatTokenizer) -> serde_json::Value {
    let texts = ["Compute 12+34=46", "The answer is 7.", "Add: 7 9 5 = 21"];
    let mut seqs = Vec::new();
    for t in texts {
        let ids = tok.encode(t, false).unwrap();
        let batch =
            TokenBatch::new(&[(ids[..1].to_vec(), ids[1..].to_vec())], 0, &Device::Cpu).unwrap();
        let lp = model
            .response_logprobs_no_grad(&batch, false, 1.0)
            .unwrap()
            .logprobs
            .to_vec2::<f32>()
            .unwrap();
        seqs.push(serde_json::json!({"ids": ids, "logprobs": lp[0]}));
    }
    let encodings: Vec<_> = texts
        .iter()
        .map(|t| serde_json::json!({"text": t, "ids": tok.encode(t, false).unwrap()}))
        .collect();
    serde_json::json!({"sequences": seqs, "encodings": encodings})
}

fn main() {
    let out = std::env::args()
        .nth(1)
        .expect("usage: export_check OUT_DIR");
    let out = Path::new(&out);
    std::fs::create_dir_all(out).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");

    let mut tok = ChatTokenizer::from_dir(&fixtures.join("qwen3-tiny")).unwrap();
    tok.config.clear(); // as if built from a bare tokenizer.json (testbed)
    let tok = ChatTokenizer {
        chat_template: None,
        ..tok
    };
    let cfg = DecoderConfig::tiny(tok.tokenizer.get_vocab_size(true));
    let (model, varmap) = init_random(&cfg, 11, DType::F32, &Device::Cpu).unwrap();
    let dir = out.join("fresh-tiny");
    let _ = std::fs::remove_dir_all(&dir);
    save_model(&dir, &varmap, &cfg, &tok).unwrap();
    std::fs::write(
        dir.join("rlvr_logprobs.json"),
        logprob_json(&model, &tok).to_string(),
    )
    .unwrap();
    println!("{}", dir.display());

    for name in ["qwen2-tiny", "qwen3-tiny", "llama-tiny", "llama3-tiny"] {
        let m = load_model(
            fixtures.join(name).to_str().unwrap(),
            DType::F32,
            &Device::Cpu,
        )
        .unwrap();
        let dir = out.join(format!("resaved-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        m.save(&dir).unwrap();
        std::fs::write(
            dir.join("rlvr_logprobs.json"),
            logprob_json(&m.model, &m.tokenizer).to_string(),
        )
        .unwrap();
        println!("{}", dir.display());
    }
}
