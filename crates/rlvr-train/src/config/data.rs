//! `[data]`: training prompts.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `[data]`: training prompts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataConfig {
    /// An rlvr-tasks preset name (`dapo-math-17k`, `math500`, ...) or a file (.jsonl, .json,
    /// .parquet). Unset: the testbed's generated problems (`[testbed]`); set together with
    /// `model.path`.
    pub train_files: Option<String>,
    /// Data directory holding local copies of presets; unset: `--data-dir`, else
    /// `RLVR_DATA_DIR`, else none (presets come from their pinned hub copies, docs/data.md).
    pub data_dir: Option<PathBuf>,
    /// Prompt template around the problem text: `dapo`, `qwen-boxed` or `raw`.
    pub prompt_template: rlvr_tasks::PromptTemplate,
    /// Wrap the rendered prompt in the tokenizer's chat template (as a user turn; chat
    /// prompts from the data keep all their messages).
    pub apply_chat_template: bool,
    /// Extra variables for the chat template, verl's `apply_chat_template_kwargs`
    /// (`{ enable_thinking = false }` turns Qwen3's thinking off).
    pub chat_template_kwargs: serde_json::Map<String, serde_json::Value>,
    /// Prompts longer than this many tokens are dropped from training (verl `max_prompt_length`);
    /// 0 = no limit (the data loader still refuses prompts over 4 MiB).
    pub max_prompt_length: usize,
    /// Shuffle the training set each epoch (seeded by `trainer.seed`).
    pub shuffle: bool,
}

impl Default for DataConfig {
    fn default() -> Self {
        Self {
            train_files: None,
            data_dir: None,
            prompt_template: rlvr_tasks::PromptTemplate::Raw,
            apply_chat_template: false,
            chat_template_kwargs: serde_json::Map::new(),
            max_prompt_length: 64,
            shuffle: true,
        }
    }
}

impl super::Section for DataConfig {
    const NAME: &'static str = "data";
    // no range of its own: `max_prompt_length` is bounded with the others
    // (`TrainConfig::bounded_integers`), `train_files` checked with `model.path`
}
