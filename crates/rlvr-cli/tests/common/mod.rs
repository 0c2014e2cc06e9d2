//! Helpers shared by the CLI's end-to-end tests.

use std::path::Path;
use std::process::{Command, Output};

/// Runs the `rlvr` binary in `cwd`.
pub fn rlvr(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rlvr"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run rlvr")
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
    "model.hidden_size=32",
    "model.num_hidden_layers=1",
    "model.num_attention_heads=2",
    "model.intermediate_size=64",
    "trainer.total_training_steps=2",
    "trainer.train_batch_size=4",
    "algorithm.ppo_mini_batch_size=4",
    "rollout.num_generations=4",
    "rollout.max_response_length=48",
];
