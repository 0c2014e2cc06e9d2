#!/usr/bin/env python3
"""Writes crates/rlvr-model/tests/fixtures/chat/renders.json: what transformers'
apply_chat_template renders (text and token ids, the tiny qwen2 fixture's tokenizer) for
multi-turn message lists, with two templates:

- "qwen2-chatml": the tiny qwen2 fixture's ChatML template (tests/fixtures/qwen2-tiny);
- "qwen3": Qwen3's real chat template (tests/fixtures/chat/qwen3.jinja, the `chat_template` of
  Qwen/Qwen3-0.6B's tokenizer_config.json; provenance in tests/fixtures/chat/SOURCE.md),

each without template arguments, with enable_thinking=False and with enable_thinking=True, with
and without the generation prompt. rlvr's renderer must reproduce every case exactly
(crates/rlvr-model/tests/chat_render.rs).

Run once after changing a case: `pip install transformers jinja2` (no torch needed), then
`python3 scripts/model/chat_render_fixtures.py`.
"""
import hashlib
import json
from pathlib import Path

import transformers
from transformers import PreTrainedTokenizerFast

ROOT = Path(__file__).resolve().parent.parent.parent
FIX = ROOT / "crates/rlvr-model/tests/fixtures"

MESSAGES = {
    # system + user + assistant (with its reasoning) + user: Qwen3 drops the earlier turn's
    # <think> block
    "multi-turn": [
        {"role": "system", "content": "You are a careful solver."},
        {"role": "user", "content": "What is 2+3?"},
        {"role": "assistant", "content": "<think>\n2+3=5\n</think>\n\nThe answer is 5."},
        {"role": "user", "content": "And 2*3? Put it in \\boxed{}."},
    ],
    "no-system": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Sum 1..4"},
    ],
    # the conversation ends with assistant turns after the last user turn: Qwen3 keeps their
    # reasoning, and gives the last one an empty <think> block when it has none
    "assistant-last": [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is 7*8?"},
        {"role": "assistant", "content": "<think>\n7*8 = 56\n</think>\n\n56"},
        {"role": "user", "content": "Double it."},
        {"role": "assistant", "content": "<think>\n56*2 = 112\n</think>\n\nIt is 112."},
        {"role": "assistant", "content": "112 is final."},
    ],
    # a tool turn (rendered inside a user turn) after an assistant turn with reasoning
    "tool": [
        {"role": "user", "content": "What is 17*23?"},
        {"role": "assistant", "content": "<think>\nUse the calculator.\n</think>\n\nCalling it."},
        {"role": "tool", "content": "391"},
        {"role": "tool", "content": "ok"},
        {"role": "assistant", "content": "17*23 = 391."},
    ],
}

tok = PreTrainedTokenizerFast(tokenizer_file=str(FIX / "qwen2-tiny/tokenizer.json"))
templates = {
    "qwen2-chatml": (FIX / "qwen2-tiny/chat_template.jinja").read_text(),
    "qwen3": (FIX / "chat/qwen3.jinja").read_text(),
}
cases = []
for tname, template in templates.items():
    for mname, messages in MESSAGES.items():
        for kwargs in [{}, {"enable_thinking": False}, {"enable_thinking": True}]:
            for gen in [True, False]:
                text = tok.apply_chat_template(
                    messages,
                    chat_template=template,
                    tokenize=False,
                    add_generation_prompt=gen,
                    **kwargs,
                )
                cases.append(
                    {
                        "template": tname,
                        "conversation": mname,
                        "messages": messages,
                        "kwargs": kwargs,
                        "add_generation_prompt": gen,
                        "text": text,
                        "token_ids": tok.encode(text, add_special_tokens=False),
                    }
                )
out = {
    "transformers": transformers.__version__,
    "template_sha256": {
        k: hashlib.sha256(v.encode()).hexdigest() for k, v in templates.items()
    },
    "cases": cases,
}
(FIX / "chat/renders.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
print(f"{len(cases)} cases written with transformers {transformers.__version__}")
