"""`trainer.logger = ['console', 'tensorboard']` against TensorBoard's own reader: a short
testbed run, resumed once, writes event files that TensorBoard's EventAccumulator reads; every
metric of its metrics.jsonl is there under the tag configs/README.md's "Metric names" table
gives it, at the same step, with the same value (as float32, which TensorBoard stores), and
nothing else is; each step's bias verdict is there as text."""

import json
import math
import os
import re
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("tensorboard")

import numpy as np  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402


REPO = Path(__file__).resolve().parents[2]


def tag_table():
    """(rlvr name, TensorBoard tag) rows of configs/README.md's metric table."""
    text = (REPO / "configs" / "README.md").read_text()
    section = text.split("## Metric names")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", section, re.M)
    assert len(rows) > 25, rows
    return rows


def expected(metrics_path):
    """{(tag, step): value} and {step: verdict} from metrics.jsonl through the README table."""
    rows = tag_table()
    scalars, verdicts = {}, {}
    for line in metrics_path.read_text().splitlines():
        m = json.loads(line)
        step = m["step"]
        if m["kind"] == "train":
            for name, tag in rows:
                if name.startswith("eval ") or name == "verdict":
                    continue
                if name == "positive_share.<rule>":
                    for rule, v in m["positive_share"].items():
                        if v is not None:
                            scalars[(tag.replace("<rule>", rule), step)] = v
                    continue
                v = m[name]
                if v is not None:
                    scalars[(tag, step)] = float(v)
            if m.get("verdict") is not None:
                verdicts[step] = m["verdict"]
        elif m["kind"] == "eval":
            for name, tag in rows:
                if not name.startswith("eval "):
                    continue
                v = m[name.removeprefix("eval ")]
                tag = tag.replace("<dataset>", m["dataset"]).replace("<k>", str(m["k"]))
                if v is not None:
                    scalars[(tag, step)] = float(v)
    return scalars, verdicts


def read_events(logdir):
    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    scalars = {}
    for tag in acc.Tags()["scalars"]:
        for e in acc.Scalars(tag):
            assert (tag, e.step) not in scalars, f"{tag} at step {e.step} twice"
            scalars[(tag, e.step)] = e.value
    texts = {}
    for tag in acc.Tags()["tensors"]:
        assert tag == "rlvr/verdict", tag
        for e in acc.Tensors(tag):
            texts[e.step] = e.tensor_proto.string_val[0].decode()
    return scalars, texts


def test_a_run_s_events_are_its_metrics_under_verl_s_names(binary, tmp_path):
    base = [
        "--set", "testbed.warm_start_steps=30",
        "--set", "trainer.train_batch_size=4",
        "--set", "algorithm.ppo_mini_batch_size=4",
        "--set", "rollout.num_generations=4",
        "--set", "eval.test_freq=2",
        "--set", "eval.n_problems=8",
        "--set", "trainer.logger=['console','tensorboard']",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "TENSORBOARD_DIR"}
    run = lambda *args: subprocess.run(  # noqa: E731
        [binary, "train", *args], cwd=tmp_path, env=env, check=True, capture_output=True, text=True
    )
    run(*base, "--set", "trainer.total_training_steps=3", "--set", "trainer.run_name=tb")
    run_dir = tmp_path / "runs" / "tb"
    run("--resume", str(run_dir), "--set", "trainer.total_training_steps=4")

    logdir = run_dir / "tensorboard"
    assert len(list(logdir.glob("events.out.tfevents.*"))) == 2  # one file a session
    want, want_text = expected(run_dir / "metrics.jsonl")
    got, got_text = read_events(logdir)
    assert set(got) == set(want), (sorted(set(want) - set(got))[:10], sorted(set(got) - set(want))[:10])
    for key, v in want.items():
        assert got[key] == np.float32(v) or (math.isnan(v) and math.isnan(got[key])), (key, v, got[key])
    steps = {s for (_, s) in want}
    assert steps == {0, 1, 2, 3, 4}
    # verl's dashboard names are there
    for tag in ["critic/score/mean", "response_length/mean", "actor/pg_loss", "timing_s/gen"]:
        assert (tag, 4) in got, tag
    assert ("val-core/testbed/acc/mean@4", 2) in got
    assert got_text == want_text and want_text, got_text
