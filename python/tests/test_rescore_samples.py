"""scripts/train/rescore_samples.py: a run's evaluation samples scored again by a build's checker,
the verdicts that differ from the run's own counted per step (the audit that finds a gamed
reward after the fact), questions looked up for files that hold only the problem's index."""
import gzip
import importlib.util
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/train/rescore_samples.py"
ARITH = "arith:ops=+*,digits=1-2,terms=2,split=test,n=100"


def _run(binary, *args):
    return subprocess.run([sys.executable, str(SCRIPT), "--rlvr", str(binary), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def _module():
    spec = importlib.util.spec_from_file_location("rescore_samples", SCRIPT)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def _line(step, response, correct, answer="2052", question="What is 76 times 27?"):
    row = {"step": step, "dataset": ARITH, "problem": 0, "sample": 0, "answer": answer,
           "response": response, "correct": correct}
    if question is not None:
        row["question"] = question
        row["choices"] = None
    return json.dumps(row) + "\n"


def test_a_gamed_verdict_is_found_and_counted_per_step(binary, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    # the form SmolLM2 learned against a checker that read an equation by its last side
    (run / "eval-samples.jsonl").write_text(
        _line(0, "76 * 27 = 2052", True)
        + _line(0, "76 * 27 = 1946", False)
        + _line(10, "1740 = 76 * 27", True)
        + _line(10, "76 times 27", True)
        + _line(10, "The answer is 2052.", True))
    r = _run(binary, "--show", "1", run)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "5 samples, 2 verdicts differ" in out, out
    rows = {l.split()[0]: l.split()[1:] for l in out.splitlines() if l.strip()[:2].strip().isdigit()}
    assert rows["0"] == ["2", "0.500", "0.500", "0"], out
    assert rows["10"] == ["3", "1.000", "0.333", "2"], out
    # --show 1: the first differing sample, with its step and gold
    assert "step 10, problem 0: now wrong (gold '2052'): '1740 = 76 * 27'" in out, out
    assert "76 times 27'" not in out.split("verdicts differ")[1].split("step 10, problem")[1], out
    assert _run(binary, "--fail-on-change", run).returncode == 1
    # a file whose verdicts all stand passes
    ok = tmp_path / "ok.jsonl"
    ok.write_text(_line(0, "76 * 27 = 2052", True) + _line(0, "2000", False))
    r = _run(binary, "--fail-on-change", ok)
    assert r.returncode == 0 and "2 samples, 0 verdicts differ" in r.stdout, r.stdout + r.stderr


def test_a_file_without_questions_reads_them_from_its_dataset(binary, tmp_path):
    m = _module()
    # the held-out split is fixed by a hash of the problem, whatever the seed: its first problem
    assert m.question_of(str(binary), {"dataset": ARITH, "problem": 0}) == "What is 76 times 27?"
    assert m.question_of(str(binary), {"question": "asked", "problem": 0}) == "asked"
    assert m.question_of(str(binary), {"dataset": ARITH, "problem": "0"}) is None
    # the kept, gzipped form long-sweep.sh stores, without questions
    run = tmp_path / "kept"
    run.mkdir()
    with gzip.open(run / "eval-samples.jsonl.gz", "wt") as f:
        f.write(_line(0, "1740 = 76 * 27", True, question=None))
    r = _run(binary, run)
    assert r.returncode == 0 and "1 samples, 1 verdicts differ" in r.stdout, r.stdout + r.stderr
    # a dataset that cannot be exported is scored without its questions, and said so
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"dataset": "no-such-preset", "problem": 0, "answer": "4",
                               "response": "4", "correct": True}) + "\n")
    r = _run(binary, bad)
    assert r.returncode == 0 and "0 verdicts differ" in r.stdout, r.stdout + r.stderr
    assert "`no-such-preset` cannot be exported" in r.stderr, r.stderr


def test_bad_input_is_named(binary, tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text(_line(0, "2052", True) + '{"answer": "1", "response": "1"}\n')
    r = _run(binary, f)
    assert r.returncode != 0 and f"{f}:2: no `correct` field" in r.stderr, r.stderr
    f.write_text(_line(0, "2052", True) + "{not json\n")
    r = _run(binary, f)
    assert r.returncode != 0 and f"{f}:2: invalid JSON" in r.stderr, r.stderr
    r = _run(binary, tmp_path / "missing")
    assert r.returncode != 0 and "no such file or directory" in r.stderr, r.stderr
    r = _run(binary, tmp_path)
    assert r.returncode != 0 and "no eval-samples.jsonl" in r.stderr, r.stderr
