//! `rlvr train --dry-run`: checks everything that can be checked without training, and says so.

use std::io::Write;

use rlvr_tasks::Dataset;

use super::run_dir::resolve_config;
use super::TrainOptions;
use crate::memory_plan::memory_plan_text;
use crate::setup::{load_dataset, template, unsandboxed_notice};
use crate::task::PromptFormat;
use crate::TrainError;

/// `rlvr train --dry-run`: checks the config, the model's config.json (when available), the
/// data, and prints three rendered prompts. Trains nothing and writes nothing.
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
    if cfg.is_testbed() {
        return crate::testbed::dry_run(&cfg, out);
    }
    // the model: config.json and tokenizer when available locally
    let mut tokenizer = None;
    let mut shape = None;
    match rlvr_model::resolve_model_dir_local(&cfg.model.path) {
        Ok(dir) => {
            let qc = rlvr_model::QwenConfig::from_file(&dir.join("config.json"))?;
            shape = Some(qc.clone());
            w(
                out,
                format!(
                    "model: {} ({}): {} layers, hidden {}, vocab {}, about {:.2}B parameters",
                    cfg.model.path,
                    dir.display(),
                    qc.num_hidden_layers,
                    qc.hidden_size,
                    qc.vocab_size,
                    qc.num_parameters() as f64 / 1e9
                ),
            )?;
            match rlvr_model::ChatTokenizer::from_dir(&dir) {
                Ok(mut t) => {
                    t.template_kwargs = cfg.data.chat_template_kwargs.clone();
                    tokenizer = Some(t)
                }
                Err(e) => w(
                    out,
                    format!("tokenizer: not available ({e}); prompts shown as text"),
                )?,
            }
        }
        Err(e) => w(
            out,
            format!(
                "model: {} is not available locally ({e}); checking everything else",
                cfg.model.path
            ),
        )?,
    }
    if cfg.model.device != "cpu" {
        w(
            out,
            format!("device: {} (not opened in a dry run)", cfg.model.device),
        )?;
    }
    match shape.or_else(|| crate::memory_plan::known_shape(&cfg.model.path)) {
        Some(qc) => w(out, memory_plan_text(&cfg, &qc))?,
        None => w(
            out,
            "memory plan: needs the model's config.json (not available locally)".into(),
        )?,
    }
    let data_dir = opts.data_dir.as_deref().or(cfg.data.data_dir.as_deref());
    // every dataset is loaded before any error is returned, so each missing one is named
    let train = load_dataset(&cfg.data.train_files, data_dir);
    let evals: Vec<(&String, Result<Dataset, TrainError>)> = cfg
        .eval
        .datasets
        .iter()
        .map(|name| (name, load_dataset(name, data_dir)))
        .collect();
    let failed = usize::from(train.is_err()) + evals.iter().filter(|(_, e)| e.is_err()).count();
    if failed > 1 {
        if let Err(e) = &train {
            w(out, format!("train data: {e}"))?;
        }
        for (name, e) in &evals {
            if let Err(e) = e {
                w(out, format!("eval data: {name}: {e}"))?;
            }
        }
    }
    let ds = train?;
    // the reward of each problem (checked: no tests, no sandbox, ... are errors here)
    let rf = cfg.reward.reward_fn()?;
    let routes = rf.check(&ds.problems)?;
    w(
        out,
        format!(
            "train data: {}: {} problems{}; reward {}: {routes}",
            ds.name,
            ds.len(),
            left_out(&ds),
            rf.kind(),
        ),
    )?;
    if let Some(line) = unsandboxed_notice(&cfg.reward, routes.code) {
        w(out, line)?;
    }
    for (name, e) in evals {
        let e = e?;
        let routes = rf.check(&e.problems)?;
        w(
            out,
            format!(
                "eval data: {}: {} problems{}; reward: {routes}",
                name,
                e.len(),
                left_out(&e)
            ),
        )?;
    }
    let format = PromptFormat {
        template: template(&cfg)?,
        chat: cfg.data.apply_chat_template,
    };
    for (i, p) in ds.problems.iter().take(3).enumerate() {
        let text = format.render(p, tokenizer.as_ref())?;
        let tokens = match &tokenizer {
            Some(t) => format!("{} tokens", t.encode(&text, !format.chat)?.len()),
            None => "not tokenized".to_string(),
        };
        w(
            out,
            format!(
                "--- prompt {} of 3 (id {}, answer {:?}, {tokens}) ---\n{text}",
                i + 1,
                p.id,
                p.answer
            ),
        )?;
    }
    w(out, "dry run: ok".to_string())?;
    Ok(())
}

/// What loading left out of a dataset, for the dry run: ` (N repeated rows dropped, M rows
/// skipped)`, or nothing.
fn left_out(ds: &Dataset) -> String {
    let mut parts = Vec::new();
    if ds.duplicates > 0 {
        parts.push(format!("{} repeated rows dropped", ds.duplicates));
    }
    if !ds.skipped.is_empty() {
        parts.push(format!(
            "{} rows skipped, first: {}",
            ds.skipped.len(),
            ds.skipped[0]
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}
