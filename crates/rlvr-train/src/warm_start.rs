//! Supervised warm start: token-mean cross-entropy on worked solutions, so that the testbed
//! model starts GRPO able to solve some problems (reward off the floor, not on the ceiling).
//!
//! The result is cached on disk in Hugging Face layout, under a key that hashes every setting
//! it depends on ([`cache_key`]); a second run with the same settings loads it instead.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rlvr_model::TrainForwardOptions;

use crate::optim::{AdamW, AdamWParams, GradAccum, Schedule};
use crate::policy::Policy;
use crate::seed::{mix_seed, SplitMix64};
use crate::TrainError;

/// One supervised example: prompt ids and target ids (the target ends with eos).
pub type Example = (Vec<u32>, Vec<u32>);

/// Settings of the warm start.
#[derive(Debug, Clone)]
pub struct WarmStartSpec {
    pub steps: usize,
    pub batch_size: usize,
    pub lr: f64,
    pub seed: u64,
}

/// What the warm start did.
#[derive(Debug, Clone, Default)]
pub struct WarmStartReport {
    /// Mean token loss of each step.
    pub losses: Vec<f64>,
    pub secs: f64,
    /// True when the model came from the cache.
    pub cached: bool,
}

/// Trains `policy` on `(prompt, solution)` pairs (the solution ends with the eos token):
/// AdamW, 5% linear warmup then cosine to 10% of `lr`, gradient clipping at 1.
/// `progress(step, loss)` is called after every step.
pub fn supervised(
    policy: &mut Policy,
    examples: &[Example],
    spec: &WarmStartSpec,
    mut progress: impl FnMut(usize, f64),
) -> Result<WarmStartReport, TrainError> {
    let t = Instant::now();
    if examples.is_empty() {
        return Err(TrainError::Msg("warm start: no examples".into()));
    }
    let mut opt = AdamW::new(
        &policy.params,
        AdamWParams {
            beta1: 0.9,
            beta2: 0.99,
            eps: 1e-8,
            weight_decay: 0.0,
        },
    )?;
    let schedule = Schedule {
        lr: spec.lr,
        warmup: (spec.steps / 20).max(1),
        total: spec.steps,
        kind: crate::config::LrScheduler::Cosine,
        min_lr_ratio: 0.1,
    };
    let mut rng = SplitMix64(mix_seed(spec.seed, &[3]));
    let mut losses = Vec::with_capacity(spec.steps);
    for step in 0..spec.steps {
        let pairs: Vec<(Vec<u32>, Vec<u32>)> = (0..spec.batch_size)
            .map(|_| examples[(rng.next_u64() % examples.len() as u64) as usize].clone())
            .collect();
        let batch = policy.batch(&pairs, false)?;
        let mask = batch.response_mask()?;
        let n = mask.sum_all()?.to_scalar::<f32>()? as f64;
        // the trainer's forward and backward (rlvr-model's training step), gradients handed
        // to the f32 accumulator piece by piece
        let mut grads = GradAccum::new(&policy.params);
        let params = &policy.params;
        let value = policy
            .model
            .loss_and_grads_into(
                &batch,
                &TrainForwardOptions::default(),
                |out| {
                    let lp = &out.logprobs;
                    Ok::<_, TrainError>(
                        ((lp * mask.to_dtype(lp.dtype())?)?.sum_all()? * (-1.0 / n.max(1.0)))?,
                    )
                },
                |piece| Ok(grads.add(params, &piece)?),
            )?
            .loss;
        if !value.is_finite() {
            return Err(TrainError::Msg(format!(
                "warm start: non-finite loss at step {step}"
            )));
        }
        let lr = schedule.lr_at(step);
        if let Some(why) = opt
            .clip_and_step(&policy.params, &mut grads, 1.0, lr)?
            .skipped
        {
            return Err(TrainError::Msg(format!(
                "warm start: step {step} not applied: {why} (lower testbed.warm_start_lr)"
            )));
        }
        losses.push(value);
        progress(step + 1, value);
    }
    Ok(WarmStartReport {
        losses,
        secs: t.elapsed().as_secs_f64(),
        cached: false,
    })
}

/// A stable 64-bit FNV-1a hash of `text`, in hex: the cache key of a description of every
/// setting the warm-started model depends on.
pub fn cache_key(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The cache directory for `key` under `cache_dir`.
pub fn cache_path(cache_dir: &Path, key: &str) -> PathBuf {
    cache_dir.join(format!("warm-start-{key}"))
}

/// Takes the exclusive lock of the cache entry `dir` (the file `<dir>.lock`), waiting while
/// another process holds it; released when the returned file is dropped.
pub fn lock(dir: &Path) -> Result<std::fs::File, TrainError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| TrainError::io(parent, e))?;
    let path = dir.with_extension("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| TrainError::io(&path, e))?;
    file.lock().map_err(|e| TrainError::io(&path, e))?;
    Ok(file)
}

/// Saves `policy` into the cache atomically (temporary directory, then rename).
pub fn store(policy: &Policy, dir: &Path) -> Result<(), TrainError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| TrainError::io(parent, e))?;
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| TrainError::io(&tmp, e))?;
    }
    policy.save(&tmp)?;
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
    }
    std::fs::rename(&tmp, dir).map_err(|e| TrainError::io(dir, e))?;
    Ok(())
}

/// Mean of `x` (0 for an empty slice).
pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x.iter().sum::<f64>() / x.len() as f64
    }
}
