//! Hugging Face formats: checkpoints (config.json, safetensors) and their resolution, hub ids
//! included ([`checkpoint`]; the hub client and the rules for a checkpoint's file names are
//! rlvr-hub's), and the tokenizer and chat template ([`tokenizer`]).

pub mod checkpoint;
pub mod tokenizer;

pub use checkpoint::*;
