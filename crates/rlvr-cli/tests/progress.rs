//! Progress inside a step, as a log file sees it: `rlvr train` with stderr a pipe prints no
//! bar and no terminal codes, only plain progress lines (the rollout's tokens, rate and
//! longest response; the micro-batches of the log-prob pass and of the update), at most one
//! per `logging.progress_interval_s` and none at all when the steps are shorter than that.

mod common;

use std::path::Path;

use common::{log, rlvr, TINY_TESTBED};

/// Runs the tiny testbed with `extra` settings; returns stderr.
fn train(dir: &Path, name: &str, extra: &[&str]) -> String {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/testbed.toml");
    let cache = format!("testbed.cache_dir={}", dir.join("cache").display());
    let runs = format!("trainer.runs_dir={}", dir.join("runs").display());
    let run_name = format!("trainer.run_name={name}");
    let mut args = vec!["train", "--config", config.to_str().unwrap()];
    for kv in TINY_TESTBED
        .into_iter()
        .chain([
            "testbed.warm_start_steps=20",
            "eval.before_train=false",
            "eval.test_freq=0",
            "logging.print_freq=1",
            cache.as_str(),
            runs.as_str(),
            run_name.as_str(),
        ])
        .chain(extra.iter().copied())
    {
        args.extend(["--set", kv]);
    }
    let o = rlvr(&args, dir);
    assert!(o.status.success(), "train failed:\n{}", log(&o));
    String::from_utf8(o.stderr).expect("stderr is UTF-8")
}

/// The numbers of a line after `prefix`, in order (`1,234` read as 1234).
fn numbers(line: &str) -> Vec<usize> {
    line.split(|c: char| !(c.is_ascii_digit() || c == ','))
        .filter_map(|w| w.replace(',', "").parse().ok())
        .collect()
}

#[test]
fn a_log_gets_plain_periodic_progress_lines() {
    let dir = tempfile::tempdir().unwrap();
    // two epochs of two mini-batches: a log-prob pass, and an update of several micro-batches
    let err = train(
        dir.path(),
        "every",
        &[
            "logging.progress_interval_s=0",
            "algorithm.ppo_epochs=2",
            "algorithm.ppo_mini_batch_size=2",
            "algorithm.ppo_micro_batch_size=4",
        ],
    );
    assert!(
        !err.contains('\u{1b}') && !err.contains('\r'),
        "terminal codes in a log:\n{err}"
    );
    for step in 1..=2 {
        let of = |phase: &str| -> Vec<Vec<usize>> {
            let prefix = format!("step {step} {phase}: ");
            err.lines()
                .filter_map(|l| l.strip_prefix(&prefix))
                .map(numbers)
                .collect()
        };
        // rollout: tokens (finished/responses done), tok/s, longest
        let rollout = of("rollout");
        assert!(rollout.len() > 2, "step {step}: {rollout:?}\n{err}");
        for w in rollout.windows(2) {
            assert!(w[1][0] >= w[0][0] && w[1][1] >= w[0][1] && w[1][4] >= w[0][4]);
        }
        let last = rollout.last().unwrap();
        assert_eq!(
            &last[1..3],
            &[16, 16],
            "step {step} ends with every response"
        );
        assert!(last[4] <= 48 && last[0] <= 16 * 48 && last[0] >= last[4]);
        // the log-probs of the old policy: 16 sequences in micro-batches of 4
        let lp = of("log-probs");
        assert_eq!(lp, (1..=4).map(|d| vec![d, 4]).collect::<Vec<_>>());
        // the update: every micro-batch of 2 epochs x 2 mini-batches, counted once, in order
        let up = of("update");
        let total = up[0][1];
        assert!(total >= 4, "{up:?}");
        for (i, u) in up.iter().enumerate() {
            assert_eq!((u[0], u[1]), (i + 1, total));
            assert_eq!(u[3], 4, "four mini-batches over both epochs");
        }
        assert_eq!(up.last().unwrap()[2], 4);
        // and the phases come in their order, before the step's summary line
        let at = |needle: String| err.find(&needle).expect(&needle);
        assert!(at(format!("step {step} rollout")) < at(format!("step {step} log-probs")));
        assert!(at(format!("step {step} log-probs")) < at(format!("step {step} update")));
        assert!(at(format!("step {step} update")) < at(format!("step {:>4}: reward", step)));
    }
}

#[test]
fn steps_shorter_than_the_interval_print_no_progress() {
    let dir = tempfile::tempdir().unwrap();
    let err = train(dir.path(), "default", &[]);
    assert!(!err.contains('\u{1b}') && !err.contains('\r'), "{err}");
    assert!(err.contains("step    2: reward"), "{err}");
    for phase in ["rollout:", "log-probs:", "update:"] {
        assert!(
            !err.contains(phase),
            "{phase} with the default 30 s:\n{err}"
        );
    }
}
