//! A run's evaluations: `[eval]`'s sampling settings, each eval set evaluated, logged, printed.

use crate::config::{ConfigError, EvalConfig, TrainConfig};
use crate::eval::{evaluate, EvalResult, EvalSpec};
use crate::policy::Policy;
use crate::seed::mix_seed;
use crate::task::Task;
use crate::tracking::Tracking;
use crate::ui::Ui;
use crate::TrainError;
use rlvr_core::metrics::MetricsLine;

fn eval_spec(cfg: &TrainConfig, kv_cache_bytes: Option<usize>) -> Result<EvalSpec, TrainError> {
    let sampling = cfg
        .eval
        .sampling(cfg.eval_max_tokens())
        .map_err(|e| ConfigError::Invalid {
            key: EvalConfig::key(e.setting).into(),
            message: e.reason,
        })?;
    Ok(EvalSpec {
        k: cfg.eval.k,
        sampling,
        batch_size: cfg.eval.batch_size,
        seed: mix_seed(cfg.trainer.seed, &[7]),
        kv_cache_bytes,
    })
}

pub(super) fn run_evals(
    policy: &Policy,
    tasks: &[Task],
    cfg: &TrainConfig,
    step: usize,
    ui: &Ui,
    writer: &mut Tracking,
) -> Result<Vec<EvalResult>, TrainError> {
    let mut out = Vec::new();
    for task in tasks {
        let pb = ui.bar(task.len(), "eval");
        pb.set_message(format!("{} step {step}", task.name));
        let kv = crate::memory_plan::sampler_kv_budget(cfg, &policy.config, &policy.device)?;
        let r = evaluate(policy, task, &eval_spec(cfg, kv)?, |done| {
            pb.set_position(done as u64)
        })?;
        pb.finish_and_clear();
        writer.log(&MetricsLine::Eval(r.line(step)))?;
        writer.log_eval_samples(step, task, &r)?;
        ui.println(format!(
            "eval step {step:>4} {}: mean@{k} = {:.3}, pass@{k} = {:.3} on {} ({:.1}s)",
            r.dataset,
            r.mean_at_k,
            r.pass_at_k,
            r.problems_text(),
            r.secs,
            k = r.k
        ));
        out.push(r);
    }
    Ok(out)
}
