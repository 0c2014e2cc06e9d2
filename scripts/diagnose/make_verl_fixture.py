#!/usr/bin/env python3
"""Makes crates/rlvr-cli/tests/fixtures/diagnose/verl/: a rollout dump written by verl's own
code (`trainer.rollout_data_dir`), plus the same rollouts in rlvr's layout, for
crates/rlvr-cli/tests/diagnose_fixtures.rs.

verl's PPO loop (verl/trainer/ppo/ray_trainer.py, `RayPPOTrainer.fit`) after generation:
repeats each prompt `rollout.n` times (interleaved) with a fresh `uid` per prompt, reorders the
batch with `_balance_batch` when `trainer.balance_batch` is on (the default: it sorts the rows
by sequence length across data-parallel ranks, so one prompt's responses are no longer
consecutive), scores it, and with `trainer.rollout_data_dir` set calls
`_log_rollout_data(batch, reward_extra_infos_dict, ...)`, which decodes `prompts` and
`responses` without special tokens and writes `<dir>/<global_steps>.jsonl` (fields input,
output, gts, score, step and the reward function's extra fields; no uid, no length).

This script builds that batch as a `verl.DataProto` (no Ray, no model: the responses are
chosen texts, tokenized with the tiny qwen2 fixture's tokenizer; some end with the
end-of-sequence token, some are cut at the response length), and calls the real
`RayPPOTrainer._balance_batch` (2 data-parallel ranks) and `RayPPOTrainer._log_rollout_data`
on a trainer object made without `__init__` (only the attributes those two methods read), for
global steps 1 and 2. It also computes verl's GRPO advantages
(`core_algos.compute_grpo_outcome_advantage`, grouped by uid) for comparison.

Written: verl/rollouts/{1,2}.jsonl (verl's files), verl/rlvr.jsonl (the same rollouts in the
dump's order in rlvr's layout: group = the prompt, reward = score, length = the response's
tokens without the end-of-sequence token, which is what re-tokenizing the decoded output
counts), verl/verl_advantages.json (verl's GRPO advantage per dumped line).

Run once: a Python with torch, transformers and verl (`pip install --no-deps verl` plus the
modules verl.trainer.ppo.ray_trainer imports: ray, omegaconf, hydra-core, tensordict,
torchdata, codetiming, ...); nothing is downloaded.
    python scripts/diagnose/make_verl_fixture.py
"""
import json
import shutil
import uuid
from pathlib import Path

import numpy as np
import torch
import verl
from omegaconf import OmegaConf
from transformers import PreTrainedTokenizerFast
from verl import DataProto
from verl.trainer.ppo import core_algos
from verl.trainer.ppo.ray_trainer import RayPPOTrainer

ROOT = Path(__file__).resolve().parent.parent.parent
MODEL = ROOT / "crates/rlvr-model/tests/fixtures/qwen2-tiny"
OUT = ROOT / "crates/rlvr-cli/tests/fixtures/diagnose/verl"
RESPONSE_LEN = 16
N = 4

tok = PreTrainedTokenizerFast(
    tokenizer_file=str(MODEL / "tokenizer.json"),
    eos_token="<|im_end|>",
    pad_token="<|endoftext|>",
)
tok.chat_template = (MODEL / "chat_template.jinja").read_text()
EOS, PAD = tok.eos_token_id, tok.pad_token_id

# step -> [(prompt, ground truth, [(response text, correct?)] * N)]
STEPS = {
    1: [
        ("What is 2+3?", "5", [("5", True), ("It is 5.", True), ("six", False),
                               ("Let me think: 2+3 is 6, I am sure of it.", False)]),
        ("What is 3*3?", "9", [("9", True), ("3*3=9", True), ("It is 6 because 3+3", False),
                               ("Nine: 3*3 = 9, checked twice.", True)]),
        ("Name a prime above 10.", "11", [("11", True), ("13", True), ("12", False),
                                          ("Seventeen is a prime above ten.", True)]),
    ],
    2: [
        ("What is 10-4?", "6", [("6", True), ("4", False), ("Ten minus four is six.", True),
                                ("It is 14 since 10+4 = 14, final.", False)]),
        ("What is 8/2?", "4", [("4", True), ("16", False), ("8/2 = 4", True), ("2", False)]),
        ("Is 9 prime?", "no", [("no", True), ("yes", False), ("No, 9 = 3*3.", True),
                               ("yes it is prime, as 9 has no divisors", False)]),
    ],
}


def batch_for(step):
    rows = []
    for prompt, gt, responses in STEPS[step]:
        uid = str(uuid.uuid4())
        p_ids = tok.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=True,
            return_dict=False,
        )
        for text, ok in responses:
            r_ids = tok.encode(text, add_special_tokens=False)
            if len(r_ids) < RESPONSE_LEN:
                r_ids = r_ids + [EOS]  # finished
            else:
                r_ids = r_ids[:RESPONSE_LEN]  # cut at the response length
            rows.append((uid, prompt, gt, p_ids, r_ids, 1.0 if ok else 0.0, ok))
    plen = max(len(r[3]) for r in rows)
    prompts = torch.full((len(rows), plen), PAD)
    pmask = torch.zeros((len(rows), plen), dtype=torch.long)
    responses = torch.full((len(rows), RESPONSE_LEN), PAD)
    rmask = torch.zeros((len(rows), RESPONSE_LEN), dtype=torch.long)
    scores = torch.zeros((len(rows), RESPONSE_LEN))
    for i, (_, _, _, p, r, s, _) in enumerate(rows):
        prompts[i, plen - len(p):] = torch.tensor(p)  # left padded, as verl's rollout returns
        pmask[i, plen - len(p):] = 1
        responses[i, : len(r)] = torch.tensor(r)
        rmask[i, : len(r)] = 1
        scores[i, len(r) - 1] = s  # the reward sits on the last response token
    data = {
        "prompts": prompts,
        "responses": responses,
        "input_ids": torch.cat([prompts, responses], 1),
        "attention_mask": torch.cat([pmask, rmask], 1),
        "response_mask": rmask,
        "token_level_scores": scores,
        "token_level_rewards": scores.clone(),
        "uid": np.array([r[0] for r in rows], dtype=object),
        "reward_model": np.array([{"ground_truth": r[2], "style": "rule"} for r in rows],
                                 dtype=object),
        "data_source": np.array(["fixture"] * len(rows), dtype=object),
        "correct": np.array([r[6] for r in rows], dtype=object),
    }
    return DataProto.from_single_dict(data)


trainer = RayPPOTrainer.__new__(RayPPOTrainer)  # only what the two methods read
trainer.config = OmegaConf.create({"trainer": {"balance_batch": True}})
trainer.tokenizer = tok
trainer.actor_rollout_wg = None
trainer._get_dp_size = lambda worker_group, role: 2  # two data-parallel ranks

if OUT.exists():
    shutil.rmtree(OUT)
dump = OUT / "rollouts"
rlvr_lines, advantages = [], []
trainer._init_dump_executor()
for step in STEPS:
    trainer.global_steps = step
    batch = batch_for(step)
    metrics = {}
    trainer._balance_batch(batch, metrics=metrics)
    uids = list(batch.non_tensor_batch["uid"])
    correct = list(batch.non_tensor_batch["correct"])
    extra = {"acc": correct, "pred": ["x"] * len(uids)}
    trainer._log_rollout_data(batch, extra, {}, str(dump))
    adv, _ = core_algos.compute_grpo_outcome_advantage(
        batch.batch["token_level_rewards"], batch.batch["response_mask"], np.array(uids, dtype=object)
    )
    advantages += adv[:, 0].tolist()
    responses = batch.batch["responses"]
    order = sorted(set(uids), key=uids.index)  # groups numbered by first appearance
    for i, u in enumerate(uids):
        n = int(batch.batch["response_mask"][i].sum())
        n -= int(responses[i, n - 1] == EOS)  # the decoded text has no end-of-sequence token
        rlvr_lines.append(
            {"group": f"{step}/{order.index(u)}",
             "reward": float(batch.batch["token_level_scores"][i].sum()), "length": n}
        )
trainer._shutdown_dump_executor()

# the decoded outputs re-tokenize to the counted lengths (clean ASCII texts)
dumped = [json.loads(l) for s in STEPS for l in (dump / f"{s}.jsonl").read_text().splitlines()]
assert [len(tok.encode(d["output"], add_special_tokens=False)) for d in dumped] == [
    r["length"] for r in rlvr_lines
]
(OUT / "rlvr.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rlvr_lines))
(OUT / "verl_advantages.json").write_text(json.dumps({"grpo": advantages}) + "\n")
(OUT / "VERSIONS").write_text(f"verl {verl.__version__}\ntorch {torch.__version__}\n")
print(f"{len(dumped)} lines from verl {verl.__version__}; order of step 1: "
      f"{[sorted(set(d['input'] for d in dumped)).index(d['input']) for d in dumped[:12]]}")
