//! The testbed run through the library: a few steps with a short warm start (fast), and the
//! warm-start cache reused by a second run.

use rlvr_train::run::{train, TrainOptions};

#[test]
fn short_testbed_run_and_cached_warm_start() {
    let dir = tempfile::tempdir().unwrap();
    let opts = |name: &str| TrainOptions {
        overrides: vec![
            format!(
                "trainer.runs_dir={:?}",
                dir.path().join("runs").display().to_string()
            ),
            format!(
                "testbed.cache_dir={:?}",
                dir.path().join("cache").display().to_string()
            ),
            format!("trainer.run_name={name}"),
            "testbed.warm_start_steps=20".into(),
            "trainer.total_training_steps=2".into(),
            "trainer.train_batch_size=4".into(),
            "algorithm.ppo_mini_batch_size=4".into(),
            "testbed.difficulty=3".into(),
            "testbed.train_size=200".into(),
            "testbed.hidden_size=32".into(),
            "testbed.intermediate_size=64".into(),
            "testbed.num_hidden_layers=1".into(),
            "testbed.num_attention_heads=2".into(),
            "rollout.max_response_length=40".into(),
            "eval.n_problems=8".into(),
            "eval.k=2".into(),
        ],
        quiet: true,
        ..TrainOptions::default()
    };
    let first = train(&opts("a")).unwrap();
    assert_eq!(first.steps, 2);
    assert!(
        first.warm_start.as_deref().unwrap().contains("cached in"),
        "{:?}",
        first.warm_start
    );
    assert_eq!(first.before.len(), 1);
    assert_eq!(first.after.len(), 1);
    assert_eq!(first.after[0].n_problems, 8);
    let text = first.render();
    assert!(
        text.contains("held-out accuracy (testbed, 8 problems"),
        "{text}"
    );
    let second = train(&opts("b")).unwrap();
    assert!(
        second
            .warm_start
            .as_deref()
            .unwrap()
            .contains("loaded from the cache"),
        "{:?}",
        second.warm_start
    );
    // the same warm-started model: the same evaluation before training
    assert_eq!(first.before[0].mean_at_k, second.before[0].mean_at_k);
    let lines = rlvr_train::metrics::train_lines(&first.run_dir.join("metrics.jsonl")).unwrap();
    let train_line = &lines[0];
    for key in ["reward_mean", "grad_norm", "rollout_tokens_per_s"] {
        assert!(train_line.value(key).unwrap().is_finite(), "{key}");
    }
    assert_eq!(train_line.positive_share.len(), 7);
}
