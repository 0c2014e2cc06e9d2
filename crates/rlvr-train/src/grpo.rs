//! The GRPO loop, one step read top to bottom.
//!
//! ```text
//! 1 sample prompts      PromptBatch   train_batch_size problems, in the seeded data order
//! 2 rollout             Rollouts      G = num_generations responses per prompt, no gradient
//! 3 reward              Rewards       the task's reward function, by data source, in parallel
//!                                     (+ DAPO's soft overlong penalty)
//! 4 advantage           Advantages    rlvr-core, per group; dynamic sampling repeats 1-4
//!                                     until enough groups have reward variation
//! 5 old log-probs       OldLogProbs   training forward without gradient (+ the KL reference)
//! 6 update              UpdateStats   per epoch, per mini-batch: aggregation weights of the
//!                                     WHOLE mini-batch (rlvr-core), micro-batches summing
//!                                     w_i * l_it, backward, accumulate, clip, AdamW
//! 7 report              StepReport    one metrics line (metrics.rs)
//! ```
//!
//! A step whose rewards, loss, gradient or updated weights are not finite is skipped (nothing is applied) and
//! reported with `skipped: true` and the reason. "Nothing" includes the optimizer steps of the
//! step's earlier mini-batches: with more than one optimizer step per rollout, the update
//! keeps a copy of the parameters and the optimizer state and restores it on a skip.

use std::time::Instant;

use candle_core::Tensor;
use rlvr_core::{
    advantage, aggregation, diagnostics, split, AdvantageConfig, AggRule, Sequence, StdScope,
};
use rlvr_model::{
    generate_observed, kv_cache_budget, Decoder, Generation, SamplingSpec, TrainForwardOptions,
};

use crate::checkpoint::{TrainState, OPTIMIZER_FILE};
use crate::config::{ConfigError, RolloutConfig, TrainConfig};
use crate::loss::{policy_loss, LossInputs, LossSpec};
use crate::optim::{AdamW, AdamWParams, GradAccum, Schedule};
use crate::policy::Policy;
use crate::progress::{ProgressObserver, StepProgress};
use crate::seed::{mix_seed, DataOrder, DataOrderState};
use crate::task::Task;
use crate::TrainError;
use rlvr_core::metrics::TrainLine;

/// Test hooks (feature `test-hooks`): make a step produce a non-finite reward or loss (the
/// skip path must catch it).
#[cfg(feature = "test-hooks")]
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// At this step (1-based), the first response's reward becomes NaN.
    pub nan_reward_at_step: Option<usize>,
    /// At this step (1-based), the first micro-batch's loss becomes NaN.
    pub nan_loss_at_step: Option<usize>,
    /// `(step, k)`: at this step (1-based), only the first micro-batch of the k-th
    /// mini-batch (0-based, counted over all epochs) has a NaN loss; the mini-batches before
    /// it have already stepped the optimizer when it is hit.
    pub nan_loss_in_mini_batch: Option<(usize, usize)>,
}

/// What tests may set and read on a trainer (feature `test-hooks`; not in a release build).
#[cfg(feature = "test-hooks")]
#[derive(Debug, Default)]
pub struct TestHooks {
    /// Faults to inject.
    pub faults: Faults,
    /// Keep the accumulated (unclipped) gradient of the last optimizer step in `last_grads`.
    pub keep_grads: bool,
    pub last_grads: Option<Vec<Option<Tensor>>>,
}

/// Where a trainer starts ([`Trainer::new`]).
#[derive(Debug, Clone, Copy)]
pub enum Start<'a> {
    /// Step 0: a fresh optimizer, the data order from its beginning, and (with the KL loss) a
    /// frozen copy of the policy as the reference.
    Fresh,
    /// A checkpoint: its step, optimizer state (`<checkpoint>/optimizer.safetensors`) and
    /// data order, and (with the KL loss) the run's saved reference model.
    Resume {
        state: &'a TrainState,
        checkpoint: &'a std::path::Path,
        reference: &'a std::path::Path,
    },
}

/// Everything a GRPO run holds between steps.
pub struct Trainer {
    pub cfg: TrainConfig,
    pub policy: Policy,
    /// Frozen initial policy, when the KL loss is on.
    pub reference: Option<Decoder>,
    pub task: Task,
    pub optimizer: AdamW,
    pub schedule: Schedule,
    pub order: DataOrder,
    /// GRPO steps completed.
    pub step: usize,
    /// Where each step's training rollouts are written as `<step>.jsonl`
    /// (`trainer.rollout_data_dir`, a relative one under the run directory); `None`: no dump.
    pub rollout_dump: Option<std::path::PathBuf>,
    /// KV-cache bytes per generation call (`memory_plan::sampler_kv_budget`); `None`: the
    /// sampler's default.
    pub kv_cache_bytes: Option<usize>,
    /// How each response is drawn (`[rollout]`, checked once when the trainer is built).
    pub sampling: SamplingSpec,
    /// Told where each step stands while it runs ([`StepProgress`]); `None`: nobody.
    pub progress: Option<ProgressObserver>,
    #[cfg(feature = "test-hooks")]
    pub hooks: TestHooks,
}

// ---------------------------------------------------------------------------------------
// Phase outputs
// ---------------------------------------------------------------------------------------

/// Phase 1: The problems of one generation round (indices into `task`).
pub struct PromptBatch {
    pub problems: Vec<usize>,
}

/// Phase 2: G responses per prompt: `groups[g]` are the responses to `problems[g]`.
pub struct Rollouts {
    pub problems: Vec<usize>,
    pub groups: Vec<Vec<Generation>>,
    pub tokens: usize,
    pub secs: f64,
}

/// Phase 3: One reward per response, and whether the verifier called it correct.
pub struct Rewards {
    pub reward: Vec<Vec<f64>>,
    pub correct: Vec<Vec<bool>>,
    pub secs: f64,
}

/// Phase 4: One advantage per response.
pub struct Advantages {
    pub adv: Vec<Vec<f64>>,
}

/// The sequences that go into the update (groups that survived dynamic sampling).
pub struct TrainBatch {
    pub seqs: Vec<TrainSeq>,
    /// Number of groups; `seqs[i].group < groups`.
    pub groups: usize,
}

/// One response prepared for the loss.
#[derive(Debug, Clone)]
pub struct TrainSeq {
    pub group: usize,
    pub prompt: Vec<u32>,
    pub response: Vec<u32>,
    /// Loss tokens: the response's tokens the policy sampled (not those the environment
    /// inserted), or 0 when masked (truncated with `mask_truncated`).
    pub loss_tokens: usize,
    /// Per response token, true when the environment inserted it (`Generation::inserted`;
    /// empty when it inserted none): such tokens are not loss tokens.
    pub inserted: Vec<bool>,
    pub advantage: f64,
}

/// Phase 5: Log-probs of every response token under the sampling policy and the reference.
pub struct OldLogProbs {
    /// `None` when the update is exactly on-policy (one epoch, one mini-batch, no KL): the
    /// ratio is then 1 by construction and the current log-probs, detached, serve as old.
    pub old: Option<Vec<Vec<f32>>>,
    pub reference: Option<Vec<Vec<f32>>>,
    pub secs: f64,
}

/// Phase 6: What the optimizer steps did.
#[derive(Debug, Default, Clone)]
pub struct UpdateStats {
    pub pg_loss: f64,
    pub kl: f64,
    pub entropy: f64,
    pub clipfrac_low: f64,
    pub clipfrac_high: f64,
    pub grad_norm: f64,
    pub lr: f64,
    pub optimizer_steps: usize,
    pub skipped: Option<String>,
    pub tokens: usize,
    pub secs: f64,
    /// Of `secs`: gradient clipping and the AdamW steps.
    pub optimizer_secs: f64,
}

/// Phase 7: The step's metrics line, and where its time went.
pub struct StepReport {
    pub line: TrainLine,
    pub timing: StepTiming,
}

/// Wall seconds of one step by phase (`rlvr bench grpo` prints them). They add up to the
/// step's time apart from advantages, batch assembly and the report.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct StepTiming {
    /// Phase 2, all generation rounds.
    pub rollout: f64,
    /// Phase 3, all generation rounds.
    pub reward: f64,
    /// Phase 5: old and reference log-probs (0 when exactly on-policy without KL).
    pub old_logprobs: f64,
    /// Phase 6 less the optimizer: micro-batch assembly, forward, loss, backward and gradient
    /// accumulation.
    pub forward_backward: f64,
    /// Phase 6's gradient clipping and AdamW steps.
    pub optimizer: f64,
}

// ---------------------------------------------------------------------------------------
// The step
// ---------------------------------------------------------------------------------------

impl Trainer {
    /// The trainer of `cfg` on `task`, from `start`: it owns its optimizer state, data order,
    /// step and KL reference, fresh or restored from a checkpoint. `run_dir` resolves a
    /// relative `trainer.rollout_data_dir` (None: relative to the working directory).
    pub fn new(
        cfg: TrainConfig,
        policy: Policy,
        task: Task,
        start: Start<'_>,
        run_dir: Option<&std::path::Path>,
    ) -> Result<Self, TrainError> {
        if task.is_empty() {
            return Err(TrainError::Data(rlvr_tasks::DataError::BadFile {
                path: task.name.clone().into(),
                reason: "no usable prompts for training".into(),
            }));
        }
        if cfg.model.device.is_cpu() {
            rlvr_model::matmul::set_product_dtype(cfg.model.matmul_dtype);
        }
        let reference = match (cfg.algorithm.use_kl_loss, start) {
            (false, _) => None,
            (true, Start::Fresh) => Some(policy.frozen_copy()?),
            (true, Start::Resume { reference, .. }) => Some(
                Policy::load(&reference.to_string_lossy(), policy.dtype, &policy.device)?.model,
            ),
        };
        let mut optimizer = AdamW::with_offload(
            &policy.params,
            AdamWParams::from(&cfg.optim),
            cfg.model.optimizer_offload,
        )?;
        let (step, data) = match start {
            Start::Fresh => (
                0,
                DataOrderState {
                    epoch: 0,
                    cursor: 0,
                },
            ),
            Start::Resume {
                state, checkpoint, ..
            } => {
                let path = checkpoint.join(OPTIMIZER_FILE);
                optimizer
                    .load(&policy.params, &path, state.optimizer_steps)
                    .map_err(|e| TrainError::Resume(format!("{}: {e}", path.display())))?;
                (state.step, state.data)
            }
        };
        let sampling = cfg.rollout.sampling().map_err(|e| ConfigError::Invalid {
            key: RolloutConfig::key(e.setting).into(),
            message: e.reason,
        })?;
        let schedule = Schedule::new(&cfg.optim, cfg.total_optimizer_steps());
        let order = DataOrder::new(task.len(), cfg.trainer.seed, cfg.data.shuffle, data);
        let kv_cache_bytes =
            crate::memory_plan::sampler_kv_budget(&cfg, &policy.config, &policy.device)?;
        let rollout_dump = cfg
            .trainer
            .rollout_data_dir
            .as_ref()
            .map(|d| match run_dir {
                Some(run) if d.is_relative() => run.join(d),
                _ => d.clone(),
            });
        Ok(Self {
            cfg,
            policy,
            reference,
            task,
            optimizer,
            schedule,
            order,
            step,
            rollout_dump,
            kv_cache_bytes,
            sampling,
            progress: None,
            #[cfg(feature = "test-hooks")]
            hooks: TestHooks::default(),
        })
    }

    /// Tells the progress observer, if any.
    fn tell(&self, p: StepProgress) {
        if let Some(observe) = &self.progress {
            observe(&p);
        }
    }

    /// Whether a test asked for a NaN reward at this step.
    #[cfg(feature = "test-hooks")]
    fn injected_nan_reward(&self) -> bool {
        self.hooks.faults.nan_reward_at_step == Some(self.step)
    }

    #[cfg(not(feature = "test-hooks"))]
    fn injected_nan_reward(&self) -> bool {
        false
    }

    /// Whether a test asked for a NaN loss in the first micro-batch of `mini_batch`.
    #[cfg(feature = "test-hooks")]
    fn injected_nan_loss(&self, mini_batch: usize) -> bool {
        let f = &self.hooks.faults;
        f.nan_loss_at_step == Some(self.step)
            || f.nan_loss_in_mini_batch == Some((self.step, mini_batch))
    }

    #[cfg(not(feature = "test-hooks"))]
    fn injected_nan_loss(&self, _: usize) -> bool {
        false
    }

    /// One GRPO step.
    pub fn step(&mut self) -> Result<StepReport, TrainError> {
        self.step += 1;
        let n_prompts = self.cfg.trainer.train_batch_size;
        let max_rounds = if self.cfg.algorithm.filter_groups {
            self.cfg.algorithm.max_num_gen_batches.max(1)
        } else {
            1
        };
        let mut seen = SeenStats::default();
        let mut kept: Vec<KeptGroup> = Vec::new();
        let mut rounds = 0;
        while rounds < max_rounds {
            // 1. sample prompts: the next problems in the seeded epoch order
            let prompts = self.sample_prompts(n_prompts);
            // 2. rollout: G responses per prompt, without gradients
            let rollouts = self.rollout(&prompts, rounds)?;
            // 3. reward: the verifier scores every response
            let rewards = self.reward(&rollouts)?;
            seen.add(&self.cfg, &rollouts, &rewards);
            rounds += 1;
            if let Some(reason) = non_finite_reward(&rewards) {
                return Ok(self.skipped_report(&seen, rounds, reason));
            }
            // 4. advantage: group-relative, from rlvr-core
            let adv = self.advantage(&rewards)?;
            kept.extend(KeptGroup::select(&self.cfg, rollouts, rewards, adv));
            if !self.cfg.algorithm.filter_groups || kept.len() >= n_prompts {
                break;
            }
        }
        kept.truncate(n_prompts);
        if kept.is_empty() {
            return Ok(self.skipped_report(&seen, rounds, "no group with reward variation".into()));
        }
        let batch = self.train_batch(&kept);
        if let Some(dir) = &self.rollout_dump {
            self.dump_rollouts(dir, &kept)?;
        }
        // 5. old log-probs: the sampling policy's, recomputed with the training forward
        let old = self.old_logprobs(&batch)?;
        // 6. update: ppo_epochs x mini-batches, weights over each whole mini-batch
        let update = self.update(&batch, &old)?;
        // 7. report
        Ok(self.report(&seen, rounds, kept.len(), &batch, &old, &update))
    }

    /// Phase 1: The next `n` problems in the data order.
    pub fn sample_prompts(&mut self, n: usize) -> PromptBatch {
        PromptBatch {
            problems: (0..n).map(|_| self.order.next_index()).collect(),
        }
    }

    /// Phase 2: `num_generations` responses per prompt, seeded by (seed, step, round, chunk).
    pub fn rollout(&self, prompts: &PromptBatch, round: usize) -> Result<Rollouts, TrainError> {
        let t = Instant::now();
        let r = &self.cfg.rollout;
        let mut groups = Vec::with_capacity(prompts.problems.len());
        let chunk = r.generation_batch_size.max(1);
        // progress over the whole round: what the chunks before this one generated
        let (responses, step) = (prompts.problems.len() * r.num_generations, self.step);
        let mut before = rlvr_model::DecodeProgress::default();
        for (c, idx) in prompts.problems.chunks(chunk).enumerate() {
            let ids: Vec<Vec<u32>> = idx.iter().map(|&i| self.task.prompts[i].clone()).collect();
            let params = self.sampling.params(
                r.num_generations,
                &self.policy.tokenizer.eos_token_ids,
                mix_seed(
                    self.cfg.trainer.seed,
                    &[1, self.step as u64, round as u64, c as u64],
                ),
            );
            let tok = (!params.stop_strings.is_empty()).then_some(&self.policy.tokenizer.tokenizer);
            let model = &self.policy.model;
            let kv_bytes = self
                .kv_cache_bytes
                .unwrap_or_else(|| kv_cache_budget(model.device()));
            let env = crate::environment::ForProblems {
                env: self.task.environment.as_deref(),
                problems: idx,
            };
            let mut observe = |d: &rlvr_model::DecodeProgress| {
                self.tell(StepProgress::Rollout {
                    step,
                    round,
                    responses,
                    finished: before.finished + d.finished,
                    tokens: before.tokens + d.tokens,
                    longest: before.longest.max(d.longest),
                    secs: t.elapsed().as_secs_f64(),
                })
            };
            let gens = generate_observed(model, tok, &ids, &params, kv_bytes, &env, &mut observe)?;
            before.finished += gens.len();
            before.tokens += gens.iter().map(|g| g.tokens.len()).sum::<usize>();
            before.longest = gens
                .iter()
                .map(|g| g.tokens.len())
                .fold(before.longest, usize::max);
            let mut it = gens.into_iter();
            for _ in 0..idx.len() {
                groups.push(it.by_ref().take(r.num_generations).collect());
            }
        }
        let tokens = groups
            .iter()
            .flatten()
            .map(|g: &Generation| g.tokens.len())
            .sum();
        Ok(Rollouts {
            problems: prompts.problems.clone(),
            groups,
            tokens,
            secs: t.elapsed().as_secs_f64(),
        })
    }

    /// Phase 3: Verifier rewards, plus DAPO's soft overlong penalty when configured.
    ///
    /// Every response of the round is decoded, then scored in one batch by the task's reward
    /// function (`rlvr_tasks::reward`: routed by data source, scored in parallel across cores,
    /// code in a bounded pool of sandboxes), in response order. A scorer failure (no sandbox)
    /// is an error, never a reward of 0.
    pub fn reward(&self, rollouts: &Rollouts) -> Result<Rewards, TrainError> {
        let t = Instant::now();
        let a = &self.cfg.algorithm;
        let max_len = self.cfg.rollout.max_response_length;
        let mut texts = Vec::with_capacity(rollouts.groups.iter().map(Vec::len).sum());
        for gen in rollouts.groups.iter().flatten() {
            texts.push(self.policy.decode(&gen.tokens)?);
        }
        let problems = rollouts
            .groups
            .iter()
            .zip(&rollouts.problems)
            .flat_map(|(gens, &i)| std::iter::repeat_n(&self.task.problems[i], gens.len()));
        let items: Vec<(&str, &rlvr_tasks::Problem)> =
            texts.iter().map(String::as_str).zip(problems).collect();
        let mut scores = self.task.verifier.score_batch(&items)?.into_iter();
        let (mut reward, mut correct) = (Vec::new(), Vec::new());
        for gens in &rollouts.groups {
            let (mut rs, mut cs) = (Vec::new(), Vec::new());
            for gen in gens {
                let score = scores.next().ok_or_else(|| {
                    TrainError::Msg("the verifier returned too few scores".into())
                })?;
                let mut r = score.reward;
                if a.overlong_buffer_len > 0 {
                    r += overlong_penalty(
                        gen.tokens.len(),
                        max_len,
                        a.overlong_buffer_len,
                        a.overlong_penalty_factor,
                    );
                }
                rs.push(r);
                cs.push(score.correct);
            }
            reward.push(rs);
            correct.push(cs);
        }
        if self.injected_nan_reward() {
            if let Some(first) = reward.first_mut().and_then(|g| g.first_mut()) {
                *first = f64::NAN;
            }
        }
        Ok(Rewards {
            reward,
            correct,
            secs: t.elapsed().as_secs_f64(),
        })
    }

    /// Phase 4: Group-relative advantages (rlvr-core).
    pub fn advantage(&self, rewards: &Rewards) -> Result<Advantages, TrainError> {
        let a = &self.cfg.algorithm;
        let cfg = AdvantageConfig {
            estimator: a.adv_estimator,
            std_scope: if a.norm_adv_by_std_in_grpo {
                StdScope::Group
            } else {
                StdScope::None
            },
            ..AdvantageConfig::default()
        };
        let groups: Vec<usize> = rewards
            .reward
            .iter()
            .enumerate()
            .flat_map(|(g, rs)| std::iter::repeat_n(g, rs.len()))
            .collect();
        let flat: Vec<f64> = rewards.reward.iter().flatten().copied().collect();
        let adv = advantage::compute(&cfg, &groups, &flat)?;
        let mut it = adv.into_iter();
        Ok(Advantages {
            adv: rewards
                .reward
                .iter()
                .map(|rs| it.by_ref().take(rs.len()).collect())
                .collect(),
        })
    }

    /// Writes the kept groups to `<dir>/<step>.jsonl` (see [`crate::dump`]).
    fn dump_rollouts(&self, dir: &std::path::Path, kept: &[KeptGroup]) -> Result<(), TrainError> {
        let mut rows = Vec::new();
        for (g, group) in kept.iter().enumerate() {
            let problem = &self.task.problems[group.problem];
            let input = self.policy.decode(&self.task.prompts[group.problem])?;
            for (i, gen) in group.gens.iter().enumerate() {
                rows.push(crate::dump::DumpRow {
                    input: input.clone(),
                    output: self.policy.decode(&gen.tokens)?,
                    score: group.reward[i],
                    step: self.step,
                    uid: format!("{}-{g}-{}", self.step, problem.id),
                    advantage: group.adv[i],
                    length: gen.tokens.len(),
                    acc: group.correct[i],
                });
            }
        }
        crate::dump::write_step(dir, self.step, &rows)
    }

    /// The kept groups as loss-ready sequences.
    fn train_batch(&self, kept: &[KeptGroup]) -> TrainBatch {
        let mask_truncated = self.cfg.algorithm.mask_truncated;
        let mut seqs = Vec::new();
        for (g, group) in kept.iter().enumerate() {
            for (gen, &adv) in group.gens.iter().zip(&group.adv) {
                let masked = mask_truncated && gen.truncated;
                seqs.push(TrainSeq {
                    group: g,
                    prompt: self.task.prompts[group.problem].clone(),
                    response: gen.tokens.clone(),
                    loss_tokens: if masked { 0 } else { policy_tokens(gen) },
                    inserted: gen.inserted.clone(),
                    advantage: adv,
                });
            }
        }
        TrainBatch {
            seqs,
            groups: kept.len(),
        }
    }

    /// Whether one update on fresh samples is exactly on-policy (old log-probs = current).
    fn on_policy(&self) -> bool {
        let a = &self.cfg.algorithm;
        a.ppo_epochs == 1 && a.ppo_mini_batch_size >= self.cfg.trainer.train_batch_size
    }

    /// Phase 5: Old log-probs (and reference log-probs for the KL), without gradient.
    pub fn old_logprobs(&self, batch: &TrainBatch) -> Result<OldLogProbs, TrainError> {
        let t = Instant::now();
        let all: Vec<usize> = (0..batch.seqs.len()).collect();
        let passes = usize::from(!self.on_policy()) + usize::from(self.reference.is_some());
        let mut done = Counter {
            done: 0,
            total: passes * self.micro_batches(batch, &all)?.len(),
        };
        let old = if self.on_policy() {
            None
        } else {
            Some(self.logprobs_no_grad(&self.policy.model, batch, &mut done)?)
        };
        let reference = match &self.reference {
            Some(model) => Some(self.logprobs_no_grad(model, batch, &mut done)?),
            None => None,
        };
        Ok(OldLogProbs {
            old,
            reference,
            secs: t.elapsed().as_secs_f64(),
        })
    }

    fn logprobs_no_grad(
        &self,
        model: &Decoder,
        batch: &TrainBatch,
        done: &mut Counter,
    ) -> Result<Vec<Vec<f32>>, TrainError> {
        let all: Vec<usize> = (0..batch.seqs.len()).collect();
        let mut out = vec![Vec::new(); batch.seqs.len()];
        for micro_idx in self.micro_batches(batch, &all)? {
            let micro: Vec<&TrainSeq> = micro_idx.iter().map(|&i| &batch.seqs[i]).collect();
            let tb = self.token_batch(&micro)?;
            // no graph: detached weights, attention and vocabulary in chunks
            let lp = model
                .response_logprobs_no_grad(&tb, false, self.cfg.rollout.temperature)?
                .logprobs;
            let rows: Vec<Vec<f32>> = if tb.max_response_len() == 0 {
                vec![Vec::new(); micro.len()]
            } else {
                lp.to_vec2()?
            };
            for ((s, row), &i) in micro.iter().zip(rows).zip(&micro_idx) {
                out[i] = row[..s.response.len()].to_vec();
            }
            done.done += 1;
            self.tell(StepProgress::LogProbs {
                step: self.step,
                done: done.done,
                total: done.total,
            });
        }
        Ok(out)
    }

    /// One micro-batch's sequences as the model reads them: prompt and response tokens,
    /// packed into rows when `model.use_remove_padding`, else one padded row each.
    fn token_batch(&self, seqs: &[&TrainSeq]) -> Result<rlvr_model::TokenBatch, TrainError> {
        let pairs: Vec<(Vec<u32>, Vec<u32>)> = seqs
            .iter()
            .map(|s| (s.prompt.clone(), s.response.clone()))
            .collect();
        self.policy.batch(&pairs, self.cfg.model.use_remove_padding)
    }

    /// The micro-batches of the sequences `idx` of `batch`, as positions into `idx`: by count
    /// (`ppo_micro_batch_size`, in order), or with `use_dynamic_bsz` by a token budget
    /// (`ppo_max_token_len_per_gpu`, longest first; `rlvr_core::split`): of the slots of the
    /// packed rows (real tokens plus what packing leaves) when micro-batches are packed
    /// (`model.use_remove_padding`), else of padded tokens. Every position appears once, so
    /// the summed loss and gradient do not depend on the plan.
    pub fn micro_batches(
        &self,
        batch: &TrainBatch,
        idx: &[usize],
    ) -> Result<Vec<Vec<usize>>, TrainError> {
        let a = &self.cfg.algorithm;
        let lens: Vec<usize> = idx
            .iter()
            .map(|&i| batch.seqs[i].prompt.len() + batch.seqs[i].response.len())
            .collect();
        let plan = if a.use_dynamic_bsz && self.cfg.model.use_remove_padding {
            split::by_packed_tokens(&lens, 1, a.ppo_max_token_len_per_gpu)?
        } else if a.use_dynamic_bsz {
            split::by_padded_tokens(&lens, 1, a.ppo_max_token_len_per_gpu)?
        } else {
            split::by_count(lens.len(), 1, a.ppo_micro_batch_size)?
        };
        Ok(plan.into_iter().flatten().collect())
    }

    /// Phase 6: `ppo_epochs` passes; each mini-batch of `ppo_mini_batch_size` groups is one
    /// optimizer step whose aggregation weights span the whole mini-batch.
    ///
    /// Atomic: when any mini-batch has a non-finite loss or gradient, the update stops there
    /// and the parameters and optimizer state are restored bit for bit to what they were
    /// before the first mini-batch (a copy is kept only when there is more than one
    /// optimizer step per rollout; a single step is checked before it is applied).
    pub fn update(
        &mut self,
        batch: &TrainBatch,
        old: &OldLogProbs,
    ) -> Result<UpdateStats, TrainError> {
        let t = Instant::now();
        let a = self.cfg.algorithm.clone();
        let mut stats = UpdateStats::default();
        let (mut tokens, mut clip_lo, mut clip_hi, mut kl, mut ent) = (0.0, 0.0, 0.0, 0.0, 0.0);
        let mut mini_batches = 0usize;
        let (mut pg_sum, mut norm_sum) = (0.0, 0.0);
        // the sequences of each mini-batch, the same in every epoch
        let minis: Vec<Vec<usize>> = (0..batch.groups)
            .step_by(a.ppo_mini_batch_size)
            .map(|first_group| {
                let groups = first_group..(first_group + a.ppo_mini_batch_size).min(batch.groups);
                (0..batch.seqs.len())
                    .filter(|&i| groups.contains(&batch.seqs[i].group))
                    .collect()
            })
            .collect();
        let saved = if a.ppo_epochs * minis.len() > 1 {
            Some(self.save_state()?)
        } else {
            None
        };
        let mut micro_total = 0;
        for idx in &minis {
            micro_total += self.micro_batches(batch, idx)?.len();
        }
        let mut done = Counter {
            done: 0,
            total: a.ppo_epochs * micro_total,
        };
        let mini_total = a.ppo_epochs * minis.len();
        'epochs: for _epoch in 0..a.ppo_epochs {
            for idx in &minis {
                let step =
                    self.minibatch_step(batch, idx, old, (mini_batches, mini_total), &mut done)?;
                mini_batches += 1;
                tokens += step.tokens;
                clip_lo += step.clipped_low;
                clip_hi += step.clipped_high;
                kl += step.kl_sum;
                ent += step.entropy_sum;
                pg_sum += step.pg_loss;
                norm_sum += step.grad_norm;
                stats.optimizer_secs += step.optimizer_secs;
                stats.lr = step.lr;
                match step.skipped {
                    Some(reason) => {
                        stats.skipped = Some(reason);
                        break 'epochs;
                    }
                    None => stats.optimizer_steps += 1,
                }
            }
        }
        if stats.skipped.is_some() {
            if let Some(saved) = saved {
                self.restore_state(saved)?;
            }
            stats.optimizer_steps = 0;
        }
        let per_token = |x: f64| if tokens > 0.0 { x / tokens } else { 0.0 };
        let per_mini = |x: f64| x / mini_batches.max(1) as f64;
        stats.pg_loss = per_mini(pg_sum);
        stats.grad_norm = per_mini(norm_sum);
        stats.kl = per_token(kl);
        stats.entropy = per_token(ent);
        stats.clipfrac_low = per_token(clip_lo);
        stats.clipfrac_high = per_token(clip_hi);
        stats.tokens = (tokens / a.ppo_epochs as f64) as usize;
        stats.secs = t.elapsed().as_secs_f64();
        Ok(stats)
    }

    /// Deep copies of the parameters and the optimizer state (both are updated in place), on
    /// the host: the rollback copy costs no device memory.
    fn save_state(&self) -> Result<SavedState, TrainError> {
        let host = candle_core::Device::Cpu;
        let params = self
            .policy
            .params
            .vars
            .iter()
            .map(|v| crate::optim::deep_copy(v.as_tensor(), &host))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SavedState {
            params,
            optimizer: self.optimizer.snapshot(&host)?,
        })
    }

    /// Writes a [`Self::save_state`] copy back, in place.
    fn restore_state(&mut self, saved: SavedState) -> Result<(), TrainError> {
        for (var, p) in self.policy.params.vars.iter().zip(&saved.params) {
            crate::optim::copy_into(var.as_tensor(), p)?;
        }
        self.optimizer.restore(&saved.optimizer)?;
        Ok(())
    }

    /// One optimizer step on the sequences `idx` of `batch`, the `mini_batch.0`-th (0-based)
    /// of `mini_batch.1` over all epochs; `done` counts the update's micro-batches.
    fn minibatch_step(
        &mut self,
        batch: &TrainBatch,
        idx: &[usize],
        old: &OldLogProbs,
        (mini_batch, mini_batches): (usize, usize),
        done: &mut Counter,
    ) -> Result<MiniBatchStep, TrainError> {
        let a = &self.cfg.algorithm;
        // ALGO LOGIC: the aggregation weight of every sequence, over the WHOLE mini-batch
        let seqs: Vec<Sequence> = idx
            .iter()
            .map(|&i| {
                let s = &batch.seqs[i];
                Sequence::new(s.group, s.advantage, s.loss_tokens)
            })
            .collect();
        let weights =
            aggregation::weights(a.loss_agg_mode, &seqs, self.cfg.rollout.max_response_length)?;
        let spec = LossSpec {
            mode: a.policy_loss,
            clip: a.clip(),
            kl: a.use_kl_loss.then_some((a.kl_loss_type, a.kl_loss_coef)),
            entropy_coeff: a.entropy_coeff,
        };
        let mut out = MiniBatchStep::default();
        let mut grads = GradAccum::new(&self.policy.params);
        let tell_done = |done: &mut Counter| {
            done.done += 1;
            self.tell(StepProgress::Update {
                step: self.step,
                done: done.done,
                total: done.total,
                mini_batch: mini_batch + 1,
                mini_batches,
            });
        };
        for (m, micro) in self.micro_batches(batch, idx)?.iter().enumerate() {
            let rows: Vec<&TrainSeq> = micro.iter().map(|&p| &batch.seqs[idx[p]]).collect();
            let tb = self.token_batch(&rows)?;
            let r = tb.max_response_len();
            if r == 0 {
                tell_done(done);
                continue;
            }
            let dev = &self.policy.device;
            let pad = |rows: Vec<&[f32]>| -> Result<Tensor, TrainError> {
                let mut v = Vec::with_capacity(rows.len() * r);
                for row in rows {
                    v.extend_from_slice(row);
                    v.extend(std::iter::repeat_n(0f32, r - row.len()));
                }
                Ok(Tensor::from_vec(v, (micro.len(), r), dev)?)
            };
            let old_t = match &old.old {
                Some(o) => Some(pad(micro.iter().map(|&p| o[idx[p]].as_slice()).collect())?),
                None => None,
            };
            let ref_t = match &old.reference {
                Some(o) => Some(pad(micro.iter().map(|&p| o[idx[p]].as_slice()).collect())?),
                None => None,
            };
            let mask: Vec<f32> = rows
                .iter()
                .flat_map(|s| (0..r).map(move |k| f32::from(u8::from(s.is_loss_token(k)))))
                .collect();
            let mask = Tensor::from_vec(mask, (micro.len(), r), dev)?;
            let adv: Vec<f32> = rows.iter().map(|s| s.advantage as f32).collect();
            let w: Vec<f32> = micro.iter().map(|&p| weights[p] as f32).collect();
            let opts = TrainForwardOptions {
                temperature: self.cfg.rollout.temperature,
                // the entropy is logged every step; its backward runs only when
                // entropy_coeff != 0 (policy_loss uses it detached otherwise)
                with_entropy: true,
                gradient_checkpointing: self.cfg.model.gradient_checkpointing,
            };
            let nan_loss = m == 0 && self.injected_nan_loss(mini_batch);
            let mut terms = None;
            // the forward, the loss on its log-probs, and the backward (rlvr-model)
            // the gradients go into the f32 accumulator piece by piece, as the backward walk
            // produces them (no full set of gradients in the weights' dtype is alive)
            let params = &self.policy.params;
            let fwd = self.policy.model.loss_and_grads_into(
                &tb,
                &opts,
                |fwd| {
                    let loss = policy_loss(
                        &spec,
                        &LossInputs {
                            logp: &fwd.logprobs,
                            old_logp: &old_t.unwrap_or_else(|| fwd.logprobs.detach()),
                            ref_logp: ref_t.as_ref(),
                            entropy: fwd.entropy.as_ref(),
                            adv: &Tensor::new(adv.as_slice(), dev)?,
                            weight: &Tensor::new(w.as_slice(), dev)?,
                            mask: &mask,
                        },
                    )?;
                    let loss_t = if nan_loss {
                        (&loss.loss * f64::NAN)?
                    } else {
                        loss.loss.clone()
                    };
                    terms = Some(loss);
                    Ok::<_, TrainError>(loss_t)
                },
                |piece| Ok(grads.add(params, &piece)?),
            )?;
            let (value, loss) = (fwd.loss, terms.expect("the loss function ran"));
            if !value.is_finite() {
                out.skipped = Some(format!("non-finite loss ({value})"));
                break;
            }
            out.pg_loss += loss.pg_loss;
            out.kl_sum += loss.kl_sum;
            out.entropy_sum += loss.entropy_sum;
            out.clipped_low += loss.clipped_low;
            out.clipped_high += loss.clipped_high;
            out.tokens += loss.tokens;
            tell_done(done);
        }
        out.lr = self.schedule.lr_at(self.optimizer.t as usize);
        if out.skipped.is_some() {
            out.grad_norm = f64::NAN;
            return Ok(out);
        }
        #[cfg(feature = "test-hooks")]
        if self.hooks.keep_grads {
            self.hooks.last_grads = Some(grads.copies()?);
        }
        // ALGO LOGIC: global-norm clipping, then AdamW; never apply a non-finite gradient, and
        // never write weights or moments that are not finite (the update is proven or checked
        // finite before anything is written: AdamW::clip_and_step)
        let t_opt = Instant::now();
        let step = self.optimizer.clip_and_step(
            &self.policy.params,
            &mut grads,
            self.cfg.optim.grad_clip,
            out.lr,
        )?;
        out.grad_norm = step.grad_norm;
        if step.skipped.is_some() {
            out.skipped = step.skipped;
            return Ok(out);
        }
        out.optimizer_secs = t_opt.elapsed().as_secs_f64();
        Ok(out)
    }

    /// Phase 7: The metrics line of a step that trained.
    fn report(
        &self,
        seen: &SeenStats,
        rounds: usize,
        kept: usize,
        batch: &TrainBatch,
        old: &OldLogProbs,
        u: &UpdateStats,
    ) -> StepReport {
        let mut line = seen.line(self.step, rounds);
        line.groups_kept = kept;
        let seqs: Vec<Sequence> = batch
            .seqs
            .iter()
            .map(|s| Sequence::new(s.group, s.advantage, s.loss_tokens))
            .collect();
        if let Ok(d) = diagnostics::batch_diagnostics(&seqs, self.cfg.rollout.max_response_length) {
            line.pos_neg_gap = d.pos_neg_gap.unwrap_or(f64::NAN);
            line.pos_neg_gap_rel = line.pos_neg_gap / line.response_length_mean;
            for rule in AggRule::ALL {
                line.positive_share.insert(
                    rule.as_str().to_string(),
                    d.rule(rule).positive_share.unwrap_or(f64::NAN),
                );
            }
            line.verdict = Some(diagnostics::verdict(&d));
        }
        line.pg_loss = u.pg_loss;
        line.kl = u.kl;
        line.entropy = u.entropy;
        line.pg_clipfrac_low = u.clipfrac_low;
        line.pg_clipfrac_high = u.clipfrac_high;
        line.grad_norm = u.grad_norm;
        line.lr = u.lr;
        let train_secs = u.secs + old.secs;
        line.time_train_s = train_secs;
        line.train_tokens_per_s = u.tokens as f64 / train_secs.max(1e-9);
        line.skipped = u.skipped.is_some();
        line.skip_reason = u.skipped.clone();
        let timing = StepTiming {
            rollout: seen.rollout_secs,
            reward: seen.reward_secs,
            old_logprobs: old.secs,
            forward_backward: u.secs - u.optimizer_secs,
            optimizer: u.optimizer_secs,
        };
        StepReport { line, timing }
    }

    /// The metrics line of a step skipped before the update.
    fn skipped_report(&self, seen: &SeenStats, rounds: usize, reason: String) -> StepReport {
        let mut line = seen.line(self.step, rounds);
        line.lr = self.schedule.lr_at(self.optimizer.t as usize);
        line.pg_loss = f64::NAN;
        line.grad_norm = f64::NAN;
        line.skipped = true;
        line.skip_reason = Some(reason);
        let timing = StepTiming {
            rollout: seen.rollout_secs,
            reward: seen.reward_secs,
            ..StepTiming::default()
        };
        StepReport { line, timing }
    }
}

/// DAPO's soft overlong punishment: 0 up to `max_len - buffer` tokens, then linearly down to
/// `-factor` at `max_len` (and beyond).
pub fn overlong_penalty(len: usize, max_len: usize, buffer: usize, factor: f64) -> f64 {
    let expected = max_len.saturating_sub(buffer);
    if buffer == 0 || len <= expected {
        0.0
    } else {
        -((len - expected) as f64 / buffer as f64).min(1.0) * factor
    }
}

fn non_finite_reward(rewards: &Rewards) -> Option<String> {
    rewards
        .reward
        .iter()
        .flatten()
        .position(|r| !r.is_finite())
        .map(|i| format!("non-finite reward at response {i}"))
}

/// A group kept for the update.
struct KeptGroup {
    problem: usize,
    gens: Vec<Generation>,
    adv: Vec<f64>,
    reward: Vec<f64>,
    correct: Vec<bool>,
}

impl KeptGroup {
    /// All groups, or with `filter_groups` only those whose rewards vary.
    fn select(
        cfg: &TrainConfig,
        rollouts: Rollouts,
        rewards: Rewards,
        adv: Advantages,
    ) -> Vec<KeptGroup> {
        rollouts
            .problems
            .into_iter()
            .zip(rollouts.groups)
            .zip(rewards.reward)
            .zip(rewards.correct)
            .zip(adv.adv)
            .filter(|((((_, _), rs), _), _)| {
                !cfg.algorithm.filter_groups || rs.iter().any(|&r| r != rs[0])
            })
            .map(|((((problem, gens), reward), correct), adv)| KeptGroup {
                problem,
                gens,
                adv,
                reward,
                correct,
            })
            .collect()
    }
}

/// The tokens of `g` the policy sampled (all but those the environment inserted).
pub fn policy_tokens(g: &Generation) -> usize {
    g.tokens.len() - g.inserted.iter().filter(|&&i| i).count()
}

impl TrainSeq {
    /// Whether response token `k` is a loss token: sampled by the policy, in a response that
    /// is not masked.
    pub fn is_loss_token(&self, k: usize) -> bool {
        self.loss_tokens > 0
            && k < self.response.len()
            && !self.inserted.get(k).copied().unwrap_or(false)
    }
}

/// Reward and length statistics over every response sampled in a step.
#[derive(Default)]
struct SeenStats {
    rewards: Vec<f64>,
    correct: usize,
    lengths: Vec<usize>,
    truncated: usize,
    tokens: usize,
    rollout_secs: f64,
    reward_secs: f64,
}

impl SeenStats {
    fn add(&mut self, _cfg: &TrainConfig, r: &Rollouts, w: &Rewards) {
        for g in r.groups.iter().flatten() {
            self.lengths.push(policy_tokens(g));
            self.truncated += usize::from(g.truncated);
        }
        self.rewards.extend(w.reward.iter().flatten());
        self.correct += w.correct.iter().flatten().filter(|&&c| c).count();
        self.tokens += r.tokens;
        self.rollout_secs += r.secs;
        self.reward_secs += w.secs;
    }

    fn line(&self, step: usize, rounds: usize) -> TrainLine {
        let n = self.rewards.len().max(1) as f64;
        let mean = self.rewards.iter().sum::<f64>() / n;
        let var = self.rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
        let ln = self.lengths.len().max(1) as f64;
        let lmean = self.lengths.iter().sum::<usize>() as f64 / ln;
        let lvar = self
            .lengths
            .iter()
            .map(|&l| (l as f64 - lmean).powi(2))
            .sum::<f64>()
            / ln;
        TrainLine {
            step,
            reward_mean: mean,
            reward_std: var.sqrt(),
            accuracy: self.correct as f64 / n,
            response_length_mean: lmean,
            response_length_min: self.lengths.iter().min().copied().unwrap_or(0) as f64,
            response_length_max: self.lengths.iter().max().copied().unwrap_or(0) as f64,
            response_length_cv: if lmean > 0.0 {
                lvar.sqrt() / lmean
            } else {
                0.0
            },
            truncated_share: self.truncated as f64 / ln,
            pos_neg_gap: f64::NAN,
            pos_neg_gap_rel: f64::NAN,
            rollout_tokens_per_s: self.tokens as f64 / self.rollout_secs.max(1e-9),
            time_rollout_s: self.rollout_secs,
            time_reward_s: self.reward_secs,
            gen_batches: rounds,
            ..TrainLine::default()
        }
    }
}

/// The parameters and optimizer state at the start of an update (restored on a skip).
struct SavedState {
    params: Vec<Tensor>,
    optimizer: AdamW,
}

/// Micro-batches done of a phase, for its progress reports.
struct Counter {
    done: usize,
    total: usize,
}

/// What one optimizer step did.
#[derive(Default)]
struct MiniBatchStep {
    pg_loss: f64,
    kl_sum: f64,
    entropy_sum: f64,
    clipped_low: f64,
    clipped_high: f64,
    tokens: f64,
    grad_norm: f64,
    lr: f64,
    skipped: Option<String>,
    optimizer_secs: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlong_penalty_is_linear_in_the_buffer() {
        assert_eq!(overlong_penalty(10, 20, 4, 1.0), 0.0);
        assert_eq!(overlong_penalty(16, 20, 4, 1.0), 0.0);
        assert_eq!(overlong_penalty(18, 20, 4, 1.0), -0.5);
        assert_eq!(overlong_penalty(20, 20, 4, 0.5), -0.5);
        assert_eq!(overlong_penalty(25, 20, 4, 1.0), -1.0);
        assert_eq!(overlong_penalty(25, 20, 0, 1.0), 0.0);
    }
}
