//! The TRL form of a config: a Python script building `GRPOConfig` with rlvr's balanced loss.

use std::fmt::Write as _;

use anyhow::Result;
use rlvr_core::kl::KlEstimator;
use rlvr_core::AdvEstimator;
use rlvr_model::matmul::ProductDtype;
use rlvr_model::WeightDtype;
use rlvr_tasks::RewardKind;
use rlvr_train::config::{Logger, LrScheduler, RunTask};
use rlvr_train::TrainConfig;

use super::names;
use super::quote::{py_doc, py_literal, py_str};
use super::*;

/// A boolean as Python writes it.
fn py_bool(b: bool) -> String {
    py_literal(&b.into())
}

pub(super) fn py_float(x: f64) -> String {
    let s = format!("{x:?}");
    if s.contains(['.', 'e']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// The TRL script of `cfg` (TRL 1.x `GRPOConfig`, rlvr.trl's balanced loss types).
pub fn trl_script(cfg: &TrainConfig, origin: &str, name: &str) -> Result<String> {
    let RunTask::Datasets { model, train_files } = cfg.task() else {
        return Err(refuse("model.path", "the CPU testbed exists only in rlvr"));
    };
    let mut l = Ledger::new(cfg);
    l.drop_rlvr_only();
    l.drop("reward.num_workers", "rlvr's own scorer");
    let (m, d, r, a, rw, op, t, e) = (
        &cfg.model,
        &cfg.data,
        &cfg.rollout,
        &cfg.algorithm,
        &cfg.reward,
        &cfg.optim,
        &cfg.trainer,
        &cfg.eval,
    );
    let mut args: Vec<(String, String)> = Vec::new();
    let mut set = |k: &str, v: String| args.push((k.to_string(), v));

    let loss_type = names::trl_loss_type(a.loss_agg_mode)
        .map_err(|why| refuse("algorithm.loss_agg_mode", why))?;
    if a.adv_estimator == AdvEstimator::Rloo {
        return Err(refuse(
            "algorithm.adv_estimator",
            "TRL's GRPOTrainer computes GRPO advantages (grpo, dr-grpo)",
        ));
    }
    set("loss_type", format!("{loss_type:?}"));
    let scale = if a.norm_adv_by_std_in_grpo && a.adv_estimator != AdvEstimator::DrGrpo {
        "group"
    } else {
        "none"
    };
    set("scale_rewards", format!("{scale:?}"));
    l.used(&[
        "algorithm.loss_agg_mode",
        "algorithm.adv_estimator",
        "algorithm.norm_adv_by_std_in_grpo",
    ]);
    let policy_loss = names::trl_policy_loss(a.policy_loss)
        .map_err(|why| refuse("algorithm.policy_loss", why))?;
    if let Some((key, value)) = policy_loss {
        set(key, value.into());
    }
    set("epsilon", py_float(a.clip_ratio_low));
    set("epsilon_high", py_float(a.clip_ratio_high));
    l.used(&[
        "algorithm.policy_loss",
        "algorithm.clip_ratio_low",
        "algorithm.clip_ratio_high",
    ]);
    match a.clip_ratio_c {
        None => l.used(&["algorithm.clip_ratio_c"]),
        Some(_) => l.drop("algorithm.clip_ratio_c", "TRL has no dual clip"),
    }
    set(
        "beta",
        py_float(if a.use_kl_loss { a.kl_loss_coef } else { 0.0 }),
    );
    l.used(&["algorithm.use_kl_loss", "algorithm.kl_loss_coef"]);
    if a.use_kl_loss && a.kl_loss_type != KlEstimator::K3 {
        l.drop("algorithm.kl_loss_type", "TRL's KL penalty is k3");
    } else {
        l.used(&["algorithm.kl_loss_type"]);
    }
    if a.entropy_coeff == 0.0 {
        l.used(&["algorithm.entropy_coeff"]);
    } else {
        l.drop(
            "algorithm.entropy_coeff",
            "TRL's GRPOTrainer has no entropy bonus",
        );
    }
    set("num_iterations", a.ppo_epochs.to_string());
    set("mask_truncated_completions", py_bool(a.mask_truncated));
    l.used(&[
        "algorithm.ppo_epochs",
        "algorithm.mask_truncated",
        "algorithm.ppo_mini_batch_size",
        "algorithm.ppo_micro_batch_size",
        "trainer.train_batch_size",
    ]);
    l.drop(
        "algorithm.use_dynamic_bsz",
        "TRL cuts micro-batches by count (per_device_train_batch_size)",
    );
    l.drop(
        "algorithm.ppo_max_token_len_per_gpu",
        "TRL cuts micro-batches by count",
    );
    for k in ["filter_groups", "max_num_gen_batches"] {
        l.drop(&format!("algorithm.{k}"), "TRL has no dynamic sampling");
    }
    for k in ["overlong_buffer_len", "overlong_penalty_factor"] {
        l.drop(
            &format!("algorithm.{k}"),
            "TRL has no overlong punishment (a reward function could add one)",
        );
    }

    // rollout
    set("num_generations", r.num_generations.to_string());
    set("temperature", py_float(r.temperature));
    set("top_p", py_float(r.top_p));
    if r.top_k > 0 {
        set("top_k", r.top_k.to_string());
    }
    set("max_completion_length", r.max_response_length.to_string());
    l.rollout(
        "TRL's GRPOConfig has no stop strings (generation_kwargs could)",
        "memory only (TRL generates the generation batch at once)",
    );

    // model
    // TRL's bf16=True is torch's autocast: bf16 products over f32 weights on a CPU, which is
    // rlvr's model.matmul_dtype = "bf16"
    set(
        "bf16",
        py_bool(m.dtype == WeightDtype::Bf16 || m.matmul_dtype == ProductDtype::Bf16),
    );
    set("gradient_checkpointing", py_bool(m.gradient_checkpointing));
    set("use_cpu", py_bool(m.device.is_cpu()));
    if !m.device.is_cpu() {
        // on GPUs TRL's users generate with vLLM: colocated, in the training processes, so one
        // `accelerate launch` runs it (transformers' generate is far slower at long responses)
        set("use_vllm", py_bool(true));
        set("vllm_mode", py_str("colocate"));
    }
    l.used(&[
        "model.path",
        "model.dtype",
        "model.matmul_dtype",
        "model.gradient_checkpointing",
        "model.device",
    ]);
    l.drop(
        "model.optimizer_offload",
        "TRL offloads through DeepSpeed or FSDP configs of accelerate",
    );
    l.drop("model.device_memory_gib", "TRL sizes memory itself");
    l.drop(
        "model.use_remove_padding",
        "TRL 1.16's GRPOTrainer pads every batch (padding_free is SFTTrainer's); the same gradients either way",
    );

    // data
    l.used(&[
        "data.train_files",
        "data.prompt_template",
        "data.data_dir",
        "data.apply_chat_template",
    ]);
    l.drop(
        "data.max_prompt_length",
        "TRL 1.x has no prompt-length limit (filter the data file)",
    );
    if d.shuffle {
        l.used(&["data.shuffle"]);
    } else {
        l.drop("data.shuffle", "TRL always shuffles the training prompts");
    }
    if d.chat_template_kwargs.is_empty() {
        l.used(&["data.chat_template_kwargs"]);
    } else {
        set(
            "chat_template_kwargs",
            py_literal(&serde_json::Value::Object(d.chat_template_kwargs.clone())),
        );
        l.used(&["data.chat_template_kwargs"]);
    }

    // reward
    match rw.kind {
        RewardKind::Math => l.used(&["reward.kind"]),
        RewardKind::Auto => l.diverges(
            "reward.kind",
            "TRL does not route: every problem gets rlvr.math_reward",
        ),
        _ => {
            return Err(refuse(
                "reward.kind",
                "code and testbed rewards run in rlvr's own sandbox and verifier",
            ))
        }
    }

    // optim
    set("learning_rate", py_float(op.lr));
    set("weight_decay", py_float(op.weight_decay));
    set("adam_beta1", py_float(op.beta1));
    set("adam_beta2", py_float(op.beta2));
    set("adam_epsilon", py_float(op.eps));
    set("max_grad_norm", py_float(op.grad_clip));
    // TRL counts optimizer steps, as rlvr's warmup does; its run length, saves and evaluations
    // below too (rlvr counts those in GRPO steps of `per_step` optimizer steps each)
    let per_step = optimizer_steps_per_grpo_step(cfg);
    set("warmup_steps", op.lr_warmup_steps.to_string());
    let sched = match op.lr_scheduler {
        LrScheduler::Constant => "constant_with_warmup",
        LrScheduler::Cosine => "cosine_with_min_lr",
    };
    set("lr_scheduler_type", format!("{sched:?}"));
    if op.lr_scheduler == LrScheduler::Cosine {
        set(
            "lr_scheduler_kwargs",
            format!("{{\"min_lr_rate\": {}}}", py_float(op.min_lr_ratio)),
        );
    }
    l.used(&[
        "optim.lr",
        "optim.weight_decay",
        "optim.beta1",
        "optim.beta2",
        "optim.eps",
        "optim.grad_clip",
        "optim.lr_warmup_steps",
        "optim.lr_scheduler",
        "optim.min_lr_ratio",
    ]);
    if op.lr_warmup_steps > 0 {
        l.diverges(
            "optim.lr_warmup_steps",
            format!(
                "carried as warmup_steps = {w}, but transformers' warmup gives the first optimizer \
                 step lr 0 where rlvr's gives it lr/{w}: TRL's ramp runs one optimizer step behind",
                w = op.lr_warmup_steps
            ),
        );
    }

    // trainer: TRL's steps are optimizer steps
    set(
        "max_steps",
        t.total_training_steps.saturating_mul(per_step).to_string(),
    );
    set("seed", t.seed.to_string());
    set(
        "output_dir",
        py_str(&t.runs_dir.join(name).to_string_lossy()),
    );
    if t.save_freq > 0 {
        set("save_strategy", "\"steps\"".into());
        set(
            "save_steps",
            t.save_freq.saturating_mul(per_step).to_string(),
        );
    } else {
        set("save_strategy", "\"no\"".into());
    }
    set("save_total_limit", t.keep_checkpoints.max(1).to_string());
    set("logging_steps", "1".into());
    set("log_completions", "True".into());
    l.used(&[
        "trainer.total_training_steps",
        "trainer.seed",
        "trainer.run_name",
        "trainer.runs_dir",
        "trainer.save_freq",
        "trainer.keep_checkpoints",
    ]);
    // TRL's report_to takes the same logger names; its console logging is always on
    let report_to = if t.logs_to(Logger::Tensorboard) {
        "[\"tensorboard\"]"
    } else {
        "\"none\""
    };
    set("report_to", report_to.into());
    l.used(&["trainer.logger"]);
    match t.rollout_data_dir {
        None => l.used(&["trainer.rollout_data_dir"]),
        Some(_) => l.drop(
            "trainer.rollout_data_dir",
            "TRL logs completions with log_completions (rlvr diagnose reads them)",
        ),
    }

    // eval
    if !e.datasets.is_empty() && e.test_freq > 0 {
        set("eval_strategy", "\"steps\"".into());
        set(
            "eval_steps",
            e.test_freq.saturating_mul(per_step).to_string(),
        );
        set("num_generations_eval", e.k.to_string());
        // one prompt's k samples per process per evaluation batch
        set("per_device_eval_batch_size", e.k.to_string());
        set("eval_on_start", py_bool(e.before_train));
    }
    l.used(&[
        "eval.datasets",
        "eval.test_freq",
        "eval.k",
        "eval.before_train",
    ]);
    // TRL evaluates every row with the training sampling settings: carried where they agree
    let same = [
        ("eval.temperature", e.temperature == r.temperature),
        ("eval.top_p", e.top_p == r.top_p),
        (
            "eval.max_response_length",
            e.max_response_length == 0 || e.max_response_length == r.max_response_length,
        ),
        ("eval.n_problems", e.n_problems == 0),
    ];
    for (key, agrees) in same {
        if agrees {
            l.used(&[key]);
        } else {
            l.drop(
                key,
                "TRL evaluates every row with the training sampling settings",
            );
        }
    }
    l.drop(
        "eval.batch_size",
        "memory only (TRL's per_device_eval_batch_size)",
    );
    l.drop("logging.progress", "TRL's own progress bar");
    l.drop(
        "logging.progress_interval_s",
        "TRL's own progress bar (tqdm; a log gets its updates)",
    );
    l.drop("logging.print_freq", "logging_steps = 1");

    let not_carried = l.finish();

    // the script
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\"\"\"TRL form of {}, written by `rlvr export trl` (TRL 1.x).",
        py_doc(origin)
    );
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "    python this.py                                  # one process"
    );
    let _ = writeln!(
        s,
        "    accelerate launch --num_processes 8 this.py     # eight"
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "The data: the parquet files `rlvr export data` writes (verl's layout; DATA, default data/verl).");
    let _ = writeln!(
        s,
        "Batch shape as rlvr's: {} prompts x {} responses a generation batch, {} prompts an",
        t.train_batch_size, r.num_generations, a.ppo_mini_batch_size
    );
    let per_step = optimizer_steps_per_grpo_step(cfg);
    let _ = writeln!(
        s,
        "optimizer step ({per_step} optimizer steps a batch), {} sequences a forward pass. TRL counts",
        a.ppo_micro_batch_size
    );
    let _ = writeln!(
        s,
        "optimizer steps: max_steps, save_steps and eval_steps are rlvr's GRPO steps x {per_step}. With"
    );
    let _ = writeln!(
        s,
        "rlvr.trl every completion carries its whole group's weight (docs/integrations.md)."
    );
    let mut nc = String::new();
    not_carried_lines(&mut nc, &not_carried, "", py_doc);
    if !nc.is_empty() {
        let _ = writeln!(s);
        s.push_str(&nc);
    }
    let _ = writeln!(s, "\"\"\"");
    let _ = writeln!(s);
    let _ = writeln!(s, "import os");
    let _ = writeln!(s);
    let _ = writeln!(s, "from datasets import load_dataset");
    let _ = writeln!(s, "from trl import GRPOConfig");
    let _ = writeln!(s);
    let _ = writeln!(s, "import rlvr");
    let _ = writeln!(s, "import rlvr.trl");
    let _ = writeln!(s);
    let _ = writeln!(s, "MODEL = {}", py_str(model));
    let _ = writeln!(s, "DATA = os.environ.get(\"DATA\", \"data/verl\")");
    let _ = writeln!(s, "TRAIN = {}", py_str(&file_stem(train_files)));
    let evals: Vec<serde_json::Value> = e
        .datasets
        .iter()
        .map(|n| serde_json::Value::String(file_stem(n.name())))
        .collect();
    let _ = writeln!(s, "EVAL = {}", serde_json::Value::Array(evals));
    let _ = writeln!(
        s,
        "CHAT = {}  # data.apply_chat_template",
        py_bool(d.apply_chat_template)
    );
    let _ = writeln!(s, "NUM_GENERATIONS = {}", r.num_generations);
    let _ = writeln!(
        s,
        "PROMPTS_PER_BATCH, PROMPTS_PER_STEP, SEQUENCES_PER_PASS = {}, {}, {}",
        t.train_batch_size, a.ppo_mini_batch_size, a.ppo_micro_batch_size
    );
    let _ = writeln!(s);
    s.push_str(TRL_BODY_HEAD);
    for (k, v) in &args {
        let _ = writeln!(s, "        {k}={v},");
    }
    s.push_str(TRL_BODY_TAIL);
    Ok(s)
}

pub(super) const TRL_BODY_HEAD: &str = r#"

def load(name):
    """A file of `rlvr export data`: prompt (chat messages, or their user text when CHAT is
    False), answer (reward_model.ground_truth) and, when the file has multiple-choice rows,
    choices (extra_info.choices: the options, None on other rows); rlvr.math_reward reads both."""
    ds = load_dataset("parquet", data_files=f"{DATA}/{name}.parquet")["train"]
    has_choices = "choices" in ds.features["extra_info"]

    def row(x):
        prompt = x["prompt"] if CHAT else x["prompt"][-1]["content"]
        out = {"prompt": prompt, "answer": x["reward_model"]["ground_truth"]}
        if has_choices:
            out["choices"] = x["extra_info"]["choices"]
        return out

    return ds.map(row, remove_columns=[c for c in ds.column_names if c not in ("prompt",)])


def config(world_size=None, **overrides):
    """The GRPOConfig; batch sizes per process for `world_size` processes (default: WORLD_SIZE);
    `overrides`: GRPOConfig arguments that replace the exported ones."""
    world = world_size or int(os.environ.get("WORLD_SIZE", "1"))
    G = NUM_GENERATIONS
    per_step = PROMPTS_PER_STEP * G  # sequences an optimizer step, over all processes
    per_device = min(SEQUENCES_PER_PASS, per_step // world)
    if per_step % (world * per_device):
        raise SystemExit(f"{per_step} sequences a step do not split over {world} processes x {per_device}")
    accum = per_step // (world * per_device)
    steps_per_generation = accum * (PROMPTS_PER_BATCH // PROMPTS_PER_STEP)
    args = dict(
        per_device_train_batch_size=per_device,
        gradient_accumulation_steps=accum,
        steps_per_generation=steps_per_generation,
"#;

pub(super) const TRL_BODY_TAIL: &str = r#"    )
    args.update(overrides)
    return GRPOConfig(**args)


def main():
    args = config()
    train = load(TRAIN)
    evals = {name: load(name) for name in EVAL} or None
    trainer = rlvr.trl.GRPOTrainer(
        model=MODEL, reward_funcs=rlvr.math_reward, args=args, train_dataset=train, eval_dataset=evals
    )
    trainer.train()
    print(trainer.rlvr_verdict)


if __name__ == "__main__":
    main()
"#;
