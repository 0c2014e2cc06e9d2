//! `rlvr eval`: sampled accuracy (mean@k) and pass@k of a checkpoint on a dataset, scored by
//! the reward function of `rlvr train` (by data source: math checker, sandboxed code runner,
//! testbed verifier; `--reward` overrides).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use rlvr_model::{DeviceSpec, WeightDtype};
use rlvr_train::config::EvalSet;
use rlvr_train::eval::{evaluate, EvalResult, EvalSpec};
use rlvr_train::eval_set::eval_task;
use rlvr_train::policy::Policy;
use rlvr_train::setup::device;
use rlvr_train::task::{PromptFormat, Task};
use rlvr_train::TrainError;

use crate::output::{noteln, outln};
use crate::train::wrap;
use crate::BadInput;

/// Evaluate a checkpoint: k samples per problem, mean@k and pass@k.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Model directory in Hugging Face layout (a run's checkpoint/ works), or a hub id in the
    /// local cache.
    #[arg(long)]
    model: String,
    /// A dataset preset (math500, aime24, leetcode, codeforces, ...), a file
    /// (.jsonl/.json/.parquet; a jsonl whose records have `tests` and no `answer` is read as
    /// code problems: `problem`, `tests`, optional `id`, `solutions`), or `testbed` (held-out
    /// testbed problems; their settings come from --config's `[testbed]`, else the defaults;
    /// always raw prompts).
    #[arg(long)]
    data: String,
    /// Which scorer: auto (by data source: code presets and code tests run in the sandbox,
    /// testbed problems use the testbed verifier, the rest the math checker), math, code or
    /// testbed. Default: --config's `reward.kind`, else auto.
    #[arg(long)]
    reward: Option<String>,
    /// Threads scoring responses (the most sandboxes at once); 0 = cores. Default: --config's
    /// `reward.num_workers`, else 0.
    #[arg(long)]
    reward_workers: Option<usize>,
    /// Samples per problem.
    #[arg(long, default_value_t = 4)]
    k: usize,
    /// Sampling temperature.
    #[arg(long, default_value_t = 1.0)]
    temperature: f64,
    /// Nucleus sampling mass.
    #[arg(long, default_value_t = 1.0)]
    top_p: f64,
    /// Most tokens per response.
    #[arg(long, default_value_t = 1024)]
    max_tokens: usize,
    /// Evaluate only the first N problems (0 = all; for `testbed`, whose held-out stream has no
    /// end, 500).
    #[arg(long, default_value_t = 0)]
    n_problems: usize,
    /// Prompt template: dapo, qwen-boxed or raw.
    #[arg(long, default_value = "raw")]
    template: rlvr_tasks::PromptTemplate,
    /// Wrap prompts in the tokenizer's chat template.
    #[arg(long)]
    chat: bool,
    /// Prompts per generation call.
    #[arg(long, default_value_t = 32)]
    batch_size: usize,
    /// Sampling seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    device: DeviceSpec,
    /// f32, bf16 or f16.
    #[arg(long, default_value = "f32")]
    dtype: WeightDtype,
    /// A training config (for `--data testbed`: the testbed's settings).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Data directory with local copies of presets (else RLVR_DATA_DIR; presets not there
    /// are downloaded from their pinned Hugging Face copies, docs/data.md).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
    /// Write every sample to this JSON-lines file: problem index, id, data_source, question
    /// (the text asked, options included), choices (a multiple-choice problem's options),
    /// sample index, gold answer, response, tokens, truncated, correct, and the verifier's
    /// verdict: reward, scorer (math, code, testbed), reason (for code: tests passed, first
    /// failure). `rlvr verify --jsonl FILE --gold-field answer --question-field question`
    /// scores a math problem's lines again as the evaluation did.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    if args.k == 0 {
        return Err(BadInput("--k must be at least 1".into()).into());
    }
    let sampling =
        crate::generate::sampling_spec(args.temperature, args.top_p, None, args.max_tokens)?;
    let mut overrides = Vec::new();
    if let Some(kind) = &args.reward {
        let kind: rlvr_tasks::RewardKind = kind
            .parse()
            .map_err(|e: rlvr_tasks::RewardError| BadInput(format!("--reward: {e}")))?;
        overrides.push(format!("reward.kind={kind}"));
    }
    if let Some(n) = args.reward_workers {
        overrides.push(format!("reward.num_workers={n}"));
    }
    let cfg = rlvr_train::TrainConfig::load(args.config.as_deref(), &overrides)
        .map_err(|e| wrap(e.into()))?;
    let dev = device(args.device).map_err(wrap)?;
    let policy = Policy::load(&args.model, args.dtype.candle(), &dev).map_err(wrap)?;
    let format = PromptFormat {
        template: args.template,
        chat: args.chat,
    };
    let set = EvalSet::from(args.data.as_str());
    let task = eval_task(
        &set,
        &cfg,
        &policy,
        format,
        args.data_dir.as_deref(),
        args.n_problems,
    )
    .map_err(wrap)?;
    if task.is_empty() {
        return Err(BadInput(format!("{}: no problems to evaluate", args.data)).into());
    }
    let spec = EvalSpec {
        k: args.k,
        sampling,
        batch_size: args.batch_size.max(1),
        seed: args.seed,
        kv_cache_bytes: None,
    };
    let n = task.len();
    let r = evaluate(&policy, &task, &spec, |done| {
        crate::output::note(format_args!("\r{done}/{n} problems"))
    })
    .map_err(|e: TrainError| wrap(e))?;
    noteln!();
    if let Some(path) = &args.out {
        write_samples(path, &task, &r).map_err(|e| {
            anyhow::Error::new(e).context(format!("writing --out {}", path.display()))
        })?;
    }
    if args.json {
        outln!("{}", serde_json::to_string(&r.line(0))?)?;
    } else {
        outln!(
            "{}: {}, k = {}: mean@{k} = {:.4}, pass@{k} = {:.4} (mean response {:.1} tokens, {:.1}s)",
            r.dataset,
            r.problems_text(),
            r.k,
            r.mean_at_k,
            r.pass_at_k,
            r.response_length_mean,
            r.secs,
            k = r.k
        )?;
    }
    Ok(())
}

/// One JSON line per sample, as documented on `--out`. `r.samples` is problem-major with
/// `r.k` samples per problem, so the sample's index within its problem is `n % k`.
fn write_samples(path: &Path, task: &Task, r: &EvalResult) -> std::io::Result<()> {
    let mut w = BufWriter::new(File::create(path)?);
    for (n, s) in r.samples.iter().enumerate() {
        let problem = &task.problems[s.problem];
        let line = serde_json::json!({
            "problem": s.problem,
            "id": problem.id,
            "data_source": problem.data_source,
            "question": problem.question(),
            "choices": problem.choices,
            "sample": n % r.k,
            "answer": problem.answer,
            "response": s.text,
            "tokens": s.tokens,
            "truncated": s.truncated,
            "correct": s.correct,
            "reward": s.reward,
            "scorer": s.scorer,
            "reason": s.reason,
        });
        serde_json::to_writer(&mut w, &line)?;
        w.write_all(b"\n")?;
    }
    w.flush()
}
