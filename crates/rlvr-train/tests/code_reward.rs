//! Code rewards through the path `rlvr train` uses: `run::setup` builds the task and its
//! reward function from the config, and `Trainer::reward` (phase 3) scores hand-made rollouts
//! of a tiny code dataset in the sandbox: a correct program scores 1, a wrong one 0. The same
//! with the real `leetcode` preset's reference solutions when the data directory exists (skips
//! with a reason otherwise; fails under `CI=true`). Also the evaluation scoring path
//! (`eval::score_responses` + `eval::summarize`) on known-correct and known-wrong completions.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use rlvr_model::{init_random, save_model, ChatTokenizer, DecoderConfig, FinishReason, Generation};
use rlvr_tasks::code::SandboxConfig;
use rlvr_train::eval::{score_responses, summarize, Response};
use rlvr_train::grpo::{Rollouts, Start, Trainer};
use rlvr_train::run::{setup, Ui};
use rlvr_train::setup::{reward_fn, sandbox_memory_notice, unsandboxed_notice};
use rlvr_train::task::Task;
use rlvr_train::TrainConfig;

fn have_python() -> bool {
    rlvr_test_support::python(&SandboxConfig::default().python).is_some()
}

/// Saves a random tiny model whose tokenizer covers every character of `texts`.
fn save_char_model(dir: &Path, texts: &[&str]) {
    let chars: BTreeSet<char> = texts.iter().flat_map(|t| t.chars()).collect();
    let tok = ChatTokenizer::new(
        common::char_tokenizer_over(&chars.iter().copied().collect::<Vec<_>>()),
        Some("<eos>"),
    )
    .unwrap();
    let mut cfg = DecoderConfig::tiny(chars.len() + 1);
    cfg.hidden_size = 16;
    cfg.intermediate_size = 32;
    cfg.num_hidden_layers = 1;
    cfg.num_attention_heads = 2;
    cfg.num_key_value_heads = 1;
    cfg.head_dim = 8;
    // room for the longest LeetCode prompt (about 3.6k characters, one token each)
    cfg.max_position_embeddings = 8192;
    cfg.eos_token_ids = vec![chars.len() as u32];
    let (_model, varmap) = init_random(&cfg, 1, DType::F32, &Device::Cpu).unwrap();
    save_model(dir, &varmap, &cfg, &tok).unwrap();
}

const SUM_RIGHT: &str = "```python\na, b = map(int, input().split())\nprint(a + b)\n```";
/// Right on the first test (1 2 -> 3), wrong on the second (5 7 -> 35).
const SUM_HALF: &str =
    "```python\na, b = map(int, input().split())\nprint(a * b if a == 5 else a + b)\n```";
const DOUBLE_RIGHT: &str = "Easy.\n```python\ndef double(x):\n    return 2 * x\n```\n";
const DOUBLE_WRONG: &str = "```python\ndef double(x):\n    return x + 2\n```";

/// A code jsonl in the layout of the code presets: a stdin/stdout problem and a functional one.
fn write_code_jsonl(path: &Path) {
    let rows = [
        serde_json::json!({
            "id": "sum", "problem": "Read a and b; print a+b.",
            "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "5 7\n", "output": "12\n"}]
        }),
        serde_json::json!({
            "id": "double", "problem": "Write double(x).",
            "tests": {"functional": "def check(f):\n    assert f(2) == 4\n    assert f(-1) == -2\ncheck(double)\n"}
        }),
    ];
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    model: PathBuf,
    data: PathBuf,
}

fn fixture(extra_texts: &[&str]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let model = root.join("model");
    let data = root.join("code.jsonl");
    write_code_jsonl(&data);
    let corpus = std::fs::read_to_string(&data).unwrap();
    let mut texts = vec![
        corpus.as_str(),
        SUM_RIGHT,
        SUM_HALF,
        DOUBLE_RIGHT,
        DOUBLE_WRONG,
    ];
    texts.extend_from_slice(extra_texts);
    save_char_model(&model, &texts);
    Fixture {
        _dir: dir,
        root,
        model,
        data,
    }
}

fn config(f: &Fixture, train_files: &str, extra: &[&str]) -> TrainConfig {
    let mut o: Vec<String> = vec![
        format!("model.path={:?}", f.model.display().to_string()),
        format!("data.train_files={train_files:?}"),
        "data.prompt_template=raw".into(),
        "data.max_prompt_length=0".into(),
        format!(
            "trainer.runs_dir={:?}",
            f.root.join("runs").display().to_string()
        ),
        "trainer.train_batch_size=2".into(),
        "rollout.num_generations=2".into(),
        "algorithm.ppo_mini_batch_size=2".into(),
        "eval.datasets=[]".into(),
        "logging.progress=false".into(),
    ];
    o.extend(extra.iter().map(|s| s.to_string()));
    TrainConfig::load(None, &o).unwrap()
}

/// The trainer of `rlvr train` on `cfg` (setup, then `Trainer::new`).
fn trainer(cfg: &TrainConfig, data_dir: Option<&Path>) -> Trainer {
    let s = setup(cfg, data_dir, None, &Ui::new(true, false, 0.0)).unwrap();
    Trainer::new(cfg.clone(), s.policy, s.train, Start::Fresh, None).unwrap()
}

/// Rollouts whose responses are `texts[g]` for problem `problems[g]`, encoded with the
/// policy's tokenizer (and checked to decode back to the same text).
fn rollouts(t: &Trainer, problems: Vec<usize>, texts: &[Vec<&str>]) -> Rollouts {
    let groups: Vec<Vec<Generation>> = texts
        .iter()
        .enumerate()
        .map(|(g, group)| {
            group
                .iter()
                .map(|text| {
                    let tokens = t.policy.tokenizer.encode(text, false).unwrap();
                    assert_eq!(t.policy.decode(&tokens).unwrap(), *text, "round trip");
                    Generation {
                        prompt_index: g,
                        logprobs: vec![0.0; tokens.len()],
                        tokens,
                        truncated: false,
                        finish_reason: FinishReason::Eos,
                        inserted: Vec::new(),
                    }
                })
                .collect()
        })
        .collect();
    let tokens = groups.iter().flatten().map(|g| g.tokens.len()).sum();
    Rollouts {
        problems,
        groups,
        tokens,
        secs: 0.0,
    }
}

#[test]
fn trainer_rewards_on_a_code_dataset_come_from_the_sandbox() {
    if !have_python() {
        return;
    }
    let f = fixture(&[]);
    let data = f.data.display().to_string();
    let t = trainer(&config(&f, &data, &[]), None);
    let ids: Vec<&str> = t.task.problems.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["sum", "double"]);
    let r = rollouts(
        &t,
        vec![0, 1, 0],
        &[
            vec![SUM_RIGHT, SUM_HALF],
            vec![DOUBLE_WRONG, DOUBLE_RIGHT],
            vec!["no code at all", SUM_RIGHT],
        ],
    );
    let w = t.reward(&r).unwrap();
    assert_eq!(w.reward, [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]);
    assert_eq!(w.correct, [[true, false], [false, true], [false, true]]);

    // reward.code_mode = fraction: the half-right program earns 1/2, and is still not correct
    let t = trainer(&config(&f, &data, &["reward.code_mode=fraction"]), None);
    let w = t
        .reward(&rollouts(&t, vec![0], &[vec![SUM_RIGHT, SUM_HALF]]))
        .unwrap();
    assert_eq!(w.reward, [[1.0, 0.5]]);
    assert_eq!(w.correct, [[true, false]]);

    // the same rewards with one scoring thread
    let t = trainer(&config(&f, &data, &["reward.num_workers=1"]), None);
    let w = t
        .reward(&rollouts(&t, vec![1], &[vec![DOUBLE_RIGHT, DOUBLE_WRONG]]))
        .unwrap();
    assert_eq!(w.reward, [[1.0, 0.0]]);
}

#[test]
fn code_data_the_scorer_cannot_score_is_an_error_naming_the_problem() {
    if !have_python() {
        return;
    }
    let f = fixture(&[]);
    let data = f.data.display().to_string();
    let ui = Ui::new(true, false, 0.0);
    // the math checker would give every response 0: refused, naming the problem
    let cfg = config(&f, &data, &["reward.kind=math"]);
    let err = setup(&cfg, None, None, &ui).err().unwrap().to_string();
    assert!(
        err.contains("problem sum") && err.contains("code tests"),
        "{err}"
    );
    // a code problem without tests
    let empty = f.root.join("empty.jsonl");
    std::fs::write(
        &empty,
        "{\"id\": \"e1\", \"problem\": \"p\", \"tests\": [], \"data_source\": \"codeforces\"}\n",
    )
    .unwrap();
    let cfg = config(&f, &empty.display().to_string(), &[]);
    let err = setup(&cfg, None, None, &ui).err().unwrap().to_string();
    assert!(
        err.contains("problem e1") && err.contains("without tests"),
        "{err}"
    );
}

/// The trainer's reward phase on the real `leetcode` preset: reference solutions 1, a wrong
/// program 0.
#[test]
fn trainer_rewards_leetcode_reference_solutions() {
    let Some(dir) =
        rlvr_test_support::or_skip(rlvr_tasks::resolve_data_dir(None), "no data directory")
    else {
        return;
    };
    if !have_python() {
        return;
    }
    let ds = rlvr_tasks::load_preset("leetcode", &dir).unwrap();
    let n = 4;
    let right: Vec<String> = ds.problems[..n]
        .iter()
        .map(|p| format!("```python\n{}\n```", p.solution.as_deref().unwrap()))
        .collect();
    let wrong = "```python\nclass Solution:\n    pass\n```";
    let mut texts: Vec<&str> = right.iter().map(String::as_str).collect();
    texts.push(wrong);
    let f = fixture(&texts);
    let t = trainer(&config(&f, "leetcode", &[]), Some(&dir));
    assert_eq!(t.task.len(), ds.len());
    let groups: Vec<Vec<&str>> = right.iter().map(|r| vec![r.as_str(), wrong]).collect();
    let w = t.reward(&rollouts(&t, (0..n).collect(), &groups)).unwrap();
    assert_eq!(w.reward, vec![vec![1.0, 0.0]; n]);
}

/// The evaluation scoring path on known completions: verdicts from the sandbox, mean@k and
/// pass@k by hand.
#[test]
fn eval_scoring_of_known_completions() {
    if !have_python() {
        return;
    }
    let f = fixture(&[]);
    let ds = rlvr_train::setup::load_dataset(&f.data.display().to_string(), None).unwrap();
    let cfg = TrainConfig::default();
    let task = Task {
        environment: None,
        name: "code".into(),
        verifier: reward_fn(&cfg.reward, &ds.problems).unwrap(),
        prompts: vec![vec![0]; ds.len()],
        problems: ds.problems,
    };
    let resp = |problem: usize, text: &str| Response {
        problem,
        text: text.to_string(),
        tokens: text.len(),
        truncated: false,
    };
    // k = 3: sum right once of 3, double right 0 of 3
    let samples = score_responses(
        &task,
        vec![
            resp(0, SUM_HALF),
            resp(0, SUM_RIGHT),
            resp(0, "print(3)"),
            resp(1, DOUBLE_WRONG),
            resp(1, SUM_RIGHT),
            resp(1, ""),
        ],
    )
    .unwrap();
    let verdicts: Vec<(bool, &str)> = samples
        .iter()
        .map(|s| (s.correct, s.reason.as_str()))
        .collect();
    assert_eq!(
        verdicts,
        [
            (false, "1/2 tests passed; test 1: wrong output"),
            (true, "2/2 tests passed"),
            (false, "no code block found"),
            (false, verdicts[3].1),
            (false, verdicts[4].1),
            (false, "no code block found"),
        ]
    );
    assert!(
        verdicts[3].1.starts_with("0/1 tests passed; exit code 1"),
        "{verdicts:?}"
    );
    assert!(samples.iter().all(|s| s.scorer.as_deref() == Some("code")));
    let r = summarize(&task, 3, samples, 0.0).unwrap();
    assert_eq!(r.correct, [1, 0]);
    assert!((r.mean_at_k - 1.0 / 6.0).abs() < 1e-12, "{}", r.mean_at_k);
    assert!((r.pass_at_k - 0.5).abs() < 1e-12, "{}", r.pass_at_k);
    // samples not k per problem are refused
    assert!(summarize(&task, 4, r.samples.clone(), 0.0).is_err());
}

/// `reward.allow_unsandboxed = true` reaches the sandbox, and the run log says so when code
/// rewards use it (a warning where programs then run without isolation).
#[test]
fn allow_unsandboxed_reaches_the_sandbox_and_the_run_log() {
    let f = fixture(&[]);
    let data = f.data.display().to_string();
    let cfg = config(&f, &data, &[]);
    assert!(!cfg.reward.allow_unsandboxed);
    assert!(
        !rlvr_tasks::RewardFn::new(&cfg.reward)
            .unwrap()
            .sandbox()
            .allow_unsandboxed
    );
    assert_eq!(unsandboxed_notice(&cfg.reward, 2), None);
    let cfg = config(&f, &data, &["reward.allow_unsandboxed=true"]);
    assert!(
        rlvr_tasks::RewardFn::new(&cfg.reward)
            .unwrap()
            .sandbox()
            .allow_unsandboxed
    );
    // no code problem: the sandbox is not used, nothing to say
    assert_eq!(unsandboxed_notice(&cfg.reward, 0), None);
    let line = unsandboxed_notice(&cfg.reward, 2).unwrap();
    if rlvr_tasks::code::isolation_available() {
        assert!(line.contains("unused"), "{line}");
    } else {
        assert!(line.contains("WITHOUT isolation"), "{line}");
    }
}

/// The run log says how the sandbox bounds a program's memory here: the cgroup's directory
/// and the run's bound (577 MiB with the default limits), or why there is no cgroup and the
/// per-process limit.
#[test]
fn the_run_log_says_how_the_sandbox_bounds_memory() {
    let cfg = rlvr_tasks::RewardConfig::default();
    let line = sandbox_memory_notice(&cfg);
    match rlvr_tasks::code::memory_cgroup() {
        Ok(dir) => {
            assert!(line.contains(&dir.display().to_string()), "{line}");
            assert!(line.contains("577 MiB for all its processes"), "{line}");
        }
        Err(why) => {
            assert!(line.contains(&why), "{line}");
            assert!(
                line.contains("512 MiB of address space per process"),
                "{line}"
            );
        }
    }
}
