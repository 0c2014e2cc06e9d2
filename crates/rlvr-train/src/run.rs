//! What `rlvr train` does end to end: resolve the config, set up the policy and the tasks
//! (the testbed's tokenizer, model and warm start, or a Hugging Face checkpoint and a dataset),
//! evaluate, run GRPO steps with checkpoints and metrics, evaluate again, summarize.
//!
//! Also `--dry-run` ([`dry_run`]): check everything that can be checked without training.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use candle_core::{DType, Device};
use indicatif::{ProgressBar, ProgressStyle};
use rlvr_tasks::{Dataset, Problem, PromptTemplate, Verifier};

use crate::checkpoint::{self, mix_seed, DataOrder, PhaseTimes, TrainState};
use crate::config::TrainConfig;
use crate::eval::{evaluate, EvalResult, EvalSpec};
use crate::grpo::{Faults, Trainer};
use crate::metrics::{self, MetricsWriter};
use crate::policy::{build_task, Policy, PromptFormat, Task};
use crate::TrainError;

/// How `rlvr train` was called.
#[derive(Debug, Clone, Default)]
pub struct TrainOptions {
    /// Config file; none = the built-in default (`configs/testbed.toml`).
    pub config: Option<PathBuf>,
    /// `section.key=value` overrides.
    pub overrides: Vec<String>,
    /// Continue the run in this directory from its last checkpoint.
    pub resume: Option<PathBuf>,
    /// Data directory of local preset copies (else `RLVR_DATA_DIR`, else none: presets come
    /// from their pinned hub copies, docs/data.md).
    pub data_dir: Option<PathBuf>,
    /// Stop after this many GRPO steps in this session, as if interrupted (tests).
    pub stop_after: Option<usize>,
    /// No progress bars and no printed lines (tests).
    pub quiet: bool,
    /// Test hooks.
    pub faults: Faults,
}

/// What a finished (or stopped) session reports.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub run_dir: PathBuf,
    pub steps: usize,
    pub total_steps: usize,
    pub rule: String,
    /// What it trained on: the testbed's regime and term counts, or the train files.
    pub task: String,
    /// Evaluations at step 0 and at the last step (one per dataset).
    pub before: Vec<EvalResult>,
    pub after: Vec<EvalResult>,
    /// Reward mean per step (NaN for skipped steps).
    pub rewards: Vec<f64>,
    pub skipped_steps: usize,
    /// The bias diagnostics of the live batches, averaged over steps.
    pub live_bias: Option<LiveBias>,
    pub times: PhaseTimes,
    pub wall_s: f64,
    pub warm_start: Option<String>,
    pub n_params: usize,
}

/// docs/architecture.md §3 diagnostics of a run's batches, each the mean over the steps that have it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveBias {
    /// Response length coefficient of variation.
    pub length_cv: f64,
    /// Within-group `L+ - L-` in tokens (None when no step had a group with both signs).
    pub pos_neg_gap: Option<f64>,
    /// Per rule: share of the advantage-weighted token mass on positive responses.
    pub positive_share: Vec<(String, f64)>,
}

impl LiveBias {
    /// From the `"train"` lines of `metrics.jsonl` (skipped steps and nulls left out).
    pub fn from_lines(train: &[&serde_json::Value]) -> Option<Self> {
        let live: Vec<&serde_json::Value> = train
            .iter()
            .copied()
            .filter(|v| v["skipped"] != true)
            .collect();
        let mean = |get: &dyn Fn(&serde_json::Value) -> Option<f64>| {
            let xs: Vec<f64> = live.iter().filter_map(|v| get(v)).collect();
            (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
        };
        let length_cv = mean(&|v| v["response_length_cv"].as_f64())?;
        let rules: Vec<String> = live
            .first()
            .and_then(|v| v["positive_share"].as_object())
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let positive_share = rules
            .into_iter()
            .filter_map(|r| Some((r.clone(), mean(&|v| v["positive_share"][&r].as_f64())?)))
            .collect();
        Some(Self {
            length_cv,
            pos_neg_gap: mean(&|v| v["pos_neg_gap"].as_f64()),
            positive_share,
        })
    }
}

/// Reads the config: the file (or the default) with overrides, or a run's saved config.
pub fn resolve_config(opts: &TrainOptions) -> Result<TrainConfig, TrainError> {
    match &opts.resume {
        Some(run) => {
            let path = run.join("config.toml");
            if !path.is_file() {
                return Err(TrainError::Resume(format!(
                    "{}: no config.toml; is this a run directory (runs/<name>)?",
                    run.display()
                )));
            }
            Ok(TrainConfig::load(Some(&path), &opts.overrides)?)
        }
        None => Ok(TrainConfig::load(opts.config.as_deref(), &opts.overrides)?),
    }
}

/// The device named by `model.device`.
///
/// A CUDA device needs a build with the `cuda` feature (`cargo build --release --features
/// cuda`, with the CUDA toolkit installed); without it the error says so.
pub fn device(name: &str) -> Result<Device, TrainError> {
    let ordinal = match name {
        "cpu" => return Ok(Device::Cpu),
        "cuda" => 0,
        other => match other.strip_prefix("cuda:").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => {
                return Err(crate::ConfigError::Invalid {
                    key: "model.device".into(),
                    message: format!("`{other}`: expected cpu, cuda or cuda:N"),
                }
                .into())
            }
        },
    };
    if !candle_core::utils::cuda_is_available() {
        return Err(crate::ConfigError::Invalid {
            key: "model.device".into(),
            message: format!(
                "`{name}`: this rlvr was built without CUDA; rebuild it with \
                 `cargo build --release --features cuda` (needs the CUDA toolkit), or use cpu"
            ),
        }
        .into());
    }
    Ok(Device::new_cuda(ordinal)?)
}

/// The dtype named by `model.dtype` (validated by the config).
pub fn dtype(name: &str) -> DType {
    match name {
        "bf16" => DType::BF16,
        "f16" => DType::F16,
        _ => DType::F32,
    }
}

fn template(cfg: &TrainConfig) -> Result<PromptTemplate, TrainError> {
    cfg.data
        .prompt_template
        .parse()
        .map_err(|message| crate::ConfigError::Invalid {
            key: "data.prompt_template".into(),
            message,
        })
        .map_err(Into::into)
}

/// Loads a dataset given as a preset name or a file path. Files: parquet in verl's layout;
/// json/jsonl with `problem`/`answer`/`solution`/`id`, or, when the first record has `tests`
/// and no `answer`, code problems in the layout of the code presets (`problem`, `tests`,
/// optional `solutions`, `id`, `data_source`).
///
/// A preset is read from its local copy when a data directory (`data_dir`, else
/// `RLVR_DATA_DIR`) holds it, else from its pinned Hugging Face hub copy, downloaded into the
/// hub cache at the pinned revision (`rlvr_tasks::data::hub_source`; `HF_ENDPOINT`,
/// `HF_TOKEN`, `HF_HUB_OFFLINE` honoured) and read in that copy's own layout. When neither
/// can be read, one error per preset names the local path, the repository, the revision, why
/// the hub copy failed, and the `hf download` command that fetches it (docs/data.md).
pub fn load_dataset(name: &str, data_dir: Option<&Path>) -> Result<Dataset, TrainError> {
    load_dataset_with(name, data_dir, &rlvr_model::hub::HubOptions::from_env())
}

/// [`load_dataset`] with explicit hub options.
pub fn load_dataset_with(
    name: &str,
    data_dir: Option<&Path>,
    hub: &rlvr_model::hub::HubOptions,
) -> Result<Dataset, TrainError> {
    let path = Path::new(name);
    let looks_like_file = path.extension().is_some() || name.contains('/');
    if looks_like_file && path.exists() {
        let fields = if name.ends_with(".parquet") {
            rlvr_tasks::FieldMap::verl()
        } else if is_code_layout(path) {
            rlvr_tasks::FieldMap {
                prompt: "problem".into(),
                answer: rlvr_tasks::AnswerSource::Json("tests".into()),
                solution: Some("solutions".into()),
                id: Some("id".into()),
                data_source: Some("data_source".into()),
                context: None,
            }
        } else {
            rlvr_tasks::FieldMap::problem_answer()
        };
        return Ok(rlvr_tasks::load_file(path, &fields)?);
    }
    if looks_like_file && rlvr_tasks::data::preset(name).is_err() {
        return Err(TrainError::Data(rlvr_tasks::DataError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        }));
    }
    let preset = rlvr_tasks::data::preset(name)?;
    let local =
        rlvr_tasks::resolve_data_dir(data_dir).and_then(|dir| rlvr_tasks::load_preset(name, &dir));
    let (missing, src) = match (local, &preset.hub) {
        (Err(rlvr_tasks::DataError::PresetMissing { expected, .. }), Some(src)) => (
            format!("no local copy ({} does not exist)", expected.display()),
            src,
        ),
        (Err(rlvr_tasks::DataError::NoDataDir { reason }), Some(src)) => {
            (format!("no local copy ({reason})"), src)
        }
        (local, _) => return Ok(local?),
    };
    let kind = rlvr_model::hub::RepoType::Dataset;
    let mut files = Vec::with_capacity(src.files.len());
    for file in src.files {
        let path =
            rlvr_model::hub::fetch_file(hub, kind, src.repo, src.revision, file).map_err(|e| {
                rlvr_tasks::DataError::HubUnavailable(Box::new(rlvr_tasks::data::HubMiss {
                    preset: name.to_string(),
                    local: missing.clone(),
                    repo: src.repo.to_string(),
                    revision: src.revision.to_string(),
                    files: src.files.join(" "),
                    file: preset.file.to_string(),
                    // offline, a cache miss is the only failure: say so without hub.rs's advice
                    reason: if hub.offline {
                        format!(
                            "HF_HUB_OFFLINE is set and the Hugging Face cache ({}) does not hold \
                             {file} at that revision",
                            hub.cache.display()
                        )
                    } else {
                        e.to_string()
                    },
                }))
            })?;
        files.push(path);
    }
    Ok(rlvr_tasks::load_hub_files(name, &files)?)
}

/// The file behind `data.train_files`: the preset's file in the data directory, else the
/// value itself.
fn data_file(name: &str, data_dir: Option<&Path>) -> PathBuf {
    match (
        rlvr_tasks::data::preset(name),
        rlvr_tasks::resolve_data_dir(data_dir),
    ) {
        (Ok(p), Ok(dir)) => dir.join(p.file),
        _ => PathBuf::from(name),
    }
}

/// The set-up error of a training set with no prompt left: a user-input error naming the
/// file, with what was read, what was left out and why, and what to change.
pub fn no_usable_prompts(
    file: &Path,
    read: usize,
    no_answer: usize,
    too_long: usize,
    cfg: &TrainConfig,
) -> TrainError {
    let hint = if read == 0 && no_answer == 0 {
        "the file has no records; check data.train_files".to_string()
    } else if read == 0 {
        format!(
            "all {no_answer} records lack an answer (null or empty answer field); check the \
             file's answer field"
        )
    } else if too_long > 0 {
        format!(
            "{too_long} of {read} prompts are longer than data.max_prompt_length = {} tokens \
             after the template; raise data.max_prompt_length (0 = no limit)",
            cfg.data.max_prompt_length
        )
    } else {
        format!("all {read} prompts tokenize to nothing; check data.prompt_template")
    };
    TrainError::Data(rlvr_tasks::DataError::BadFile {
        path: file.to_path_buf(),
        reason: format!("no usable prompts for training: {hint}"),
    })
}

/// Whether the first record of a json/jsonl file has `tests` and no `answer` (a file that
/// cannot be read is not: loading it reports the error).
fn is_code_layout(path: &Path) -> bool {
    match rlvr_tasks::data::read_records(path) {
        Ok(records) => records
            .first()
            .is_some_and(|(_, _, v)| v.get("tests").is_some() && v.get("answer").is_none()),
        Err(_) => false,
    }
}

/// The reward function of `problems` under `[reward]` (`rlvr_tasks::reward`), checked
/// against them: a problem its scorer cannot score, or code problems without a working
/// sandbox, are errors here, before any step or evaluation.
pub fn reward_fn(
    cfg: &crate::config::RewardSection,
    problems: &[Problem],
) -> Result<Arc<dyn Verifier>, TrainError> {
    let f = cfg.reward_fn()?;
    let routes = f.check(problems)?;
    if let Some(line) = unsandboxed_notice(cfg, routes.code) {
        // once per process: every dataset of a run shares the setting
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| eprintln!("{line}"));
    }
    Ok(Arc::new(f))
}

/// The run-log line for `reward.allow_unsandboxed = true` when code rewards use it
/// (`code_problems` > 0): a warning when the sandbox cannot isolate here, so programs run
/// without isolation; a note that the setting is unused otherwise. None when it is not set.
pub fn unsandboxed_notice(
    cfg: &crate::config::RewardSection,
    code_problems: usize,
) -> Option<String> {
    if !cfg.allow_unsandboxed || code_problems == 0 {
        return None;
    }
    Some(if rlvr_tasks::code::isolation_available() {
        "reward.allow_unsandboxed = true: unused, the sandbox isolates code rewards here".into()
    } else {
        "WARNING: reward.allow_unsandboxed = true and this process cannot create the \
         sandbox's namespaces: code rewards run model-written programs WITHOUT isolation \
         (they can read the data set, expected outputs included, write your files and reach \
         the network)"
            .into()
    })
}

/// Everything a run trains and evaluates with.
pub struct Setup {
    pub policy: Policy,
    pub train: Task,
    pub evals: Vec<Task>,
    pub warm_start: Option<String>,
    pub setup_s: f64,
    pub warm_start_s: f64,
}

/// Builds the policy and the tasks. `initial` is a checkpoint to load instead of the config's
/// model (resume).
pub fn setup(
    cfg: &TrainConfig,
    data_dir: Option<&Path>,
    initial: Option<&Path>,
    ui: &Ui,
) -> Result<Setup, TrainError> {
    let dev = device(&cfg.model.device)?;
    let dt = dtype(&cfg.model.dtype);
    if cfg.model.path == "testbed" || cfg.is_testbed() {
        return crate::testbed::setup(cfg, initial, &dev, dt, ui);
    }
    let t = Instant::now();
    let mut policy = match initial {
        Some(dir) => Policy::load(&dir.to_string_lossy(), dt, &dev)?,
        None => Policy::load(&cfg.model.path, dt, &dev)?,
    };
    policy.tokenizer.template_kwargs = cfg.data.chat_template_kwargs.clone();
    let format = PromptFormat {
        template: template(cfg)?,
        chat: cfg.data.apply_chat_template,
    };
    let ds = load_dataset(
        &cfg.data.train_files,
        data_dir.or(cfg.data.data_dir.as_deref()),
    )?;
    let verifier = reward_fn(&cfg.reward, &ds.problems)?;
    let (read, no_answer) = (ds.problems.len(), ds.skipped.len());
    let (train, dropped) = build_task(
        &ds.name,
        ds.problems,
        format,
        &policy.tokenizer,
        cfg.data.max_prompt_length,
        verifier.clone(),
    )?;
    if train.is_empty() {
        let file = data_file(
            &cfg.data.train_files,
            data_dir.or(cfg.data.data_dir.as_deref()),
        );
        return Err(no_usable_prompts(&file, read, no_answer, dropped, cfg));
    }
    if dropped > 0 {
        ui.println(format!(
            "{}: dropped {dropped} prompts longer than data.max_prompt_length = {}",
            train.name, cfg.data.max_prompt_length
        ));
    }
    let mut evals = Vec::new();
    for name in &cfg.eval.datasets {
        let mut ds = load_dataset(name, data_dir.or(cfg.data.data_dir.as_deref()))?;
        if cfg.eval.n_problems > 0 {
            ds.problems.truncate(cfg.eval.n_problems);
        }
        let verifier = reward_fn(&cfg.reward, &ds.problems)?;
        let (task, _) = build_task(name, ds.problems, format, &policy.tokenizer, 0, verifier)?;
        evals.push(task);
    }
    Ok(Setup {
        policy,
        train,
        evals,
        warm_start: None,
        setup_s: t.elapsed().as_secs_f64(),
        warm_start_s: 0.0,
    })
}

/// Progress bars and printed lines, or nothing (quiet).
pub struct Ui {
    pub quiet: bool,
    pub bars: bool,
}

impl Ui {
    pub fn new(quiet: bool, bars: bool) -> Self {
        Self {
            quiet,
            bars: bars && !quiet,
        }
    }

    /// A progress bar of `len` steps (hidden when quiet or bars are off).
    pub fn bar(&self, len: usize, prefix: &str) -> ProgressBar {
        if !self.bars {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len as u64);
        pb.set_style(
            ProgressStyle::with_template(
                "{prefix:>11} [{bar:30}] {pos}/{len} {elapsed_precise} eta {eta} {msg}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        pb.set_prefix(prefix.to_string());
        pb
    }

    /// Prints a line to stderr (above any progress bar).
    pub fn println(&self, line: impl AsRef<str>) {
        if !self.quiet {
            eprintln!("{}", line.as_ref());
        }
    }
}

fn eval_spec(cfg: &TrainConfig, kv_cache_bytes: Option<usize>) -> EvalSpec {
    EvalSpec {
        k: cfg.eval.k,
        temperature: cfg.eval.temperature,
        top_p: cfg.eval.top_p,
        max_tokens: cfg.eval_max_tokens(),
        batch_size: cfg.eval.batch_size,
        seed: mix_seed(cfg.trainer.seed, &[7]),
        kv_cache_bytes,
    }
}

fn run_evals(
    policy: &Policy,
    tasks: &[Task],
    cfg: &TrainConfig,
    step: usize,
    ui: &Ui,
    writer: &mut MetricsWriter,
) -> Result<Vec<EvalResult>, TrainError> {
    let mut out = Vec::new();
    for task in tasks {
        let pb = ui.bar(task.len(), "eval");
        pb.set_message(format!("{} step {step}", task.name));
        let kv = crate::memory_plan::sampler_kv_budget(cfg, &policy.config, &policy.device)?;
        let r = evaluate(policy, task, &eval_spec(cfg, kv), |done| {
            pb.set_position(done as u64)
        })?;
        pb.finish_and_clear();
        writer
            .write(&r.line(step))
            .map_err(|e| TrainError::io(writer.path(), e))?;
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

/// The task part of an automatic run name: `testbed`, the preset's name, or the training
/// file's stem (`data/train.parquet` -> `train`); characters other than ASCII letters,
/// digits, `-`, `_` and `.` become `-`.
pub fn task_label(train_files: &str) -> String {
    let name = if train_files == "testbed" || rlvr_tasks::data::preset(train_files).is_ok() {
        train_files.to_string()
    } else {
        Path::new(train_files)
            .file_stem()
            .map_or("data".to_string(), |s| s.to_string_lossy().into_owned())
    };
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The run directory: `<runs_dir>/<run_name>`; an automatic name is
/// `<task>-<rule>-s<seed>` ([`task_label`]) with a numeric suffix when taken (`-2`, `-3`, ...);
/// an explicit one that already holds a run with a checkpoint is an error (one without any
/// is started over).
pub fn new_run_dir(cfg: &TrainConfig) -> Result<PathBuf, TrainError> {
    let runs = &cfg.trainer.runs_dir;
    if !cfg.trainer.run_name.is_empty() {
        let dir = runs.join(&cfg.trainer.run_name);
        // a run stopped before its first checkpoint holds nothing to continue: it is
        // started over under its name
        if dir.join("config.toml").exists() && !checkpoint::candidates(&dir).is_empty() {
            return Err(TrainError::Resume(format!(
                "{} already holds a run: continue it with --resume {}, or set trainer.run_name",
                dir.display(),
                dir.display()
            )));
        }
        return Ok(dir);
    }
    let base = format!(
        "{}-{}-s{}",
        task_label(&cfg.data.train_files),
        cfg.algorithm.loss_agg_mode,
        cfg.trainer.seed
    );
    for i in 1.. {
        let name = if i == 1 {
            base.clone()
        } else {
            format!("{base}-{i}")
        };
        let dir = runs.join(name);
        if !dir.exists() {
            return Ok(dir);
        }
    }
    unreachable!()
}

/// `rlvr train`: a fresh run, or `--resume`.
pub fn train(opts: &TrainOptions) -> Result<RunSummary, TrainError> {
    let wall = Instant::now();
    let cfg = resolve_config(opts)?;
    let ui = Ui::new(opts.quiet, cfg.logging.progress);
    let (run_dir, found) = match &opts.resume {
        Some(run) => {
            let found = checkpoint::find_intact(run).map_err(|why| {
                TrainError::Resume(format!(
                    "{}: no intact checkpoint to resume from: {why}",
                    run.display()
                ))
            })?;
            (run.clone(), found)
        }
        None => (new_run_dir(&cfg)?, None),
    };
    if let Some(f) = &found {
        for note in &f.notes {
            ui.println(format!("resume: {note}"));
        }
    } else if run_dir.join("config.toml").exists() {
        // a run killed before its first checkpoint: nothing to resume, so it starts over
        ui.println(format!(
            "{} has no checkpoint (stopped before its first): starting it over",
            run_dir.display()
        ));
        let metrics = run_dir.join("metrics.jsonl");
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
    if cfg.model.device == "cpu" {
        ui.println(format!(
            "matmul: {}",
            rlvr_model::matmul::backend_description()
        ));
    }

    // setup: policy (from the checkpoint when resuming), tasks
    let s = setup(&cfg, opts.data_dir.as_deref(), ckpt.as_deref(), &ui)?;
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
    let mut trainer = Trainer::new(cfg.clone(), s.policy, s.train)?;
    trainer.faults = opts.faults.clone();
    trainer.rollout_dump = cfg.trainer.rollout_data_dir.as_ref().map(|d| {
        if d.is_absolute() {
            d.clone()
        } else {
            run_dir.join(d)
        }
    });
    if cfg.algorithm.use_kl_loss {
        if state.is_some() {
            trainer.reference = Some(
                Policy::load(
                    &ref_dir.to_string_lossy(),
                    dtype(&cfg.model.dtype),
                    &device(&cfg.model.device)?,
                )?
                .model,
            );
        } else {
            trainer.policy.save(&ref_dir)?;
        }
    }
    if let (Some(st), Some(ck)) = (&state, &ckpt) {
        trainer.step = st.step;
        let opt_path = ck.join(checkpoint::OPTIMIZER_FILE);
        trainer
            .optimizer
            .load(&trainer.policy.params, &opt_path, st.optimizer_steps)
            .map_err(|e| TrainError::Resume(format!("{}: {e}", opt_path.display())))?;
        trainer.order = DataOrder::new(
            trainer.task.len(),
            cfg.trainer.seed,
            cfg.data.shuffle,
            st.data,
        );
        ui.println(format!("resumed at step {} from {}", st.step, ck.display()));
    }
    // the config is written (atomically) only now that it validated and the whole set-up,
    // resumed state included, succeeded: a failing override never replaces a run's config
    if opts.resume.is_none() || !opts.overrides.is_empty() {
        write_config(&run_dir, &cfg)?;
    }
    let metrics_path = run_dir.join("metrics.jsonl");
    let mut writer = MetricsWriter::open(&metrics_path, state.as_ref().map(|s| s.step))
        .map_err(|e| TrainError::io(&metrics_path, e))?;

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
        writer
            .write(&line)
            .map_err(|e| TrainError::io(&metrics_path, e))?;
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
        } else if cfg.logging.print_freq > 0 && trainer.step % cfg.logging.print_freq == 0 {
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

/// Writes `<run>/config.toml` through a temporary file and a rename.
fn write_config(run_dir: &Path, cfg: &TrainConfig) -> Result<(), TrainError> {
    let path = run_dir.join("config.toml");
    let tmp = run_dir.join("config.toml.tmp");
    std::fs::write(&tmp, cfg.to_toml()).map_err(|e| TrainError::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| TrainError::io(&path, e))
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

impl PhaseTimes {
    /// Seconds over all phases.
    pub fn total(&self) -> f64 {
        self.setup_s
            + self.warm_start_s
            + self.rollout_s
            + self.reward_s
            + self.train_s
            + self.eval_s
            + self.checkpoint_s
    }
}

/// Builds the summary from the run's metrics file.
fn summarize(
    run_dir: &Path,
    cfg: &TrainConfig,
    steps: usize,
    n_params: usize,
    warm_start: Option<String>,
    times: PhaseTimes,
    wall_s: f64,
) -> Result<RunSummary, TrainError> {
    let path = run_dir.join("metrics.jsonl");
    let lines = metrics::read_lines(&path).map_err(|e| TrainError::io(&path, e))?;
    let eval_at = |step: u64| -> Vec<EvalResult> {
        lines
            .iter()
            .filter(|v| v["kind"] == "eval" && v["step"].as_u64() == Some(step))
            .map(|v| EvalResult {
                dataset: v["dataset"].as_str().unwrap_or("?").to_string(),
                k: v["k"].as_u64().unwrap_or(0) as usize,
                n_problems: v["n_problems"].as_u64().unwrap_or(0) as usize,
                distinct_problems: v["distinct_problems"].as_u64().unwrap_or(0) as usize,
                mean_at_k: v["mean_at_k"].as_f64().unwrap_or(f64::NAN),
                pass_at_k: v["pass_at_k"].as_f64().unwrap_or(f64::NAN),
                correct: Vec::new(),
                samples: Vec::new(),
                response_length_mean: f64::NAN,
                secs: 0.0,
            })
            .collect()
    };
    let train: Vec<&serde_json::Value> = lines.iter().filter(|v| v["kind"] == "train").collect();
    Ok(RunSummary {
        run_dir: run_dir.to_path_buf(),
        steps,
        total_steps: cfg.trainer.total_training_steps,
        rule: cfg.algorithm.loss_agg_mode.to_string(),
        task: if cfg.is_testbed() {
            format!(
                "testbed, regime {}, sums of 2 to {} terms",
                cfg.data.testbed_regime, cfg.data.testbed_difficulty
            )
        } else {
            cfg.data.train_files.clone()
        },
        before: eval_at(0),
        after: if steps > 0 {
            eval_at(steps as u64)
        } else {
            Vec::new()
        },
        rewards: train
            .iter()
            .map(|v| v["reward_mean"].as_f64().unwrap_or(f64::NAN))
            .collect(),
        skipped_steps: train.iter().filter(|v| v["skipped"] == true).count(),
        live_bias: LiveBias::from_lines(&train),
        times,
        wall_s,
        warm_start,
        n_params,
    })
}

impl RunSummary {
    /// The text printed at the end of `rlvr train`.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let t = &self.times;
        s += &format!(
            "\n== rlvr train: {} steps of {} ({} skipped), aggregation `{}` ==\n",
            self.steps, self.total_steps, self.skipped_steps, self.rule
        );
        s += &format!("task: {}\n", self.task);
        s += &format!("policy: {} parameters\n", self.n_params);
        if let Some(w) = &self.warm_start {
            s += &format!("warm start: {w}\n");
        }
        for after in &self.after {
            let before = self.before.iter().find(|b| b.dataset == after.dataset);
            match before {
                Some(b) => {
                    s += &format!(
                        "held-out accuracy ({}, {}, mean@{k} sampled): {:.3} before -> {:.3} after ({:+.3}); pass@{k}: {:.3} -> {:.3}\n",
                        after.dataset, after.problems_text(), b.mean_at_k, after.mean_at_k,
                        after.mean_at_k - b.mean_at_k, b.pass_at_k, after.pass_at_k, k = after.k
                    );
                }
                None => {
                    s += &format!(
                        "held-out accuracy ({}, {}): mean@{k} {:.3}, pass@{k} {:.3}\n",
                        after.dataset,
                        after.problems_text(),
                        after.mean_at_k,
                        after.pass_at_k,
                        k = after.k
                    );
                }
            }
        }
        if !self.rewards.is_empty() {
            let r = &self.rewards;
            let last = &r[r.len().saturating_sub(10)..];
            s += &format!(
                "training reward: {} (first {:.3}, mean of last {} {:.3})\n",
                metrics::sparkline(r, 60),
                r[0],
                last.len(),
                crate::warm_start::mean(last)
            );
        }
        if let Some(b) = &self.live_bias {
            let gap = b
                .pos_neg_gap
                .map_or("n/a".to_string(), |g| format!("{g:+.1} tokens"));
            let mut rules = vec!["token-mean", "seq-mean-token-mean", "balanced"];
            if !rules.contains(&self.rule.as_str()) {
                rules.push(&self.rule);
            }
            let shares: Vec<String> = rules
                .iter()
                .filter_map(|r| {
                    let (_, v) = b.positive_share.iter().find(|(n, _)| n == r)?;
                    let this = if *r == self.rule { " (this run)" } else { "" };
                    Some(format!("{r} {v:.3}{this}"))
                })
                .collect();
            let shares = if shares.is_empty() {
                "n/a (no step had both right and wrong responses)".to_string()
            } else {
                shares.join(", ")
            };
            s += &format!(
                "live batches (mean over steps): length CV {:.2}, L+ - L- {gap}; gradient share on correct responses: {shares}\n",
                b.length_cv,
            );
        }
        s += &format!(
            "time: {:.0}s wall; setup {:.0}s, warm start {:.0}s, rollout {:.0}s, reward {:.1}s, train {:.0}s, eval {:.0}s, checkpoints {:.1}s\n",
            self.wall_s, t.setup_s, t.warm_start_s, t.rollout_s, t.reward_s, t.train_s, t.eval_s, t.checkpoint_s
        );
        s += &format!(
            "files: {}/ (metrics.jsonl, config.toml, checkpoint/ in Hugging Face layout)\n",
            self.run_dir.display()
        );
        s
    }
}

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

/// The `--dry-run` memory plan of `cfg` for a model of shape `qc` (`memory_plan.rs`).
pub fn memory_plan_text(cfg: &TrainConfig, qc: &rlvr_model::QwenConfig) -> String {
    let plan =
        crate::memory_plan::MemoryPlan::new(qc, &crate::memory_plan::PlanInputs::from_config(cfg));
    plan.render(gradient_checkpointing(cfg), cfg.model.device_memory_gib)
        .trim_end()
        .to_string()
}

/// Whether the run recomputes decoder layers in the backward.
fn gradient_checkpointing(cfg: &TrainConfig) -> bool {
    cfg.model.gradient_checkpointing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_bias_averages_the_live_steps() {
        let lines: Vec<serde_json::Value> = [
            r#"{"kind":"train","skipped":false,"response_length_cv":0.4,"pos_neg_gap":-2.0,
               "positive_share":{"balanced":0.5,"token-mean":0.44}}"#,
            r#"{"kind":"train","skipped":false,"response_length_cv":0.2,"pos_neg_gap":null,
               "positive_share":{"balanced":0.5,"token-mean":0.48}}"#,
            r#"{"kind":"train","skipped":true,"response_length_cv":9.0,"pos_neg_gap":9.0,
               "positive_share":{"balanced":0.0,"token-mean":0.0}}"#,
        ]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
        let refs: Vec<&serde_json::Value> = lines.iter().collect();
        let b = LiveBias::from_lines(&refs).unwrap();
        assert!((b.length_cv - 0.3).abs() < 1e-12);
        assert_eq!(b.pos_neg_gap, Some(-2.0));
        let share = |r: &str| b.positive_share.iter().find(|(n, _)| n == r).unwrap().1;
        assert!((share("token-mean") - 0.46).abs() < 1e-12);
        assert_eq!(share("balanced"), 0.5);
        assert_eq!(LiveBias::from_lines(&refs[2..]), None);
    }

    #[test]
    fn device_names_and_errors() {
        assert!(matches!(device("cpu"), Ok(Device::Cpu)));
        let err = device("tpu").unwrap_err();
        assert!(err.is_user_input());
        let msg = err.to_string();
        assert!(msg.contains("model.device") && msg.contains("tpu"), "{msg}");
        #[cfg(not(feature = "cuda"))]
        for name in ["cuda", "cuda:1"] {
            let err = device(name).unwrap_err();
            assert!(err.is_user_input());
            let msg = err.to_string();
            assert!(
                msg.contains("--features cuda") && msg.contains(name),
                "{msg}"
            );
        }
    }
}
