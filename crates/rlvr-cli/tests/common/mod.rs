//! Helpers shared by the CLI's end-to-end tests.

use std::path::Path;
use std::process::{Command, Output};

use rlvr_test_support::models::TinyShape;

/// Runs the `rlvr` binary in `cwd`.
pub fn rlvr(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run rlvr")
}

/// Runs the `rlvr` binary in the test's working directory.
#[allow(dead_code)] // not every test binary that shares this module needs it
pub fn rlvr_here(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(args)
        .output()
        .expect("run rlvr")
}

/// rlvr-model's tiny Qwen2 fixture (a real byte-level BPE tokenizer and chat template).
#[allow(dead_code)]
pub fn tokenizer_dir() -> std::path::PathBuf {
    rlvr_test_support::models::qwen2_tiny_dir()
}

/// Its stdout and stderr, for assertion messages.
pub fn log(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `--set` overrides of a testbed run small enough for a test: a one-layer model of width
/// 32, two GRPO steps of 4 prompts x 4 responses.
pub const TINY_TESTBED: [&str; 9] = [
    "testbed.hidden_size=32",
    "testbed.num_hidden_layers=1",
    "testbed.num_attention_heads=2",
    "testbed.intermediate_size=64",
    "trainer.total_training_steps=2",
    "trainer.train_batch_size=4",
    "algorithm.ppo_mini_batch_size=4",
    "rollout.num_generations=4",
    "rollout.max_response_length=48",
];

/// Saves a random one-layer model ([`TinyShape::ONE_LAYER`]) with `tok` in Hugging Face layout
/// into `dir`: `vocab` tokens, `eos` its end token, `positions` its context.
#[allow(dead_code)] // not every test binary that shares this module saves a model
pub fn save_one_layer_model(
    dir: &Path,
    tok: &rlvr_model::ChatTokenizer,
    vocab: usize,
    eos: u32,
    positions: usize,
    seed: u64,
) {
    let cfg = TinyShape::ONE_LAYER.config(vocab, eos, positions);
    rlvr_test_support::models::save_random_model(dir, &cfg, tok, seed);
}
