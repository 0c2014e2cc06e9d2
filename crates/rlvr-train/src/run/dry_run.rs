//! `rlvr train --dry-run`: checks everything that can be checked without training, and says so.

use std::io::Write;

use super::run_dir::resolve_config;
use super::TrainOptions;
use crate::source::task_source;
use crate::TrainError;

/// `rlvr train --dry-run`: checks the config, the token budget against the model's context
/// (`data.max_prompt_length` + the response length within `max_position_embeddings`), then
/// what the run's task source checks (the model's config.json when available, the data,
/// three rendered prompts). Trains nothing and writes nothing.
pub fn dry_run(opts: &TrainOptions, out: &mut dyn Write) -> Result<(), TrainError> {
    let cfg = resolve_config(opts)?;
    let w = |out: &mut dyn Write, s: String| -> Result<(), TrainError> {
        writeln!(out, "{s}").map_err(|e| TrainError::io("<stdout>", e))
    };
    w(
        out,
        format!(
            "config: ok ({}); rule {}, G = {}, {} prompts per step, {} steps, lr {:e}",
            opts.config
                .as_ref()
                .map_or("built-in default".to_string(), |p| p.display().to_string()),
            cfg.algorithm.loss_agg_mode,
            cfg.rollout.num_generations,
            cfg.trainer.train_batch_size,
            cfg.trainer.total_training_steps,
            cfg.optim.lr
        ),
    )?;
    // the token budget against the model's context (the testbed's: with the config)
    let resumed = match &opts.resume {
        Some(run) => crate::checkpoint::find(run),
        None => None,
    };
    crate::setup::check_model_context(&cfg, resumed.as_deref())?;
    let data_dir = opts.data_dir.as_deref().or(cfg.data.data_dir.as_deref());
    task_source(&cfg).dry_run(&cfg, data_dir, out)
}
