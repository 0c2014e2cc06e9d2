use std::path::{Path, PathBuf};

use rlvr_core::policy_loss::PolicyLossMode;
use rlvr_core::AggRule;

use super::*;

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

#[test]
fn policy_loss_modes_parse_and_dual_clip_is_vanilla_only() {
    for (text, want) in [
        ("vanilla", PolicyLossMode::Vanilla),
        ("ppo", PolicyLossMode::Vanilla),
        ("gspo", PolicyLossMode::Gspo),
        ("cispo", PolicyLossMode::Cispo),
    ] {
        let cfg = TrainConfig::load(None, &[format!("algorithm.policy_loss={text}")]).unwrap();
        assert_eq!(cfg.algorithm.policy_loss, want);
    }
    let err = TrainConfig::load(None, &["algorithm.policy_loss=reinforce".into()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("policy_loss") && err.contains("reinforce"),
        "{err}"
    );
    let err = TrainConfig::load(
        None,
        &[
            "algorithm.policy_loss=gspo".into(),
            "algorithm.clip_ratio_c=3.0".into(),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("algorithm.clip_ratio_c") && err.contains("gspo"),
        "{err}"
    );
}

/// `trainer.logger` as verl takes it: a list, or one name; anything else is refused by key.
#[test]
fn logger_is_a_list_or_one_name() {
    let load = |o: &str| TrainConfig::load(None, &[o.to_string()]);
    let both = load("trainer.logger=['console','tensorboard']").unwrap();
    assert_eq!(both.trainer.logger, [Logger::Console, Logger::Tensorboard]);
    let one = load("trainer.logger=tensorboard").unwrap();
    assert_eq!(one.trainer.logger, [Logger::Tensorboard]);
    assert!(one.trainer.logs_to(Logger::Tensorboard) && !one.trainer.logs_to(Logger::Console));
    for bad in ["trainer.logger=['console','wandb']", "trainer.logger=3"] {
        let err = load(bad).unwrap_err().to_string();
        assert!(
            err.contains("trainer.logger") && err.contains("`console`, `tensorboard`"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn testbed_toml_is_the_default() {
    let cfg = TrainConfig::load(Some(&repo_file("configs/testbed.toml")), &[]).unwrap();
    assert_eq!(cfg, TrainConfig::default());
}

#[test]
fn shipped_configs_parse() {
    for f in [
        "configs/dapo17k-qwen2.5-math-7b.toml",
        "configs/dapo17k-qwen3-1.7b.toml",
    ] {
        let cfg = TrainConfig::load(Some(&repo_file(f)), &[]).unwrap();
        assert_eq!(cfg.rollout.num_generations, 16, "{f}");
        assert_eq!(cfg.algorithm.loss_agg_mode, AggRule::Balanced, "{f}");
        assert_eq!(cfg.algorithm.clip_ratio_high, 0.28, "{f}");
        assert_eq!(
            cfg.data.prompt_template,
            rlvr_tasks::PromptTemplate::Dapo,
            "{f}"
        );
    }
}

/// Every numeric setting outside its range is refused, naming the key (each of these
/// was accepted before and either poisoned the weights, skipped every step, or panicked).
#[test]
fn numeric_settings_outside_their_range_are_refused_by_key() {
    let too_many = format!("reward.num_workers={}", max_reward_workers() + 1);
    let cases: Vec<(String, &str)> = [
        ("optim.eps=0", "optim.eps"),
        ("optim.eps=nan", "optim.eps"),
        ("optim.eps=-1e-8", "optim.eps"),
        ("optim.weight_decay=nan", "optim.weight_decay"),
        ("optim.weight_decay=inf", "optim.weight_decay"),
        ("optim.grad_clip=nan", "optim.grad_clip"),
        ("optim.beta2=nan", "optim.beta2"),
        ("optim.beta1=1.0", "optim.beta1"),
        ("algorithm.kl_loss_coef=nan", "algorithm.kl_loss_coef"),
        ("algorithm.kl_loss_coef=-1", "algorithm.kl_loss_coef"),
        ("algorithm.entropy_coeff=nan", "algorithm.entropy_coeff"),
        ("algorithm.entropy_coeff=inf", "algorithm.entropy_coeff"),
        (
            "algorithm.overlong_penalty_factor=nan",
            "algorithm.overlong_penalty_factor",
        ),
        ("testbed.hidden_size=0", "testbed.hidden_size"),
        ("testbed.intermediate_size=0", "testbed.intermediate_size"),
        ("testbed.num_hidden_layers=0", "testbed.num_hidden_layers"),
        (
            "testbed.num_attention_heads=0",
            "testbed.num_attention_heads",
        ),
        (
            "testbed.num_attention_heads=3",
            "testbed.num_attention_heads",
        ),
        (
            "testbed.max_position_embeddings=0",
            "testbed.max_position_embeddings",
        ),
        ("trainer.keep_checkpoints=0", "trainer.keep_checkpoints"),
        ("testbed.warm_start_lr=nan", "testbed.warm_start_lr"),
        (
            "testbed.warm_start_batch_size=0",
            "testbed.warm_start_batch_size",
        ),
        ("testbed.min_terms=5", "testbed.min_terms"),
        ("testbed.heldout_modulus=1", "testbed.heldout_modulus"),
        ("testbed.difficulty=1", "testbed.difficulty"),
        ("testbed.regime=verbose", "testbed.regime"),
        ("model.dtype=fp8", "model.dtype"),
        ("model.matmul_dtype=fp8", "model.matmul_dtype"),
        ("model.device=tpu", "model.device"),
        ("data.prompt_template=chatml", "data.prompt_template"),
        ("eval.temperature=0", "eval.temperature"),
        ("eval.top_p=nan", "eval.top_p"),
    ]
    .into_iter()
    .map(|(o, k)| (o.to_string(), k))
    .chain([(too_many, "reward.num_workers")])
    .collect();
    for (over, key) in cases {
        let err = TrainConfig::load(None, std::slice::from_ref(&over))
            .expect_err(&over)
            .to_string();
        assert!(err.contains(key), "{over}: {err}");
    }
    // the testbed model and task only together (each alone ignored the other)
    let err = TrainConfig::load(None, &["data.train_files=math500".into()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("model.path") && err.contains("testbed"),
        "{err}"
    );
    let err = TrainConfig::load(None, &["model.path=Qwen/Qwen2.5-0.5B".into()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("data.train_files") && err.contains("testbed"),
        "{err}"
    );
    // the edges that are allowed
    for ok in [
        "optim.weight_decay=0",
        "optim.grad_clip=0",
        "algorithm.entropy_coeff=-0.01",
        "reward.num_workers=0",
        "trainer.keep_checkpoints=1",
        "model.matmul_dtype=bf16",
    ] {
        TrainConfig::load(None, &[ok.to_string()]).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    let most = format!("reward.num_workers={}", max_reward_workers());
    TrainConfig::load(None, &[most]).unwrap();
}

#[test]
fn unknown_key_is_named_with_its_section() {
    let err = TrainConfig::from_toml_str("[algorithm]\nclip_ratio_hi = 0.3\n", "x.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("algorithm.clip_ratio_hi"), "{err}");
    assert!(err.contains("x.toml"), "{err}");
}

#[test]
fn wrong_type_is_named() {
    let err = TrainConfig::from_toml_str("[optim]\nlr = 1e-3\nbeta1 = \"high\"\n", "x.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("optim.beta1"), "{err}");
    let err = TrainConfig::from_toml_str("[algorithm]\nloss_agg_mode = \"tokens\"\n", "x")
        .unwrap_err()
        .to_string();
    assert!(err.contains("algorithm.loss_agg_mode"), "{err}");
}

#[test]
fn unknown_section_is_named() {
    let err = TrainConfig::from_toml_str("[optimizer]\nlr = 1\n", "x.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("[optimizer]"), "{err}");
}

#[test]
fn overrides_apply_and_are_checked() {
    let cfg = TrainConfig::load(
        None,
        &[
            "algorithm.loss_agg_mode=token-mean".into(),
            "optim.lr=1e-3".into(),
            "trainer.run_name=abc".into(),
            "eval.datasets=[\"testbed\", \"math500\"]".into(),
        ],
    )
    .unwrap();
    assert_eq!(cfg.algorithm.loss_agg_mode, AggRule::TokenMean);
    assert_eq!(cfg.optim.lr, 1e-3);
    assert_eq!(cfg.trainer.run_name, "abc");
    assert_eq!(cfg.eval.datasets.len(), 2);
    let err = TrainConfig::load(None, &["optim.learning_rate=1".into()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("optim.learning_rate"), "{err}");
    assert!(TrainConfig::load(None, &["lr=1".into()]).is_err());
}

#[test]
fn invalid_combination_is_named() {
    let err = TrainConfig::load(None, &["algorithm.ppo_mini_batch_size=5".into()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("algorithm.ppo_mini_batch_size"), "{err}");
}

#[test]
fn reward_kind_parses_and_unknown_is_named() {
    use rlvr_tasks::RewardKind;
    assert_eq!(TrainConfig::default().reward.kind, RewardKind::Auto);
    for name in RewardKind::NAMES {
        let cfg = TrainConfig::load(None, &[format!("reward.kind={name}")]).unwrap();
        assert_eq!(cfg.reward.kind.as_str(), name);
    }
    let err = TrainConfig::from_toml_str("[reward]\nkind = \"sandbox\"\n", "x.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("reward.kind") && err.contains("sandbox") && err.contains("code"),
        "{err}"
    );
    let err = TrainConfig::from_toml_str("[reward]\nkinds = \"code\"\n", "x.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("reward.kinds"), "{err}");
    let cfg = TrainConfig::load(
        None,
        &[
            "reward.code_mode=fraction".into(),
            "reward.num_workers=3".into(),
        ],
    )
    .unwrap();
    assert_eq!(rlvr_tasks::RewardFn::new(&cfg.reward).unwrap().workers(), 3);
    assert!(
        !rlvr_tasks::RewardFn::new(&cfg.reward)
            .unwrap()
            .sandbox()
            .allow_unsandboxed
    );
    let cfg = TrainConfig::load(None, &["reward.allow_unsandboxed=true".into()]).unwrap();
    assert!(
        rlvr_tasks::RewardFn::new(&cfg.reward)
            .unwrap()
            .sandbox()
            .allow_unsandboxed
    );
}

#[test]
fn round_trips_through_toml() {
    let cfg = TrainConfig::default();
    let back = TrainConfig::from_toml_str(&cfg.to_toml(), "round trip").unwrap();
    assert_eq!(cfg, back);
}

/// What a run trains is typed: the testbed when `model.path` and `data.train_files` are unset,
/// else that model on that data; `[testbed]` applies to the testbed run only.
#[test]
fn the_task_is_the_testbed_or_a_model_on_data() {
    let cfg = TrainConfig::default();
    assert_eq!(cfg.task(), RunTask::Testbed(&cfg.testbed));
    assert_eq!(cfg.model_name(), "testbed");
    assert_eq!(cfg.eval.datasets, vec![EvalSet::Testbed]);
    let model_run = [
        "model.path=Qwen/Qwen2.5-0.5B".to_string(),
        "data.train_files=math500".to_string(),
        "eval.datasets=[\"aime24\"]".to_string(),
    ];
    let cfg = TrainConfig::load(None, &model_run).unwrap();
    assert_eq!(
        cfg.task(),
        RunTask::Datasets {
            model: "Qwen/Qwen2.5-0.5B",
            train_files: "math500"
        }
    );
    assert_eq!(cfg.eval.datasets, vec![EvalSet::Dataset("aime24".into())]);
    // a changed [testbed] key on a model run would be ignored: refused, by name
    let mut with_testbed = model_run.to_vec();
    with_testbed.push("testbed.regime=control".into());
    let err = TrainConfig::load(None, &with_testbed)
        .unwrap_err()
        .to_string();
    assert!(err.contains("testbed.regime"), "{err}");
    // the default eval set is the testbed's held-out set: a model run names its own
    let err = TrainConfig::load(None, &model_run[..2])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("eval.datasets") && err.contains("testbed"),
        "{err}"
    );
    let mut no_eval = model_run[..2].to_vec();
    no_eval.push("eval.datasets=[]".into());
    assert!(TrainConfig::load(None, &no_eval)
        .unwrap()
        .eval
        .datasets
        .is_empty());
}

/// Every key that moved into `[testbed]`, in a file or an override, is refused with an error
/// naming its new key; so is the old `"testbed"` value of `model.path` / `data.train_files`.
#[test]
fn moved_keys_name_their_new_key() {
    assert!(TestbedSection::default().changed_keys().is_empty());
    let fresh = TrainConfig::default().to_toml();
    for &(old, new) in MOVED_KEYS {
        assert!(
            fresh.contains(&format!("\n{new} =")),
            "{new} is not a [testbed] key"
        );
        let (sec, key) = old.split_once('.').unwrap();
        let text = format!("[{sec}]\n{key} = 1\n");
        for err in [
            TrainConfig::from_toml_str(&text, "old.toml").unwrap_err(),
            TrainConfig::load(None, &[format!("{old}=1")]).unwrap_err(),
        ] {
            let err = err.to_string();
            assert!(
                err.contains(old) && err.contains(&format!("testbed.{new}")),
                "{old}: {err}"
            );
        }
    }
    for old in ["model.path=testbed", "data.train_files=testbed"] {
        let err = TrainConfig::load(None, &[old.into()])
            .unwrap_err()
            .to_string();
        let key = old.split('=').next().unwrap();
        assert!(err.contains(key) && err.contains("unset"), "{old}: {err}");
    }
}

/// A resumed testbed run cannot change its model's shape, problems or warm start: each such key
/// is named; an override of a key that applies passes.
#[test]
fn resume_refuses_the_testbed_keys_fixed_at_the_start() {
    let saved = TrainConfig::default();
    let toml::Value::Table(testbed) = toml::Value::try_from(&saved.testbed).unwrap() else {
        panic!()
    };
    // a changed value of every key of [testbed] that the section accepts (the next integer or
    // twice it, twice a float, another regime or path)
    let changed = |key: &str, v: &toml::Value| -> (String, TrainConfig) {
        let tries: Vec<String> = match v {
            toml::Value::Integer(i) => vec![(i + 1).to_string(), (i * 2).to_string()],
            toml::Value::Float(f) => vec![(f * 2.0).to_string()],
            toml::Value::String(_) if key == "regime" => vec!["\"control\"".into()],
            toml::Value::String(s) => vec![format!("\"{s}/other\"")],
            other => panic!(
                "testbed.{key}: a {} the test cannot change",
                other.type_str()
            ),
        };
        tries
            .iter()
            .map(|t| format!("testbed.{key}={t}"))
            .find_map(|o| Some((o.clone(), TrainConfig::load(None, &[o]).ok()?)))
            .unwrap_or_else(|| panic!("no valid change of testbed.{key} among {tries:?}"))
    };
    let mut refused = 0;
    for (key, v) in &testbed {
        let (over, new) = changed(key, v);
        if TestbedSection::CHANGEABLE_ON_RESUME.contains(&key.as_str()) {
            saved.check_resume_overrides(&new).unwrap();
            continue;
        }
        refused += 1;
        let err = saved.check_resume_overrides(&new).unwrap_err().to_string();
        let key = over.split('=').next().unwrap();
        assert!(
            err.contains(&format!("`{key}`")) && err.contains("--resume"),
            "{err}"
        );
    }
    assert_eq!(refused, testbed.len() - 1);
    let new = TrainConfig::load(None, &["optim.lr=0.01".into()]).unwrap();
    saved.check_resume_overrides(&new).unwrap();
}

/// The config a run saves (`TrainConfig::to_toml`) reads back through the schema the report
/// and the sweep read it with (`rlvr_core::run_dir::SavedConfig`), every field the same: a key
/// renamed on one side fails here.
#[test]
fn a_saved_config_reads_back_through_the_report_s_schema() {
    use rlvr_core::run_dir::SavedConfig;
    let testbed = TrainConfig::load(
        None,
        &[
            "algorithm.loss_agg_mode=token-mean".into(),
            "trainer.seed=7".into(),
            "trainer.total_training_steps=11".into(),
            "optim.lr=3e-5".into(),
            "testbed.regime=control".into(),
            "testbed.warm_start_steps=9".into(),
        ],
    )
    .unwrap();
    let saved: SavedConfig = toml::from_str(&testbed.to_toml()).unwrap();
    assert_eq!(saved.algorithm.loss_agg_mode.as_deref(), Some("token-mean"));
    assert_eq!(saved.trainer.seed, Some(7));
    assert_eq!(saved.trainer.total_training_steps, Some(11));
    assert_eq!(saved.optim.lr, Some(3e-5));
    assert_eq!(saved.condition(), "control");
    assert_eq!(saved.warm_start_steps(), Some(9));
    let data = TrainConfig::load(
        None,
        &[
            "model.path=Qwen/Qwen2.5-0.5B".into(),
            "data.train_files=gsm8k".into(),
            "eval.datasets=[]".into(),
        ],
    )
    .unwrap();
    let saved: SavedConfig = toml::from_str(&data.to_toml()).unwrap();
    assert_eq!(saved.condition(), "gsm8k");
    assert_eq!(saved.model.path.as_deref(), Some("Qwen/Qwen2.5-0.5B"));
    assert_eq!(saved.algorithm.loss_agg_mode.as_deref(), Some("balanced"));
}

/// Each section's type names its keys by the section's name in the file: the errors of its own
/// checks carry `section.key` built from the type, in the file's order of sections.
#[test]
fn every_section_names_its_keys_by_its_name_in_the_file() {
    assert_eq!(
        [
            ModelConfig::NAME,
            DataConfig::NAME,
            RolloutConfig::NAME,
            AlgorithmConfig::NAME,
            <RewardConfig as Section>::NAME,
            OptimConfig::NAME,
            TrainerConfig::NAME,
            EvalConfig::NAME,
            LoggingConfig::NAME,
            TestbedSection::NAME,
        ],
        SECTIONS
    );
    assert_eq!(Keys::<OptimConfig>::name("lr"), "optim.lr");
    let err = OptimConfig {
        beta2: 1.0,
        ..Default::default()
    }
    .validate()
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "config key `optim.beta2`: must be in [0, 1), got 1"
    );
    let err =
        Keys::<LoggingConfig>::finite_at_least("progress_interval_s", f64::NAN, 0.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "config key `logging.progress_interval_s`: must be a finite number >= 0, got NaN"
    );
    // the defaults pass every section's checks
    let d = TrainConfig::default();
    d.model.validate().unwrap();
    d.rollout.validate().unwrap();
    d.algorithm.validate().unwrap();
    d.optim.validate().unwrap();
    d.trainer.validate().unwrap();
    d.eval.validate().unwrap();
    d.logging.validate().unwrap();
    d.testbed.validate().unwrap();
}

/// bf16 products are the CPU's setting for f32 weights: with another device or bf16 weights
/// the error names the key and says what to set instead.
#[test]
fn bf16_products_need_the_cpu_and_f32_weights() {
    for (over, says) in [
        ("model.device=cuda", "on cuda set model.dtype = \"bf16\""),
        (
            "model.dtype=bf16",
            "take f32 weights (model.dtype = \"f32\", not \"bf16\")",
        ),
    ] {
        let err = TrainConfig::load(None, &["model.matmul_dtype=bf16".into(), over.into()])
            .expect_err(over)
            .to_string();
        assert!(
            err.contains("model.matmul_dtype") && err.contains(says),
            "{over}: {err}"
        );
    }
    let cfg = TrainConfig::load(None, &["model.matmul_dtype=bfloat16".into()]).unwrap();
    assert_eq!(
        cfg.model.matmul_dtype,
        rlvr_model::matmul::ProductDtype::Bf16
    );
}
