//! The CPU testbed run: rlvr-tasks' testbed task (multi-term sums solved step by step, see
//! `rlvr_tasks::testbed`) learned by a tiny Qwen with the testbed's BPE tokenizer.
//!
//! Setup: the tokenizer and a randomly initialized model are saved in Hugging Face layout and
//! loaded back (the same path as any checkpoint), warm-started by supervised training on the
//! task's worked solutions (which carry slips, so the model starts imperfect), and cached under
//! a key of every setting they depend on; a second run with the same settings loads the cache.
//! Training problems follow `trainer.seed`; the held-out evaluation problems do not (runs with
//! different seeds evaluate on the same problems), and never overlap the training problems.

use std::io::Write;
use std::time::Instant;

use rlvr_model::{init_random, ChatTokenizer, DecoderConfig};
use rlvr_tasks::testbed::{self as tb, Split, TestbedConfig, NAME};
use rlvr_tasks::Problem;

use crate::config::TrainConfig;
use crate::eval_set::eval_task;
use crate::policy::Policy;
use crate::seed::mix_seed;
use crate::setup::{reward_fn, Setup, SetupInputs};
use crate::task::build_task;
use crate::testbed_heldout::{raw, with_environment};
use crate::warm_start::{self, WarmStartSpec};
use crate::TrainError;

/// Bumped whenever the setup or warm start change, so that old caches are not reused.
const CACHE_VERSION: u32 = 3;

/// The rlvr-tasks testbed settings of a config (training problems seeded by `trainer.seed`;
/// the ranges were checked when the config was read).
pub fn task_config(cfg: &TrainConfig) -> TestbedConfig {
    cfg.testbed.task_config(cfg.trainer.seed)
}

/// The testbed tokenizer (trained by rlvr-tasks, deterministic in the seed).
pub fn tokenizer(t: &TestbedConfig) -> Result<ChatTokenizer, TrainError> {
    let tok = tb::testbed_tokenizer(t).map_err(TrainError::Msg)?;
    Ok(ChatTokenizer::new(tok, Some(tb::EOS))?)
}

/// The testbed model's configuration from `[testbed]`.
pub fn model_config(cfg: &TrainConfig, tok: &ChatTokenizer) -> DecoderConfig {
    let m = &cfg.testbed;
    let mut c = DecoderConfig::tiny(tok.tokenizer.get_vocab_size(true));
    c.hidden_size = m.hidden_size;
    c.intermediate_size = m.intermediate_size;
    c.num_hidden_layers = m.num_hidden_layers;
    c.num_attention_heads = m.num_attention_heads;
    c.num_key_value_heads = m.num_attention_heads;
    c.head_dim = m.hidden_size / m.num_attention_heads.max(1);
    c.max_position_embeddings = m.max_position_embeddings;
    c.eos_token_ids = tok.eos_token_ids.clone();
    c
}

fn train_problems(cfg: &TrainConfig, t: &TestbedConfig) -> Vec<Problem> {
    tb::problems(t, Split::Train, cfg.testbed.train_size)
}

/// Tokenizer, model (from the warm-start cache, or built, warm-started and cached; through
/// the Hugging Face save/load path either way), training and evaluation tasks.
/// The testbed's set-up (module docs); `inputs.data_dir` serves only the evaluation datasets
/// other than `testbed`.
pub(crate) fn setup(inputs: &SetupInputs) -> Result<Setup, TrainError> {
    let (cfg, ui) = (inputs.cfg, inputs.ui);
    let (dev, dt) = (inputs.dev, inputs.dt);
    let tcfg = task_config(cfg);
    let t = Instant::now();
    let problems = train_problems(cfg, &tcfg);
    let mut warm_note = None;
    let mut warm_s = 0.0;
    let policy = match inputs.initial {
        Some(dir) => Policy::load(&dir.to_string_lossy(), dt, dev)?,
        None => {
            let tb = &cfg.testbed;
            let key = warm_start::cache_key(&format!(
                "v{CACHE_VERSION} shape=({}, {}, {}, {}, {}) testbed={tcfg:?} train_size={} \
                 warm=({}, {}, {}) seed={} dtype={} device={}",
                tb.hidden_size,
                tb.num_hidden_layers,
                tb.num_attention_heads,
                tb.intermediate_size,
                tb.max_position_embeddings,
                tb.train_size,
                tb.warm_start_steps,
                tb.warm_start_batch_size,
                tb.warm_start_lr,
                cfg.trainer.seed,
                cfg.model.dtype,
                cfg.model.device,
            ));
            let dir = warm_start::cache_path(&cfg.testbed.cache_dir, &key);
            let load_cached = || {
                dir.join("model.safetensors")
                    .is_file()
                    .then(|| Policy::load(&dir.to_string_lossy(), dt, dev))
                    .and_then(Result::ok)
            };
            let mut cached = load_cached();
            // Concurrent runs (a sweep's jobs) that need the same warm start: one builds it
            // under an exclusive lock, the others wait for it and load it.
            let _lock = match cached {
                Some(_) => None,
                None => {
                    let lock = warm_start::lock(&dir)?;
                    cached = load_cached();
                    Some(lock)
                }
            };
            match cached {
                Some(p) => {
                    warm_note = Some(format!(
                        "{} supervised steps, loaded from the cache {}",
                        cfg.testbed.warm_start_steps,
                        dir.display()
                    ));
                    p
                }
                None => {
                    let w = Instant::now();
                    let tok = tokenizer(&tcfg)?;
                    let mc = model_config(cfg, &tok);
                    let (model, varmap) =
                        init_random(&mc, mix_seed(cfg.trainer.seed, &[11]), dt, dev)?;
                    let params = crate::optim::Params::from_varmap(&varmap);
                    let mut policy = Policy {
                        model,
                        varmap,
                        params,
                        config: mc,
                        tokenizer: tok,
                        device: dev.clone(),
                        dtype: dt,
                    };
                    let steps = cfg.testbed.warm_start_steps;
                    if steps > 0 {
                        let examples = warm_examples(&tcfg, &problems, &policy)?;
                        let pb = ui.bar(steps, "warm start");
                        let spec = WarmStartSpec {
                            steps,
                            batch_size: cfg.testbed.warm_start_batch_size,
                            lr: cfg.testbed.warm_start_lr,
                            seed: cfg.trainer.seed,
                        };
                        let report =
                            warm_start::supervised(&mut policy, &examples, &spec, |s, loss| {
                                pb.set_position(s as u64);
                                pb.set_message(format!("loss {loss:.3}"));
                                if !ui.bars && s % 100 == 0 {
                                    ui.println(format!(
                                        "warm start step {s}/{steps}: loss {loss:.3} ({:.0}s)",
                                        w.elapsed().as_secs_f64()
                                    ));
                                }
                            })?;
                        pb.finish_and_clear();
                        let tail = &report.losses[report.losses.len().saturating_sub(20)..];
                        warm_note = Some(format!(
                            "{steps} supervised steps on worked solutions in {:.0}s (final loss {:.3}), cached in {}",
                            report.secs,
                            warm_start::mean(tail),
                            dir.display()
                        ));
                        ui.println(format!(
                            "warm start: {}",
                            warm_note.as_deref().unwrap_or("")
                        ));
                    }
                    warm_start::store(&policy, &dir)?;
                    warm_s = w.elapsed().as_secs_f64();
                    Policy::load(&dir.to_string_lossy(), dt, dev)?
                }
            }
        }
    };
    let verifier = reward_fn(&cfg.reward, &problems)?;
    let (train_task, _) = build_task(
        NAME,
        problems,
        raw(),
        &policy.tokenizer,
        cfg.data.max_prompt_length,
        verifier,
    )?;
    let train_task = with_environment(train_task, &tcfg, &policy)?;
    let evals = cfg
        .eval
        .datasets
        .iter()
        .map(|set| {
            eval_task(
                set,
                cfg,
                &policy,
                raw(),
                inputs.data_dir,
                cfg.eval.n_problems,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Setup {
        policy,
        train: train_task,
        evals,
        warm_start: warm_note,
        setup_s: t.elapsed().as_secs_f64() - warm_s,
        warm_start_s: warm_s,
    })
}

/// (prompt, worked solution + eos) token pairs, one per training problem, drawn from the
/// regime's solution distribution (slips included).
fn warm_examples(
    t: &TestbedConfig,
    problems: &[Problem],
    policy: &Policy,
) -> Result<Vec<crate::warm_start::Example>, TrainError> {
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(mix_seed(t.seed, &[12]));
    let eos = *policy
        .tokenizer
        .eos_token_ids
        .first()
        .ok_or_else(|| TrainError::Msg("testbed tokenizer has no eos id".into()))?;
    let mut out = Vec::with_capacity(problems.len());
    for p in problems {
        let terms = tb::parse_prompt(p.prompt.text()).ok_or_else(|| {
            TrainError::Msg(format!("not a testbed prompt: {:?}", p.prompt.text()))
        })?;
        let (text, _) = tb::worked_solution(t, &terms, &mut rng);
        let prompt = policy.tokenizer.encode(p.prompt.text(), false)?;
        let mut sol = policy.tokenizer.encode(&text, false)?;
        sol.push(eos);
        out.push((prompt, sol));
    }
    Ok(out)
}

/// `--dry-run` of a testbed config: what would be built, three prompts.
pub fn dry_run(cfg: &TrainConfig, out: &mut dyn Write) -> Result<(), TrainError> {
    let t = task_config(cfg);
    let tok = tokenizer(&t)?;
    let mc = model_config(cfg, &tok);
    let train = train_problems(cfg, &t);
    let mut lines = vec![
        format!(
            "model: testbed (built here): {} layers, hidden {}, vocab {}, {} parameters",
            mc.num_hidden_layers,
            mc.hidden_size,
            mc.vocab_size,
            mc.num_parameters()
        ),
        format!(
            "warm start: {} supervised steps of {} sequences (cached under {})",
            cfg.testbed.warm_start_steps,
            cfg.testbed.warm_start_batch_size,
            cfg.testbed.cache_dir.display()
        ),
        format!(
            "train data: testbed ({}): {} problems of {}..={} terms; eval: {:?}",
            t.regime.as_str(),
            train.len(),
            t.min_terms,
            t.difficulty,
            cfg.eval.datasets
        ),
    ];
    lines.push(crate::memory_plan::memory_plan_text(cfg, &mc));
    for (i, p) in train.iter().take(3).enumerate() {
        let ids = tok.encode(p.prompt.text(), false)?;
        lines.push(format!(
            "--- prompt {} of 3 ({} tokens, answer {}) ---\n{}",
            i + 1,
            ids.len(),
            p.answer,
            p.prompt.text()
        ));
    }
    lines.push("dry run: ok".into());
    for l in lines {
        writeln!(out, "{l}").map_err(|e| TrainError::io("<stdout>", e))?;
    }
    Ok(())
}
