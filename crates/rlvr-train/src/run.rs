//! `rlvr train` end to end: set-up, eval before, GRPO steps and checkpoints, eval after, summary.
//!
//! Its parts: the set-up shared by every task (`setup.rs`; the testbed's is [`crate::testbed`]),
//! progress bars and printed lines (`ui.rs`), and under `run/` the run directory (`run_dir.rs`),
//! the evaluations (`evals.rs`), the summary (`summary.rs`), the machine record
//! (`host.rs`, [`HostRecord`]), `--dry-run` (`dry_run.rs`, [`dry_run()`]) and the lock that
//! keeps one writer per run directory (`lock.rs`, [`RunLock`]).

mod dry_run;
mod evals;
mod host;
mod lock;
mod run_dir;
mod summary;

use rlvr_core::run_dir::RunDir;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::checkpoint::{self, PhaseTimes, TrainState};
use crate::config::{Logger, RunTask, TrainConfig};
use crate::grpo::{Start, Trainer};
use crate::tracking::{tensorboard_dir, Tracking};
use crate::TrainError;
use rlvr_core::metrics::MetricsLine;

use evals::run_evals;
use run_dir::{claim_new_run_dir, names, run_config_path, write_config};
use summary::summarize;

pub use self::dry_run::dry_run;
use crate::setup::{device, Setup};
pub use crate::ui::Ui;
pub use host::{local_machine, machine_signature, HostRecord, HOST_FILE};
pub use lock::{lock_is_held, RunLock, LOCK_FILE};
pub use run_dir::{new_run_dir, resolve_config, task_label};
pub use summary::{LiveBias, RunSummary};

/// How `rlvr train` was called.
#[derive(Debug, Clone, Default)]
pub struct TrainOptions {
    /// Config file; none = the built-in default (`configs/testbed.toml`).
    pub config: Option<PathBuf>,
    /// `section.key=value` overrides.
    pub overrides: Vec<String>,
    /// Continue the run in this directory from its last checkpoint.
    pub resume: Option<PathBuf>,
    /// With `resume`: train the run again from step 0 under its saved config, discarding its
    /// checkpoints and `metrics.jsonl`: the explicit restart of a run whose checkpoints were
    /// all refused as damaged (refused when it has an intact one).
    pub restart: bool,
    /// Data directory of local preset copies (else `RLVR_DATA_DIR`, else none: presets come
    /// from their pinned hub copies, docs/data.md).
    pub data_dir: Option<PathBuf>,
    /// Stop after this many GRPO steps in this session, as if interrupted (tests).
    pub stop_after: Option<usize>,
    /// No progress bars and no printed lines (tests).
    pub quiet: bool,
}

/// Builds the policy and the tasks through the run's task source (`source.rs`: the testbed,
/// or a checkpoint and datasets). `initial` is a checkpoint to load instead of the config's
/// model (resume).
pub fn setup(
    cfg: &TrainConfig,
    data_dir: Option<&Path>,
    initial: Option<&Path>,
    ui: &Ui,
) -> Result<Setup, TrainError> {
    let dev = device(cfg.model.device)?;
    let dt = cfg.model.dtype.candle();
    let inputs = crate::setup::SetupInputs {
        cfg,
        data_dir,
        initial,
        dev: &dev,
        dt,
        ui,
    };
    crate::source::task_source(cfg).setup(&inputs)
}

/// `rlvr train`: a fresh run, or `--resume`. The run directory is locked ([`RunLock`])
/// before anything in it is written and stays locked until this returns.
pub fn train(opts: &TrainOptions) -> Result<RunSummary, TrainError> {
    let wall = Instant::now();
    if opts.restart && opts.resume.is_none() {
        return Err(TrainError::Resume(
            "--restart applies to a run directory: rlvr train --resume RUN_DIR --restart".into(),
        ));
    }
    let (cfg, claimed) = match &opts.resume {
        Some(run) => {
            run_config_path(run)?;
            let lock = RunLock::acquire(run)?;
            let cfg = resolve_config(opts)?;
            let claimed = run_dir::Claimed {
                dir: run.clone(),
                lock,
                created: false,
            };
            (cfg, claimed)
        }
        None => {
            let cfg = resolve_config(opts)?;
            let claimed = claim_new_run_dir(&cfg)?;
            (cfg, claimed)
        }
    };
    let result = train_locked(opts, &cfg, &claimed.dir, wall);
    // a directory this run created and failed in before writing its config holds no run:
    // it is removed, so the name stays free (the lock is still held while it goes)
    if result.is_err() && claimed.created && !RunDir::new(&claimed.dir).config().exists() {
        let _ = std::fs::remove_dir_all(&claimed.dir);
    }
    drop(claimed.lock);
    result
}

/// [`train`] once the run directory is locked.
fn train_locked(
    opts: &TrainOptions,
    cfg: &TrainConfig,
    run_dir: &Path,
    wall: Instant,
) -> Result<RunSummary, TrainError> {
    let cfg = cfg.clone();
    let run_dir = run_dir.to_path_buf();
    let ui = Ui::new(
        opts.quiet,
        cfg.logging.progress,
        cfg.logging.progress_interval_s,
    );
    let found = match &opts.resume {
        Some(run) if opts.restart => {
            if let Ok(Some(f)) = checkpoint::find_intact(run) {
                return Err(TrainError::Resume(format!(
                    "{}: --restart discards a run's checkpoints, and this run has an intact one \
                     ({}, step {}): continue it with --resume alone, or start a new run",
                    run.display(),
                    f.dir.display(),
                    f.state.step
                )));
            }
            let damaged = checkpoint::damaged(run);
            checkpoint::discard_all(run)?;
            let metrics = RunDir::new(run).metrics();
            if metrics.exists() {
                std::fs::remove_file(&metrics).map_err(|e| TrainError::io(&metrics, e))?;
            }
            ui.println(format!(
                "{}: restarting from step 0 (--restart){}",
                run.display(),
                if damaged.is_empty() {
                    String::new()
                } else {
                    format!("; discarded the damaged checkpoints {}", names(&damaged))
                }
            ));
            None
        }
        Some(run) => checkpoint::find_intact(run).map_err(|why| {
            TrainError::Resume(format!(
                "{}: no intact checkpoint to resume from: {why}. To train this run again from \
                 step 0 under its saved config (its checkpoints and metrics.jsonl are \
                 discarded): rlvr train --resume {} --restart",
                run.display(),
                run.display()
            ))
        })?,
        None => None,
    };
    if let Some(f) = &found {
        for note in &f.notes {
            ui.println(format!("resume: {note}"));
        }
    } else if !opts.restart && RunDir::new(&run_dir).config().exists() {
        // a run killed before its first checkpoint: nothing to resume, so it starts over
        ui.println(format!(
            "{} has no checkpoint (stopped before its first): starting it over",
            run_dir.display()
        ));
        let metrics = RunDir::new(&run_dir).metrics();
        if metrics.exists() {
            std::fs::remove_file(&metrics).map_err(|e| TrainError::io(&metrics, e))?;
        }
    }
    let (ckpt, state) = match found {
        Some(f) => (Some(f.dir), Some(f.state)),
        None => (None, None),
    };
    if let Some(s) = &state {
        if s.seed != cfg.trainer.seed {
            return Err(TrainError::Resume(format!(
                "checkpoint seed {} differs from trainer.seed = {}",
                s.seed, cfg.trainer.seed
            )));
        }
    }
    ui.println(format!("run directory: {}", run_dir.display()));
    if cfg.model.device.is_cpu() {
        // before the first product (the trainer sets it too, for callers without this line)
        rlvr_model::matmul::set_product_dtype(cfg.model.matmul_dtype);
        ui.println(format!(
            "matmul: {}",
            rlvr_model::matmul::backend_description()
        ));
    }

    // TENSORBOARD_DIR, before anything is written: a directory it cannot hold is an error
    // naming the variable, not a run directory left half made
    if cfg.trainer.logs_to(Logger::Tensorboard) {
        if let Some(root) = std::env::var_os("TENSORBOARD_DIR").filter(|v| !v.is_empty()) {
            let dir = tensorboard_dir(&run_dir, Some(root.clone()));
            std::fs::create_dir_all(&dir).map_err(|e| TrainError::Environment {
                var: "TENSORBOARD_DIR".into(),
                message: format!(
                    "{:?}: cannot create the run's event directory {}: {e} (unset it, or point \
                     it at a writable directory)",
                    root,
                    dir.display()
                ),
            })?;
        }
    }

    // setup: policy (from the checkpoint when resuming), tasks; the token budget against the
    // model's context before (from its config.json) and after (the model loaded)
    crate::setup::check_model_context(&cfg, ckpt.as_deref())?;
    let s = setup(&cfg, opts.data_dir.as_deref(), ckpt.as_deref(), &ui)?;
    if let RunTask::Datasets { model, .. } = cfg.task() {
        cfg.check_context(
            s.policy.config.max_position_embeddings,
            &format!(
                "the config.json of {}",
                ckpt.as_deref()
                    .map_or(model.to_string(), |p| p.display().to_string())
            ),
        )?;
    }
    for task in &s.evals {
        cfg.check_eval_size(&task.name, task.len())?;
    }
    std::fs::create_dir_all(&run_dir).map_err(|e| TrainError::io(&run_dir, e))?;
    let mut times = state.as_ref().map(|s| s.time.clone()).unwrap_or_default();
    times.setup_s += s.setup_s;
    times.warm_start_s += s.warm_start_s;
    let n_params = s.policy.params.numel();
    ui.println(format!(
        "policy: {} parameters; train task {}: {} prompts; rule {}",
        n_params,
        s.train.name,
        s.train.len(),
        cfg.algorithm.loss_agg_mode
    ));
    let ref_dir = run_dir.join("reference");
    let start = match (&state, &ckpt) {
        (Some(state), Some(checkpoint)) => Start::Resume {
            state,
            checkpoint,
            reference: &ref_dir,
        },
        _ => Start::Fresh,
    };
    let mut trainer = Trainer::new(cfg.clone(), s.policy, s.train, start, Some(&run_dir))?;
    if let (Some(st), Some(ck)) = (&state, &ckpt) {
        ui.println(format!("resumed at step {} from {}", st.step, ck.display()));
    } else if cfg.algorithm.use_kl_loss {
        // the frozen reference of a fresh run, for its resumes
        trainer.policy.save(&ref_dir)?;
    }
    // the config is written (atomically) only now that it validated and the whole set-up,
    // resumed state included, succeeded: a failing override never replaces a run's config
    if opts.resume.is_none() || !opts.overrides.is_empty() {
        write_config(&run_dir, &cfg)?;
    }
    HostRecord::current(&cfg, trainer.step).append(&run_dir)?;
    let tb_dir = cfg
        .trainer
        .logs_to(Logger::Tensorboard)
        .then(|| tensorboard_dir(&run_dir, std::env::var_os("TENSORBOARD_DIR")));
    let mut writer = Tracking::open(&run_dir, state.as_ref().map(|s| s.step), tb_dir.as_deref())?;
    if let Some(file) = writer.tensorboard_file() {
        ui.println(format!("tensorboard: {}", file.display()));
    }

    // evaluation before training
    let total = cfg.trainer.total_training_steps;
    if trainer.step == 0 && cfg.eval.before_train && !s.evals.is_empty() {
        let t = Instant::now();
        run_evals(&trainer.policy, &s.evals, &cfg, 0, &ui, &mut writer)?;
        times.eval_s += t.elapsed().as_secs_f64();
    }

    // GRPO
    let pb = ui.bar(total, "grpo");
    pb.set_position(trainer.step as u64);
    trainer.progress = ui.step_progress(&pb, crate::ui::log_line);
    let mut session_steps = 0;
    let mut last_eval_step = if trainer.step == 0 && cfg.eval.before_train {
        Some(0)
    } else {
        None
    };
    while trainer.step < total {
        if opts.stop_after.is_some_and(|n| session_steps >= n) {
            break;
        }
        let report = trainer.step()?;
        session_steps += 1;
        let line = report.line;
        times.rollout_s += line.time_rollout_s;
        times.reward_s += line.time_reward_s;
        times.train_s += line.time_train_s;
        let mut line = line;
        line.wall_s = times.total();
        writer.log(&MetricsLine::Train(line.clone()))?;
        pb.set_position(trainer.step as u64);
        pb.set_message(format!(
            "reward {:.2} len {:.0}",
            line.reward_mean, line.response_length_mean
        ));
        if line.skipped {
            pb.suspend(|| {
                ui.println(format!(
                    "step {}: skipped ({})",
                    line.step,
                    line.skip_reason.as_deref().unwrap_or("?")
                ))
            });
        } else if cfg.trainer.logs_to(Logger::Console)
            && cfg.logging.print_freq > 0
            && trainer.step % cfg.logging.print_freq == 0
        {
            pb.suspend(|| {
                ui.println(format!(
                    "step {:>4}: reward {:.3} acc {:.3} len {:.1} (cv {:.2}) gap {:+.1} pg_loss {:+.4} grad {:.3} lr {:.2e} [{:.1}s rollout, {:.1}s train]",
                    line.step,
                    line.reward_mean,
                    line.accuracy,
                    line.response_length_mean,
                    line.response_length_cv,
                    line.pos_neg_gap,
                    line.pg_loss,
                    line.grad_norm,
                    line.lr,
                    line.time_rollout_s,
                    line.time_train_s
                ))
            });
        }
        let step = trainer.step;
        if cfg.eval.test_freq > 0 && step % cfg.eval.test_freq == 0 && step < total {
            let t = Instant::now();
            pb.suspend(|| run_evals(&trainer.policy, &s.evals, &cfg, step, &ui, &mut writer))?;
            times.eval_s += t.elapsed().as_secs_f64();
            last_eval_step = Some(step);
        }
        let stopping = opts.stop_after.is_some_and(|n| session_steps >= n);
        if step == total
            || (cfg.trainer.save_freq > 0 && step % cfg.trainer.save_freq == 0)
            || stopping
        {
            let t = Instant::now();
            save_checkpoint(&run_dir, &trainer, &cfg, &times)?;
            times.checkpoint_s += t.elapsed().as_secs_f64();
        }
    }
    pb.finish_and_clear();

    // evaluation after training
    let finished = trainer.step >= total;
    if finished && last_eval_step != Some(trainer.step) && !s.evals.is_empty() {
        let t = Instant::now();
        run_evals(
            &trainer.policy,
            &s.evals,
            &cfg,
            trainer.step,
            &ui,
            &mut writer,
        )?;
        times.eval_s += t.elapsed().as_secs_f64();
        // keep the eval time in the final checkpoint's bookkeeping
        save_checkpoint(&run_dir, &trainer, &cfg, &times)?;
    }
    summarize(
        &run_dir,
        &cfg,
        trainer.step,
        n_params,
        s.warm_start,
        times,
        wall.elapsed().as_secs_f64(),
    )
}

/// Saves a checkpoint (keeping `trainer.keep_checkpoints`), refusing weights that are not
/// finite: the run fails instead of replacing good checkpoints with a poisoned one.
fn save_checkpoint(
    run_dir: &Path,
    trainer: &Trainer,
    cfg: &TrainConfig,
    times: &PhaseTimes,
) -> Result<(), TrainError> {
    if let Some(name) = trainer.policy.params.first_non_finite()? {
        return Err(TrainError::Msg(format!(
            "step {}: parameter {name} holds a NaN or an infinity; no checkpoint is written \
             and the earlier ones in {} are kept",
            trainer.step,
            run_dir.display()
        )));
    }
    let state = TrainState {
        step: trainer.step,
        optimizer_steps: trainer.optimizer.t,
        data: trainer.order.state(),
        seed: cfg.trainer.seed,
        time: times.clone(),
    };
    checkpoint::save_atomic(
        run_dir,
        &state,
        cfg.trainer.keep_checkpoints,
        |dir| -> Result<(), TrainError> {
            trainer.policy.save(dir)?;
            let opt_path = dir.join(checkpoint::OPTIMIZER_FILE);
            trainer
                .optimizer
                .save(&trainer.policy.params, &opt_path)
                .map_err(|e| TrainError::io(&opt_path, std::io::Error::other(e)))?;
            Ok(())
        },
    )?;
    Ok(())
}
