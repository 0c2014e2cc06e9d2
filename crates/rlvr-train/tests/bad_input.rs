//! Broken or hostile input through rlvr-train's public API: a checkpoint whose config.json
//! has a zero size (caught by `--dry-run`), a prompt far over `data.max_prompt_length` (dropped
//! before it is rendered or tokenized), and file-system failures (named by path).

mod common;

use std::sync::Arc;

use common::{text_problem, Fixture};
use rlvr_model::ChatTokenizer;
use rlvr_tasks::PromptTemplate;
use rlvr_train::checkpoint::{self, PhaseTimes, TrainState};
use rlvr_train::run::{dry_run, TrainOptions};
use rlvr_train::seed::DataOrderState;
use rlvr_train::task::{build_task, PromptFormat, PROMPT_BYTES_PER_TOKEN};

#[test]
fn dry_run_names_a_zero_size_in_the_checkpoint_config() {
    let fx = Fixture::new();
    for key in ["hidden_size", "intermediate_size"] {
        let path = fx.model.join("config.json");
        let mut cfg: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let keep = cfg[key].clone();
        cfg[key] = 0.into();
        std::fs::write(&path, cfg.to_string()).unwrap();
        let opts = TrainOptions {
            overrides: fx.overrides(&[]),
            quiet: true,
            ..TrainOptions::default()
        };
        let err = dry_run(&opts, &mut Vec::new()).expect_err(&format!("{key} = 0 passed"));
        assert!(err.is_user_input(), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains(&*path.display().to_string()) && msg.contains(&format!("key {key}")),
            "{key}: {msg}"
        );
        cfg[key] = keep;
        std::fs::write(&path, cfg.to_string()).unwrap();
    }
}

/// A prompt over `max_prompt_len * PROMPT_BYTES_PER_TOKEN` bytes is dropped and counted
/// without being rendered: the chat template here fails on any long message, so rendering it
/// would be an error.
#[test]
fn over_long_prompts_are_dropped_before_rendering_or_tokenizing() {
    let dir = rlvr_test_support::models::qwen2_tiny_dir();
    let mut tok = ChatTokenizer::from_dir(&dir).unwrap();
    tok.chat_template = Some(
        "{% for m in messages %}{% if m.content | length > 1000 %}\
         {{ raise_exception('rendered an over-long prompt') }}{% endif %}\
         {{ m.content }}{% endfor %}"
            .into(),
    );
    let max_len = 64;
    let cap = max_len * PROMPT_BYTES_PER_TOKEN;
    let problems = vec![
        text_problem("short", "1+1=".into()),
        text_problem("huge", "7".repeat(cap + 1)),
        text_problem("short2", "2+2=".into()),
    ];
    let format = PromptFormat {
        template: PromptTemplate::Raw,
        chat: true,
    };
    let (task, dropped) = build_task(
        "t",
        problems,
        format,
        &tok,
        max_len,
        Arc::new(rlvr_tasks::MathVerifier),
    )
    .unwrap();
    assert_eq!(dropped, 1);
    let kept: Vec<&str> = task.problems.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(kept, ["short", "short2"]);
    // with no limit (0) nothing is dropped by size: the template then sees it and says so
    let err = build_task(
        "t",
        vec![text_problem("huge", "7".repeat(cap + 1))],
        format,
        &tok,
        0,
        Arc::new(rlvr_tasks::MathVerifier),
    )
    .err()
    .expect("the template refuses long messages")
    .to_string();
    assert!(err.contains("rendered an over-long prompt"), "{err}");
}

/// A checkpoint that cannot be written names the path (here a run directory under a regular
/// file: ENOTDIR), instead of an empty one.
#[test]
fn checkpoint_io_errors_name_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let run = file.join("run");
    let state = TrainState {
        step: 1,
        optimizer_steps: 1,
        data: DataOrderState {
            epoch: 0,
            cursor: 0,
        },
        seed: 1,
        time: PhaseTimes::default(),
    };
    let err = checkpoint::save_atomic::<Box<rlvr_train::TrainError>>(&run, &state, 2, |_| Ok(()))
        .unwrap_err()
        .to_string();
    let tmp = run.join("checkpoint.tmp").display().to_string();
    assert!(err.starts_with(&format!("{tmp}: ")), "{err}");
    let err = checkpoint::read_state(&run).unwrap_err().to_string();
    let state_file = run.join(checkpoint::STATE_FILE).display().to_string();
    assert!(err.starts_with(&format!("{state_file}: ")), "{err}");
}

/// A testbed model with a zero size is an error before any kernel runs, never a panic
/// (`[testbed]` keys are checked when the config is read).
#[test]
fn testbed_zero_sizes_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    for (key, named) in [
        ("testbed.hidden_size=0", "hidden_size"),
        ("testbed.intermediate_size=0", "intermediate_size"),
    ] {
        let opts = rlvr_train::run::TrainOptions {
            overrides: vec![
                format!(
                    "trainer.runs_dir={:?}",
                    dir.path().join("runs").display().to_string()
                ),
                format!(
                    "testbed.cache_dir={:?}",
                    dir.path().join("cache").display().to_string()
                ),
                "testbed.warm_start_steps=0".into(),
                "trainer.total_training_steps=1".into(),
                key.into(),
            ],
            quiet: true,
            ..rlvr_train::run::TrainOptions::default()
        };
        let result =
            std::panic::catch_unwind(|| rlvr_train::run::train(&opts).err().map(|e| e.to_string()));
        let err = result
            .unwrap_or_else(|_| panic!("{key}: panicked"))
            .unwrap_or_else(|| panic!("{key}: trained"));
        assert!(err.contains(named), "{key}: {err}");
    }
}

/// Huge integer settings are errors naming the key when the config is read (`rlvr train`,
/// `--dry-run`), never a panic or an aborted allocation: each key past its upper bound, and
/// products within the bounds whose allocations would not fit this machine's memory.
#[test]
fn huge_integer_settings_are_errors_naming_the_key() {
    let huge = "1000000000";
    let top = i64::MAX.to_string();
    let mut cases: Vec<(String, &str)> = [
        "trainer.train_batch_size",
        "rollout.num_generations",
        "rollout.generation_batch_size",
        "rollout.max_response_length",
        "data.max_prompt_length",
        "testbed.train_size",
        "eval.n_problems",
        "eval.k",
        "eval.batch_size",
        "eval.max_response_length",
        "testbed.warm_start_steps",
        "testbed.warm_start_batch_size",
        "testbed.hidden_size",
        "testbed.intermediate_size",
        "testbed.max_position_embeddings",
        "algorithm.ppo_epochs",
        "algorithm.max_num_gen_batches",
    ]
    .into_iter()
    .map(|k| (format!("{k}={huge}"), k))
    .collect();
    for k in [
        "trainer.total_training_steps",
        "algorithm.ppo_micro_batch_size",
        "algorithm.ppo_max_token_len_per_gpu",
        "optim.lr_warmup_steps",
        "trainer.train_batch_size",
    ] {
        cases.push((format!("{k}={top}"), k));
    }
    // within each bound, but the rollouts of one step need far more than any host's memory
    let product = [
        "trainer.train_batch_size=1048576",
        "rollout.num_generations=65536",
    ];
    let dir = tempfile::tempdir().unwrap();
    let runs = format!(
        "trainer.runs_dir={:?}",
        dir.path().join("runs").display().to_string()
    );
    let mut all: Vec<(Vec<String>, &str)> = cases
        .into_iter()
        .map(|(o, k)| (vec![o, runs.clone()], k))
        .collect();
    all.push((
        product
            .iter()
            .map(|s| s.to_string())
            .chain([runs.clone()])
            .collect(),
        "trainer.train_batch_size",
    ));
    for (overrides, key) in all {
        let err = rlvr_train::TrainConfig::load(None, &overrides)
            .expect_err(&format!("{overrides:?} accepted"))
            .to_string();
        assert!(err.contains(&format!("`{key}`")), "{overrides:?}: {err}");
        // the same through a run and a dry run: an error, no panic, nothing written
        let opts = TrainOptions {
            overrides: overrides.clone(),
            quiet: true,
            ..TrainOptions::default()
        };
        let got = std::panic::catch_unwind(|| {
            let a = rlvr_train::run::train(&opts).err().map(|e| e.to_string());
            let b = dry_run(&opts, &mut Vec::new()).err().map(|e| e.to_string());
            (a, b)
        })
        .unwrap_or_else(|_| panic!("{overrides:?}: panicked"));
        for err in [got.0, got.1] {
            let err = err.unwrap_or_else(|| panic!("{overrides:?}: accepted"));
            assert!(err.contains(key), "{overrides:?}: {err}");
        }
        assert!(!dir.path().join("runs").exists(), "{overrides:?}: wrote");
    }
}

/// A token budget beyond the model's context is refused by the dry run and by the run, with
/// an error naming the keys and the model's `max_position_embeddings`: the testbed model's
/// (from `[model]`) and a checkpoint's (from its config.json, here the test model's 64).
#[test]
fn a_token_budget_beyond_the_models_context_is_refused() {
    // the testbed: 64 + 300 > 256
    for (over, key) in [
        (
            "rollout.max_response_length=300",
            "data.max_prompt_length + rollout.max_response_length",
        ),
        (
            "eval.max_response_length=200",
            "data.max_prompt_length + eval.max_response_length",
        ),
    ] {
        let err = rlvr_train::TrainConfig::load(None, &[over.to_string()])
            .unwrap_err()
            .to_string();
        assert!(err.contains(key) && err.contains("256"), "{over}: {err}");
    }
    rlvr_train::TrainConfig::load(None, &["rollout.max_response_length=192".into()])
        .expect("64 + 192 = 256 fits");
    // a checkpoint with 64 positions
    let fx = Fixture::new();
    let config_json = fx.model.join("config.json").display().to_string();
    for extra in [
        [
            "data.max_prompt_length=60",
            "rollout.max_response_length=10",
        ],
        ["data.max_prompt_length=16", "eval.max_response_length=49"],
        ["data.max_prompt_length=0", "rollout.max_response_length=65"],
    ] {
        let opts = TrainOptions {
            overrides: fx.overrides(&extra),
            quiet: true,
            ..TrainOptions::default()
        };
        let errs = [
            dry_run(&opts, &mut Vec::new()).unwrap_err(),
            rlvr_train::run::train(&opts).map(|_| ()).unwrap_err(),
        ];
        for err in errs {
            assert!(err.is_user_input(), "{extra:?}: {err}");
            let msg = err.to_string();
            let first_key = extra[1].split('=').next().unwrap();
            assert!(
                msg.contains(first_key)
                    && msg.contains("max_position_embeddings = 64")
                    && msg.contains(&config_json),
                "{extra:?}: {msg}"
            );
        }
        let runs: Vec<_> = std::fs::read_dir(fx.root.join("runs"))
            .map(|rd| rd.map(|e| e.unwrap().file_name()).collect())
            .unwrap_or_default();
        assert!(runs.is_empty(), "{extra:?}: left {runs:?}");
    }
    let mut out = Vec::new();
    let fits = TrainOptions {
        overrides: fx.overrides(&[
            "data.max_prompt_length=16",
            "rollout.max_response_length=48",
        ]),
        quiet: true,
        ..TrainOptions::default()
    };
    dry_run(&fits, &mut out).expect("16 + 48 = 64 fits");
}
