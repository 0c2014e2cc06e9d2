//! `rlvr diagnose` on verl's rollout dumps, TRL's logged completions and rlvr's own
//! `trainer.rollout_data_dir` files: the same rollouts give the same numbers as in rlvr's
//! `{group, reward, length}` layout.
//!
//! The dumps are written here in the layouts those frameworks' code writes (verl's
//! `RayPPOTrainer._dump_generations`: one `<step>.jsonl` per step with `input`, `output`,
//! `gts`, `score`, `step` and the reward function's extra fields; TRL's `GRPOTrainer` with
//! `log_completions`: the wandb `completions` table with `step`, `prompt`, `completion`, one
//! column per reward function and `advantage`) by this test; files made by the frameworks
//! themselves are checked in diagnose_fixtures.rs.

#[allow(dead_code)] // TINY_TESTBED and the model builders are for the other CLI tests
mod common;
use common::{rlvr_here as rlvr, tokenizer_dir};

use std::path::Path;

use serde_json::{json, Value};

/// Three prompts, four responses each (consecutive, as both frameworks lay them out).
fn rollouts() -> Vec<(String, String, f64)> {
    let prompts = ["What is 2+2?", "What is 3*3?", "Name a prime above 10."];
    let answers = [
        [
            "4",
            "The sum is 4. \\boxed{4}",
            "5",
            "Let me think step by step: 2 plus 2 makes 5.",
        ],
        [
            "9",
            "3 times 3 is 9",
            "It is 6 because 3+3",
            "Nine, since 3*3 = 9 and I double-checked it",
        ],
        [
            "11",
            "13",
            "12 is prime",
            "Seventeen is a prime number larger than ten",
        ],
    ];
    let right = [
        [1.0, 1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0, 1.0],
        [1.0, 1.0, 0.0, 1.0],
    ];
    let mut out = Vec::new();
    for (p, (ans, r)) in prompts.iter().zip(answers.iter().zip(right)) {
        for (a, &s) in ans.iter().zip(&r) {
            out.push((p.to_string(), a.to_string(), s));
        }
    }
    out
}

fn diagnose_json(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["diagnose", path.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let out = rlvr(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The numbers of a report without the group labels (which differ between layouts) and the note
/// on where the lengths came from (checked on its own).
fn numbers(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("lengths");
    for s in v["sequences"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("group");
    }
    for g in v["groups"].as_array_mut().unwrap() {
        g.as_object_mut().unwrap().remove("group");
    }
    v
}

/// TRL's advantage: (r - mean) / (std + 1e-4) over the group, std unbiased (torch.std).
fn trl_advantages(rewards: &[f64]) -> Vec<f64> {
    rewards
        .chunks(4)
        .flat_map(|g| {
            let m = g.iter().sum::<f64>() / 4.0;
            let sd = (g.iter().map(|r| (r - m).powi(2)).sum::<f64>() / 3.0).sqrt();
            g.iter()
                .map(move |r| (r - m) / (sd + 1e-4))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn verl_trl_and_rlvr_dumps_give_the_numbers_of_the_rlvr_layout() {
    let dir = tempfile::tempdir().unwrap();
    let tok = rlvr_model::ChatTokenizer::from_dir(&tokenizer_dir()).unwrap();
    let rs = rollouts();
    let lengths: Vec<usize> = rs
        .iter()
        .map(|(_, o, _)| tok.encode(o, false).unwrap().len())
        .collect();
    let tok_arg = tokenizer_dir().display().to_string();
    let with_tok = ["--tokenizer", tok_arg.as_str()];

    // rlvr's layout, estimator advantages
    let rlvr_file = dir.path().join("rlvr.jsonl");
    let mut text = String::new();
    for (i, ((_, _, s), len)) in rs.iter().zip(&lengths).enumerate() {
        text += &format!("{}\n", json!({"group": i / 4, "reward": s, "length": len}));
    }
    std::fs::write(&rlvr_file, text).unwrap();
    let reference = numbers(diagnose_json(&rlvr_file, &[]));

    // verl: <dir>/1.jsonl, no uid, no length: groups from consecutive inputs, lengths from text
    let verl_dir = dir.path().join("verl");
    std::fs::create_dir_all(&verl_dir).unwrap();
    let mut text = String::new();
    for (p, o, s) in &rs {
        let line = json!({"input": p, "output": o, "gts": "x", "score": s, "step": 1,
                          "acc": *s > 0.5, "pred": o});
        text += &format!("{line}\n");
    }
    std::fs::write(verl_dir.join("1.jsonl"), text).unwrap();
    let verl = diagnose_json(&verl_dir, &with_tok);
    assert_eq!(numbers(verl.clone()), reference);
    assert_eq!(verl["sequences"][4]["group"], "1/1");
    assert_eq!(verl["lengths"]["re_counted"], 12, "{}", verl["lengths"]);
    assert_eq!(verl["lengths"]["tokenizer"], tok_arg.as_str());
    // without a tokenizer: a clear error
    let out = rlvr(&["diagnose", verl_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1.jsonl:1") && err.contains("--tokenizer"),
        "{err}"
    );

    // verl's v1 trainer: one key per response, `{uid}_{session}_{index}` with the prompt's
    // UUID4 uid (verl/trainer/ppo/v1/agent_loop_tq.py): grouped by the uid, not per response
    let v1_dir = dir.path().join("verl-v1");
    std::fs::create_dir_all(&v1_dir).unwrap();
    let uids = [
        "0b7f1c2e-3d4a-4f5b-8c6d-7e8f9a0b1c2d",
        "9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d",
        "d1e2f3a4-b5c6-4d7e-8f9a-0b1c2d3e4f5a",
    ];
    let mut text = String::new();
    for (i, (p, o, s)) in rs.iter().enumerate() {
        let key = format!("{}_0_{}", uids[i / 4], i % 4);
        let line = json!({"input": p, "output": o, "gts": "x", "score": s, "step": 1, "uid": key});
        text += &format!("{line}\n");
    }
    std::fs::write(v1_dir.join("1.jsonl"), text).unwrap();
    let v1 = diagnose_json(&v1_dir, &with_tok);
    assert_eq!(
        v1["groups"].as_array().unwrap().len(),
        3,
        "{}",
        v1["groups"]
    );
    assert_eq!(numbers(v1), reference);

    // TRL: the wandb completions table, conversational prompts, its own advantages
    let rewards: Vec<f64> = rs.iter().map(|r| r.2).collect();
    let adv = trl_advantages(&rewards);
    let data: Vec<Value> = rs
        .iter()
        .zip(&adv)
        .map(|((p, o, s), a)| json!(["1", [{"role": "user", "content": p}], o, s, a]))
        .collect();
    let table = json!({"columns": ["step", "prompt", "completion", "accuracy_reward", "advantage"],
                       "data": data});
    let trl_file = dir.path().join("completions.table.json");
    std::fs::write(&trl_file, table.to_string()).unwrap();
    let trl = numbers(diagnose_json(&trl_file, &with_tok));
    let mut text = String::new();
    for (i, ((_, _, s), (len, a))) in rs.iter().zip(lengths.iter().zip(&adv)).enumerate() {
        text += &format!(
            "{}\n",
            json!({"group": i / 4, "reward": s, "length": len, "advantage": a})
        );
    }
    let rlvr_adv = dir.path().join("rlvr-adv.jsonl");
    std::fs::write(&rlvr_adv, text).unwrap();
    assert_eq!(trl, numbers(diagnose_json(&rlvr_adv, &[])));

    // rlvr's own dump (trainer.rollout_data_dir): uid and length, no tokenizer needed
    let mut text = String::new();
    for (i, ((p, o, s), len)) in rs.iter().zip(&lengths).enumerate() {
        let line = json!({"input": p, "output": o, "score": s, "step": 3,
                          "uid": format!("3-{}-p{}", i / 4, i / 4), "advantage": null,
                          "length": len, "acc": *s > 0.5});
        text += &format!("{line}\n");
    }
    let own = dir.path().join("3.jsonl");
    std::fs::write(&own, text).unwrap();
    let own = diagnose_json(&own, &[]);
    assert_eq!(own["lengths"]["from_field"], 12, "{}", own["lengths"]);
    assert_eq!(own["lengths"]["re_counted"], 0);
    assert_eq!(numbers(own), reference);
}
