//! Hugging Face formats: checkpoints (config.json, safetensors) and their resolution
//! ([`checkpoint`]), the hub client and cache ([`hub`]), the tokenizer and chat template
//! ([`tokenizer`]), and the rules for a checkpoint's file names both loader and hub client
//! follow (`files`).

pub mod checkpoint;
mod files;
pub mod hub;
pub mod tokenizer;

pub use checkpoint::*;
pub use hub::hub_cache_dir;
