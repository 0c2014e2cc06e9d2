//! The study's regimes (configs/regimes.toml, docs/regimes.md) on short runs: after a warm
//! start, the live batches of each regime have the pos-neg length gap and the length variation
//! the regime is built for. A small model (hidden 64, two layers) keeps each run near a minute.

use rlvr_train::run::{train, TrainOptions};

/// Mean of `pos_neg_gap_rel` and of `response_length_cv` over the train lines of a short run
/// of `regime`.
fn live_stats(regime: &str) -> (f64, f64) {
    live_stats_with(regime, &[])
}

/// [`live_stats`] with `extra` overrides.
fn live_stats_with(regime: &str, extra: &[&str]) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let config =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/regimes.toml");
    let opts = TrainOptions {
        config: Some(config),
        overrides: vec![
            format!("testbed.regime={regime}"),
            format!(
                "trainer.runs_dir={:?}",
                dir.path().join("runs").display().to_string()
            ),
            format!(
                "testbed.cache_dir={:?}",
                dir.path().join("cache").display().to_string()
            ),
            "testbed.hidden_size=64".into(),
            "testbed.num_hidden_layers=2".into(),
            "testbed.intermediate_size=192".into(),
            "testbed.warm_start_steps=400".into(),
            "testbed.warm_start_lr=5e-3".into(),
            "trainer.total_training_steps=2".into(),
            "trainer.train_batch_size=32".into(),
            "algorithm.ppo_mini_batch_size=32".into(),
            "eval.before_train=false".into(),
            "eval.datasets=[]".into(),
        ]
        .into_iter()
        .chain(extra.iter().map(|s| s.to_string()))
        .collect(),
        quiet: true,
        ..TrainOptions::default()
    };
    let out = train(&opts).unwrap();
    let train_lines = rlvr_train::metrics::train_lines(&out.run_dir.join("metrics.jsonl")).unwrap();
    assert_eq!(train_lines.len(), 2);
    let mean = |key: &str| {
        let v: Vec<f64> = train_lines
            .iter()
            .filter_map(|l| l.value(key))
            .filter(|x| x.is_finite())
            .collect();
        assert_eq!(v.len(), 2, "{key} missing: {train_lines:?}");
        v.iter().sum::<f64>() / 2.0
    };
    let (gap, cv) = (mean("pos_neg_gap_rel"), mean("response_length_cv"));
    eprintln!("{regime}: pos_neg_gap_rel {gap:.3}, length CV {cv:.3}");
    (gap, cv)
}

#[test]
fn wrong_long_has_longer_wrong_answers() {
    let (gap, cv) = live_stats("wrong-long");
    assert!(gap < -0.08, "{gap}");
    assert!(cv > 0.2, "{cv}");
}

#[test]
fn right_long_has_longer_right_answers() {
    let (gap, cv) = live_stats("right-long");
    assert!(gap > 0.12, "{gap}");
    assert!(cv > 0.2, "{cv}");
}

#[test]
fn right_long_abort_has_longer_right_answers() {
    let (gap, cv) = live_stats("right-long-abort");
    assert!(gap > 0.12, "{gap}");
    assert!(cv > 0.1, "{cv}");
}

/// The gap is a mean over the groups that have both right and wrong answers, and lengths
/// here are bimodal (concise about 34 tokens, verbose about 72), so on the other regimes' 32
/// prompts its standard error is about 0.05: at that size a run measured -0.126 and the next
/// build's -0.078, with the verbose and concise solutions right equally often. 128 prompts
/// (1,024 responses a step) bring it to about 0.02; measured there: -0.045. The small model
/// slips a little more often in its longer (verbose) solutions, so the bound is 0.08, far from
/// `wrong-long`'s -0.2 at a quarter of the responses.
#[test]
fn high_variation_has_no_gap_and_varied_lengths() {
    let (gap, cv) = live_stats_with(
        "high-variation",
        &[
            "trainer.train_batch_size=128",
            "algorithm.ppo_mini_batch_size=128",
        ],
    );
    assert!(gap.abs() < 0.08, "{gap}");
    assert!(cv > 0.25, "{cv}");
}

#[test]
fn control_has_no_gap_and_even_lengths() {
    let (gap, cv) = live_stats("control");
    assert!(gap.abs() < 0.06, "{gap}");
    assert!(cv < 0.15, "{cv}");
}

/// The checker's verdicts are the environment's: a failed step is done again, so an answer
/// goes wrong only by running out of tokens, and the wrong answers are the longest. The small
/// model needs a longer warm start to copy a step when it does it again, and a limit of 64
/// tokens leaves it room for two or three retries (a clean solution is about 36).
#[test]
fn verified_retry_has_longer_wrong_answers() {
    let (gap, cv) = live_stats_with(
        "verified-retry",
        &[
            "rollout.max_response_length=64",
            "testbed.warm_start_steps=1000",
        ],
    );
    assert!(gap < -0.15, "{gap}");
    assert!(cv > 0.1, "{cv}");
}

/// The environment ends a response at its first failed step, so wrong answers are cut short.
#[test]
fn verified_abort_has_longer_right_answers() {
    let (gap, cv) = live_stats("verified-abort");
    assert!(gap > 0.12, "{gap}");
    assert!(cv > 0.1, "{cv}");
}
