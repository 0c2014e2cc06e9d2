//! `rlvr export`: one recipe in three places. `export verl CONFIG` prints the run as a verl
//! launch script (`python3 -m verl.trainer.main_ppo` with Hydra overrides), `export trl CONFIG`
//! as a runnable TRL script, `export data NAME --out FILE` writes a preset or data file in
//! verl's RL dataset layout (the parquet `data.train_files` reads; `rlvr_tasks::verl_format`).
//!
//! Every key of the config is accounted for: mapped to the engine's key (configs/README.md,
//! "verl and TRL names"), or named under "not carried" with the reason, never dropped in
//! silence. A config the engine cannot run as rlvr would (an aggregation rule it has no form
//! of, the CPU testbed) is an error naming the key.

mod ledger;
mod names;
mod quote;
mod trl;
mod verl;

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use rlvr_tasks::verl_format::VerlRow;
use rlvr_tasks::{PromptTemplate, RewardKind};
use rlvr_train::TrainConfig;

use crate::output::{noteln, out, outln};
use crate::BadInput;

use ledger::{Ledger, NotCarried};
use trl::trl_script;
use verl::{verl, verl_script};

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
        /// `extra_info.split`: `train` or `test` (default: `test` for the held-out side of
        /// the arithmetic family, `arith:...,split=test`; else `train`).
        #[arg(long)]
        split: Option<String>,
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
                    outln!("{k}={val}")?;
                }
            } else {
                out!("{}", verl_script(&cfg, &v, &origin))?;
            }
        }
        What::Trl { config, set } => {
            let cfg = load(&config, &set)?;
            let origin = origin_of(&config, &set);
            out!("{}", trl_script(&cfg, &origin, &run_name(&cfg, &config))?)?;
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
            let held_out =
                matches!(rlvr_tasks::arith::ArithSpec::parse(&name), Some(Ok(s)) if s.test);
            let split = split.unwrap_or_else(|| if held_out { "test" } else { "train" }.into());
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
            noteln!(
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
/// around the last user message; a text prompt becomes one user message; a multiple-choice
/// problem's options after its question), before any chat template (verl applies the
/// tokenizer's), and the options themselves at `extra_info.choices` for the reward function.
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
    let router = rlvr_tasks::RewardFn::new(&rlvr_tasks::RewardConfig::default()).ok();
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
                choices: p.choices.clone(),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// every key accounted for
// ---------------------------------------------------------------------------------------

/// Optimizer steps one GRPO step makes: `train_batch_size / ppo_mini_batch_size x ppo_epochs`
/// (rlvr counts run length, saves and evaluations in GRPO steps, its warmup and schedule in
/// optimizer steps).
fn optimizer_steps_per_grpo_step(cfg: &TrainConfig) -> usize {
    (cfg.total_optimizer_steps() / cfg.trainer.total_training_steps.max(1)).max(1)
}

fn refuse(key: &str, message: impl std::fmt::Display) -> anyhow::Error {
    BadInput(format!("config key `{key}`: {message}")).into()
}

/// The preset or file name a dataset key names, and the data file the export script writes
/// it to.
fn data_file(name: &str) -> String {
    format!("${{DATA}}/{}.parquet", file_stem(name))
}

/// The keys not carried, as lines starting with `comment`; `text` escapes every value for the
/// place the lines land in (a shell comment, a Python docstring), so that none can end it.
fn not_carried_lines(
    out: &mut String,
    list: &[NotCarried],
    comment: &str,
    text: fn(&str) -> String,
) {
    let (set, default): (Vec<_>, Vec<_>) = list.iter().partition(|n| n.set);
    if !set.is_empty() {
        let _ = writeln!(
            out,
            "{comment} Not carried, set in this config (no equivalent in the engine):"
        );
        for n in set {
            let _ = writeln!(
                out,
                "{comment}   {} = {}: {}",
                text(&n.key),
                text(&n.value),
                text(&n.why)
            );
        }
    }
    if !default.is_empty() {
        let names: Vec<String> = default.iter().map(|n| text(&n.key)).collect();
        let _ = writeln!(
            out,
            "{comment} Not carried, at rlvr's default: {}",
            names.join(", ")
        );
    }
}

/// The data file stem of a preset or file name: the file's stem, as a plain name
/// ([`quote::file_stem_safe`]).
fn file_stem(name: &str) -> String {
    let stem = std::path::Path::new(name)
        .file_stem()
        .map_or(name.to_string(), |s| s.to_string_lossy().into_owned());
    quote::file_stem_safe(&stem)
}

#[cfg(test)]
mod tests {
    use super::quote::yaml_float;
    use super::trl::py_float;
    use super::*;
    use rlvr_core::AggRule;

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
    fn verl_rows_show_and_carry_the_options() {
        let problem = |choices: Option<Vec<String>>| rlvr_tasks::Problem {
            id: "q1".into(),
            prompt: rlvr_tasks::Prompt::Text("Which is prime?".into()),
            answer: "B".into(),
            solution: None,
            data_source: "mmlu".into(),
            choices,
        };
        let options = vec!["4".to_string(), "5".to_string()];
        let rows = verl_rows(
            &[problem(Some(options.clone())), problem(None)],
            PromptTemplate::QwenBoxed,
            "test",
        );
        assert_eq!(rows[0].choices.as_ref(), Some(&options));
        assert_eq!(rows[0].prompt.len(), 1);
        assert_eq!(
            rows[0].prompt[0].content,
            PromptTemplate::QwenBoxed.render("Which is prime?\nOptions:\nA. 4\nB. 5")
        );
        assert_eq!(rows[1].choices, None);
        assert_eq!(
            rows[1].prompt[0].content,
            PromptTemplate::QwenBoxed.render("Which is prime?")
        );
    }
}
