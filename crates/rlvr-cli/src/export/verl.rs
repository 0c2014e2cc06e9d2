//! The verl form of a config: Hydra overrides for `verl.trainer.main_ppo` and the script around them.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use anyhow::Result;
use rlvr_core::kl::KlEstimator;
use rlvr_core::AdvEstimator;
use rlvr_tasks::RewardKind;
use rlvr_train::config::{Logger, LrScheduler, RunTask};
use rlvr_train::TrainConfig;

use super::names::{self, VerlRule};
use super::quote::{hydra_str, hydra_value, one_line, shell_dq, shell_word, yaml_float};
use super::*;

// ---------------------------------------------------------------------------------------
// verl
// ---------------------------------------------------------------------------------------

/// A run as verl overrides.
pub struct VerlExport {
    /// `(key, value)` in Hydra override syntax; values may hold `${DATA}`, `${N_GPUS}`,
    /// `${REWARD_PY}` for the script to fill in.
    pub overrides: Vec<(String, String)>,
    pub not_carried: Vec<NotCarried>,
    /// The `rlvr export data` commands the script runs for missing data files:
    /// `(name, split, file)`.
    pub data: Vec<(String, &'static str, String)>,
}

/// The verl form of `cfg` (verl 0.9's `ppo_trainer.yaml`).
pub fn verl(cfg: &TrainConfig, name: &str) -> Result<VerlExport> {
    let RunTask::Datasets { model, train_files } = cfg.task() else {
        return Err(refuse(
            "model.path",
            "the CPU testbed exists only in rlvr; export a config with a Hugging Face model (configs/)",
        ));
    };
    let mut l = Ledger::new(cfg);
    l.drop_rlvr_only();
    let mut o: Vec<(String, String)> = Vec::new();
    let mut set = |k: &str, v: String| o.push((k.to_string(), v));
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
    const ACTOR: &str = "actor_rollout_ref.actor";
    const ROLLOUT: &str = "actor_rollout_ref.rollout";

    // [model]
    set(
        "actor_rollout_ref.model.path",
        hydra_str("model.path", model)?,
    );
    set(
        "actor_rollout_ref.model.enable_gradient_checkpointing",
        m.gradient_checkpointing.to_string(),
    );
    set(
        &format!("{ACTOR}.fsdp_config.optimizer_offload"),
        m.optimizer_offload.to_string(),
    );
    set(
        "actor_rollout_ref.model.use_remove_padding",
        m.use_remove_padding.to_string(),
    );
    set(
        "trainer.device",
        if m.device.is_cpu() { "cpu" } else { "cuda" }.into(),
    );
    l.used(&[
        "model.path",
        "model.gradient_checkpointing",
        "model.optimizer_offload",
        "model.use_remove_padding",
        "model.device",
    ]);
    // compute dtype of the FSDP engine (master weights and optimizer state stay fp32, as
    // rlvr's) and of the rollout
    let torch_dtype = m.dtype.torch_name();
    set(&format!("{ACTOR}.fsdp_config.dtype"), torch_dtype.into());
    set(
        "actor_rollout_ref.ref.fsdp_config.dtype",
        torch_dtype.into(),
    );
    set(&format!("{ROLLOUT}.dtype"), torch_dtype.into());
    l.used(&["model.dtype"]);
    l.drop(
        "model.matmul_dtype",
        "rlvr's CPU products; verl's engines compute in model.dtype (fsdp_config.dtype)",
    );
    l.drop(
        "model.device_memory_gib",
        "verl sizes memory itself (rollout.gpu_memory_utilization)",
    );

    // [data]
    let train_file = data_file(train_files);
    set("data.train_files", train_file.clone());
    set("data.max_prompt_length", d.max_prompt_length.to_string());
    set("data.shuffle", d.shuffle.to_string());
    set("data.seed", t.seed.to_string());
    set(&format!("{ACTOR}.data_loader_seed"), t.seed.to_string());
    let mut data = vec![(train_files.to_string(), "train", train_file)];
    l.used(&[
        "data.train_files",
        "data.max_prompt_length",
        "data.shuffle",
        "data.prompt_template",
        "data.data_dir",
    ]);
    if d.max_prompt_length > 0 {
        // rlvr drops a prompt longer than the limit; verl's default `truncation=error` stops
        set("data.filter_overlong_prompts", "true".into());
    }
    if !d.apply_chat_template {
        l.diverges(
            "data.apply_chat_template",
            "verl renders every prompt with the tokenizer's chat template (a base model's too)",
        );
    } else {
        l.used(&["data.apply_chat_template"]);
    }
    if !d.chat_template_kwargs.is_empty() {
        set(
            // `++`: verl declares it as an empty dict, which a plain override cannot add keys to
            "++data.apply_chat_template_kwargs",
            hydra_value(
                "data.chat_template_kwargs",
                &serde_json::Value::Object(d.chat_template_kwargs.clone()),
            )?,
        );
    }
    l.used(&["data.chat_template_kwargs"]);

    // [rollout]
    set(&format!("{ROLLOUT}.name"), "vllm".into());
    set(&format!("{ROLLOUT}.n"), r.num_generations.to_string());
    set(&format!("{ROLLOUT}.temperature"), yaml_float(r.temperature));
    set(&format!("{ROLLOUT}.top_p"), yaml_float(r.top_p));
    set(
        &format!("{ROLLOUT}.top_k"),
        if r.top_k == 0 {
            "-1".into()
        } else {
            r.top_k.to_string()
        },
    );
    set(
        "data.max_response_length",
        r.max_response_length.to_string(),
    );
    l.rollout(
        "verl's rollout config has no stop strings (vLLM's stop is not exposed)",
        "memory only: vLLM batches generation itself",
    );

    // [algorithm]: the rule, through rlvr's estimator for the balanced rules
    let form =
        names::verl_rule(a.loss_agg_mode).map_err(|why| refuse("algorithm.loss_agg_mode", why))?;
    let (estimator, verl_rule) = match (a.adv_estimator, form) {
        (AdvEstimator::Rloo, VerlRule::Estimator(_)) => {
            return Err(refuse(
                "algorithm.adv_estimator",
                "rloo with a balanced rule: rlvr's verl estimator computes GRPO advantages \
                 (grpo or dr-grpo)",
            ))
        }
        (AdvEstimator::Rloo, VerlRule::LossAggMode(m)) => ("rloo", m),
        (AdvEstimator::Grpo | AdvEstimator::DrGrpo, VerlRule::LossAggMode(m)) => ("grpo", m),
        // rlvr's estimator on verl's token-mean (rlvr.verl's contract)
        (AdvEstimator::Grpo | AdvEstimator::DrGrpo, VerlRule::Estimator(e)) => (e, "token-mean"),
    };
    set("algorithm.adv_estimator", estimator.into());
    let norm = a.norm_adv_by_std_in_grpo && a.adv_estimator != AdvEstimator::DrGrpo;
    set("algorithm.norm_adv_by_std_in_grpo", norm.to_string());
    set(&format!("{ACTOR}.loss_agg_mode"), verl_rule.into());
    set(
        &format!("{ACTOR}.policy_loss.loss_mode"),
        names::verl_loss_mode(a.policy_loss).into(),
    );
    set(
        &format!("{ACTOR}.clip_ratio_low"),
        yaml_float(a.clip_ratio_low),
    );
    set(
        &format!("{ACTOR}.clip_ratio_high"),
        yaml_float(a.clip_ratio_high),
    );
    // verl's dual clip is always on (c = 3 by default); rlvr's is off unless set
    set(
        &format!("{ACTOR}.clip_ratio_c"),
        yaml_float(a.clip_ratio_c.unwrap_or(1e9)),
    );
    set(&format!("{ACTOR}.use_kl_loss"), a.use_kl_loss.to_string());
    set(&format!("{ACTOR}.kl_loss_coef"), yaml_float(a.kl_loss_coef));
    let kl = match a.kl_loss_type {
        KlEstimator::K1 => "kl",
        KlEstimator::K2 => "mse",
        KlEstimator::K3 => "low_var_kl",
    };
    set(&format!("{ACTOR}.kl_loss_type"), kl.into());
    set("algorithm.use_kl_in_reward", "false".into());
    set(
        &format!("{ACTOR}.entropy_coeff"),
        yaml_float(a.entropy_coeff),
    );
    set(&format!("{ACTOR}.ppo_epochs"), a.ppo_epochs.to_string());
    set(
        &format!("{ACTOR}.ppo_mini_batch_size"),
        a.ppo_mini_batch_size.to_string(),
    );
    set(
        &format!("{ACTOR}.ppo_micro_batch_size_per_gpu"),
        a.ppo_micro_batch_size.to_string(),
    );
    set(
        &format!("{ROLLOUT}.log_prob_micro_batch_size_per_gpu"),
        a.ppo_micro_batch_size.to_string(),
    );
    set(
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu",
        a.ppo_micro_batch_size.to_string(),
    );
    set(
        &format!("{ACTOR}.use_dynamic_bsz"),
        a.use_dynamic_bsz.to_string(),
    );
    set(
        &format!("{ACTOR}.ppo_max_token_len_per_gpu"),
        a.ppo_max_token_len_per_gpu.to_string(),
    );
    set(
        "algorithm.filter_groups.enable",
        a.filter_groups.to_string(),
    );
    set(
        "algorithm.filter_groups.max_num_gen_batches",
        a.max_num_gen_batches.to_string(),
    );
    l.used(&[
        "algorithm.adv_estimator",
        "algorithm.norm_adv_by_std_in_grpo",
        "algorithm.loss_agg_mode",
        "algorithm.policy_loss",
        "algorithm.clip_ratio_low",
        "algorithm.clip_ratio_high",
        "algorithm.clip_ratio_c",
        "algorithm.use_kl_loss",
        "algorithm.kl_loss_coef",
        "algorithm.kl_loss_type",
        "algorithm.entropy_coeff",
        "algorithm.ppo_epochs",
        "algorithm.ppo_mini_batch_size",
        "algorithm.ppo_micro_batch_size",
        "algorithm.use_dynamic_bsz",
        "algorithm.ppo_max_token_len_per_gpu",
        "algorithm.filter_groups",
    ]);
    if a.filter_groups && a.max_num_gen_batches > 0 {
        // set for verl's legacy trainer; the default V1 trainer says it ignores it
        l.diverges(
            "algorithm.max_num_gen_batches",
            format!(
                "set as algorithm.filter_groups.max_num_gen_batches, but verl 0.9's default \
                 trainer ignores it (its replay buffer warns so at start): a step keeps \
                 sampling until its batch is full, with no cap of {} generation batches",
                a.max_num_gen_batches
            ),
        );
    } else {
        l.used(&["algorithm.max_num_gen_batches"]);
    }
    if a.mask_truncated {
        l.drop(
            "algorithm.mask_truncated",
            "verl's main trainer has no overlong filtering of the loss",
        );
    } else {
        l.used(&["algorithm.mask_truncated"]);
    }

    // [reward]: rlvr's math checker, and DAPO's overlong punishment through verl's dapo manager
    match rw.kind {
        RewardKind::Math | RewardKind::Auto => {
            set("reward.custom_reward_function.path", "${REWARD_PY}".into());
            set("reward.custom_reward_function.name", "compute_score".into());
            if rw.kind == RewardKind::Auto {
                l.diverges(
                    "reward.kind",
                    "auto routes code problems to rlvr's sandbox, which the Python package does not \
                     carry: verl scores every problem with rlvr's math checker (rlvr.compute_score)",
                );
            } else {
                l.used(&["reward.kind"]);
            }
        }
        RewardKind::Code | RewardKind::Testbed => return Err(refuse(
            "reward.kind",
            "code and testbed rewards run in rlvr's own sandbox and verifier, not in the Python \
                 package; verl's own prime_code scorer is its code reward",
        )),
    }
    if a.overlong_buffer_len > 0 {
        set("reward.reward_manager.name", "dapo".into());
        let kw = "+reward.reward_kwargs";
        set(&format!("{kw}.overlong_buffer_cfg.enable"), "true".into());
        set(
            &format!("{kw}.overlong_buffer_cfg.len"),
            a.overlong_buffer_len.to_string(),
        );
        set(
            &format!("{kw}.overlong_buffer_cfg.penalty_factor"),
            yaml_float(a.overlong_penalty_factor),
        );
        set(&format!("{kw}.overlong_buffer_cfg.log"), "false".into());
        set(
            &format!("{kw}.max_resp_len"),
            r.max_response_length.to_string(),
        );
    }
    l.used(&[
        "algorithm.overlong_buffer_len",
        "algorithm.overlong_penalty_factor",
    ]);
    set(
        "reward.num_workers",
        if rw.num_workers == 0 {
            "8".into()
        } else {
            rw.num_workers.to_string()
        },
    );
    l.used(&["reward.num_workers"]);

    // [optim]
    set(&format!("{ACTOR}.optim.lr"), yaml_float(op.lr));
    set(
        &format!("{ACTOR}.optim.weight_decay"),
        yaml_float(op.weight_decay),
    );
    set(
        &format!("{ACTOR}.optim.betas"),
        format!("[{},{}]", yaml_float(op.beta1), yaml_float(op.beta2)),
    );
    set(
        &format!("{ACTOR}.optim.clip_grad"),
        yaml_float(op.grad_clip),
    );
    // verl steps its learning-rate schedule once a batch (after the batch's optimizer steps):
    // rlvr's warmup, in optimizer steps, becomes whole batches
    let per_step = optimizer_steps_per_grpo_step(cfg);
    let warmup_batches = op.lr_warmup_steps.div_ceil(per_step);
    set(
        &format!("{ACTOR}.optim.lr_warmup_steps"),
        warmup_batches.to_string(),
    );
    set(
        &format!("{ACTOR}.optim.lr_scheduler_type"),
        match op.lr_scheduler {
            LrScheduler::Constant => "constant",
            LrScheduler::Cosine => "cosine",
        }
        .into(),
    );
    set(
        &format!("{ACTOR}.optim.min_lr_ratio"),
        yaml_float(op.min_lr_ratio),
    );
    l.used(&[
        "optim.lr",
        "optim.weight_decay",
        "optim.beta1",
        "optim.beta2",
        "optim.grad_clip",
        "optim.lr_warmup_steps",
        "optim.lr_scheduler",
        "optim.min_lr_ratio",
    ]);
    l.drop(
        "optim.eps",
        "verl's FSDP optimizer config has no eps key (torch AdamW's 1e-8)",
    );
    if op.lr_warmup_steps > 0 || (op.lr_scheduler == LrScheduler::Cosine && per_step > 1) {
        l.diverges(
            "optim.lr_warmup_steps",
            format!(
                "verl changes the learning rate once a batch ({per_step} optimizer steps here) and \
                 gives the first batch lr 0: {} optimizer steps of warmup carried as \
                 lr_warmup_steps = {warmup_batches} batches{}",
                op.lr_warmup_steps,
                if op.lr_scheduler == LrScheduler::Cosine {
                    ", the cosine stepped per batch"
                } else {
                    ""
                }
            ),
        );
    }

    // [trainer]
    set("data.train_batch_size", t.train_batch_size.to_string());
    set(
        "trainer.total_training_steps",
        t.total_training_steps.to_string(),
    );
    set("trainer.save_freq", t.save_freq.to_string());
    set("trainer.project_name", "rlvr".into());
    set(
        "trainer.experiment_name",
        hydra_str("trainer.run_name", name)?,
    );
    set(
        "trainer.default_local_dir",
        hydra_str("trainer.runs_dir", &t.runs_dir.join(name).to_string_lossy())?,
    );
    set(
        "trainer.max_actor_ckpt_to_keep",
        t.keep_checkpoints.to_string(),
    );
    set("trainer.n_gpus_per_node", "${N_GPUS}".into());
    set("trainer.nnodes", "1".into());
    let loggers: Vec<String> = t
        .logger
        .iter()
        .map(|lg| match lg {
            Logger::Console => "'console'".to_string(),
            Logger::Tensorboard => "'tensorboard'".to_string(),
        })
        .collect();
    set("trainer.logger", format!("[{}]", loggers.join(",")));
    l.used(&[
        "trainer.train_batch_size",
        "trainer.total_training_steps",
        "trainer.save_freq",
        "trainer.run_name",
        "trainer.runs_dir",
        "trainer.keep_checkpoints",
        "trainer.seed",
        "trainer.logger",
    ]);
    match &t.rollout_data_dir {
        Some(dir) => {
            set(
                "trainer.rollout_data_dir",
                hydra_str("trainer.rollout_data_dir", &dir.to_string_lossy())?,
            );
            l.used(&["trainer.rollout_data_dir"]);
        }
        None => l.used(&["trainer.rollout_data_dir"]),
    }

    // [eval]
    if e.datasets.is_empty() {
        set("trainer.test_freq", "-1".into());
    } else {
        let files: Vec<String> = e.datasets.iter().map(|n| data_file(n.name())).collect();
        for (n, f) in e.datasets.iter().zip(&files) {
            data.push((n.name().to_string(), "test", f.clone()));
        }
        set("data.val_files", format!("[{}]", files.join(",")));
        set("trainer.test_freq", e.test_freq.to_string());
    }
    set("trainer.val_before_train", e.before_train.to_string());
    set(&format!("{ROLLOUT}.val_kwargs.n"), e.k.to_string());
    set(
        &format!("{ROLLOUT}.val_kwargs.temperature"),
        yaml_float(e.temperature),
    );
    set(&format!("{ROLLOUT}.val_kwargs.top_p"), yaml_float(e.top_p));
    set(
        &format!("{ROLLOUT}.val_kwargs.do_sample"),
        (e.temperature > 0.0).to_string(),
    );
    l.used(&[
        "eval.datasets",
        "eval.test_freq",
        "eval.before_train",
        "eval.k",
        "eval.temperature",
        "eval.top_p",
    ]);
    if e.n_problems == 0 {
        l.used(&["eval.n_problems"]);
    } else {
        l.drop(
            "eval.n_problems",
            "verl evaluates every row of data.val_files (export fewer rows instead)",
        );
    }
    if e.max_response_length == 0 || e.max_response_length == r.max_response_length {
        l.used(&["eval.max_response_length"]);
    } else {
        l.drop(
            "eval.max_response_length",
            "verl validates at data.max_response_length",
        );
    }
    l.drop(
        "eval.batch_size",
        "memory only: vLLM batches generation itself",
    );

    // [logging]
    l.drop("logging.progress", "verl logs through trainer.logger");
    l.drop(
        "logging.progress_interval_s",
        "verl prints no progress inside a step",
    );
    l.drop("logging.print_freq", "verl logs every step");

    Ok(VerlExport {
        overrides: o,
        not_carried: l.finish(),
        data,
    })
}

pub(super) fn verl_script(cfg: &TrainConfig, v: &VerlExport, origin: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "#!/usr/bin/env bash");
    let _ = writeln!(
        s,
        "# verl form of {}, written by `rlvr export verl` (verl 0.9, main_ppo).",
        one_line(origin)
    );
    let _ = writeln!(s, "# Balanced Aggregation is rlvr's advantage estimator (pip install rlvr's python/ next to verl);");
    let _ = writeln!(
        s,
        "# every optimizer step is exact (docs/integrations.md). DATA: where the data files go;"
    );
    let _ = writeln!(
        s,
        "# N_GPUS: GPUs of this node; RLVR: the rlvr binary, to write missing data files."
    );
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(s, "DATA=${{DATA:-data/verl}}");
    let _ = writeln!(s, "N_GPUS=${{N_GPUS:-8}}");
    let _ = writeln!(s, "RLVR=${{RLVR:-rlvr}}");
    let _ = writeln!(s, "mkdir -p \"$DATA\"");
    let template = cfg.data.prompt_template.as_str();
    // data.data_dir: where the presets' local copies are (else RLVR_DATA_DIR, else the hub)
    let data_dir = cfg.data.data_dir.as_ref().map_or(String::new(), |d| {
        // `=`: a directory that starts with `-` is the option's value, not another option
        format!(" --data-dir={}", shell_word(&d.to_string_lossy()))
    });
    let mut seen = BTreeSet::new();
    for (name, split, file) in &v.data {
        if seen.insert(file.clone()) {
            let _ = writeln!(
                s,
                // the name after `--`: one that starts with `-` is the dataset, not an option
                "[ -f \"{f}\" ] || \"$RLVR\" export data --prompt-template {template} --split {split}{data_dir} --out \"{f}\" -- {n}",
                f = shell_dq(file),
                n = shell_word(name),
            );
        }
    }
    let _ = writeln!(
        s,
        "REWARD_PY=$(python3 -c 'import rlvr.verl, sys; sys.stdout.write(rlvr.verl.__file__)')"
    );
    let _ = writeln!(
        s,
        "VERL_USE_EXTERNAL_MODULES=rlvr.verl python3 -m verl.trainer.main_ppo \\"
    );
    for (k, val) in &v.overrides {
        let _ = writeln!(s, "    \"{}\" \\", shell_dq(&format!("{k}={val}")));
    }
    let _ = writeln!(s, "    \"$@\"");
    not_carried_lines(&mut s, &v.not_carried, "#", one_line);
    s
}

// ---------------------------------------------------------------------------------------
// TRL
// ---------------------------------------------------------------------------------------
