"""`rlvr.verify` returns exactly what the `rlvr verify` binary does on the labelled fixtures."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import rlvr

REPO = Path(__file__).resolve().parents[2]
FIXTURES = sorted((REPO / "crates" / "rlvr-tasks" / "tests" / "fixtures").glob("*.jsonl"))


def rlvr_binary():
    """`RLVR_BIN`, else the debug or release build of the workspace, else `rlvr` on PATH."""
    if os.environ.get("RLVR_BIN"):
        return os.environ["RLVR_BIN"]
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("debug", "release"):
        p = target / profile / "rlvr"
        if p.is_file():
            return str(p)
    return shutil.which("rlvr")


def test_fixtures_exist():
    assert len(FIXTURES) >= 2, FIXTURES


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_same_verdict_extraction_and_reason_as_the_cli(fixture):
    binary = rlvr_binary()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no rlvr binary (build it with `cargo build -p rlvr-cli` or set RLVR_BIN)")
        pytest.skip("no rlvr binary: build it with `cargo build -p rlvr-cli` or set RLVR_BIN")
    out = subprocess.run(
        [binary, "verify", "--jsonl", str(fixture), "--details"], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    lines = [l for l in fixture.read_text().splitlines() if l.strip()]
    cli = [json.loads(l) for l in out if l.strip()]
    assert len(cli) == len(lines) > 100
    agree_with_label = 0
    for line, expected in zip(lines, cli):
        case = json.loads(line)
        gold = case["gold"] if isinstance(case["gold"], str) else str(case["gold"])
        v = rlvr.verify(gold, case["response"])
        assert (v.correct, v.extracted, v.reason) == (expected["correct"], expected["extracted"], expected["reason"]), case
        agree_with_label += v.correct == case["label"]
    # the fixtures are labelled: the checker agrees with most labels (a sanity check of the data read)
    assert agree_with_label >= 0.9 * len(lines)
