//! End-to-end properties of the GRPO loop on a tiny model: micro-batch invariance, non-finite
//! rewards and losses never reaching the weights, exact resume after SIGKILL.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use candle_core::{DType, Device};
use common::{read_params, Fixture};
use rlvr_core::metrics::TrainLine;
use rlvr_train::checkpoint;
use rlvr_train::grpo::Start;
use rlvr_train::policy::Policy;
use rlvr_train::run::{train, TrainOptions};
use rlvr_train::task::{build_task, PromptFormat};
use rlvr_train::{TrainConfig, Trainer};

fn trainer(fx: &Fixture, cfg: &TrainConfig) -> Trainer {
    let policy = Policy::load(&fx.model.to_string_lossy(), DType::F32, &Device::Cpu).unwrap();
    let ds = rlvr_train::setup::load_dataset(&fx.data.to_string_lossy(), None).unwrap();
    let format = PromptFormat {
        template: rlvr_tasks::PromptTemplate::Raw,
        chat: false,
    };
    let (task, _) = build_task(
        "fixture",
        ds.problems,
        format,
        &policy.tokenizer,
        16,
        Arc::new(rlvr_tasks::MathVerifier),
    )
    .unwrap();
    Trainer::new(cfg.clone(), policy, task, Start::Fresh, None).unwrap()
}

fn params(t: &Trainer) -> Vec<Vec<f32>> {
    t.policy
        .params
        .snapshot()
        .unwrap()
        .iter()
        .map(|p| p.flatten_all().unwrap().to_vec1().unwrap())
        .collect()
}

/// `||a - b|| / ||a||` over all tensors together (L2), the relative difference of two
/// parameter (or gradient) vectors.
/// The gradient of the last optimizer step (needs `keep_grads`), flattened per parameter.
fn take_grads(t: &mut Trainer) -> Vec<Vec<f32>> {
    t.hooks
        .last_grads
        .take()
        .expect("keep_grads was set")
        .into_iter()
        .map(|g| g.unwrap().flatten_all().unwrap().to_vec1().unwrap())
        .collect()
}

fn max_rel_diff(a: &[Vec<f32>], b: &[Vec<f32>]) -> f64 {
    let (mut d, mut n) = (0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        for (p, q) in x.iter().zip(y) {
            d += ((p - q) as f64).powi(2);
            n += (*p as f64).powi(2);
        }
    }
    (d / n.max(1e-300)).sqrt()
}

/// The largest entry-wise difference, relative to the largest entry of all tensors.
fn max_abs_diff(a: &[Vec<f32>], b: &[Vec<f32>]) -> f64 {
    let scale = a.iter().flatten().fold(0f32, |m, v| m.max(v.abs())) as f64;
    let d = a
        .iter()
        .zip(b)
        .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs()))
        .fold(0f32, f32::max) as f64;
    d / scale.max(1e-300)
}

/// One GRPO step (one optimizer step over the whole batch of 16 responses), for every
/// aggregation rule, with micro-batches of 16, 1 and 3 right-padded sequences, and packed
/// (`model.use_remove_padding`) in one micro-batch, in micro-batches of 3 and by a budget of
/// real tokens: the accumulated gradients and the parameters after the AdamW step agree within
/// 1e-5 relative (L2 over all parameters, and entry-wise relative to the largest parameter).
/// Packing and splitting move sequences between rows and passes; every rule's weights are per
/// sequence over the whole mini-batch, so neither may change the gradient (sequence-mean rules
/// are the ones packing implementations have broken by normalizing per row).
///
/// The run uses the default learning rate (2e-4). AdamW's first step moves each weight by
/// about `lr * g / |g|`, so float-rounding noise in gradient entries that are nearly zero is
/// amplified to `lr * noise / |g|` (a zero-initialized bias is then off by ~1e-4 of its own
/// size). The gradient check is the direct statement of the invariant.
#[test]
fn one_step_does_not_depend_on_micro_batch_size_or_packing() {
    let fx = Fixture::new();
    let rules = [
        "token-mean",
        "seq-mean-token-mean",
        "seq-mean-token-sum",
        "seq-mean-token-sum-norm",
        "group-token-mean",
        "balanced",
        "balanced-mass",
    ];
    for rule in rules {
        let run = |extra: &[&str]| {
            let rule_key = format!("algorithm.loss_agg_mode={rule}");
            let mut o = vec![
                rule_key.as_str(),
                "trainer.train_batch_size=4",
                "rollout.num_generations=4",
                "optim.lr=2e-4",
            ];
            o.extend_from_slice(extra);
            let cfg = fx.config(&o);
            let mut t = trainer(&fx, &cfg);
            t.hooks.keep_grads = true;
            let before = params(&t);
            let report = t.step().unwrap();
            assert!(
                !report.line.skipped,
                "{rule}: {:?}",
                report.line.skip_reason
            );
            assert!(
                report.line.reward_std > 0.0,
                "{rule}: rewards must vary for this test"
            );
            assert_eq!(t.optimizer.t, 1, "{rule}: exactly one optimizer step");
            let grads = take_grads(&mut t);
            (before, params(&t), grads)
        };
        let padded = "model.use_remove_padding=false";
        let packed = "model.use_remove_padding=true";
        let (before, whole, g_whole) = run(&[padded, "algorithm.ppo_micro_batch_size=16"]);
        let moved = max_rel_diff(&before, &whole);
        assert!(
            moved > 1e-3,
            "{rule}: the step must change the weights (moved {moved})"
        );
        let variants: [&[&str]; 5] = [
            &[padded, "algorithm.ppo_micro_batch_size=1"],
            &[padded, "algorithm.ppo_micro_batch_size=3"],
            &[packed, "algorithm.ppo_micro_batch_size=16"],
            &[packed, "algorithm.ppo_micro_batch_size=3"],
            &[
                packed,
                "algorithm.use_dynamic_bsz=true",
                "algorithm.ppo_max_token_len_per_gpu=40",
            ],
        ];
        for extra in variants {
            let (_, p, g) = run(extra);
            let dg = max_rel_diff(&g_whole, &g);
            let dp = max_rel_diff(&whole, &p);
            let dp_max = max_abs_diff(&whole, &p);
            eprintln!("{rule}, {extra:?}: relative difference of gradients {dg:.1e}, of parameters {dp:.1e} (L2) / {dp_max:.1e} (max)");
            assert!(dg < 1e-5, "{rule}: {extra:?}: gradients differ by {dg}");
            assert!(
                dp < 1e-5 && dp_max < 1e-5,
                "{rule}: {extra:?}: parameters differ by {dp} (L2), {dp_max} (max)"
            );
        }
    }
}

/// GSPO and CISPO are wired into the loop: on-policy (the first mini-batch of a step, ratio 1)
/// their gradient equals PPO's (`-A` per token for every mode), off-policy (the second epoch,
/// with clip ranges of 1e-3 so that ratios leave them; inside the range CISPO's gradient is
/// PPO's) they move the weights differently from PPO, and a micro-batch split does not change
/// them (second epoch, clip 0.2)
/// (GSPO's sequence ratio is taken over whole sequences, which micro-batches never cut).
#[test]
fn gspo_and_cispo_run_and_do_not_depend_on_micro_batch_size() {
    let fx = Fixture::new();
    let run = |mode: &str, micro: usize, epochs: usize, clip: f64| {
        let cfg = fx.config(&[
            &format!("algorithm.policy_loss={mode}"),
            &format!("algorithm.ppo_micro_batch_size={micro}"),
            &format!("algorithm.ppo_epochs={epochs}"),
            "trainer.train_batch_size=4",
            "rollout.num_generations=4",
            "optim.lr=2e-4",
            &format!("algorithm.clip_ratio_low={clip}"),
            &format!("algorithm.clip_ratio_high={clip}"),
        ]);
        let mut t = trainer(&fx, &cfg);
        t.hooks.keep_grads = true;
        let line = t.step().unwrap().line;
        assert!(!line.skipped, "{mode}: {:?}", line.skip_reason);
        assert!(line.reward_std > 0.0, "{mode}: rewards must vary");
        let grads = take_grads(&mut t);
        (params(&t), grads, line)
    };
    let (_, g_ppo, _) = run("vanilla", 16, 1, 0.2);
    let (p_ppo2, _, _) = run("vanilla", 16, 2, 1e-3);
    for mode in ["gspo", "cispo"] {
        let (_, g_on, _) = run(mode, 16, 1, 0.2);
        let dg = max_rel_diff(&g_ppo, &g_on);
        assert!(
            dg < 1e-5,
            "{mode}: on-policy gradient differs from PPO's by {dg}"
        );
        let (tight, _, line) = run(mode, 16, 2, 1e-3);
        assert!(line.pg_loss.is_finite(), "{mode}: pg_loss {}", line.pg_loss);
        let clipped = line.pg_clipfrac_low + line.pg_clipfrac_high;
        assert!(
            clipped > 0.0,
            "{mode}: the second epoch must clip some tokens"
        );
        let off = max_rel_diff(&p_ppo2, &tight);
        assert!(
            off > 1e-6,
            "{mode}: second epoch identical to PPO's ({off})"
        );
        let (whole, g_whole, _) = run(mode, 16, 2, 0.2);
        let (split, g_split, _) = run(mode, 1, 2, 0.2);
        assert!(
            g_whole.iter().flatten().any(|&g| g != 0.0),
            "{mode}: zero gradient"
        );
        let dg = max_rel_diff(&g_whole, &g_split);
        let dp = max_rel_diff(&whole, &split);
        eprintln!("{mode}: off-policy vs PPO {off:.1e}; micro 1 vs whole: grads {dg:.1e}, params {dp:.1e}");
        assert!(dg < 1e-5, "{mode}: micro-batch 1 gradients differ by {dg}");
        assert!(dp < 1e-5, "{mode}: micro-batch 1 parameters differ by {dp}");
    }
}

/// Micro-batches by a token budget (`use_dynamic_bsz`: padded tokens, longest first; real
/// tokens in order when packed) instead of by count: two
/// epochs over one batch (so the old log-probs come from the no-gradient pass, whose rows are
/// put back in batch order), and the parameters after both optimizer steps equal those of
/// count-based splitting within 1e-6 relative (L2), for budgets that cut the batch into many
/// micro-batches of different sizes.
#[test]
fn token_budget_micro_batches_match_count_split() {
    let fx = Fixture::new();
    let run = |extra: &[&str]| {
        let mut o = vec![
            "trainer.train_batch_size=4",
            "rollout.num_generations=4",
            "algorithm.ppo_epochs=2",
            "optim.lr=2e-4",
        ];
        o.extend_from_slice(extra);
        let cfg = fx.config(&o);
        let mut t = trainer(&fx, &cfg);
        let line = t.step().unwrap().line;
        assert!(!line.skipped, "{extra:?}: {:?}", line.skip_reason);
        assert_eq!(t.optimizer.t, 2);
        params(&t)
    };
    let whole = run(&[
        "algorithm.ppo_micro_batch_size=16",
        "model.use_remove_padding=false",
    ]);
    for packed in [false, true] {
        let pack = format!("model.use_remove_padding={packed}");
        for budget in [22, 40, 64] {
            let b = format!("algorithm.ppo_max_token_len_per_gpu={budget}");
            let p = run(&["algorithm.use_dynamic_bsz=true", &b, &pack]);
            let dp = max_rel_diff(&whole, &p);
            eprintln!("token budget {budget} (packed: {packed}): parameters differ from count-based splitting by {dp:.1e} (L2, relative)");
            assert!(
                dp < 1e-6,
                "budget {budget} (packed: {packed}): parameters differ by {dp}"
            );
        }
    }
}

#[test]
fn nan_reward_or_loss_never_reaches_the_weights() {
    let fx = Fixture::new();
    let cfg = fx.config(&[]);
    for fault in ["reward", "loss"] {
        let mut t = trainer(&fx, &cfg);
        match fault {
            "reward" => t.hooks.faults.nan_reward_at_step = Some(2),
            _ => t.hooks.faults.nan_loss_at_step = Some(2),
        }
        let r1 = t.step().unwrap();
        assert!(!r1.line.skipped);
        let after_one = params(&t);
        let adam_t = t.optimizer.t;
        let r2 = t.step().unwrap();
        assert!(r2.line.skipped, "{fault}: step 2 must be skipped");
        let reason = r2.line.skip_reason.clone().unwrap();
        assert!(reason.contains("non-finite"), "{fault}: {reason}");
        assert_eq!(
            params(&t),
            after_one,
            "{fault}: weights changed by a skipped step"
        );
        assert_eq!(t.optimizer.t, adam_t, "{fault}: optimizer state advanced");
        let all_finite = params(&t).iter().flatten().all(|v| v.is_finite());
        assert!(all_finite);
        // the run goes on afterwards
        let r3 = t.step().unwrap();
        assert!(!r3.line.skipped, "{fault}: {:?}", r3.line.skip_reason);
        assert!(params(&t).iter().flatten().all(|v| v.is_finite()));
        // and the skip is visible in the metrics line
        let json = serde_json::to_value(&r2.line).unwrap();
        assert_eq!(json["skipped"], true);
        assert!(json["skip_reason"].as_str().unwrap().contains("non-finite"));
    }
}

/// The optimizer's moments as saved by `AdamW::save`, by name, as raw f32 bits.
fn optimizer_state(t: &Trainer, dir: &Path) -> Vec<(String, Vec<u32>)> {
    let path = dir.join("adam.safetensors");
    t.optimizer.save(&t.policy.params, &path).unwrap();
    let mut out: Vec<(String, Vec<u32>)> = candle_core::safetensors::load(&path, &Device::Cpu)
        .unwrap()
        .into_iter()
        .map(|(k, v)| {
            let bits = v.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            (k, bits.into_iter().map(f32::to_bits).collect())
        })
        .collect();
    out.sort();
    out
}

/// Two mini-batches per step, a NaN loss in the second one only (the first has already
/// stepped AdamW by then): the step is skipped and the parameters and the optimizer state
/// (moments and step count) are bit-identical to before the step. Without the fault the same
/// step takes two optimizer steps and moves the weights, so the check can see a leak.
#[test]
fn a_fault_in_the_second_mini_batch_leaves_nothing_applied() {
    let fx = Fixture::new();
    let cfg = fx.config(&[
        "trainer.train_batch_size=4",
        "algorithm.ppo_mini_batch_size=2",
        "optim.lr=1e-3",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let bits = |t: &Trainer| -> Vec<Vec<u32>> {
        params(t)
            .into_iter()
            .map(|p| p.into_iter().map(f32::to_bits).collect())
            .collect()
    };
    // reference: the same two steps without a fault
    let mut clean = trainer(&fx, &cfg);
    clean.step().unwrap();
    let before_clean = bits(&clean);
    let t_clean = clean.optimizer.t;
    assert!(!clean.step().unwrap().line.skipped);
    assert_eq!(
        clean.optimizer.t,
        t_clean + 2,
        "two mini-batches, two optimizer steps"
    );
    assert_ne!(
        bits(&clean),
        before_clean,
        "a clean step 2 moves the weights"
    );

    let mut t = trainer(&fx, &cfg);
    t.hooks.faults.nan_loss_in_mini_batch = Some((2, 1));
    assert!(!t.step().unwrap().line.skipped);
    let before = bits(&t);
    assert_eq!(
        before, before_clean,
        "step 1 is the same with and without the fault"
    );
    let adam_before = optimizer_state(&t, dir.path());
    let adam_t = t.optimizer.t;
    assert!(adam_before.iter().any(|(_, v)| v.iter().any(|&b| b != 0)));
    let line = t.step().unwrap().line;
    assert!(line.skipped, "step 2 must be skipped");
    assert!(line.skip_reason.unwrap().contains("non-finite loss"));
    assert_eq!(bits(&t), before, "parameters changed by a skipped step");
    assert_eq!(t.optimizer.t, adam_t, "optimizer step count advanced");
    assert_eq!(
        optimizer_state(&t, dir.path()),
        adam_before,
        "moments changed"
    );
    // the run goes on from the restored state
    assert!(!t.step().unwrap().line.skipped);
    assert_eq!(t.optimizer.t, adam_t + 2);
}

const CHILD_ENV: &str = "RLVR_TEST_RESUME_CHILD";

fn options(fx: &Fixture, name: &str, extra: &[&str]) -> TrainOptions {
    let mut o = fx.overrides(extra);
    o.push(format!("trainer.run_name={name}"));
    o.push("trainer.total_training_steps=6".into());
    TrainOptions {
        overrides: o,
        quiet: true,
        ..TrainOptions::default()
    }
}

/// Not a test on its own: the child process of `resume_after_sigkill_is_bit_identical`. It
/// trains slowly (a sleep per step via many steps) until the parent kills it.
#[test]
#[ignore = "spawned by resume_after_sigkill_is_bit_identical"]
fn resume_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let fx = Fixture::at(Path::new(&dir));
    train(&options(&fx, "killed", &[])).unwrap();
}

#[test]
fn resume_after_sigkill_is_bit_identical() {
    let fx = Fixture::new();
    // uninterrupted reference run
    let full = train(&options(&fx, "full", &[])).unwrap();
    assert_eq!(full.steps, 6);
    // the same run in a child process, killed with SIGKILL once it has checkpointed step 2
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "resume_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &fx.root)
        .spawn()
        .unwrap();
    let run_dir = fx.root.join("runs").join("killed");
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let step = checkpoint::find(&run_dir)
            .and_then(|c| checkpoint::read_state(&c).ok())
            .map_or(0, |s| s.step);
        if step >= 2 {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("child exited before it could be killed: {status}");
        }
        assert!(Instant::now() < deadline, "child made no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let at_kill = checkpoint::read_state(&checkpoint::find(&run_dir).unwrap())
        .unwrap()
        .step;
    assert!(
        at_kill < 6,
        "killed too late to test anything (step {at_kill})"
    );
    // resume and finish
    let resumed = train(&TrainOptions {
        resume: Some(run_dir.clone()),
        quiet: true,
        ..TrainOptions::default()
    })
    .unwrap();
    assert_eq!(resumed.steps, 6);
    let a = read_params(&fx.root.join("runs/full/checkpoint"));
    let b = read_params(&run_dir.join("checkpoint"));
    assert_eq!(a.len(), b.len());
    for ((na, va), (nb, vb)) in a.iter().zip(&b) {
        assert_eq!(na, nb);
        let same = va.iter().zip(vb).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "{na} differs after resume (killed at step {at_kill})");
    }
    // the resumed metrics file has each step once
    let lines = rlvr_train::metrics::train_lines(&run_dir.join("metrics.jsonl")).unwrap();
    let steps: Vec<usize> = lines.iter().map(|t| t.step).collect();
    assert_eq!(steps, [1, 2, 3, 4, 5, 6]);
    let full_lines =
        rlvr_train::metrics::train_lines(&fx.root.join("runs/full/metrics.jsonl")).unwrap();
    let rewards =
        |ls: &[TrainLine]| -> Vec<u64> { ls.iter().map(|t| t.reward_mean.to_bits()).collect() };
    assert_eq!(rewards(&lines), rewards(&full_lines));
}

#[test]
fn stop_and_resume_in_process_matches_too() {
    stop_and_resume_matches("f32");
}

/// The same in bf16: the checkpoint's model files are bf16 (the user's dtype), the f32 master
/// weights travel in the optimizer state, and the resumed run ends bit-identical.
#[test]
fn bf16_stop_and_resume_in_process_matches() {
    let fx = stop_and_resume_matches("bf16");
    let ck = fx.root.join("runs/split/checkpoint");
    let model = candle_core::safetensors::load(ck.join("model.safetensors"), &Device::Cpu).unwrap();
    assert!(model.values().all(|t| t.dtype() == DType::BF16));
    let opt =
        candle_core::safetensors::load(ck.join(checkpoint::OPTIMIZER_FILE), &Device::Cpu).unwrap();
    let masters: Vec<_> = opt
        .iter()
        .filter(|(k, _)| k.starts_with("master."))
        .collect();
    assert!(
        !masters.is_empty(),
        "no master weights in the optimizer state"
    );
    assert!(masters.iter().all(|(_, t)| t.dtype() == DType::F32));
}

/// `model.optimizer_offload`: the moments and master weights on the host change nothing (on
/// the CPU host and device are one, so the run must end bit-identical to one without it), a
/// run stopped after 3 steps with offload resumes exactly, and the saved optimizer state is
/// the file a run without offload writes (no masters of f32 parameters).
#[test]
fn optimizer_offload_gives_the_same_run_and_resumes_exactly() {
    for dtype in ["f32", "bf16"] {
        let fx = Fixture::new();
        let d = format!("model.dtype={dtype}");
        train(&options(&fx, "plain", &["trainer.save_freq=0", &d])).unwrap();
        let off = ["trainer.save_freq=0", &d, "model.optimizer_offload=true"];
        let mut first = options(&fx, "offload", &off);
        first.stop_after = Some(3);
        train(&first).unwrap();
        let run_dir = fx.root.join("runs/offload");
        train(&TrainOptions {
            resume: Some(run_dir.clone()),
            quiet: true,
            ..TrainOptions::default()
        })
        .unwrap();
        let plain = fx.root.join("runs/plain/checkpoint");
        let offload = run_dir.join("checkpoint");
        assert_eq!(read_params(&plain), read_params(&offload), "{dtype}");
        assert_ne!(
            read_params(&plain),
            read_params(&fx.model),
            "{dtype}: weights moved"
        );
        let keys = |dir: &Path| {
            let mut k: Vec<String> =
                candle_core::safetensors::load(dir.join(checkpoint::OPTIMIZER_FILE), &Device::Cpu)
                    .unwrap()
                    .into_keys()
                    .collect();
            k.sort();
            k
        };
        assert_eq!(keys(&plain), keys(&offload), "{dtype}");
    }
}

fn stop_and_resume_matches(dtype: &str) -> Fixture {
    let fx = Fixture::new();
    let d = format!("model.dtype={dtype}");
    train(&options(&fx, "full", &["trainer.save_freq=0", &d])).unwrap();
    let mut first = options(&fx, "split", &["trainer.save_freq=0", &d]);
    first.stop_after = Some(3);
    let s = train(&first).unwrap();
    assert_eq!(s.steps, 3);
    let run_dir = fx.root.join("runs/split");
    train(&TrainOptions {
        resume: Some(run_dir.clone()),
        quiet: true,
        ..TrainOptions::default()
    })
    .unwrap();
    let (a, b) = (
        read_params(&fx.root.join("runs/full/checkpoint")),
        read_params(&run_dir.join("checkpoint")),
    );
    assert_eq!(a, b, "{dtype}");
    let init = read_params(&fx.model);
    assert_ne!(a, init, "{dtype}: training must move the weights");
    fx
}

/// Each in-run evaluation writes its samples to `eval-samples.jsonl` (so a later checker can
/// score a run's evaluations again), and a resumed run rewrites the steps it redoes: the file of
/// a run stopped and resumed equals the uninterrupted run's.
#[test]
fn eval_samples_are_written_and_resume_exactly() {
    let fx = Fixture::new();
    let data = format!("eval.datasets=[{:?}]", fx.data.display().to_string());
    let evals = [
        "trainer.save_freq=0",
        data.as_str(),
        "eval.test_freq=2",
        "eval.k=2",
        "eval.before_train=true",
    ];
    train(&options(&fx, "full", &evals)).unwrap();
    let mut first = options(&fx, "split", &evals);
    first.stop_after = Some(3);
    train(&first).unwrap();
    let run_dir = fx.root.join("runs/split");
    train(&TrainOptions {
        resume: Some(run_dir.clone()),
        quiet: true,
        ..TrainOptions::default()
    })
    .unwrap();
    let read = |dir: &Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(rlvr_core::run_dir::RunDir::new(dir).eval_samples())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let full = read(&fx.root.join("runs/full"));
    assert_eq!(read(&run_dir), full, "a resumed run's samples differ");
    let steps: std::collections::BTreeSet<u64> =
        full.iter().map(|l| l["step"].as_u64().unwrap()).collect();
    assert_eq!(steps.into_iter().collect::<Vec<_>>(), [0, 2, 4, 6]);
    // every evaluation the same problems, 2 samples each, each with its gold, response and
    // verdict
    let at = |step: u64| full.iter().filter(|l| l["step"] == step).count();
    assert!(at(0) > 0 && at(0) % 2 == 0, "{}", at(0));
    assert!([2, 4, 6].iter().all(|&s| at(s) == at(0)));
    let asked: Vec<String> = std::fs::read_to_string(&fx.data)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["problem"].to_string())
        .collect();
    for l in &full {
        assert!(l["answer"].is_string() && l["response"].is_string(), "{l}");
        assert!(
            l["correct"].is_boolean() && l["sample"].as_u64().unwrap() < 2,
            "{l}"
        );
        // the question asked, so the file alone scores the sample again as the run did
        assert!(l["choices"].is_null(), "{l}");
        let question = l["question"].as_str().unwrap();
        assert!(asked.contains(&l["question"].to_string()), "{l}");
        let again = rlvr_tasks::math::verify_asked(
            l["answer"].as_str().unwrap(),
            l["response"].as_str().unwrap(),
            None,
            Some(question),
        );
        assert_eq!(Some(again.correct), l["correct"].as_bool(), "{l}");
    }
}

/// A training set with no prompt left after the length filter is a user-input error that
/// names the file, says how many prompts were too long and which key to raise; an empty file
/// says so.
#[test]
fn no_usable_prompts_names_the_file_and_the_fix() {
    let fx = Fixture::new();
    // "a+b=" is 4 tokens: a limit of 3 drops all 16 prompts
    let err = train(&options(&fx, "short", &["data.max_prompt_length=3"])).unwrap_err();
    assert!(err.is_user_input(), "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&fx.data.display().to_string()), "{msg}");
    assert!(msg.contains("16 of 16 prompts"), "{msg}");
    assert!(msg.contains("data.max_prompt_length = 3"), "{msg}");
    let empty = fx.root.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let o = options(
        &fx,
        "empty",
        &[&format!(
            "data.train_files={:?}",
            empty.display().to_string()
        )],
    );
    let err = train(&o).unwrap_err();
    assert!(err.is_user_input(), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("empty.jsonl") && msg.contains("no records"),
        "{msg}"
    );
    // a MATH-layout file whose solutions have no \boxed{}: every record is left out, and both
    // the dry run and the run say why (the reader's reason, not "null or empty")
    let nobox = fx.root.join("nobox.jsonl");
    std::fs::write(
        &nobox,
        "{\"problem\": \"1+1?\", \"solution\": \"It is 2.\"}\n",
    )
    .unwrap();
    let o = options(
        &fx,
        "nobox",
        &[&format!(
            "data.train_files={:?}",
            nobox.display().to_string()
        )],
    );
    let mut shown = Vec::new();
    let dry = rlvr_train::run::dry_run(&o, &mut shown).unwrap_err();
    let err = train(&o).unwrap_err();
    for (what, e) in [("dry run", dry), ("run", err)] {
        assert!(e.is_user_input(), "{what}: {e}");
        let msg = e.to_string();
        assert!(
            msg.contains("nobox.jsonl") && msg.contains("no \\boxed{...} in the text"),
            "{what}: {msg}"
        );
    }
}

/// Without `trainer.run_name` the run goes to `<task>-<rule>-s<seed>`, numbered when taken;
/// the task is the training file's stem here, `testbed` or the preset's name otherwise.
#[test]
fn default_run_name_is_task_rule_seed() {
    use rlvr_train::run::task_label;
    assert_eq!(task_label(None), "testbed");
    assert_eq!(task_label(Some("dapo_math_17k")), "dapo_math_17k");
    assert_eq!(task_label(Some("/data/my set/train.parquet")), "train");
    assert_eq!(task_label(Some("q&a.jsonl")), "q-a");
    let fx = Fixture::new();
    let mut o = fx.overrides(&[
        "trainer.total_training_steps=1",
        "trainer.seed=3",
        "algorithm.loss_agg_mode=token-mean",
        "trainer.rollout_data_dir=\"rollouts\"",
    ]);
    o.retain(|k| !k.starts_with("trainer.run_name"));
    let opts = TrainOptions {
        overrides: o,
        quiet: true,
        ..TrainOptions::default()
    };
    let cfg = TrainConfig::load(None, &opts.overrides).unwrap();
    let runs = fx.root.join("runs");
    assert_eq!(
        rlvr_train::run::new_run_dir(&cfg).unwrap(),
        runs.join("data-token-mean-s3")
    );
    train(&opts).unwrap();
    assert!(runs.join("data-token-mean-s3/metrics.jsonl").exists());
    // trainer.rollout_data_dir (relative: under the run directory): verl's field names, one
    // line per response of the 4 x 4 batch, one uid per group
    let dump = std::fs::read_to_string(runs.join("data-token-mean-s3/rollouts/1.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = dump
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 16);
    for r in &rows {
        for k in [
            "input",
            "output",
            "score",
            "step",
            "uid",
            "advantage",
            "length",
            "acc",
        ] {
            assert!(r.get(k).is_some(), "{k} missing: {r}");
        }
        assert_eq!(r["step"], 1);
        assert!(r["input"].as_str().unwrap().ends_with('='), "{r}");
    }
    let uids: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["uid"].as_str().unwrap()).collect();
    assert_eq!(uids.len(), 4);
    // advantages of a group sum to zero (GRPO)
    for u in &uids {
        let sum: f64 = rows
            .iter()
            .filter(|r| r["uid"] == *u)
            .map(|r| r["advantage"].as_f64().unwrap())
            .sum();
        assert!(sum.abs() < 1e-9, "{u}: {sum}");
    }
    assert_eq!(
        rlvr_train::run::new_run_dir(&cfg).unwrap(),
        runs.join("data-token-mean-s3-2")
    );
}

#[test]
fn resume_errors_are_clear() {
    let fx = Fixture::new();
    let err = train(&TrainOptions {
        resume: Some(fx.root.join("runs/nothing")),
        quiet: true,
        ..TrainOptions::default()
    })
    .unwrap_err();
    assert!(err.is_user_input());
    assert!(err.to_string().contains("config.toml"), "{err}");
    // an explicit run name that already holds a run is refused
    let mut o = options(&fx, "twice", &["trainer.total_training_steps=1"]);
    train(&o).unwrap();
    o.quiet = true;
    let err = train(&o).unwrap_err().to_string();
    assert!(err.contains("--resume"), "{err}");
}

/// GRPO learns: on the fixture task (answer the parity of a+b with one digit; a random model is
/// right about a third of the time) the reward rises well above its start within 40 steps.
#[test]
fn grpo_raises_the_reward_on_a_toy_task() {
    let fx = Fixture::new();
    let cfg = fx.config(&[
        "trainer.train_batch_size=8",
        "algorithm.ppo_mini_batch_size=8",
        "rollout.num_generations=8",
        "rollout.max_response_length=3",
        "optim.lr=3e-3",
    ]);
    let mut t = trainer(&fx, &cfg);
    let mut rewards = Vec::new();
    for _ in 0..40 {
        rewards.push(t.step().unwrap().line.reward_mean);
    }
    let first: f64 = rewards[..5].iter().sum::<f64>() / 5.0;
    let last: f64 = rewards[35..].iter().sum::<f64>() / 5.0;
    eprintln!("reward: first 5 steps {first:.3}, last 5 steps {last:.3}");
    assert!(
        last > first + 0.2,
        "reward {first:.3} -> {last:.3}: {rewards:?}"
    );
}

/// The sampler's per-token log-probs equal the training forward's on the same tokens, padded
/// and packed, with prompts of different lengths in one call (left padding): the rollout is
/// on-policy.
#[test]
fn sampler_and_training_forward_agree() {
    let fx = Fixture::new();
    let policy = Policy::load(&fx.model.to_string_lossy(), DType::F32, &Device::Cpu).unwrap();
    let prompts: Vec<Vec<u32>> = ["0+1=", "1+1+0+1=", "1=", "0+0+1+1+0+1="]
        .iter()
        .map(|p| policy.tokenizer.encode(p, false).unwrap())
        .collect();
    let gens = rlvr_model::generate(
        &policy.model,
        None,
        &prompts,
        &rlvr_model::SamplingParams {
            n: 3,
            max_new_tokens: 8,
            eos_token_ids: policy.tokenizer.eos_token_ids.clone(),
            seed: 5,
            ..Default::default()
        },
    )
    .unwrap();
    let pairs: Vec<(Vec<u32>, Vec<u32>)> = gens
        .iter()
        .map(|g| (prompts[g.prompt_index].clone(), g.tokens.clone()))
        .collect();
    for packed in [false, true] {
        let batch = policy.batch(&pairs, packed).unwrap();
        let lp: Vec<Vec<f32>> = policy
            .model
            .response_logprobs_no_grad(&batch, false, 1.0)
            .unwrap()
            .logprobs
            .to_vec2()
            .unwrap();
        let mut worst = 0f32;
        for (g, row) in gens.iter().zip(&lp) {
            for (a, b) in g.logprobs.iter().zip(row) {
                worst = worst.max((a - b).abs());
            }
        }
        assert!(
            worst < 1e-4,
            "sampler vs training forward (packed: {packed}): max |diff| = {worst}"
        );
    }
}

/// The off-policy path: two epochs over two mini-batches (old log-probs recomputed), with
/// the KL penalty to the frozen initial policy, an entropy bonus and dual clip; dynamic
/// sampling keeps only groups whose rewards vary.
#[test]
fn kl_epochs_minibatches_and_dynamic_sampling_run() {
    let fx = Fixture::new();
    let cfg = fx.config(&[
        "trainer.train_batch_size=4",
        "algorithm.ppo_mini_batch_size=2",
        "algorithm.ppo_epochs=2",
        "algorithm.ppo_micro_batch_size=3",
        "algorithm.use_kl_loss=true",
        "algorithm.kl_loss_type=k2",
        "algorithm.kl_loss_coef=0.1",
        "algorithm.entropy_coeff=0.01",
        "algorithm.clip_ratio_c=3.0",
        "algorithm.filter_groups=true",
        "algorithm.max_num_gen_batches=4",
    ]);
    let mut t = trainer(&fx, &cfg);
    assert!(t.reference.is_some());
    for _ in 0..3 {
        let line = t.step().unwrap().line;
        assert!(
            !line.skipped || line.skip_reason.as_deref() == Some("no group with reward variation")
        );
        if line.skipped {
            continue;
        }
        assert!(
            line.groups_kept >= 1 && line.groups_kept <= 4,
            "{}",
            line.groups_kept
        );
        assert!(line.gen_batches >= 1 && line.gen_batches <= 4);
        assert!(line.kl.is_finite() && line.kl >= 0.0, "kl {}", line.kl);
        assert!(line.entropy > 0.0);
    }
    // 3 steps x 2 epochs x 2 mini-batches, fewer when a step kept fewer groups
    assert!(
        t.optimizer.t >= 3 && t.optimizer.t <= 12,
        "{}",
        t.optimizer.t
    );
    assert!(params(&t).iter().flatten().all(|v| v.is_finite()));
}

/// An update that would overflow the weights (a learning rate of 1e39 moves every weight by
/// about that much on AdamW's first step) is skipped before anything is written: the weights
/// and the optimizer's step count stay as they were and the step says why.
#[test]
fn an_update_that_would_make_the_weights_non_finite_is_skipped() {
    let fx = Fixture::new();
    let cfg = fx.config(&["optim.lr=1e39", "optim.grad_clip=0"]);
    let mut t = trainer(&fx, &cfg);
    let before = params(&t);
    let mut skipped = 0;
    for _ in 0..3 {
        let line = t.step().unwrap().line;
        if line.skipped {
            let why = line.skip_reason.unwrap();
            assert!(why.contains("non-finite"), "{why}");
            skipped += 1;
        }
    }
    // every step with reward variation would have updated: at least one did reach the update
    assert!(skipped > 0, "no step reached the update");
    assert_eq!(t.optimizer.t, 0, "an optimizer step was applied");
    assert_eq!(params(&t), before, "the weights changed");
    assert_eq!(t.policy.params.first_non_finite().unwrap(), None);
}

/// The newest checkpoint truncated (as by a full disk): resume verifies it against its
/// manifest, passes over it to the previous one (step 4), retrains steps 5 and 6, and ends
/// bit-identical to an uninterrupted run; a flipped byte in the new checkpoint is detected.
#[test]
fn a_truncated_newest_checkpoint_resumes_from_the_previous_bit_identically() {
    let fx = Fixture::new();
    let keep = ["trainer.save_freq=2", "trainer.keep_checkpoints=2"];
    train(&options(&fx, "full", &keep)).unwrap();
    train(&options(&fx, "damaged", &keep)).unwrap();
    let run_dir = fx.root.join("runs/damaged");
    assert!(run_dir.join("checkpoint-step000004").is_dir());
    assert!(!run_dir.join("checkpoint-step000002").exists(), "kept 2");
    let weights = run_dir.join("checkpoint/model.safetensors");
    let len = std::fs::metadata(&weights).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&weights)
        .unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    let resumed = train(&TrainOptions {
        resume: Some(run_dir.clone()),
        quiet: true,
        ..TrainOptions::default()
    })
    .unwrap();
    assert_eq!(resumed.steps, 6);
    assert!(run_dir.join("checkpoint.damaged").is_dir());
    assert_eq!(
        read_params(&fx.root.join("runs/full/checkpoint")),
        read_params(&run_dir.join("checkpoint")),
        "resumed from step 4, the run must end as the uninterrupted one"
    );
    let lines = rlvr_train::metrics::train_lines(&run_dir.join("metrics.jsonl")).unwrap();
    let steps: Vec<usize> = lines.iter().map(|t| t.step).collect();
    assert_eq!(steps, [1, 2, 3, 4, 5, 6]);
    // one flipped byte in the optimizer state of the new checkpoint
    let opt = run_dir.join("checkpoint").join(checkpoint::OPTIMIZER_FILE);
    let mut bytes = std::fs::read(&opt).unwrap();
    let at = bytes.len() - 5;
    bytes[at] ^= 0x20;
    std::fs::write(&opt, bytes).unwrap();
    let why = checkpoint::verify(&run_dir.join("checkpoint")).unwrap_err();
    assert!(why.contains("optimizer.safetensors: sha256"), "{why}");
}

/// `--resume R --set ...` with an override that validates but fails during set-up (a KL
/// reference the run never saved) errors out and leaves the run's config.toml as it was, so
/// a plain `--resume R` still works.
#[test]
fn a_failing_override_on_resume_leaves_the_runs_config_alone() {
    let fx = Fixture::new();
    let mut first = options(&fx, "paused", &[]);
    first.stop_after = Some(2);
    train(&first).unwrap();
    let run_dir = fx.root.join("runs/paused");
    let config_before = std::fs::read_to_string(run_dir.join("config.toml")).unwrap();
    let err = train(&TrainOptions {
        resume: Some(run_dir.clone()),
        overrides: vec!["algorithm.use_kl_loss=true".into()],
        quiet: true,
        ..TrainOptions::default()
    })
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(err.contains("reference"), "{err}");
    assert_eq!(
        std::fs::read_to_string(run_dir.join("config.toml")).unwrap(),
        config_before
    );
    let done = train(&TrainOptions {
        resume: Some(run_dir),
        quiet: true,
        ..TrainOptions::default()
    })
    .unwrap();
    assert_eq!(done.steps, 6);
}

/// A run killed before its first checkpoint (config.toml and some metrics, no checkpoint)
/// is started over under its name, by a fresh run or by `--resume`.
#[test]
fn a_run_stopped_before_its_first_checkpoint_restarts_under_its_name() {
    let fx = Fixture::new();
    let run_dir = fx.root.join("runs/early");
    for resume in [false, true] {
        std::fs::create_dir_all(&run_dir).unwrap();
        let cfg = TrainConfig::load(None, &options(&fx, "early", &[]).overrides).unwrap();
        std::fs::write(run_dir.join("config.toml"), cfg.to_toml()).unwrap();
        std::fs::write(
            run_dir.join("metrics.jsonl"),
            "{\"kind\": \"train\", \"step\": 1, \"stale\": true}\n",
        )
        .unwrap();
        for d in checkpoint::candidates(&run_dir) {
            std::fs::remove_dir_all(d).unwrap();
        }
        let opts = if resume {
            TrainOptions {
                resume: Some(run_dir.clone()),
                quiet: true,
                ..TrainOptions::default()
            }
        } else {
            options(&fx, "early", &[])
        };
        let s = train(&opts).unwrap_or_else(|e| panic!("resume={resume}: {e}"));
        assert_eq!(s.steps, 6);
        let text = std::fs::read_to_string(run_dir.join("metrics.jsonl")).unwrap();
        assert!(!text.contains("stale"), "resume={resume}");
        let lines = rlvr_train::metrics::train_lines(&run_dir.join("metrics.jsonl")).unwrap();
        assert_eq!(lines.len(), 6, "resume={resume}");
    }
}

/// The arithmetic task family loads where a preset name goes, from its settings; a bad
/// setting is a user-input error naming it.
#[test]
fn arith_datasets_load_from_their_settings() {
    let ds = rlvr_train::setup::load_dataset("arith:ops=+,digits=2,split=test,n=7", None).unwrap();
    assert_eq!(ds.len(), 7);
    assert!(ds.problems.iter().all(|p| p.id.starts_with("arith-test-")));
    assert!(ds.problems[0].prompt.text().starts_with("What is "));
    let err = rlvr_train::setup::load_dataset("arith:digits=9", None).unwrap_err();
    assert!(err.is_user_input(), "{err}");
    assert!(err.to_string().contains("digits=9"), "{err}");
}
