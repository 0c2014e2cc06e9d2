//! `rlvr export`: one recipe in three places. `export verl CONFIG` prints the run as a verl
//! launch script (`python3 -m verl.trainer.main_ppo` with Hydra overrides), `export trl CONFIG`
//! as a runnable TRL script, `export data NAME --out FILE` writes a preset or data file in
//! verl's RL dataset layout (the parquet `data.train_files` reads; `rlvr_tasks::verl_format`).
//!
//! Every key of the config is accounted for: mapped to the engine's key (configs/README.md,
//! "verl and TRL names"), or named under "not carried" with the reason, never dropped in
//! silence. A config the engine cannot run as rlvr would (an aggregation rule it has no form
//! of, the CPU testbed) is an error naming the key.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use rlvr_core::kl::KlEstimator;
use rlvr_core::policy_loss::PolicyLossMode;
use rlvr_core::{AdvEstimator, AggRule};
use rlvr_model::WeightDtype;
use rlvr_tasks::verl_format::VerlRow;
use rlvr_tasks::{PromptTemplate, RewardKind};
use rlvr_train::config::{LrScheduler, RunTask};
use rlvr_train::TrainConfig;

use crate::BadInput;

/// Carry a run to verl or TRL.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Print a verl launch script (main_ppo with Hydra overrides) for the config.
    Verl {
        /// Config file (TOML; configs/README.md).
        config: PathBuf,
        /// Override one key first: `--set trainer.train_batch_size=256` (repeatable).
        #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
        set: Vec<String>,
        /// Print only the overrides, one per line (for tools and tests).
        #[arg(long)]
        overrides_only: bool,
    },
    /// Print a TRL script (GRPOConfig + rlvr.trl.GRPOTrainer) for the config.
    Trl {
        /// Config file (TOML; configs/README.md).
        config: PathBuf,
        /// Override one key first (repeatable).
        #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
        set: Vec<String>,
    },
    /// Write a dataset (preset name or file) in verl's RL dataset layout.
    Data {
        /// Preset name (`rlvr train --dry-run` lists them; docs/data.md) or data file.
        name: String,
        /// Output file: `.parquet` or `.jsonl`.
        #[arg(long)]
        out: PathBuf,
        /// Layout; `verl` is the one there is.
        #[arg(long, default_value = "verl")]
        format: String,
        /// The prompt template rlvr would apply (`dapo`, `qwen-boxed`, `raw`), written into
        /// the user message.
        #[arg(long, default_value = "raw")]
        prompt_template: String,
        /// `extra_info.split`: `train` or `test`.
        #[arg(long, default_value = "train")]
        split: String,
        /// Data directory with local copies of presets (else RLVR_DATA_DIR, else the hub).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
}

pub fn run(args: Args) -> Result<()> {
    match args.what {
        What::Verl {
            config,
            set,
            overrides_only,
        } => {
            let cfg = load(&config, &set)?;
            let origin = origin_of(&config, &set);
            let v = verl(&cfg, &run_name(&cfg, &config))?;
            if overrides_only {
                for (k, val) in &v.overrides {
                    println!("{k}={val}");
                }
            } else {
                print!("{}", verl_script(&cfg, &v, &origin));
            }
        }
        What::Trl { config, set } => {
            let cfg = load(&config, &set)?;
            let origin = origin_of(&config, &set);
            print!("{}", trl_script(&cfg, &origin, &run_name(&cfg, &config))?);
        }
        What::Data {
            name,
            out,
            format,
            prompt_template,
            split,
            data_dir,
        } => {
            if format != "verl" {
                return Err(
                    BadInput(format!("--format {format:?}: the one layout is `verl`")).into(),
                );
            }
            if split != "train" && split != "test" {
                return Err(BadInput(format!("--split {split:?}: expected train or test")).into());
            }
            let template: PromptTemplate = prompt_template
                .parse()
                .map_err(|e: String| BadInput(format!("--prompt-template: {e}")))?;
            let ds = rlvr_train::setup::load_dataset(&name, data_dir.as_deref())
                .map_err(crate::train::wrap)?;
            let rows = verl_rows(&ds.problems, template, &split);
            rlvr_tasks::verl_format::write(&out, &rows).map_err(|e| BadInput(e.to_string()))?;
            eprintln!(
                "wrote {} problems of {} to {} (verl layout, template {}{})",
                rows.len(),
                ds.name,
                out.display(),
                template.as_str(),
                if ds.skipped.is_empty() {
                    String::new()
                } else {
                    format!("; {} records without an answer left out", ds.skipped.len())
                }
            );
        }
    }
    Ok(())
}

fn load(config: &std::path::Path, set: &[String]) -> Result<TrainConfig> {
    TrainConfig::load(Some(config), set).map_err(|e| BadInput(e.to_string()).into())
}

/// The run's name: `trainer.run_name`, else the config file's stem (rlvr itself would add a
/// time stamp).
fn run_name(cfg: &TrainConfig, config: &std::path::Path) -> String {
    if cfg.trainer.run_name.is_empty() {
        file_stem(&config.to_string_lossy())
    } else {
        cfg.trainer.run_name.clone()
    }
}

fn origin_of(config: &std::path::Path, set: &[String]) -> String {
    let mut s = config.display().to_string();
    for o in set {
        s.push_str(&format!(" --set {o}"));
    }
    s
}

/// The problems as verl rows: the messages rlvr's own prompt formatting makes (the template
/// around the last user message; a text prompt becomes one user message), before any chat
/// template (verl applies the tokenizer's).
pub fn verl_rows(
    problems: &[rlvr_tasks::Problem],
    template: PromptTemplate,
    split: &str,
) -> Vec<VerlRow> {
    let format = rlvr_train::task::PromptFormat {
        template,
        chat: true,
    };
    // `ability`: where rlvr's `reward.kind = "auto"` sends the problem
    let router = rlvr_tasks::RewardFn::new(rlvr_tasks::RewardConfig::default()).ok();
    problems
        .iter()
        .map(|p| {
            let code = router
                .as_ref()
                .is_some_and(|f| f.route(p) == RewardKind::Code);
            VerlRow {
                prompt: format.messages(p),
                data_source: p.data_source.clone(),
                ability: if code { "code" } else { "math" }.into(),
                ground_truth: p.answer.clone(),
                id: p.id.clone(),
                split: split.into(),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// every key accounted for
// ---------------------------------------------------------------------------------------

/// A key the engine has no form of, with its value and why.
#[derive(Debug, Clone, PartialEq)]
pub struct NotCarried {
    pub key: String,
    pub value: String,
    pub why: String,
    /// Whether it is printed in full: the config's value differs from rlvr's default, or the
    /// engine's behaviour differs from rlvr's at that value.
    pub set: bool,
}

/// The keys one export used and dropped; [`Ledger::finish`] names every key of the config
/// that neither list holds, so none is lost in silence.
struct Ledger {
    table: toml::Table,
    defaults: toml::Table,
    used: BTreeSet<String>,
    dropped: Vec<NotCarried>,
}

impl Ledger {
    fn new(cfg: &TrainConfig) -> Self {
        let parse = |c: &TrainConfig| -> toml::Table {
            toml::from_str(&c.to_toml()).expect("to_toml parses")
        };
        Self {
            table: parse(cfg),
            defaults: parse(&TrainConfig::default()),
            used: BTreeSet::new(),
            dropped: Vec::new(),
        }
    }

    fn value(table: &toml::Table, key: &str) -> Option<toml::Value> {
        let (section, name) = key.split_once('.')?;
        table.get(section)?.get(name).cloned()
    }

    fn shown(&self, key: &str) -> String {
        Self::value(&self.table, key).map_or("(unset)".into(), |v| v.to_string())
    }

    /// Marks `keys` as carried.
    fn used(&mut self, keys: &[&str]) {
        for k in keys {
            self.used.insert((*k).to_string());
        }
    }

    /// Names `key` as not carried, with why.
    fn drop(&mut self, key: &str, why: impl Into<String>) {
        let set = Self::value(&self.table, key) != Self::value(&self.defaults, key);
        self.dropped.push(NotCarried {
            key: key.to_string(),
            value: self.shown(key),
            why: why.into(),
            set,
        });
    }

    /// [`Ledger::drop`], printed in full even at rlvr's default: the engine then behaves
    /// differently from rlvr's run.
    fn diverges(&mut self, key: &str, why: impl Into<String>) {
        self.drop(key, why);
        if let Some(last) = self.dropped.last_mut() {
            last.set = true;
        }
    }

    /// The keys only rlvr has, whatever the engine: its code sandbox, and `[testbed]`, which a
    /// run of a Hugging Face model (the only kind exported) never reads: validation keeps
    /// every key of it at its default there, so none is listed.
    fn drop_rlvr_only(&mut self) {
        let testbed: Vec<String> = self
            .table
            .get("testbed")
            .and_then(|t| t.as_table())
            .map(|t| t.keys().map(|k| format!("testbed.{k}")).collect())
            .unwrap_or_default();
        for k in &testbed {
            self.used(&[k.as_str()]);
        }
        for k in ["code_mode", "code_max_tests", "allow_unsandboxed"] {
            self.drop(
                &format!("reward.{k}"),
                "code rewards run in rlvr's own sandbox",
            );
        }
    }

    /// Every key neither used nor dropped, dropped as "no mapping" (the completeness test keeps
    /// this list empty), then the dropped list.
    fn finish(mut self) -> Vec<NotCarried> {
        let mut rest = Vec::new();
        for (section, keys) in &self.table {
            let Some(keys) = keys.as_table() else {
                continue;
            };
            for name in keys.keys() {
                let key = format!("{section}.{name}");
                if !self.used.contains(&key) && !self.dropped.iter().any(|d| d.key == key) {
                    rest.push(key);
                }
            }
        }
        for key in rest {
            self.drop(&key, "no mapping to this engine");
        }
        self.dropped
    }
}

fn refuse(key: &str, message: impl std::fmt::Display) -> anyhow::Error {
    BadInput(format!("config key `{key}`: {message}")).into()
}

/// The preset or file name a dataset key names, and the data file the export script writes
/// it to.
fn data_file(name: &str) -> String {
    let stem = std::path::Path::new(name)
        .file_stem()
        .map_or(name.to_string(), |s| s.to_string_lossy().into_owned());
    format!("${{DATA}}/{stem}.parquet")
}

/// A float as YAML/Hydra reads a float (`1.0e-06`, never `1e-6`, which YAML 1.1 reads as a
/// string).
fn yaml_float(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{x:.1}");
    }
    let s = format!("{x:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        format!("{x}")
    } else {
        format!(
            "{mantissa}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

/// A string as a Hydra override value: single-quoted, quotes and backslashes escaped.
fn hydra_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

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
    set("actor_rollout_ref.model.path", hydra_str(model));
    set(
        "actor_rollout_ref.model.enable_gradient_checkpointing",
        m.gradient_checkpointing.to_string(),
    );
    set(
        &format!("{ACTOR}.fsdp_config.optimizer_offload"),
        m.optimizer_offload.to_string(),
    );
    set(
        "trainer.device",
        if m.device.is_cpu() { "cpu" } else { "cuda" }.into(),
    );
    l.used(&[
        "model.path",
        "model.gradient_checkpointing",
        "model.optimizer_offload",
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
        let kv: Vec<String> = d
            .chat_template_kwargs
            .iter()
            .map(|(k, v)| format!("{k}:{}", serde_json::to_string(v).unwrap_or_default()))
            .collect();
        set(
            "data.apply_chat_template_kwargs",
            format!("{{{}}}", kv.join(",")),
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
    l.used(&[
        "rollout.num_generations",
        "rollout.temperature",
        "rollout.top_p",
        "rollout.top_k",
        "rollout.max_response_length",
    ]);
    if r.stop_strings.is_empty() {
        l.used(&["rollout.stop_strings"]);
    } else {
        l.drop(
            "rollout.stop_strings",
            "verl's rollout config has no stop strings (vLLM's stop is not exposed)",
        );
    }
    l.drop(
        "rollout.generation_batch_size",
        "memory only: vLLM batches generation itself",
    );

    // [algorithm]: the rule, through rlvr's estimator for the balanced rules
    let verl_rule = match a.loss_agg_mode {
        AggRule::Balanced | AggRule::BalancedMass => None,
        AggRule::GroupTokenMean => return Err(refuse(
            "algorithm.loss_agg_mode",
            "group-token-mean has no verl form (verl's modes: token-mean, seq-mean-token-mean, \
                 seq-mean-token-sum, seq-mean-token-sum-norm; rlvr adds balanced, balanced-mass)",
        )),
        rule => Some(rule.as_str()),
    };
    let estimator = match (a.adv_estimator, verl_rule) {
        (AdvEstimator::Rloo, None) => {
            return Err(refuse(
                "algorithm.adv_estimator",
                "rloo with a balanced rule: rlvr's verl estimator computes GRPO advantages \
                 (grpo or dr-grpo)",
            ))
        }
        (AdvEstimator::Rloo, Some(_)) => "rloo",
        (_, Some(_)) => "grpo",
        (_, None) if a.loss_agg_mode == AggRule::Balanced => "rlvr_balanced",
        (_, None) => "rlvr_balanced_mass",
    };
    set("algorithm.adv_estimator", estimator.into());
    let norm = a.norm_adv_by_std_in_grpo && a.adv_estimator != AdvEstimator::DrGrpo;
    set("algorithm.norm_adv_by_std_in_grpo", norm.to_string());
    set(
        &format!("{ACTOR}.loss_agg_mode"),
        verl_rule.unwrap_or("token-mean").into(),
    );
    set(
        &format!("{ACTOR}.policy_loss.loss_mode"),
        a.policy_loss.name().into(),
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
        "algorithm.max_num_gen_batches",
    ]);
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
    set(
        &format!("{ACTOR}.optim.lr_warmup_steps"),
        op.lr_warmup_steps.to_string(),
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

    // [trainer]
    set("data.train_batch_size", t.train_batch_size.to_string());
    set(
        "trainer.total_training_steps",
        t.total_training_steps.to_string(),
    );
    set("trainer.save_freq", t.save_freq.to_string());
    set("trainer.project_name", "rlvr".into());
    set("trainer.experiment_name", hydra_str(name));
    set(
        "trainer.default_local_dir",
        hydra_str(&t.runs_dir.join(name).to_string_lossy()),
    );
    set(
        "trainer.max_actor_ckpt_to_keep",
        t.keep_checkpoints.to_string(),
    );
    set("trainer.n_gpus_per_node", "${N_GPUS}".into());
    set("trainer.nnodes", "1".into());
    set("trainer.logger", "['console']".into());
    l.used(&[
        "trainer.train_batch_size",
        "trainer.total_training_steps",
        "trainer.save_freq",
        "trainer.run_name",
        "trainer.runs_dir",
        "trainer.keep_checkpoints",
        "trainer.seed",
    ]);
    match &t.rollout_data_dir {
        Some(dir) => {
            set(
                "trainer.rollout_data_dir",
                hydra_str(&dir.to_string_lossy()),
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
    l.drop("logging.print_freq", "verl logs every step");

    Ok(VerlExport {
        overrides: o,
        not_carried: l.finish(),
        data,
    })
}

fn not_carried_lines(out: &mut String, list: &[NotCarried], comment: &str) {
    let (set, default): (Vec<_>, Vec<_>) = list.iter().partition(|n| n.set);
    if !set.is_empty() {
        let _ = writeln!(
            out,
            "{comment} Not carried, set in this config (no equivalent in the engine):"
        );
        for n in set {
            let _ = writeln!(out, "{comment}   {} = {}: {}", n.key, n.value, n.why);
        }
    }
    if !default.is_empty() {
        let names: Vec<&str> = default.iter().map(|n| n.key.as_str()).collect();
        let _ = writeln!(
            out,
            "{comment} Not carried, at rlvr's default: {}",
            names.join(", ")
        );
    }
}

/// Escapes `s` for a double-quoted shell word, keeping the script's `${VAR}`s live.
fn shell_dq(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(var) = ["${DATA}", "${N_GPUS}", "${REWARD_PY}"]
            .iter()
            .find(|v| rest.starts_with(**v))
        {
            out.push_str(var);
            rest = &rest[var.len()..];
            continue;
        }
        let c = rest.chars().next().expect("non-empty");
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

fn verl_script(cfg: &TrainConfig, v: &VerlExport, origin: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "#!/usr/bin/env bash");
    let _ = writeln!(
        s,
        "# verl form of {origin}, written by `rlvr export verl` (verl 0.9, main_ppo)."
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
        format!(" --data-dir {}", shell_word(&d.to_string_lossy()))
    });
    let mut seen = BTreeSet::new();
    for (name, split, file) in &v.data {
        if seen.insert(file.clone()) {
            let _ = writeln!(
                s,
                "[ -f \"{f}\" ] || \"$RLVR\" export data {n} --prompt-template {template} --split {split}{data_dir} --out \"{f}\"",
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
    not_carried_lines(&mut s, &v.not_carried, "#");
    s
}

fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-/+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

// ---------------------------------------------------------------------------------------
// TRL
// ---------------------------------------------------------------------------------------

fn py(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Bool(true) => "True".into(),
        serde_json::Value::Bool(false) => "False".into(),
        serde_json::Value::Null => "None".into(),
        other => other.to_string(),
    }
}

fn py_float(x: f64) -> String {
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

    let loss_type = match a.loss_agg_mode {
        AggRule::Balanced => "balanced",
        AggRule::BalancedMass => "balanced-mass",
        AggRule::TokenMean => "dapo",
        AggRule::SeqMeanTokenMean => "grpo",
        AggRule::SeqMeanTokenSumNorm => "dr_grpo",
        rule => {
            return Err(refuse(
                "algorithm.loss_agg_mode",
                format!(
                "{} has no TRL loss_type (dapo, grpo, dr_grpo; rlvr adds balanced, balanced-mass)",
                rule.as_str()
            ),
            ))
        }
    };
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
    match a.policy_loss {
        PolicyLossMode::Vanilla => {}
        PolicyLossMode::Gspo => set("importance_sampling_level", "\"sequence\"".into()),
        _ => {
            return Err(refuse(
                "algorithm.policy_loss",
                "TRL's balanced path is the clipped surrogate (vanilla, gspo)",
            ))
        }
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
    set("mask_truncated_completions", py(&a.mask_truncated.into()));
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
    l.used(&[
        "rollout.num_generations",
        "rollout.temperature",
        "rollout.top_p",
        "rollout.top_k",
        "rollout.max_response_length",
    ]);
    if r.stop_strings.is_empty() {
        l.used(&["rollout.stop_strings"]);
    } else {
        l.drop(
            "rollout.stop_strings",
            "TRL's GRPOConfig has no stop strings (generation_kwargs could)",
        );
    }
    l.drop(
        "rollout.generation_batch_size",
        "memory only (TRL generates the generation batch at once)",
    );

    // model
    set("bf16", py(&(m.dtype == WeightDtype::Bf16).into()));
    set(
        "gradient_checkpointing",
        py(&m.gradient_checkpointing.into()),
    );
    set("use_cpu", py(&m.device.is_cpu().into()));
    l.used(&[
        "model.path",
        "model.dtype",
        "model.gradient_checkpointing",
        "model.device",
    ]);
    l.drop(
        "model.optimizer_offload",
        "TRL offloads through DeepSpeed or FSDP configs of accelerate",
    );
    l.drop("model.device_memory_gib", "TRL sizes memory itself");

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
            py(&serde_json::Value::Object(d.chat_template_kwargs.clone())),
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

    // trainer
    set("max_steps", t.total_training_steps.to_string());
    set("seed", t.seed.to_string());
    set(
        "output_dir",
        format!("{:?}", t.runs_dir.join(name).to_string_lossy()),
    );
    if t.save_freq > 0 {
        set("save_strategy", "\"steps\"".into());
        set("save_steps", t.save_freq.to_string());
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
        set("eval_steps", e.test_freq.to_string());
        set("num_generations_eval", e.k.to_string());
        // one prompt's k samples per process per evaluation batch
        set("per_device_eval_batch_size", e.k.to_string());
        set("eval_on_start", py(&e.before_train.into()));
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
    l.drop("logging.print_freq", "logging_steps = 1");

    let not_carried = l.finish();

    // the script
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\"\"\"TRL form of {origin}, written by `rlvr export trl` (TRL 1.x)."
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
    let _ = writeln!(
        s,
        "optimizer step ({} steps a batch), {} sequences a forward pass; with rlvr.trl every",
        t.train_batch_size / a.ppo_mini_batch_size.max(1),
        a.ppo_micro_batch_size
    );
    let _ = writeln!(
        s,
        "optimizer step is exactly its rule over its own sequences (docs/integrations.md)."
    );
    let mut nc = String::new();
    not_carried_lines(&mut nc, &not_carried, "");
    if !nc.is_empty() {
        let _ = writeln!(s);
        s.push_str(&nc.replace("\"\"\"", "'''"));
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
    let _ = writeln!(s, "MODEL = {}", serde_json::Value::String(model.into()));
    let _ = writeln!(s, "DATA = os.environ.get(\"DATA\", \"data/verl\")");
    let _ = writeln!(
        s,
        "TRAIN = {}",
        serde_json::Value::String(file_stem(train_files))
    );
    let evals: Vec<serde_json::Value> = e
        .datasets
        .iter()
        .map(|n| serde_json::Value::String(file_stem(n.name())))
        .collect();
    let _ = writeln!(s, "EVAL = {}", serde_json::Value::Array(evals));
    let _ = writeln!(
        s,
        "CHAT = {}  # data.apply_chat_template",
        py(&d.apply_chat_template.into())
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

fn file_stem(name: &str) -> String {
    std::path::Path::new(name)
        .file_stem()
        .map_or(name.to_string(), |s| s.to_string_lossy().into_owned())
}

const TRL_BODY_HEAD: &str = r#"

def load(name):
    """A file of `rlvr export data`: prompt (chat messages, or their user text when CHAT is
    False) and answer (reward_model.ground_truth, read by rlvr.math_reward)."""
    ds = load_dataset("parquet", data_files=f"{DATA}/{name}.parquet")["train"]

    def row(x):
        prompt = x["prompt"] if CHAT else x["prompt"][-1]["content"]
        return {"prompt": prompt, "answer": x["reward_model"]["ground_truth"]}

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
        report_to="none",
"#;

const TRL_BODY_TAIL: &str = r#"    )
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

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe(name: &str) -> TrainConfig {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../configs")
            .join(name);
        TrainConfig::load(Some(&path), &[]).unwrap()
    }

    #[test]
    fn every_key_is_decided_for_both_engines() {
        for name in ["dapo17k-qwen3-1.7b.toml", "dapo17k-qwen2.5-math-7b.toml"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../configs")
                .join(name);
            if !path.exists() {
                continue;
            }
            let cfg = recipe(name);
            let v = verl(&cfg, "r").unwrap();
            let undecided: Vec<_> = v
                .not_carried
                .iter()
                .filter(|n| n.why == "no mapping to this engine")
                .collect();
            assert!(undecided.is_empty(), "{name} verl: {undecided:?}");
            let script = trl_script(&cfg, name, "r").unwrap();
            assert!(
                !script.contains("no mapping to this engine"),
                "{name} trl:\n{script}"
            );
        }
    }

    #[test]
    fn the_paper_recipe_in_verl() {
        let cfg = recipe("dapo17k-qwen3-1.7b.toml");
        let v = verl(&cfg, "r").unwrap();
        let get = |k: &str| {
            v.overrides
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, val)| val.as_str())
        };
        assert_eq!(get("algorithm.adv_estimator"), Some("rlvr_balanced"));
        assert_eq!(
            get("actor_rollout_ref.actor.loss_agg_mode"),
            Some("token-mean")
        );
        assert_eq!(get("data.train_batch_size"), Some("512"));
        assert_eq!(get("actor_rollout_ref.rollout.n"), Some("16"));
        assert_eq!(
            get("actor_rollout_ref.actor.ppo_mini_batch_size"),
            Some("32")
        );
        assert_eq!(get("actor_rollout_ref.actor.clip_ratio_high"), Some("0.28"));
        assert_eq!(get("actor_rollout_ref.actor.optim.lr"), Some("1.0e-06"));
        assert_eq!(
            get("+reward.reward_kwargs.overlong_buffer_cfg.len"),
            Some("1024")
        );
        assert_eq!(
            get("data.train_files"),
            Some("${DATA}/dapo_math_17k.parquet")
        );
        // a key with no verl form that the recipe sets is named
        assert!(
            v.not_carried
                .iter()
                .any(|n| n.key == "data.apply_chat_template" && n.set),
            "{:?}",
            v.not_carried
        );
    }

    #[test]
    fn rules_without_a_form_are_refused_by_key() {
        let mut cfg = recipe("dapo17k-qwen3-1.7b.toml");
        cfg.algorithm.loss_agg_mode = AggRule::GroupTokenMean;
        let err = verl(&cfg, "r").err().unwrap().to_string();
        assert!(err.contains("algorithm.loss_agg_mode"), "{err}");
        let err = trl_script(&cfg, "x", "r").err().unwrap().to_string();
        assert!(err.contains("algorithm.loss_agg_mode"), "{err}");
        let testbed = TrainConfig::default();
        assert!(verl(&testbed, "r")
            .err()
            .unwrap()
            .to_string()
            .contains("model.path"));
    }

    #[test]
    fn floats_read_as_floats_in_yaml() {
        assert_eq!(yaml_float(1e-6), "1.0e-06");
        assert_eq!(yaml_float(0.28), "0.28");
        assert_eq!(yaml_float(1.0), "1.0");
        assert_eq!(yaml_float(1e9), "1000000000.0");
        assert_eq!(yaml_float(5e-5), "5.0e-05");
        assert_eq!(yaml_float(0.001), "0.001");
        assert_eq!(py_float(1e-6), "1e-6");
        assert_eq!(py_float(2.0), "2.0");
    }

    #[test]
    fn shell_quoting_keeps_the_script_variables_only() {
        assert_eq!(shell_dq("a=${DATA}/x"), "a=${DATA}/x");
        assert_eq!(
            shell_dq("n='$(rm -rf ~)`x`\""),
            "n='\\$(rm -rf ~)\\`x\\`\\\""
        );
        assert_eq!(hydra_str("it's"), "'it\\'s'");
    }
}
