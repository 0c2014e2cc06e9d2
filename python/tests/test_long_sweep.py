"""scripts/train/long-sweep.sh: a sweep's finished runs kept in the repository and put back on the
next machine, never overwritten by a disagreeing copy."""
import gzip
import json
import os
import pathlib
import shutil
import subprocess
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/train/long-sweep.sh"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _run(*args):
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.fixture
def sweep(tmp_path):
    """A sweep directory under runs/ (the script takes paths inside the repository) with two
    finished cells and one still training, and an empty keep directory."""
    rel = f"runs/test-long-sweep-{os.getpid()}"
    d = ROOT / rel
    shutil.rmtree(d, ignore_errors=True)
    (d).mkdir(parents=True)
    (d / "sweep-config.toml").write_text("[trainer]\ntotal_training_steps = 3\n")
    (d / "sweep-overrides.txt").write_text("model.path=m\n")
    for cell, acc in (("token-mean-s1", 0.25), ("balanced-s1", 0.5)):
        c = d / cell
        (c / "checkpoint").mkdir(parents=True)
        (c / "checkpoint/model.safetensors").write_bytes(b"weights")
        (c / "config.toml").write_text(f"# {cell}\n")
        lines = [{"step": s, "accuracy": acc, "time_step_s": 10.0 + s} for s in (1, 2, 3)]
        (c / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        (c / "host.jsonl").write_text('{"machine": "here"}\n')
        (c / "train.log").write_text("log\n")
        (c / "sweep.done").write_text("")
    running = d / "seq-mean-token-mean-s1"
    (running / "checkpoint").mkdir(parents=True)
    (running / "metrics.jsonl").write_text('{"step": 1}\n')
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "sweep.toml").write_text(f'dir = "{rel}"\ncommit = "{COMMIT}"\ncommand = "sweep"\n')
    yield d, keep
    shutil.rmtree(d, ignore_errors=True)


def test_save_keeps_finished_runs_without_checkpoints_and_restore_puts_them_back(sweep):
    d, keep = sweep
    r = _run("save", keep)
    assert r.returncode == 0, r.stderr
    assert "2 new finished run(s)" in r.stdout
    # the kept runs' checkpoints are gone from the sweep directory; the training run keeps its own
    assert "2 checkpoint(s) of kept runs removed" in r.stdout, r.stdout
    assert not (d / "token-mean-s1/checkpoint").exists()
    assert (d / "balanced-s1/metrics.jsonl").exists()
    assert (d / "seq-mean-token-mean-s1/checkpoint").is_dir()
    kept = sorted(p.relative_to(keep).as_posix() for p in keep.rglob("*") if p.is_file())
    assert kept == sorted(
        ["sweep.toml", "sweep-config.toml", "sweep-overrides.txt"]
        + [f"{c}/{f}" for c in ("token-mean-s1", "balanced-s1")
           for f in ("config.toml", "metrics.jsonl", "host.jsonl", "train.log", "sweep.done")]
    ), kept
    # a second save adds nothing and agrees with what is kept
    r = _run("save", keep)
    assert r.returncode == 0 and "0 new finished run(s)" in r.stdout, r.stdout + r.stderr

    # the next machine: nothing but the kept files
    shutil.rmtree(d)
    r = _run("restore", keep)
    assert r.returncode == 0 and "2 finished run(s) restored" in r.stdout, r.stdout + r.stderr
    assert (d / "balanced-s1/metrics.jsonl").read_text() == (keep / "balanced-s1/metrics.jsonl").read_text()
    assert (d / "sweep-overrides.txt").read_text() == "model.path=m\n"
    assert not (d / "balanced-s1/checkpoint").exists()


def test_save_refuses_a_run_that_finished_with_other_results_but_not_other_timings(sweep):
    d, keep = sweep
    assert _run("save", keep).returncode == 0
    m = d / "token-mean-s1/metrics.jsonl"
    # another machine's timings: the same run
    m.write_text(m.read_text().replace('"time_step_s": 11.0', '"time_step_s": 99.0'))
    r = _run("save", keep)
    assert r.returncode == 0, r.stderr
    # another result: refused, naming the cell
    m.write_text(m.read_text().replace('"accuracy": 0.25', '"accuracy": 0.75', 1))
    r = _run("save", keep)
    assert r.returncode != 0
    assert "token-mean-s1" in r.stderr and "disagrees" in r.stderr, r.stderr


def test_restore_refuses_to_overwrite_a_run_in_progress_or_another_sweep(sweep):
    d, keep = sweep
    assert _run("save", keep).returncode == 0
    # a cell kept as finished but half-run here
    shutil.rmtree(d / "balanced-s1")
    (d / "balanced-s1/checkpoint").mkdir(parents=True)
    r = _run("restore", keep)
    assert r.returncode != 0 and "balanced-s1: a run is in progress" in r.stderr, r.stderr
    shutil.rmtree(d / "balanced-s1")
    (d / "sweep-overrides.txt").write_text("model.path=other\n")
    r = _run("restore", keep)
    assert r.returncode != 0 and "another sweep" in r.stderr, r.stderr


@pytest.mark.parametrize(
    "toml, message",
    [
        ('dir = "/etc"\ncommit = "%s"\n' % COMMIT, "must be a path inside the repository"),
        ('dir = "runs/../.."\ncommit = "%s"\n' % COMMIT, "must be a path inside the repository"),
        ('dir = "runs/x"\ncommit = "HEAD; rm -rf /"\n', "is not a full commit hash"),
        ('commit = "%s"\n' % COMMIT, 'no `dir = "..."` line'),
    ],
)
def test_a_bad_keep_file_is_refused_by_key(tmp_path, toml, message):
    (tmp_path / "sweep.toml").write_text(toml)
    r = _run("save", tmp_path)
    assert r.returncode != 0 and message in r.stderr, r.stderr
    assert "sweep.toml" in r.stderr


def test_eval_samples_are_kept_when_a_run_has_them_and_must_agree(sweep):
    """A run's eval-samples.jsonl (its evaluations' samples, written by builds from 2026-12-08)
    is kept gzipped and put back with it; a run of an older build, without one, is kept as before; a
    second copy whose samples differ is refused."""
    d, keep = sweep
    samples = '{"step": 0, "problem": 0, "answer": "5", "response": "2 + 3 = 5", "correct": true}\n'
    (d / "token-mean-s1/eval-samples.jsonl").write_text(samples)
    r = _run("save", keep)
    assert r.returncode == 0, r.stderr
    packed = keep / "token-mean-s1/eval-samples.jsonl.gz"
    assert gzip.decompress(packed.read_bytes()).decode() == samples
    # gzip -n: no file name (FLG.FNAME unset) and no time (MTIME zero) in the header, so the same
    # samples pack to the same bytes whenever and wherever they are kept
    head = packed.read_bytes()[:8]
    assert head[3] & 0x08 == 0 and head[4:8] == b"\0\0\0\0", head
    assert not (keep / "balanced-s1/eval-samples.jsonl.gz").exists()
    shutil.rmtree(d)
    r = _run("restore", keep)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (d / "token-mean-s1/eval-samples.jsonl").read_text() == samples
    (d / "token-mean-s1/eval-samples.jsonl").write_text(samples.replace("true", "false"))
    r = _run("save", keep)
    assert r.returncode != 0 and "disagrees" in r.stderr, r.stdout + r.stderr


def test_watch_saves_runs_as_they_finish_and_stops_when_none_trains(sweep):
    """`watch` keeps finished runs (and frees their checkpoints) while a run of the sweep trains,
    saves the run that finishes last, and stops once no cell's run.lock names a live process."""
    d, keep = sweep
    running = d / "seq-mean-token-mean-s1"
    trainer = subprocess.Popen(["sleep", "60"])
    try:
        (running / "run.lock").write_text(str(trainer.pid))
        # a finished run's lock names a process long gone
        (d / "token-mean-s1/run.lock").write_text("999999999")
        watch = subprocess.Popen([str(SCRIPT), "watch", str(keep), "1"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        while not (keep / "balanced-s1/sweep.done").exists() and time.time() < deadline:
            time.sleep(0.2)
        assert (keep / "token-mean-s1/sweep.done").exists()
        assert not (d / "token-mean-s1/checkpoint").exists()
        time.sleep(2)
        assert watch.poll() is None, "watch stopped while a run trains"
        # the last run finishes: its files and sweep.done, then its process ends
        for f in ("config.toml", "host.jsonl", "train.log", "sweep.done"):
            (running / f).write_text("x\n")
        trainer.kill()
        trainer.wait()
        out, err = watch.communicate(timeout=30)
    finally:
        trainer.kill()
    assert watch.returncode == 0, err
    assert "stopped watching" in out, out
    assert (keep / "seq-mean-token-mean-s1/sweep.done").exists(), out
    assert not (running / "checkpoint").exists()


@pytest.mark.parametrize("seconds", ["0", "-5", "1m", "3; rm -rf /"])
def test_watch_refuses_a_bad_interval(sweep, seconds):
    _, keep = sweep
    r = _run("watch", keep, seconds)
    assert r.returncode != 0 and "is not a positive whole number" in r.stderr, r.stderr
