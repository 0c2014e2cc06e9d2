//! `rlvr bench`: throughput measurements.
//!
//! * `rlvr bench grpo --model DIR`: GRPO steps on the work of the TRL reference harness
//!   (`trl_grpo_bench.py`, BENCHMARKS.md): `--prompts` prompts "Compute ABCD+EFGH=" per step x
//!   `--generations` responses of exactly `--new-tokens` tokens (end-of-sequence does not
//!   stop them), temperature 1, seeded random 0/1 rewards (never constant over a step's
//!   batch), `token-mean` loss, one optimizer step per generation round (one mini-batch, one
//!   micro-batch, one epoch: exactly on-policy, so no old log-prob pass), AdamW at lr 1e-6
//!   with gradient clipping at 1, f32. The step is `rlvr_train::Trainer::step`, the code
//!   `rlvr train` runs; only the task (prompts and the random verifier) is the benchmark's.
//!   The first step is a warm-up and is not counted in the medians. Each step's process CPU
//!   time (user + system, all threads) is printed too: on a busy machine it says what the
//!   step cost where the wall time also counts waiting for a core.
//! * `rlvr bench matmul [--model DIR]`: achieved GFLOP/s of rlvr's CPU matmul (on the library
//!   `RLVR_BLAS` picks, `cpu/blas.rs` of rlvr-model) on the products one training step runs per
//!   linear layer: forward `x W^T`, and the two backward products `dY W` (input gradient) and
//!   `X^T dY` (weight gradient), at `--tokens` rows.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result};
use rand::{RngExt, SeedableRng};
use rlvr_model::candle_core::{DType, Device, Tensor};
use rlvr_model::DecoderConfig;
use rlvr_tasks::{Problem, Prompt, Score, Verifier};
use rlvr_train::grpo::StepTiming;
use rlvr_train::{Policy, Task, TrainConfig, Trainer};

use crate::output::outln;
use crate::BadInput;

/// Throughput benchmarks: a GRPO step on TRL's reference work, and matmul GFLOP/s.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// GRPO steps on the TRL reference harness's work; prints the median step and its split.
    Grpo(GrpoArgs),
    /// Achieved GFLOP/s of the model's matmul shapes (forward and both backward products).
    Matmul(MatmulArgs),
    /// One optimizer step (gradient clipping, the finiteness proof or check, AdamW) over a model
    /// shape's parameters: seconds and the memory traffic it amounts to.
    Optimizer(OptimizerArgs),
}

#[derive(Debug, clap::Args)]
struct OptimizerArgs {
    /// The parameter set: `bench-tiny`, `bench-small`, `qwen2.5-0.5b` (494M parameters).
    #[arg(long, default_value = "bench-small", value_parser = ["bench-tiny", "bench-small", "qwen2.5-0.5b"])]
    shape: String,
    /// Weights in f32, or bf16 with an f32 master copy.
    #[arg(long, default_value = "f32", value_parser = ["f32", "bf16"])]
    dtype: String,
    /// Timed steps (the median is reported) after one warm-up step.
    #[arg(long, default_value_t = 5)]
    steps: usize,
    /// Time the device-agnostic tensor-op path instead of the fused host pass.
    #[arg(long)]
    tensor_path: bool,
    /// Time clipping, the finiteness check and the update as three separate calls
    /// (`GradAccum::clip`, `AdamW::step_stays_finite`, `AdamW::step`: a pass each over
    /// memory) instead of `AdamW::clip_and_step`; the same bits.
    #[arg(long)]
    separate_passes: bool,
    /// Gradients set from outside (their sums of squares unknown, so the step's first pass
    /// reads them for the norm) instead of summed by `GradAccum`, which records each
    /// gradient's sum of squares as it writes it (what a training step's accumulation does;
    /// that sum is timed apart from the step).
    #[arg(long)]
    norm_pass: bool,
}

#[derive(Debug, clap::Args)]
struct GrpoArgs {
    /// Model directory in Hugging Face layout (config.json, safetensors, tokenizer.json).
    #[arg(long, required_unless_present = "shape", conflicts_with = "shape")]
    model: Option<PathBuf>,
    /// Instead of --model: a random model of this shape with a byte-level tokenizer, built
    /// in a temporary directory (`bench-tiny`, `bench-small`: TRL's reference models;
    /// `qwen2.5-0.5b`: Qwen2.5-0.5B's 24 layers and 151,936-token vocabulary). Its cost per
    /// step is the real model's: the work does not depend on the weights.
    #[arg(long, value_parser = ["bench-tiny", "bench-small", "qwen2.5-0.5b"])]
    shape: Option<String>,
    /// Prompts per step.
    #[arg(long, default_value_t = 8)]
    prompts: usize,
    /// Responses per prompt (at least 2: GRPO compares responses within a group).
    #[arg(long, default_value_t = 8)]
    generations: usize,
    /// Tokens per response; every response has exactly this many.
    #[arg(long, default_value_t = 128)]
    new_tokens: usize,
    /// Steps to run; the first is a warm-up, the medians are over the rest (all of them when
    /// `--steps 1`).
    #[arg(long, default_value_t = 6)]
    steps: usize,
    /// Seed of the prompts, the sampling and the rewards.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// The dtype of the CPU matrix products' operands: `f32`, or `bf16` (operands rounded to
    /// bf16, sums in f32: torch's CPU autocast; `model.matmul_dtype` of a run).
    #[arg(long, default_value = "f32")]
    matmul_dtype: rlvr_model::matmul::ProductDtype,
    /// Also print one JSON object with every step's phases (last line of the output).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct MatmulArgs {
    /// Take the layer shapes from this model's config.json (else: bench-tiny and bench-small).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Rows of the training products (tokens in one forward: 64 x 140 in `bench grpo`).
    #[arg(long, default_value_t = 8960)]
    tokens: usize,
    /// Timed repetitions per product (the best is reported).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Time by the process's CPU time (user + system, all threads) instead of wall time:
    /// GFLOP per CPU-second. With `RAYON_NUM_THREADS=1` it is a per-core figure that other
    /// processes on a busy machine hardly change (with more threads, waiting threads spin and
    /// count).
    #[arg(long)]
    cpu_time: bool,
    /// Also time one sampling step's products for this many rows (one new token per
    /// sequence): every layer's q|k|v, o, gate|up and down products and the vocabulary product,
    /// in order, each layer on its own weights, so that they stream from memory as in sampling
    /// (the table above repeats one product, whose weight a cache may hold); best of `--reps`.
    #[arg(long, value_name = "ROWS")]
    decode: Option<usize>,
    /// The dtype of the CPU matrix products' operands: `f32`, or `bf16` (operands rounded to
    /// bf16, sums in f32: torch's CPU autocast; `model.matmul_dtype` of a run).
    #[arg(long, default_value = "f32")]
    matmul_dtype: rlvr_model::matmul::ProductDtype,
    /// Also print one JSON object with every row (last line of the output).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    match args.what {
        What::Grpo(a) => grpo(a),
        What::Matmul(a) => matmul_bench(a),
        What::Optimizer(a) => optimizer_bench(a),
    }
}

// ---------------------------------------------------------------------------------------
// bench optimizer
// ---------------------------------------------------------------------------------------

/// `rlvr bench optimizer`: what `Trainer::minibatch_step` runs after the backward
/// (`AdamW::clip_and_step`: global norm, clipping, the finiteness proof or check, AdamW),
/// timed.
fn optimizer_bench(a: OptimizerArgs) -> Result<()> {
    use rlvr_train::optim::{AdamW, AdamWParams, GradAccum, Params};
    let cfg = match a.shape.as_str() {
        "bench-tiny" => DecoderConfig::bench_tiny(),
        "bench-small" => DecoderConfig::bench_small(),
        _ => DecoderConfig::qwen25_05b_shaped(24),
    };
    let dtype = if a.dtype == "bf16" {
        DType::BF16
    } else {
        DType::F32
    };
    let dev = Device::Cpu;
    let varmap = rlvr_model::candle_nn::VarMap::new();
    {
        let mut data = varmap.data().lock().expect("varmap lock");
        for (name, shape) in rlvr_model::param_shapes(&cfg) {
            let w = Tensor::randn(0f32, 0.02, shape.as_slice(), &dev)?.to_dtype(dtype)?;
            data.insert(name, rlvr_model::candle_core::Var::from_tensor(&w)?);
        }
    }
    let params = Params::from_varmap(&varmap);
    // one micro-batch's gradients; the default mode sums two of them before every step,
    // as a training step does (timed apart: part of a training step's forward+backward), and
    // the accumulation takes each sum's sum of squares on the way
    let mut pieces: Vec<Tensor> = params
        .vars
        .iter()
        .map(|v| Tensor::randn(0f32, 1e-3, v.shape(), &dev))
        .collect::<Result<_, _>>()?;
    let accumulate = !(a.norm_pass || a.separate_passes);
    let mut grads = GradAccum::new(&params);
    if !accumulate {
        for (i, g) in pieces.drain(..).enumerate() {
            grads.set(i, Some(g));
        }
    }
    let hp = AdamWParams {
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.01,
    };
    let mut opt = AdamW::new(&params, hp)?;
    opt.fused_host = !a.tensor_path;
    let n = params.numel();
    // clipping in place rescales the gradients: each separate-passes step starts again from
    // these (untimed), so that every step clips as a training step does
    let fresh = if a.separate_passes {
        Some(grads.copies()?)
    } else {
        None
    };
    let (mut times, mut accumulation) = (Vec::new(), Vec::new());
    for i in 0..=a.steps.max(1) {
        if accumulate {
            grads = GradAccum::new(&params);
            let t = Instant::now();
            for _ in 0..2 {
                for (j, (v, g)) in params.vars.iter().zip(&pieces).enumerate() {
                    grads.add_one(j, v, g)?;
                }
            }
            if i > 0 {
                accumulation.push(t.elapsed().as_secs_f64());
            }
        }
        if let Some(fresh) = &fresh {
            for (j, f) in fresh.iter().enumerate() {
                if let (Some(g), Some(f)) = (grads.get(j), f) {
                    rlvr_train::optim::copy_into(g, f)?;
                }
            }
        }
        let t = Instant::now();
        if a.separate_passes {
            grads.clip(1.0)?;
            anyhow::ensure!(
                opt.step_stays_finite(&params, &grads, 1e-6)?,
                "non-finite update"
            );
            opt.step(&params, &grads, 1e-6)?;
        } else {
            let step = opt.clip_and_step(&params, &mut grads, 1.0, 1e-6)?;
            anyhow::ensure!(
                step.skipped.is_none(),
                "update not applied: {:?}",
                step.skipped
            );
        }
        if i > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    // bytes the step must move at least. One pass reads the f32 weight (or master) for the
    // weight's bound (and g for the norm with --norm-pass), the update reads g, m, v and the
    // weight (or master) and writes m, v, the weight (or master, and the half-precision
    // weight). Separate passes: the norm reads g, clipping reads and writes it, the check
    // reads g, m, v and the weight (or master), the update as above.
    let w_bytes = dtype.size_in_bytes();
    let master = if dtype == DType::F32 { 0 } else { w_bytes };
    let update = 4 * 4 + 4 * 3 + master;
    let per_elem = if a.separate_passes {
        4 + 8 + 16 + update
    } else if a.norm_pass {
        4 + 4 + update
    } else {
        4 + update
    };
    let gb = (n * per_elem) as f64 / 1e9;
    outln!(
        "optimizer step, {} ({n} parameters, {}{}), {}: median {median:.3} s over {} steps, {:.1} GB/s of the {gb:.1} GB it must move ({per_elem} bytes a parameter)",
        a.shape,
        a.dtype,
        if master > 0 { " with f32 master" } else { "" },
        match (a.tensor_path, a.separate_passes, a.norm_pass) {
            (true, _, _) => "tensor-op path",
            (false, true, _) => "fused host passes, clipping and check separate",
            (false, false, true) => "fused host pass, clipping folded in, a norm pass",
            (false, false, false) => "fused host pass, clipping folded in",
        },
        times.len(),
        gb / median,
    )?;
    if accumulate {
        accumulation.sort_by(f64::total_cmp);
        outln!(
            "before each step, summing two micro-batches' gradients (part of a training step's \
             forward+backward, not of the step above; each sum's sum of squares taken on the \
             way): median {:.3} s",
            accumulation[accumulation.len() / 2]
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// bench grpo
// ---------------------------------------------------------------------------------------

/// Random 0/1 rewards from a seeded RNG, drawn in response order; when a batch's rewards
/// all agree, the first is flipped (as the TRL harness does, so the step always has a
/// gradient).
struct RandomReward {
    rng: Mutex<rand::rngs::StdRng>,
}

impl Verifier for RandomReward {
    fn score(&self, _response: &str, _problem: &Problem) -> Score {
        let r = self.rng.lock().expect("reward rng").random::<f64>() < 0.5;
        score(r)
    }

    fn score_batch(
        &self,
        items: &[(&str, &Problem)],
    ) -> Result<Vec<Score>, rlvr_tasks::RewardError> {
        let mut rng = self.rng.lock().expect("reward rng");
        let mut r: Vec<bool> = items.iter().map(|_| rng.random::<f64>() < 0.5).collect();
        if r.len() > 1 && r.iter().all(|&x| x == r[0]) {
            r[0] = !r[0];
        }
        Ok(r.into_iter().map(score).collect())
    }
}

fn score(correct: bool) -> Score {
    Score {
        reward: if correct { 1.0 } else { 0.0 },
        correct,
        extracted: None,
        reason: "random".into(),
    }
}

fn bad(msg: impl Into<String>) -> anyhow::Error {
    BadInput(msg.into()).into()
}

fn check_model_dir(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        return Err(bad(format!(
            "--model {}: no such directory (a model in Hugging Face layout; or use --shape \
             for a random model of a known shape)",
            dir.display()
        )));
    }
    if !dir.join("config.json").is_file() {
        return Err(bad(format!(
            "--model {}: no config.json in it",
            dir.display()
        )));
    }
    Ok(())
}

/// Saves a random model of the `--shape` named `shape` under `dir`; returns its directory.
fn random_model(shape: &str, dir: &Path) -> Result<PathBuf> {
    let mut cfg = match shape {
        "bench-tiny" => DecoderConfig::bench_tiny(),
        "bench-small" => DecoderConfig::bench_small(),
        "qwen2.5-0.5b" => DecoderConfig::qwen25_05b_shaped(24),
        other => return Err(bad(format!("--shape {other}: unknown"))),
    };
    cfg.eos_token_ids = vec![256];
    let (_model, varmap) = rlvr_model::init_random(&cfg, 0, DType::F32, &Device::Cpu)?;
    let out = dir.join(shape);
    rlvr_model::save_model(
        &out,
        &varmap,
        &cfg,
        &rlvr_model::ChatTokenizer::byte_level()?,
    )?;
    Ok(out)
}

/// The benchmark's training config: the TRL harness's settings in `rlvr train`'s terms.
fn grpo_config(a: &GrpoArgs, model: &Path) -> Result<TrainConfig> {
    let mut cfg = TrainConfig::default();
    cfg.model.path = Some(model.display().to_string());
    // the benchmark's own prompts (not a dataset): a label for the config
    cfg.data.train_files = Some("bench".into());
    cfg.eval.datasets.clear();
    cfg.model.dtype = rlvr_model::WeightDtype::F32;
    cfg.model.matmul_dtype = a.matmul_dtype;
    cfg.rollout.num_generations = a.generations;
    cfg.rollout.temperature = 1.0;
    cfg.rollout.top_p = 1.0;
    cfg.rollout.top_k = 0;
    cfg.rollout.max_response_length = a.new_tokens;
    cfg.rollout.generation_batch_size = a.prompts;
    cfg.algorithm.loss_agg_mode = rlvr_core::AggRule::TokenMean;
    cfg.algorithm.ppo_epochs = 1;
    cfg.algorithm.ppo_mini_batch_size = a.prompts;
    cfg.algorithm.ppo_micro_batch_size = a.prompts * a.generations;
    cfg.algorithm.filter_groups = false;
    cfg.optim.lr = 1e-6;
    cfg.optim.grad_clip = 1.0;
    cfg.optim.weight_decay = 0.0;
    cfg.trainer.train_batch_size = a.prompts;
    cfg.trainer.total_training_steps = a.steps;
    cfg.trainer.seed = a.seed;
    cfg.validate().map_err(|e| bad(e.to_string()))?;
    Ok(cfg)
}

/// `n` prompts "Compute ABCD+EFGH=" with 4-digit operands from a seeded RNG (the harness's
/// format; its 64 prompts come from Python's RNG, these from rand's, same token count).
fn bench_problems(n: usize, seed: u64) -> Vec<Problem> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            let (x, y) = (rng.random_range(1000..=9999), rng.random_range(1000..=9999));
            Problem {
                id: format!("bench-{i}"),
                prompt: Prompt::Text(format!("Compute {x}+{y}=")),
                answer: (x + y).to_string(),
                solution: None,
                data_source: "bench".into(),
                choices: None,
            }
        })
        .collect()
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

/// Peak resident memory of this process (VmHWM), MiB.
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// One step: wall seconds, phase timing, mean reward, process CPU seconds.
type StepRecord = (f64, StepTiming, f64, f64);

fn grpo(a: GrpoArgs) -> Result<()> {
    if a.prompts == 0 {
        return Err(bad("--prompts must be at least 1"));
    }
    if a.generations < 2 {
        return Err(bad(format!(
            "--generations must be at least 2 (GRPO compares responses within a group), got {}",
            a.generations
        )));
    }
    if a.new_tokens == 0 {
        return Err(bad("--new-tokens must be at least 1"));
    }
    if a.steps == 0 {
        return Err(bad("--steps must be at least 1"));
    }
    let scratch;
    let model = match (&a.model, &a.shape) {
        (Some(dir), _) => {
            check_model_dir(dir)?;
            dir.clone()
        }
        (None, Some(shape)) => {
            scratch = tempfile::tempdir().context("a temporary directory for --shape")?;
            random_model(shape, scratch.path())?
        }
        (None, None) => return Err(bad("--model or --shape is required")),
    };
    let cfg = grpo_config(&a, &model)?;
    let mut policy = Policy::load(cfg.model_name(), DType::F32, &Device::Cpu)
        .map_err(crate::train::wrap)
        .with_context(|| format!("loading model {}", model.display()))?;
    // fixed-length responses: nothing stops a response before --new-tokens
    policy.tokenizer.eos_token_ids.clear();
    let n_problems = (a.prompts * a.steps).max(64);
    let problems = bench_problems(n_problems, a.seed ^ 0x5EED);
    let mut prompts = Vec::with_capacity(problems.len());
    for p in &problems {
        prompts.push(
            policy
                .tokenizer
                .encode(p.prompt.text(), false)
                .map_err(|e| anyhow::anyhow!("tokenizing the bench prompts: {e}"))?,
        );
    }
    let prompt_len = prompts.iter().map(Vec::len).max().unwrap_or(0);
    let task = Task {
        environment: None,
        name: "bench".into(),
        problems,
        prompts,
        verifier: std::sync::Arc::new(RandomReward {
            rng: Mutex::new(rand::rngs::StdRng::seed_from_u64(a.seed.wrapping_add(7))),
        }),
    };
    let params = policy.config.num_parameters();
    let threads = rlvr_model::candle_core::utils::get_num_threads();
    let mut trainer = Trainer::new(cfg, policy, task, rlvr_train::grpo::Start::Fresh, None)
        .map_err(crate::train::wrap)?;
    let completion_tokens = a.prompts * a.generations * a.new_tokens;
    let dtype = a.matmul_dtype;
    outln!(
        "== rlvr bench grpo: {} ({params} parameters, f32, {dtype} products, {threads} threads) ==",
        a.shape
            .as_ref()
            .map_or(model.display().to_string(), |s| format!(
                "random {s}-shaped model"
            ))
    )?;
    outln!("matmul: {}", rlvr_model::matmul::backend_description())?;
    outln!(
        "work per step: {} prompts x {} responses x {} tokens (prompts of up to {prompt_len} tokens), \
         token-mean, one optimizer step; {} steps, the first a warm-up",
        a.prompts, a.generations, a.new_tokens, a.steps
    )?;
    let mut steps: Vec<StepRecord> = Vec::new();
    for s in 1..=a.steps {
        let (t, c) = (Instant::now(), cpu_secs());
        let report = trainer.step().map_err(crate::train::wrap)?;
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_secs() - c;
        let l = &report.line;
        if l.skipped {
            return Err(anyhow::anyhow!(
                "step {s} was skipped: {}",
                l.skip_reason.clone().unwrap_or_default()
            ));
        }
        let tm = report.timing;
        outln!(
            "[step {s}] {secs:.3} s: generation {:.3}, reward {:.3}, old log-probs {:.3}, \
             forward+backward {:.3}, optimizer {:.3}; {:.0} response tokens (min {} max {}), \
             reward {:.3}",
            tm.rollout,
            tm.reward,
            tm.old_logprobs,
            tm.forward_backward,
            tm.optimizer,
            l.response_length_mean * (a.prompts * a.generations) as f64,
            l.response_length_min,
            l.response_length_max,
            l.reward_mean,
        )?;
        if l.response_length_min as usize != a.new_tokens
            || l.response_length_max as usize != a.new_tokens
        {
            return Err(anyhow::anyhow!(
                "responses were not all {} tokens long (min {}, max {})",
                a.new_tokens,
                l.response_length_min,
                l.response_length_max
            ));
        }
        steps.push((secs, tm, l.reward_mean, cpu));
    }
    let timed = if steps.len() > 1 {
        &steps[1..]
    } else {
        &steps[..]
    };
    let col = |f: &dyn Fn(&StepRecord) -> f64| -> f64 {
        median(&timed.iter().map(f).collect::<Vec<_>>())
    };
    let step = col(&|s| s.0);
    let gen = col(&|s| s.1.rollout);
    let old = col(&|s| s.1.old_logprobs);
    let fb = col(&|s| s.1.forward_backward);
    let opt = col(&|s| s.1.optimizer);
    let reward = col(&|s| s.1.reward);
    let cpu = col(&|s| s.3);
    let rss = peak_rss_mib();
    outln!("median over {} timed steps:", timed.len())?;
    outln!("step_seconds: {step:.3}")?;
    outln!("step_cpu_seconds: {cpu:.3} (user + system, all threads)")?;
    outln!(
        "completion_tokens_per_second: {:.1}",
        completion_tokens as f64 / step
    )?;
    outln!(
        "generation_seconds: {gen:.3} ({:.1} tokens/s)",
        completion_tokens as f64 / gen
    )?;
    outln!("reward_seconds: {reward:.3}")?;
    outln!("old_logprob_seconds: {old:.3}")?;
    outln!("forward_backward_seconds: {fb:.3}")?;
    outln!("optimizer_seconds: {opt:.3}")?;
    outln!("peak_rss_mib: {rss:.0}")?;
    if a.json {
        let j = serde_json::json!({
            "model": a.shape.as_ref().map_or(model.display().to_string(), |s| format!("random {s}")),
            "parameters": params,
            "threads": threads,
            "prompts": a.prompts, "generations": a.generations, "new_tokens": a.new_tokens,
            "prompt_tokens": prompt_len,
            "completion_tokens_per_step": completion_tokens,
            "steps": steps.iter().map(|(s, t, r, c)| serde_json::json!({
                "seconds": s, "cpu_seconds": c, "generation": t.rollout, "reward": t.reward,
                "old_logprobs": t.old_logprobs, "forward_backward": t.forward_backward,
                "optimizer": t.optimizer, "reward_mean": r,
            })).collect::<Vec<_>>(),
            "median": {
                "step": step, "step_cpu": cpu, "generation": gen, "reward": reward, "old_logprobs": old,
                "forward_backward": fb, "optimizer": opt,
            },
            "completion_tokens_per_second": completion_tokens as f64 / step,
            "peak_rss_mib": rss,
        });
        outln!("{j}")?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// bench matmul
// ---------------------------------------------------------------------------------------

/// One linear map of the training forward, `[rows, k] x [k, n]` (weight `[n, k]`).
struct LinearShape {
    model: String,
    name: &'static str,
    k: usize,
    n: usize,
    /// How many such products one forward runs (layers).
    count: usize,
}

/// The products of the CPU training forward (`rlvr_model`'s fused layer): q/k/v in one
/// matmul, the output projection, gate/up in one matmul, the down projection, per layer; the
/// LM head once.
fn model_shapes(name: &str, c: &DecoderConfig) -> Vec<LinearShape> {
    let (h, l) = (c.hidden_size, c.num_hidden_layers);
    let q = c.num_attention_heads * c.head_dim;
    let kv = c.num_key_value_heads * c.head_dim;
    let s = |n: &'static str, k, out, count| LinearShape {
        model: name.to_string(),
        name: n,
        k,
        n: out,
        count,
    };
    vec![
        s("qkv", h, q + 2 * kv, l),
        s("o", q, h, l),
        s("gate_up", h, 2 * c.intermediate_size, l),
        s("down", c.intermediate_size, h, l),
        s("lm_head", h, c.vocab_size, 1),
    ]
}

/// `(flops, best seconds)` of one sampling step's products for `rows` rows over `shapes` (one
/// model's): each of a shape's `count` layers on its own weights, in layer order, through
/// `sgemm` as the sampling forward calls it (`dst = x W^T`, `W` stored `[n, k]`).
fn decode_step_secs(
    shapes: &[&LinearShape],
    rows: usize,
    reps: usize,
    cpu_time: bool,
) -> Result<(f64, f64)> {
    use rlvr_model::matmul::{sgemm, Operand};
    let fill = |n: usize, seed: u64| -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 40) as f32 / (1u64 << 24) as f32 * 0.1 - 0.05
            })
            .collect()
    };
    // (shape, weights) in the order a step runs them: the layers' four products, then the head
    let layers = shapes.iter().map(|s| s.count).max().unwrap_or(0);
    let mut steps: Vec<(&LinearShape, Vec<f32>)> = Vec::new();
    for layer in 0..layers {
        for s in shapes.iter().filter(|s| s.count > 1 && layer < s.count) {
            steps.push((s, fill(s.n * s.k, (layer * 16 + steps.len()) as u64)));
        }
    }
    for s in shapes.iter().filter(|s| s.count <= 1) {
        steps.push((s, fill(s.n * s.k, steps.len() as u64)));
    }
    let widest = steps.iter().map(|(s, _)| s.k.max(s.n)).max().unwrap_or(0);
    let x = fill(rows * widest, 7);
    let mut out = vec![0f32; rows * widest];
    let flops: f64 = steps
        .iter()
        .map(|(s, _)| 2.0 * (rows * s.k * s.n) as f64)
        .sum();
    let secs = best_secs(reps, cpu_time, || {
        for (s, w) in &steps {
            let (a, b) = (Operand::plain(&x, s.k), Operand::transposed(w, s.k));
            sgemm([rows, s.n, s.k], a, b, 0.0, &mut out, s.n);
        }
        Ok(())
    })?;
    Ok((flops, secs))
}

/// User + system CPU seconds of this process so far (all threads).
fn cpu_secs() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Best seconds (wall, or process CPU with `cpu`) of `f` over `reps` timed runs after one
/// warm-up.
fn best_secs(reps: usize, cpu: bool, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let (t, c) = (Instant::now(), cpu_secs());
        f()?;
        let dt = if cpu {
            cpu_secs() - c
        } else {
            t.elapsed().as_secs_f64()
        };
        best = best.min(dt.max(1e-9));
    }
    Ok(best)
}

fn matmul_bench(a: MatmulArgs) -> Result<()> {
    use rlvr_model::matmul::matmul;
    if a.tokens == 0 {
        return Err(bad("--tokens must be at least 1"));
    }
    if a.reps == 0 {
        return Err(bad("--reps must be at least 1"));
    }
    if a.decode == Some(0) {
        return Err(bad("--decode must be at least 1"));
    }
    let shapes = match &a.model {
        Some(dir) => {
            check_model_dir(dir)?;
            let cfg = DecoderConfig::from_file(&dir.join("config.json"))
                .map_err(|e| bad(e.to_string()))?;
            let name = dir
                .file_name()
                .map_or("model".into(), |n| n.to_string_lossy().into_owned());
            model_shapes(&name, &cfg)
        }
        None => {
            let mut v = model_shapes("bench-tiny", &DecoderConfig::bench_tiny());
            v.extend(model_shapes("bench-small", &DecoderConfig::bench_small()));
            v
        }
    };
    let dev = Device::Cpu;
    let threads = rlvr_model::candle_core::utils::get_num_threads();
    let m = a.tokens;
    rlvr_model::matmul::set_product_dtype(a.matmul_dtype);
    outln!(
        "== rlvr bench matmul: {} products by {}, {threads} threads, {m} rows, best of {}, GFLOP per {} second ==",
        a.matmul_dtype,
        rlvr_model::matmul::backend_description(),
        a.reps,
        if a.cpu_time { "CPU" } else { "wall" }
    )?;
    outln!(
        "{:<12} {:<8} {:>6} {:>6} {:>6} {:>10} {:>10} {:>10}   GFLOP/s",
        "model",
        "layer",
        "M",
        "K",
        "N",
        "X W^T",
        "dY W",
        "X^T dY"
    )?;
    let mut rows = Vec::new();
    // per model: (flops, seconds) of one forward+backward's worth of products
    let mut totals: Vec<(String, f64, f64)> = Vec::new();
    let mut peak = 0f64;
    for s in &shapes {
        let x = Tensor::randn(0f32, 1.0, (m, s.k), &dev)?;
        let w = Tensor::randn(0f32, 0.05, (s.n, s.k), &dev)?;
        let dy = Tensor::randn(0f32, 1.0, (m, s.n), &dev)?;
        let wt = w.t()?;
        let flops = 2.0 * (m * s.k * s.n) as f64;
        // what training runs: forward x w^T; backward of `lhs rhs` is grad rhs^T for the
        // input and lhs^T grad for rhs = w^T
        let fwd = best_secs(a.reps, a.cpu_time, || {
            matmul(&x, &wt)?;
            Ok(())
        })?;
        let dx = best_secs(a.reps, a.cpu_time, || {
            matmul(&dy, &w)?;
            Ok(())
        })?;
        let dw = best_secs(a.reps, a.cpu_time, || {
            matmul(&x.t()?, &dy)?;
            Ok(())
        })?;
        let g = |t: f64| flops / t / 1e9;
        outln!(
            "{:<12} {:<8} {:>6} {:>6} {:>6} {:>10.1} {:>10.1} {:>10.1}",
            s.model,
            s.name,
            m,
            s.k,
            s.n,
            g(fwd),
            g(dx),
            g(dw)
        )?;
        peak = peak.max(g(fwd)).max(g(dx)).max(g(dw));
        let c = s.count as f64;
        match totals.iter_mut().find(|t| t.0 == s.model) {
            Some(t) => {
                t.1 += 3.0 * flops * c;
                t.2 += (fwd + dx + dw) * c;
            }
            None => totals.push((s.model.clone(), 3.0 * flops * c, (fwd + dx + dw) * c)),
        }
        rows.push(serde_json::json!({
            "model": s.model, "layer": s.name, "m": m, "k": s.k, "n": s.n, "count": s.count,
            "forward_gflops": g(fwd), "backward_input_gflops": g(dx),
            "backward_weight_gflops": g(dw),
        }));
    }
    outln!("best product: {peak:.1} GFLOP/s")?;
    let mut decode = Vec::new();
    if let Some(rows) = a.decode {
        for model in totals.iter().map(|t| &t.0) {
            let model_shapes: Vec<_> = shapes.iter().filter(|s| &s.model == model).collect();
            let (flops, secs) = decode_step_secs(&model_shapes, rows, a.reps, a.cpu_time)?;
            outln!(
                "{model}: one sampling step's products for {rows} rows ({:.2} GFLOP, {:.2} GB of weights) in {secs:.4} s: {:.1} GFLOP/s, {:.1} GB/s of weights",
                flops / 1e9,
                flops / rows as f64 / 2.0 * 4.0 / 1e9,
                flops / secs / 1e9,
                flops / rows as f64 / 2.0 * 4.0 / secs / 1e9,
            )?;
            decode.push(serde_json::json!({
                "model": model, "rows": rows, "gflop": flops / 1e9, "seconds": secs,
                "gflops": flops / secs / 1e9,
            }));
        }
    }
    for (model, flops, secs) in &totals {
        outln!(
            "{model}: one forward+backward's linear products ({:.1} GFLOP) in {secs:.3} s: {:.1} GFLOP/s",
            flops / 1e9,
            flops / secs / 1e9
        )?;
    }
    if a.json {
        let j = serde_json::json!({
            "threads": threads, "rows": m, "cpu_time": a.cpu_time, "products": rows, "best_gflops": peak,
            "models": totals.iter().map(|(n, f, s)| serde_json::json!({
                "model": n, "gflop": f / 1e9, "seconds": s, "gflops": f / s / 1e9,
            })).collect::<Vec<_>>(),
            "decode": decode,
        });
        outln!("{j}")?;
    }
    Ok(())
}
