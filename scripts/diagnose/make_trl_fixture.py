#!/usr/bin/env python3
"""Makes crates/rlvr-cli/tests/fixtures/diagnose/trl/: completions logged by TRL's own
GRPOTrainer (not written by hand), plus the same rollouts in rlvr's {group, reward, length,
advantage} layout, for crates/rlvr-cli/tests/diagnose_fixtures.rs.

It trains the tiny random Qwen2 fixture (crates/rlvr-model/tests/fixtures/qwen2-tiny, its
char-level tokenizer and ChatML template) for 2 steps on CPU with `log_completions=True`,
3 conversational prompts x 4 generations per step and two reward functions; sampling is limited
to tokens that decode to printable ASCII (readable fixtures). With
`log_completions`, TRL writes `<output_dir>/completions/completions_<step:05d>.parquet` at every
logging step (columns: step, prompt, completion, one column per reward function, advantage);
that directory is copied as it is. TRL also prints the table with rich and logs it to
wandb/trackio when those are enabled (not here).

rlvr.jsonl: one line per logged row, in the parquet files' order: `group` (the prompt's index
within its generation batch: TRL lays each prompt's `num_generations` completions out
consecutively), `reward` (the sum of the reward columns: both weights are 1), `advantage` (TRL's
own) and `length` = the number of tokens of the logged completion text under the fixture's
tokenizer (transformers' count: TRL logs text, so that is all `rlvr diagnose` can count; the
lengths TRL trained on, its completion_mask sums, are written to trl_lengths.json for
comparison).

Run once (a Python with torch, transformers and trl; nothing is downloaded):
    ~/venv-trl/bin/python scripts/diagnose/make_trl_fixture.py
"""
import json
import shutil
import tempfile
from pathlib import Path

import torch
import transformers
import trl
from datasets import Dataset
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast
from trl import GRPOConfig, GRPOTrainer

ROOT = Path(__file__).resolve().parent.parent.parent
MODEL = ROOT / "crates/rlvr-model/tests/fixtures/qwen2-tiny"
OUT = ROOT / "crates/rlvr-cli/tests/fixtures/diagnose/trl"

torch.manual_seed(0)
tok = PreTrainedTokenizerFast(
    tokenizer_file=str(MODEL / "tokenizer.json"),
    eos_token="<|im_end|>",
    pad_token="<|endoftext|>",
)
tok.chat_template = (MODEL / "chat_template.jinja").read_text()
model = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.float32)
# readable completions: the random model may only sample tokens that decode to printable ASCII
# (and the end-of-sequence tokens), not lone bytes of multi-byte characters or <|im_start|>
suppress = [
    i for i in range(len(tok))
    if i not in (0, 2) and not all(32 <= ord(ch) < 127 or ch == "\n" for ch in tok.decode([i]))
]

prompts = ["Add 2 and 3.", "Compute 4*4.", "Is 7 prime?", "Name a vowel.", "Sum 1..3.", "Say hi."]
data = Dataset.from_list([{"prompt": [{"role": "user", "content": p}]} for p in prompts])


def digit_first(completions, **kwargs):
    """1 when the completion starts with a decimal digit."""
    return [float(c[0]["content"][:1].isdigit()) for c in completions]


def short(completions, **kwargs):
    """0.5 when the completion has at most 20 characters."""
    return [0.5 if len(c[0]["content"]) <= 20 else 0.0 for c in completions]


lengths = []


class Recording(GRPOTrainer):
    """GRPOTrainer that also keeps the completion_mask sums of every generation batch."""

    def _generate_and_score_completions(self, inputs):
        out = super()._generate_and_score_completions(inputs)
        lengths.append(out["completion_mask"].sum(-1).tolist())
        return out


with tempfile.TemporaryDirectory() as tmp:
    args = GRPOConfig(
        output_dir=tmp,
        use_cpu=True,
        bf16=False,
        per_device_train_batch_size=12,
        num_generations=4,
        max_completion_length=24,
        max_steps=2,
        logging_steps=1,
        learning_rate=1e-3,
        log_completions=True,
        report_to="none",
        save_strategy="no",
        seed=0,
        temperature=1.0,
        generation_kwargs={"suppress_tokens": suppress},
    )
    trainer = Recording(
        model=model, reward_funcs=[digit_first, short], args=args, train_dataset=data,
        processing_class=tok,
    )
    trainer.train()
    if OUT.exists():
        shutil.rmtree(OUT)
    shutil.copytree(Path(tmp) / "completions", OUT / "completions")

import pandas as pd  # noqa: E402 (after training: only to write the reference layout)

rows = []
for f in sorted((OUT / "completions").glob("*.parquet")):
    df = pd.read_parquet(f)
    for i, r in enumerate(df.itertuples(index=False)):
        text = r.completion[0]["content"] if not isinstance(r.completion, str) else r.completion
        rows.append(
            {
                "group": f"{r.step}/{i // 4}",
                "reward": float(r.digit_first) + float(r.short),
                "length": len(tok.encode(text, add_special_tokens=False)),
                "advantage": float(r.advantage),
            }
        )
(OUT / "rlvr.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
(OUT / "trl_lengths.json").write_text(
    json.dumps({"completion_mask_sums_per_generation_batch": lengths}) + "\n"
)
(OUT / "VERSIONS").write_text(
    f"trl {trl.__version__}\ntransformers {transformers.__version__}\ntorch {torch.__version__}\n"
)
print(f"{len(rows)} rows from trl {trl.__version__}")
