//! Shared fixtures: a tiny character-level model saved in Hugging Face layout, a dataset whose
//! answers a random model hits often enough for rewards to vary, and configs that train on
//! them in a second or two.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use rlvr_model::ChatTokenizer;
use rlvr_tasks::{Problem, Prompt};
use rlvr_test_support::models::{self, TinyShape};
use rlvr_train::TrainConfig;

/// Characters of the test vocabulary (ids 0..), then `<eos>`.
pub const CHARS: &str = "01 +=";

/// A WordLevel tokenizer with one token per character of [`CHARS`] and `<eos>` as a special
/// token.
pub fn char_tokenizer() -> tokenizers::Tokenizer {
    char_tokenizer_over(&CHARS.chars().collect::<Vec<_>>())
}

/// A WordLevel tokenizer with one token per character of `chars` (ids in order, newlines
/// included) and `<eos>` (id `chars.len()`) as a special token.
pub fn char_tokenizer_over(chars: &[char]) -> tokenizers::Tokenizer {
    models::char_tokenizer(chars, "<eos>")
}

/// Saves a random tiny model ([`TinyShape::TWO_LAYERS`], 64 positions) with the character
/// tokenizer to `dir`.
pub fn save_tiny_model(dir: &Path, seed: u64) {
    let tok = ChatTokenizer::new(char_tokenizer(), Some("<eos>")).unwrap();
    let cfg = TinyShape::TWO_LAYERS.config(CHARS.len() + 1, CHARS.len() as u32, 64);
    models::save_random_model(dir, &cfg, &tok, seed);
}

/// A problem with a text prompt `text`, answer "1" and data source "t".
pub fn text_problem(id: &str, text: String) -> Problem {
    Problem {
        id: id.into(),
        prompt: Prompt::Text(text),
        answer: "1".into(),
        solution: None,
        data_source: "t".into(),
        choices: None,
    }
}

/// A jsonl dataset of `n` problems "a+b=" with answers "0" or "1" (the math verifier takes the
/// last number of a short response, so a random model is right about a third of the time).
pub fn write_dataset(path: &Path, n: usize) {
    let mut text = String::new();
    for i in 0..n {
        let (a, b) = (i % 2, (i / 2) % 2);
        let ans = (a + b) % 2;
        text +=
            &format!("{{\"id\": \"p{i}\", \"problem\": \"{a}+{b}=\", \"answer\": \"{ans}\"}}\n");
    }
    std::fs::write(path, text).unwrap();
}

/// A temporary workspace with the model, the dataset and a config training on them.
pub struct Fixture {
    /// The directory holding everything (runs under `root/runs`).
    pub root: PathBuf,
    pub model: PathBuf,
    pub data: PathBuf,
    _guard: Option<tempfile::TempDir>,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("model");
        save_tiny_model(&model, 1);
        let data = dir.path().join("data.jsonl");
        write_dataset(&data, 16);
        Self {
            root: dir.path().to_path_buf(),
            model,
            data,
            _guard: Some(dir),
        }
    }

    /// The fixture another process created in `path` (kept: not deleted on drop).
    pub fn at(path: &Path) -> Self {
        Self {
            root: path.to_path_buf(),
            model: path.join("model"),
            data: path.join("data.jsonl"),
            _guard: None,
        }
    }

    /// `section.key=value` overrides for a tiny run on this fixture.
    pub fn overrides(&self, extra: &[&str]) -> Vec<String> {
        let mut o: Vec<String> = vec![
            format!("model.path={:?}", self.model.display().to_string()),
            format!("data.train_files={:?}", self.data.display().to_string()),
            "data.prompt_template=raw".into(),
            "data.max_prompt_length=16".into(),
            format!(
                "trainer.runs_dir={:?}",
                self.root.join("runs").display().to_string()
            ),
            "trainer.train_batch_size=4".into(),
            "trainer.total_training_steps=4".into(),
            "trainer.save_freq=1".into(),
            "rollout.num_generations=4".into(),
            "rollout.max_response_length=6".into(),
            "algorithm.ppo_mini_batch_size=4".into(),
            "algorithm.ppo_micro_batch_size=16".into(),
            "optim.lr=0.01".into(),
            format!("eval.datasets=[{:?}]", self.data.display().to_string()),
            "eval.n_problems=4".into(),
            "eval.k=2".into(),
            "eval.test_freq=0".into(),
            "logging.progress=false".into(),
            "logging.print_freq=0".into(),
        ];
        o.extend(extra.iter().map(|s| s.to_string()));
        o
    }

    pub fn config(&self, extra: &[&str]) -> TrainConfig {
        TrainConfig::load(None, &self.overrides(extra)).unwrap()
    }
}

/// Every parameter of a checkpoint directory's model.safetensors, by name.
pub fn read_params(ckpt: &Path) -> Vec<(String, Vec<f32>)> {
    let map = candle_core::safetensors::load(ckpt.join("model.safetensors"), &Device::Cpu).unwrap();
    let mut v: Vec<(String, Vec<f32>)> = map
        .into_iter()
        .map(|(k, t)| {
            (
                k,
                t.to_dtype(DType::F32)
                    .unwrap()
                    .flatten_all()
                    .unwrap()
                    .to_vec1()
                    .unwrap(),
            )
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}
