#!/usr/bin/env python3
"""Writes crates/rlvr-model/tests/fixtures/chat/renders.json: what transformers'
apply_chat_template renders (text and token ids) for multi-turn message lists, with the tiny
qwen2 fixture's real ChatML template and the Qwen3-style template in tests/fixtures/chat/,
with and without enable_thinking. rlvr's renderer must reproduce every case exactly
(crates/rlvr-model/tests/chat_render.rs).

Run once after changing a case: `pip install transformers` (no torch needed), then
`python3 scripts/model/chat_render_fixtures.py`.
"""
import json
from pathlib import Path

import transformers
from transformers import PreTrainedTokenizerFast

ROOT = Path(__file__).resolve().parent.parent.parent
FIX = ROOT / "crates/rlvr-model/tests/fixtures"

MULTI = [
    {"role": "system", "content": "You are a careful solver."},
    {"role": "user", "content": "What is 2+3?"},
    {"role": "assistant", "content": "<think>\n2+3=5\n</think>\n\nThe answer is 5."},
    {"role": "user", "content": "And 2*3? Put it in \\boxed{}."},
]
NO_SYSTEM = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "Sum 1..4"},
]

tok = PreTrainedTokenizerFast(tokenizer_file=str(FIX / "qwen2-tiny/tokenizer.json"))
templates = {
    "qwen2-chatml": (FIX / "qwen2-tiny/chat_template.jinja").read_text(),
    "qwen3-style": (FIX / "chat/qwen3-style.jinja").read_text(),
}
cases = []
for tname, template in templates.items():
    for mname, messages in [("multi-turn", MULTI), ("no-system", NO_SYSTEM)]:
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
                        "messages": messages,
                        "kwargs": kwargs,
                        "add_generation_prompt": gen,
                        "text": text,
                        "token_ids": tok.encode(text, add_special_tokens=False),
                    }
                )
out = {"transformers": transformers.__version__, "cases": cases}
(FIX / "chat/renders.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
print(f"{len(cases)} cases written with transformers {transformers.__version__}")
