//! The task source of every run that is not the testbed: a checkpoint (`model.path`) trained on
//! datasets (`data.train_files`, `eval.datasets`). Its set-up and its dry run.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use rlvr_tasks::Dataset;

use crate::config::{EvalSet, RunTask, TrainConfig};
use crate::eval_set::eval_task;
use crate::memory_plan::memory_plan_text;
use crate::policy::Policy;
use crate::setup::{
    data_file, load_dataset, no_usable_prompts, reward_fn, unsandboxed_notice, Setup, SetupInputs,
};
use crate::task::{build_task, PromptFormat};
use crate::TrainError;

/// Builds the policy from `model.path` (or `initial`, a checkpoint to load instead: resume)
/// and the tasks from `data.train_files` and `eval.datasets`: the set-up of every run that is
/// not the testbed.
pub(crate) fn setup(inputs: &SetupInputs) -> Result<Setup, TrainError> {
    let SetupInputs {
        cfg,
        data_dir,
        initial,
        dev,
        dt,
        ui,
    } = *inputs;
    let (model, train_files) = model_and_data(cfg)?;
    let t = Instant::now();
    let mut policy = match initial {
        Some(dir) => Policy::load(&dir.to_string_lossy(), dt, dev)?,
        None => Policy::load(model, dt, dev)?,
    };
    policy.tokenizer.template_kwargs = cfg.data.chat_template_kwargs.clone();
    let format = PromptFormat {
        template: cfg.data.prompt_template,
        chat: cfg.data.apply_chat_template,
    };
    let ds = load_dataset(train_files, data_dir.or(cfg.data.data_dir.as_deref()))?;
    let verifier = reward_fn(&cfg.reward, &ds.problems)?;
    let read = ds.problems.len();
    let skipped = ds.skipped.clone();
    // a prompt must also leave the model room to generate: data.max_prompt_length 0 (no
    // limit) or one beyond the model's positions is capped at max_position_embeddings - 1
    let positions = policy.config.max_position_embeddings;
    let fits = positions.saturating_sub(1).max(1);
    let max_prompt = match cfg.data.max_prompt_length {
        0 => fits,
        n => n.min(fits),
    };
    let (train, dropped) = build_task(
        &ds.name,
        ds.problems,
        format,
        &policy.tokenizer,
        max_prompt,
        verifier.clone(),
    )?;
    if train.is_empty() {
        let file = data_file(train_files, data_dir.or(cfg.data.data_dir.as_deref()));
        return Err(no_usable_prompts(
            &file, read, &skipped, dropped, cfg, positions,
        ));
    }
    if dropped > 0 {
        ui.println(format!(
            "{}: dropped {dropped} prompts longer than {max_prompt} tokens \
             (data.max_prompt_length = {}, the model's positions {positions})",
            train.name, cfg.data.max_prompt_length
        ));
    }
    let evals = cfg
        .eval
        .datasets
        .iter()
        .map(|set| eval_task(set, cfg, &policy, format, data_dir, cfg.eval.n_problems))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Setup {
        policy,
        train,
        evals,
        warm_start: None,
        setup_s: t.elapsed().as_secs_f64(),
        warm_start_s: 0.0,
    })
}

/// The dry run of a checkpoint and datasets (after the config line): the model's config.json
/// and tokenizer when available locally, the memory plan, every dataset (each missing one
/// named), the reward routes, and three rendered prompts.
pub(crate) fn dry_run(
    cfg: &TrainConfig,
    data_dir: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), TrainError> {
    let w = |out: &mut dyn Write, s: String| -> Result<(), TrainError> {
        writeln!(out, "{s}").map_err(|e| TrainError::io("<stdout>", e))
    };
    let (model, train_files) = model_and_data(cfg)?;
    // the model: config.json and tokenizer when available locally
    let mut tokenizer = None;
    let mut shape = None;
    match rlvr_hub::resolve_model_dir_local(model) {
        Ok(dir) => {
            let qc = rlvr_model::DecoderConfig::from_file(&dir.join("config.json"))?;
            shape = Some(qc.clone());
            w(
                out,
                format!(
                    "model: {} ({}): {} layers, hidden {}, vocab {}, about {:.2}B parameters",
                    model,
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
                model
            ),
        )?,
    }
    if !cfg.model.device.is_cpu() {
        w(
            out,
            format!("device: {} (not opened in a dry run)", cfg.model.device),
        )?;
    }
    match shape.or_else(|| crate::memory_plan::known_shape(model)) {
        Some(qc) => w(out, memory_plan_text(cfg, &qc))?,
        None => w(
            out,
            "memory plan: needs the model's config.json (not available locally)".into(),
        )?,
    }
    // every dataset is loaded before any error is returned, so each missing one is named,
    // once: the first failure (train, else the first eval set) is the error returned, which
    // the caller prints; the others are printed here
    let train = load_dataset(train_files, data_dir);
    let mut evals: Vec<(&EvalSet, Result<Dataset, TrainError>)> = cfg
        .eval
        .datasets
        .iter()
        .map(|set| (set, load_dataset(set.name(), data_dir)))
        .collect();
    let failed = usize::from(train.is_err()) + evals.iter().filter(|(_, e)| e.is_err()).count();
    if failed > 1 {
        let mut first_seen = train.is_err();
        for (name, e) in &evals {
            if let Err(e) = e {
                if first_seen {
                    w(out, format!("eval data: {name}: {e}"))?;
                }
                first_seen = true;
            }
        }
    }
    let ds = train?;
    if failed > 1 {
        // the train set was read, so the first failure is an eval set's
        if let Some(i) = evals.iter().position(|(_, e)| e.is_err()) {
            evals.swap_remove(i).1?;
        }
    }
    // the reward of each problem (checked: no tests, no sandbox, ... are errors here)
    let rf = rlvr_tasks::RewardFn::new(&cfg.reward)?;
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
    if ds.is_empty() {
        // the error the run itself would stop with (positions matter only for prompts read)
        return Err(no_usable_prompts(
            &data_file(train_files, data_dir.or(cfg.data.data_dir.as_deref())),
            0,
            &ds.skipped,
            0,
            cfg,
            0,
        ));
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
        template: cfg.data.prompt_template,
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

/// The model and the training data of a dataset run.
fn model_and_data(cfg: &TrainConfig) -> Result<(&str, &str), TrainError> {
    match cfg.task() {
        RunTask::Datasets { model, train_files } => Ok((model, train_files)),
        RunTask::Testbed(_) => Err(TrainError::Msg(
            "the dataset set-up was given a testbed config".into(),
        )),
    }
}
