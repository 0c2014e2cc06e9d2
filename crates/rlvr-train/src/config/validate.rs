//! Validation: the ranges, bounds and combinations a parsed config must keep, each error
//! naming its key; the keys a resume cannot change.

use super::section::Section;
use super::*;

impl TrainConfig {
    /// Checks what parses but cannot run: the upper bounds first (a huge value is named by
    /// its own key, not by a combination), then each section's own keys
    /// ([`Section::validate`]), then the combinations across sections. Every error names its
    /// key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_bounds()?;
        self.model.validate()?;
        self.rollout.validate()?;
        self.algorithm.validate()?;
        self.reward.validate()?;
        self.optim.validate()?;
        self.trainer.validate()?;
        self.eval.validate()?;
        self.logging.validate()?;
        self.testbed.validate()?;
        self.validate_combinations()
    }

    /// The keys that must agree with another section's.
    fn validate_combinations(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, message: String| {
            Err(ConfigError::Invalid {
                key: key.into(),
                message,
            })
        };
        let (r, a, t) = (&self.rollout, &self.algorithm, &self.trainer);
        if !t.train_batch_size.is_multiple_of(a.ppo_mini_batch_size) {
            return bad(
                "algorithm.ppo_mini_batch_size",
                format!(
                    "must divide trainer.train_batch_size ({}), got {}",
                    t.train_batch_size, a.ppo_mini_batch_size
                ),
            );
        }
        if a.overlong_buffer_len >= r.max_response_length && a.overlong_buffer_len > 0 {
            return bad(
                "algorithm.overlong_buffer_len",
                "must be smaller than rollout.max_response_length".into(),
            );
        }
        if let Err(err) = self.eval.sampling(self.eval_max_tokens()) {
            return bad(EvalConfig::key(err.setting), err.reason);
        }
        // the testbed model and the testbed task go together: either one alone would silently
        // ignore the other setting (the testbed set-up builds its own model and problems)
        match (&self.model.path, &self.data.train_files) {
            (None, Some(data)) => {
                return bad(
                    "model.path",
                    format!(
                        "unset (the testbed model) with data.train_files = `{data}`: the \
                         testbed model trains only on the testbed task; set model.path to a \
                         Hugging Face model to train on this data, or unset data.train_files"
                    ),
                )
            }
            (Some(model), None) => {
                return bad(
                    "data.train_files",
                    format!(
                        "unset (the testbed task) with model.path = `{model}`: the testbed \
                         task trains its own model; set data.train_files to a dataset for \
                         this model, or unset model.path"
                    ),
                )
            }
            _ => {}
        }
        match self.task() {
            RunTask::Testbed(tb) => {
                // the testbed model is built from [testbed]: its context is known here
                self.check_context(
                    tb.max_position_embeddings,
                    "testbed.max_position_embeddings of the testbed model",
                )?;
            }
            RunTask::Datasets { .. } => {
                // [testbed] settings are read only by a testbed run: anywhere else a changed
                // one would be ignored
                if let Some(key) = self.testbed.changed_keys().first() {
                    return bad(
                        &format!("testbed.{key}"),
                        "applies to the testbed run only (model.path and data.train_files \
                         unset); remove it"
                            .into(),
                    );
                }
                if self.eval.datasets.contains(&EvalSet::Testbed) {
                    return bad(
                        "eval.datasets",
                        "\"testbed\" (the default) is the testbed run's held-out set; with \
                         model.path set, list the sets to evaluate on (presets or files), or \
                         [] for none"
                            .into(),
                    );
                }
            }
        }
        Ok(())
    }

    /// The upper bounds of the integer settings ([`TrainConfig::bounded_integers`]), then the products that
    /// size host allocations against this machine's memory ([`host_memory_bytes`]): the
    /// rollouts of one step, the evaluation samples, the testbed's problems and model. An
    /// error names the key (and, for a product, the keys it multiplies), never a panic or an
    /// aborted allocation later.
    fn validate_bounds(&self) -> Result<(), ConfigError> {
        for (key, value, most, why) in self.bounded_integers() {
            if value > most {
                return Err(ConfigError::Invalid {
                    key: key.into(),
                    message: format!("{value}: at most {most} ({why})"),
                });
            }
        }
        let (tb, d, r, a, t, e) = (
            &self.testbed,
            &self.data,
            &self.rollout,
            &self.algorithm,
            &self.trainer,
            &self.eval,
        );
        let testbed_run = matches!(self.task(), RunTask::Testbed(_));
        // every factor is bounded above, so these products fit in u128 without overflow
        let rounds = if a.filter_groups {
            a.max_num_gen_batches.max(1)
        } else {
            1
        } as u128;
        let train_tokens = (d.max_prompt_length + r.max_response_length) as u128;
        let eval_tokens = (d.max_prompt_length + self.eval_max_tokens()) as u128;
        let eval_n = if e.n_problems == 0 && testbed_run {
            500
        } else {
            e.n_problems
        } as u128;
        let mut needs: Vec<(&str, String, u128)> = vec![
            (
                "trainer.train_batch_size",
                format!(
                    "the rollouts of one step: trainer.train_batch_size ({}) x \
                     rollout.num_generations ({}){} sequences of up to {train_tokens} tokens \
                     (data.max_prompt_length + rollout.max_response_length)",
                    t.train_batch_size,
                    r.num_generations,
                    if rounds > 1 {
                        format!(" x algorithm.max_num_gen_batches ({rounds})")
                    } else {
                        String::new()
                    }
                ),
                t.train_batch_size as u128
                    * r.num_generations as u128
                    * rounds
                    * (SEQUENCE_HOST_BYTES + TOKEN_HOST_BYTES * train_tokens),
            ),
            (
                "eval.n_problems",
                format!(
                    "the samples of one evaluation: eval.n_problems ({eval_n}) x eval.k ({}) \
                     responses of up to {eval_tokens} tokens",
                    e.k
                ),
                eval_n * e.k as u128 * (SEQUENCE_HOST_BYTES + TOKEN_HOST_BYTES * eval_tokens),
            ),
        ];
        if testbed_run {
            needs.push((
                "testbed.train_size",
                format!(
                    "{} generated training problems of about {PROBLEM_HOST_BYTES} bytes each",
                    tb.train_size
                ),
                tb.train_size as u128 * PROBLEM_HOST_BYTES,
            ));
            let (h, f, l) = (
                tb.hidden_size as u128,
                tb.intermediate_size as u128,
                tb.num_hidden_layers as u128,
            );
            needs.push((
                "testbed.hidden_size",
                format!(
                    "the testbed model (testbed.hidden_size {h}, testbed.intermediate_size {f}, \
                     testbed.num_hidden_layers {l}): about {} parameters, each held {} times \
                     in f32 (weights, gradients, two AdamW moments)",
                    l * (4 * h * h + 3 * h * f),
                    PARAM_HOST_COPIES
                ),
                l * (4 * h * h + 3 * h * f) * 4 * PARAM_HOST_COPIES,
            ));
        }
        if let Some(have) = host_memory_bytes() {
            for (key, what, bytes) in needs {
                if bytes > have as u128 {
                    return Err(ConfigError::Invalid {
                        key: key.into(),
                        message: format!(
                            "{what} need about {:.1} GiB of host memory, more than this \
                             machine's {:.1} GiB",
                            bytes as f64 / GIB,
                            have as f64 / GIB
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// `(key, value, upper bound, reason)` of every integer setting that sizes an allocation,
    /// a loop or a product. The bounds are generous against any real run; each stops a value
    /// that would overflow a product or size an allocation no machine holds (the products are
    /// checked against this machine's memory as well, [`TrainConfig::validate`]).
    pub fn bounded_integers(&self) -> Vec<(&'static str, usize, usize, &'static str)> {
        let (tb, d, r, a, t, e) = (
            &self.testbed,
            &self.data,
            &self.rollout,
            &self.algorithm,
            &self.trainer,
            &self.eval,
        );
        vec![
            (
                "testbed.hidden_size",
                tb.hidden_size,
                1 << 16,
                "testbed model width",
            ),
            (
                "testbed.num_hidden_layers",
                tb.num_hidden_layers,
                1 << 10,
                "testbed model depth",
            ),
            (
                "testbed.num_attention_heads",
                tb.num_attention_heads,
                1 << 10,
                "testbed model heads",
            ),
            (
                "testbed.intermediate_size",
                tb.intermediate_size,
                1 << 18,
                "testbed model MLP width",
            ),
            (
                "testbed.max_position_embeddings",
                tb.max_position_embeddings,
                1 << 20,
                "tokens of one sequence",
            ),
            (
                "data.max_prompt_length",
                d.max_prompt_length,
                1 << 20,
                "tokens of one sequence",
            ),
            (
                "testbed.train_size",
                tb.train_size,
                1 << 24,
                "problems generated and held in memory",
            ),
            (
                "testbed.difficulty",
                tb.difficulty,
                1 << 10,
                "terms of one testbed sum",
            ),
            (
                "rollout.num_generations",
                r.num_generations,
                1 << 16,
                "responses per prompt, held per step",
            ),
            (
                "rollout.max_response_length",
                r.max_response_length,
                1 << 20,
                "tokens of one sequence",
            ),
            (
                "rollout.generation_batch_size",
                r.generation_batch_size,
                1 << 20,
                "prompts per generation call",
            ),
            (
                "algorithm.ppo_epochs",
                a.ppo_epochs,
                1 << 16,
                "passes over one rollout batch",
            ),
            (
                "algorithm.ppo_micro_batch_size",
                a.ppo_micro_batch_size,
                1 << 30,
                "sequences per forward pass",
            ),
            (
                "algorithm.ppo_max_token_len_per_gpu",
                a.ppo_max_token_len_per_gpu,
                1 << 40,
                "padded tokens per forward pass",
            ),
            (
                "algorithm.max_num_gen_batches",
                a.max_num_gen_batches,
                1 << 10,
                "generation rounds per step, held together",
            ),
            (
                "trainer.total_training_steps",
                t.total_training_steps,
                1 << 32,
                "steps of one run",
            ),
            (
                "trainer.train_batch_size",
                t.train_batch_size,
                1 << 20,
                "prompts per step, held with their responses",
            ),
            (
                "testbed.warm_start_steps",
                tb.warm_start_steps,
                1 << 24,
                "supervised steps, one loss kept per step",
            ),
            (
                "testbed.warm_start_batch_size",
                tb.warm_start_batch_size,
                1 << 20,
                "sequences per supervised step",
            ),
            (
                "optim.lr_warmup_steps",
                self.optim.lr_warmup_steps,
                1 << 40,
                "optimizer steps",
            ),
            (
                "eval.n_problems",
                e.n_problems,
                1 << 24,
                "problems per evaluation, held with their samples",
            ),
            (
                "eval.k",
                e.k,
                1 << 16,
                "samples per problem, held per evaluation",
            ),
            (
                "eval.max_response_length",
                e.max_response_length,
                1 << 20,
                "tokens of one sequence",
            ),
            (
                "eval.batch_size",
                e.batch_size,
                1 << 20,
                "prompts per generation call",
            ),
        ]
    }

    /// Checks the samples of one evaluation of `problems` problems of `dataset` against this
    /// machine's memory (`eval.n_problems = 0` evaluates a whole dataset, whose size is known
    /// only once it is read): an error names `eval.k` and `eval.n_problems`.
    pub fn check_eval_size(&self, dataset: &str, problems: usize) -> Result<(), ConfigError> {
        let tokens = (self.data.max_prompt_length + self.eval_max_tokens()) as u128;
        let bytes = problems as u128
            * self.eval.k as u128
            * (SEQUENCE_HOST_BYTES + TOKEN_HOST_BYTES * tokens);
        match host_memory_bytes() {
            Some(have) if bytes > have as u128 => Err(ConfigError::Invalid {
                key: "eval.k".into(),
                message: format!(
                    "evaluating {dataset}: {problems} problems x eval.k ({}) responses of up to \
                     {tokens} tokens need about {:.1} GiB of host memory, more than this \
                     machine's {:.1} GiB; lower eval.k or set eval.n_problems",
                    self.eval.k,
                    bytes as f64 / GIB,
                    have as f64 / GIB
                ),
            }),
            _ => Ok(()),
        }
    }

    /// Checks the config a `--resume` resolved (`new`: the saved config, `self`, with the
    /// overrides) against the saved one: a key of [`FIXED_ON_RESUME`], or of `[testbed]`
    /// ([`super::TestbedSection::fixed_on_resume`]), whose value changed is an error naming it,
    /// since the resumed run cannot apply it and the saved config must not claim it did.
    pub fn check_resume_overrides(&self, new: &TrainConfig) -> Result<(), ConfigError> {
        let (Ok(toml::Value::Table(old_t)), Ok(toml::Value::Table(new_t))) =
            (toml::Value::try_from(self), toml::Value::try_from(new))
        else {
            return Ok(());
        };
        let get = |t: &toml::Table, sec: &str, key: &str| {
            t.get(sec)
                .and_then(|s| s.get(key))
                .map(|v| v.to_string())
                .unwrap_or_else(|| "unset".into())
        };
        let testbed_keys: Vec<(String, &str)> = old_t
            .get("testbed")
            .and_then(|t| t.as_table())
            .into_iter()
            .flat_map(|t| t.keys())
            .filter_map(|k| {
                Some((
                    format!("testbed.{k}"),
                    super::TestbedSection::fixed_on_resume(k)?,
                ))
            })
            .collect();
        let fixed = FIXED_ON_RESUME
            .iter()
            .map(|&(k, why)| (k.to_string(), why))
            .chain(testbed_keys);
        for (key, why) in fixed {
            let (sec, name) = key.split_once('.').expect("section.key");
            let (was, now) = (get(&old_t, sec, name), get(&new_t, sec, name));
            if was != now {
                return Err(ConfigError::Invalid {
                    key,
                    message: format!(
                        "cannot change on --resume ({why}): the run has {was}, the override \
                         asks for {now}; start a new run to change it"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The context length the run's tokens need against a model's `max_position_embeddings`
    /// (`limit`, read from `source`): `data.max_prompt_length` plus the longer of
    /// `rollout.max_response_length` and the evaluation's response length must fit. An error
    /// names the keys, their sum and the model's limit.
    pub fn check_context(&self, limit: usize, source: &str) -> Result<(), ConfigError> {
        let prompt = self.data.max_prompt_length;
        let (rkey, response) = if self.eval_max_tokens() > self.rollout.max_response_length {
            ("eval.max_response_length", self.eval_max_tokens())
        } else {
            (
                "rollout.max_response_length",
                self.rollout.max_response_length,
            )
        };
        if prompt + response <= limit {
            return Ok(());
        }
        let key = if prompt > 0 {
            format!("data.max_prompt_length + {rkey}")
        } else {
            rkey.to_string()
        };
        let sum = if prompt > 0 {
            format!("{prompt} + {response} = {} tokens", prompt + response)
        } else {
            format!("{response} tokens")
        };
        Err(ConfigError::Invalid {
            key,
            message: format!(
                "{sum}, beyond the model's context: max_position_embeddings = {limit} ({source}); \
                 lower them to fit"
            ),
        })
    }
}

/// The most `reward.num_workers` allowed: [`rlvr_tasks::reward::max_workers`] (4 per core, at
/// least the sandbox slots), the count the scoring pool itself accepts.
pub fn max_reward_workers() -> usize {
    rlvr_tasks::reward::max_workers()
}

/// Host bytes counted per sequence held in a step (its problem, group, texts and bookkeeping).
pub const SEQUENCE_HOST_BYTES: u128 = 1024;
/// Host bytes counted per token of a held sequence (token id, old, reference and new
/// log-probabilities, mask, advantage weight and the decoded text).
pub const TOKEN_HOST_BYTES: u128 = 32;
/// Host bytes counted per generated testbed problem.
pub const PROBLEM_HOST_BYTES: u128 = 512;
/// f32 copies of each testbed parameter: weights, gradients, two AdamW moments.
pub const PARAM_HOST_COPIES: u128 = 4;
const GIB: f64 = (1u64 << 30) as f64;

/// This machine's memory (`MemTotal` of `/proc/meminfo`) in bytes; None where it cannot be
/// read (the memory products are then not checked, the per-key bounds still are).
pub fn host_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().next()?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The keys outside `[testbed]` a `--resume` cannot change, with the reason
/// ([`TrainConfig::check_resume_overrides`]; the keys of `[testbed]` are
/// [`super::TestbedSection::fixed_on_resume`]'s).
pub const FIXED_ON_RESUME: &[(&str, &str)] = &[
    (
        "model.path",
        "the run continues from its checkpoint, not from model.path",
    ),
    (
        "trainer.seed",
        "the data order and every sample so far follow it",
    ),
    ("trainer.run_name", "the run stays in its directory"),
    ("trainer.runs_dir", "the run stays in its directory"),
];
