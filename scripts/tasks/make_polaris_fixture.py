#!/usr/bin/env python3
"""Writes crates/rlvr-tasks/tests/fixtures/polaris_tiny.parquet: 4 made-up problems in verl's
parquet layout (the layout of Polaris-53K: data_source, prompt as a list of chat messages,
ability, reward_model {ground_truth, style}, extra_info {index, split}), written the way verl's
preprocessing scripts write it (pyarrow via pandas/datasets, snappy compression).

Run: python3 scripts/tasks/make_polaris_fixture.py   (needs pyarrow; not run in CI)
"""
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq

OUT = pathlib.Path(__file__).resolve().parents[2] / "crates/rlvr-tasks/tests/fixtures/polaris_tiny.parquet"

rows = [
    ("What is $1+2$?", "3"),
    ("Simplify $\\frac{6}{8}$.", "\\frac{3}{4}"),
    ("Solve $x^2 = 4$ for $x > 0$.", "2"),
    ("Find the interval where $x^2 < 1$.", "(-1, 1)"),
]
suffix = " Let's think step by step and output the final answer within \\boxed{}."
table = pa.table(
    {
        "data_source": ["polaris"] * len(rows),
        "prompt": [[{"content": q + suffix, "role": "user"}] for q, _ in rows],
        "ability": ["math"] * len(rows),
        "reward_model": [{"ground_truth": a, "style": "rule"} for _, a in rows],
        "extra_info": [{"index": i, "split": "train"} for i in range(len(rows))],
    }
)
OUT.parent.mkdir(parents=True, exist_ok=True)
pq.write_table(table, OUT, compression="snappy")
print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
