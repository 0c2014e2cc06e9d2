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
                "trainer.cache_dir={:?}",
                dir.path().join("cache").display().to_string()
            ),
            format!("trainer.run_name={name}"),
            "trainer.warm_start_steps=20".into(),
            "trainer.total_training_steps=2".into(),
            "trainer.train_batch_size=4".into(),
            "algorithm.ppo_mini_batch_size=4".into(),
            "data.testbed_difficulty=3".into(),
            "data.testbed_train_size=200".into(),
            "model.hidden_size=32".into(),
            "model.intermediate_size=64".into(),
            "model.num_hidden_layers=1".into(),
            "model.num_attention_heads=2".into(),
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
    let lines = rlvr_train::metrics::read_lines(&first.run_dir.join("metrics.jsonl")).unwrap();
    let train_line = lines.iter().find(|v| v["kind"] == "train").unwrap();
    for key in [
        "reward_mean",
        "positive_share",
        "pos_neg_gap",
        "grad_norm",
        "rollout_tokens_per_s",
    ] {
        assert!(train_line.get(key).is_some(), "{key}");
    }
    assert_eq!(train_line["positive_share"].as_object().unwrap().len(), 7);
}

/// Timing probe for the default run's phases (not a test: run it by hand with --ignored).
#[test]
#[ignore = "manual timing probe"]
fn timing_probe() {
    let steps: usize = std::env::var("PROBE_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let ws: usize = std::env::var("PROBE_WS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let mut o = vec![
        format!(
            "trainer.runs_dir={:?}",
            dir.path().join("runs").display().to_string()
        ),
        format!(
            "trainer.cache_dir={:?}",
            dir.path().join("cache").display().to_string()
        ),
        format!("trainer.warm_start_steps={ws}"),
        format!("trainer.total_training_steps={steps}"),
        "logging.print_freq=1".into(),
    ];
    if let Ok(extra) = std::env::var("PROBE_SET") {
        o.extend(extra.split_whitespace().map(String::from));
    }
    let s = train(&TrainOptions {
        overrides: o,
        ..TrainOptions::default()
    })
    .unwrap();
    println!("{}", s.render());
}

/// Cost probe of the warm start's pieces (manual).
#[test]
#[ignore = "manual timing probe"]
fn cost_probe() {
    use std::time::Instant;
    let cfg = rlvr_train::TrainConfig::default();
    let t = Instant::now();
    let tcfg = rlvr_train::testbed::task_config(&cfg).unwrap();
    let tok = rlvr_train::testbed::tokenizer(&tcfg).unwrap();
    println!(
        "tokenizer {:.2}s, vocab {}",
        t.elapsed().as_secs_f64(),
        tok.tokenizer.get_vocab_size(true)
    );
    let mc = rlvr_train::testbed::model_config(&cfg, &tok);
    let (model, varmap) =
        rlvr_model::init_random(&mc, 0, candle_core::DType::F32, &candle_core::Device::Cpu)
            .unwrap();
    let params = rlvr_train::optim::Params::from_varmap(&varmap);
    println!("params {}", params.numel());
    let t = Instant::now();
    let probs = rlvr_tasks::testbed::problems(&tcfg, rlvr_tasks::testbed::Split::Train, 64);
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(0);
    let pairs: Vec<(Vec<u32>, Vec<u32>)> = probs
        .iter()
        .map(|p| {
            let terms = rlvr_tasks::testbed::parse_prompt(p.prompt.text()).unwrap();
            let (s, _) = rlvr_tasks::testbed::worked_solution(&tcfg, &terms, &mut rng);
            (
                tok.encode(p.prompt.text(), false).unwrap(),
                tok.encode(&s, false).unwrap(),
            )
        })
        .collect();
    println!(
        "examples {:.3}s; mean solution tokens {:.1}",
        t.elapsed().as_secs_f64(),
        pairs.iter().map(|p| p.1.len()).sum::<usize>() as f64 / pairs.len() as f64
    );
    for bs in [32usize, 64] {
        let batch =
            rlvr_model::TokenBatch::new(&pairs[..bs], 1, &candle_core::Device::Cpu).unwrap();
        for _ in 0..3 {
            let t = Instant::now();
            let lp = model.response_logprobs(&batch, false).unwrap().logprobs;
            let f = t.elapsed().as_secs_f64();
            let loss = lp.sum_all().unwrap();
            let g = loss.backward().unwrap();
            let b = t.elapsed().as_secs_f64() - f;
            let _ = g;
            println!("batch {bs}: forward {f:.3}s backward {b:.3}s");
        }
    }
    let t = Instant::now();
    let prompts: Vec<Vec<u32>> = pairs[..16].iter().map(|p| p.0.clone()).collect();
    let gens = rlvr_model::generate(
        &model,
        None,
        &prompts,
        &rlvr_model::SamplingParams {
            n: 8,
            max_new_tokens: 96,
            eos_token_ids: tok.eos_token_ids.clone(),
            ..Default::default()
        },
    )
    .unwrap();
    println!(
        "generate 16x8: {:.3}s, {} tokens",
        t.elapsed().as_secs_f64(),
        gens.iter().map(|g| g.tokens.len()).sum::<usize>()
    );
}
