//! `rlvr train`: GRPO training. With no arguments: the CPU testbed run (tokenizer and tiny
//! model built here, supervised warm start, GRPO with Balanced Aggregation, held-out
//! evaluation), `configs/testbed.toml` spelled out. With `--config`: any run the config file
//! describes (configs/README.md lists every key).

use std::path::PathBuf;

use anyhow::Result;
use rlvr_train::run::{dry_run, train, TrainOptions};
use rlvr_train::TrainError;

use crate::output::outln;
use crate::BadInput;

/// Train a policy with GRPO (default: the CPU testbed, about 10 minutes on 2 cores).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Config file (TOML, sections model/data/rollout/algorithm/optim/trainer/eval/logging).
    /// Default: the built-in testbed config (= configs/testbed.toml).
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Override one key: `--set algorithm.loss_agg_mode=token-mean` (repeatable).
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    set: Vec<String>,
    /// Continue the run in this directory (`runs/<name>`) from its last checkpoint. Overrides
    /// (`--set`) of keys fixed at a run's start (the model's shape, the seed, the warm start,
    /// the testbed problems, the run's name and place) are refused.
    #[arg(long, value_name = "RUN_DIR", conflicts_with = "config")]
    resume: Option<PathBuf>,
    /// With --resume: train the run again from step 0 under its saved config, discarding its
    /// checkpoints and metrics.jsonl. For a run whose checkpoints were all refused as damaged
    /// (such a run is otherwise refused); refused when the run has an intact checkpoint.
    #[arg(long, requires = "resume")]
    restart: bool,
    /// Check the config, the model's config.json and the data, print three prompts, exit.
    #[arg(long)]
    dry_run: bool,
    /// Data directory with local copies of dataset presets (else RLVR_DATA_DIR; presets not
    /// there are downloaded from their pinned Hugging Face copies, docs/data.md).
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

/// Maps user-input errors to [`BadInput`] (exit code 2).
pub fn wrap(err: TrainError) -> anyhow::Error {
    if err.is_user_input() {
        BadInput(err.to_string()).into()
    } else {
        anyhow::Error::new(err)
    }
}

pub fn run(args: Args) -> Result<()> {
    let opts = TrainOptions {
        config: args.config,
        overrides: args.set,
        resume: args.resume,
        restart: args.restart,
        data_dir: args.data_dir,
        ..TrainOptions::default()
    };
    if args.dry_run {
        let mut out = std::io::stdout().lock();
        return dry_run(&opts, &mut out).map_err(wrap);
    }
    let summary = train(&opts).map_err(wrap)?;
    outln!("{}", summary.render())?;
    Ok(())
}
