//! Prints the `--dry-run` memory plan of a config (with `key=value` overrides) for the
//! published shape of its model, without the data or the weights: the numbers of the plans
//! table in docs/memory.md.
//!
//! ```text
//! cargo run -p rlvr-bench --example plan_table -- configs/dapo17k-qwen2.5-math-7b.toml [key=value ...]
//! ```

use std::path::Path;

use rlvr_train::config::TrainConfig;
use rlvr_train::memory_plan::known_shape;
use rlvr_train::memory_plan::memory_plan_text;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = a.first() else {
        return Err("usage: plan_table CONFIG [key=value ...]".into());
    };
    let cfg = TrainConfig::load(Some(Path::new(path)), &a[1..])?;
    let shape = known_shape(cfg.model_name())
        .ok_or_else(|| format!("no published shape for {}", cfg.model_name()))?;
    println!("{}", memory_plan_text(&cfg, &shape));
    Ok(())
}
