//! Hugging Face formats: checkpoints (config.json, safetensors; [`checkpoint`]) and the
//! tokenizer and chat template ([`tokenizer`]). Where a model lives (a directory or a hub id),
//! the hub client and the rules for a checkpoint's file names are rlvr-hub's.

mod chat_template;
pub mod checkpoint;
pub mod tokenizer;
mod tokenizer_file;

pub use checkpoint::*;
