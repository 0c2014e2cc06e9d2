"""Score a run's evaluation samples again with another build's checker, and say where it and
the run's own reward disagree: the audit that finds a gamed reward after the fact.

    python3 scripts/train/rescore_samples.py [--rlvr BIN] [--show N] [--fail-on-change] RUN...

RUN is a run directory (its `eval-samples.jsonl`, or `eval-samples.jsonl.gz` as
`scripts/train/long-sweep.sh` keeps it) or a sample file (`eval-samples.jsonl[.gz]`, or
`rlvr eval --out`'s lines). Each line is scored by `BIN verify --jsonl` against its `answer`
with its `question` and `choices`, as training scores it (the restated-question rule needs the
question). Files written before samples carried their question hold only the problem's index:
the question is then read from `BIN export data <dataset>` (the line's `dataset` field, an
`arith:...` spec or a preset) at that index, and a dataset that cannot be exported is scored
without its questions, said on stderr.

Prints, per file and evaluation step, the samples, the accuracy the run recorded, the accuracy
re-scored and how many verdicts differ, then the first `--show` differing samples. With
`--fail-on-change` the exit status is 1 when any verdict differs. Standard library only.
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections import OrderedDict


def sample_file(path):
    """The sample file of a run directory, or the path itself."""
    if os.path.isdir(path):
        for name in ("eval-samples.jsonl", "eval-samples.jsonl.gz"):
            if os.path.isfile(os.path.join(path, name)):
                return os.path.join(path, name)
        raise SystemExit(f"{path}: no eval-samples.jsonl or eval-samples.jsonl.gz in it")
    if not os.path.isfile(path):
        raise SystemExit(f"{path}: no such file or directory")
    return path


def read_lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    rows = []
    with opener(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{n}: invalid JSON: {e}")
            if not isinstance(row, dict):
                raise SystemExit(f"{path}:{n}: not a JSON object")
            for key in ("answer", "response", "correct"):
                if key not in row:
                    raise SystemExit(f"{path}:{n}: no `{key}` field")
            rows.append(row)
    return rows


_exported = {}


def exported_questions(rlvr, dataset):
    """index -> question of `rlvr export data DATASET`, or None when it cannot be exported."""
    if dataset not in _exported:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "data.jsonl")
            run = subprocess.run([rlvr, "export", "data", dataset, "--out", out],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                print(f"rescore: `{dataset}` cannot be exported ({run.stderr.strip()}); "
                      "its samples are scored without their questions", file=sys.stderr)
                _exported[dataset] = None
            else:
                qs = {}
                with open(out, encoding="utf-8") as f:
                    for line in f:
                        info = json.loads(line)["extra_info"]
                        qs[info["index"]] = info["question"]
                _exported[dataset] = qs
    return _exported[dataset]


def question_of(rlvr, row):
    if isinstance(row.get("question"), str):
        return row["question"]
    dataset, index = row.get("dataset"), row.get("problem")
    if isinstance(dataset, str) and isinstance(index, int):
        qs = exported_questions(rlvr, dataset)
        if qs is not None:
            return qs.get(index)
    return None


def rescore(rlvr, rows):
    lines = []
    for r in rows:
        line = {"gold": r["answer"], "response": r["response"]}
        q = question_of(rlvr, r)
        if q is not None:
            line["question"] = q
        if r.get("choices"):
            line["choices"] = r["choices"]
        lines.append(json.dumps(line))
    run = subprocess.run([rlvr, "verify", "--jsonl", "-", "--question-field", "question"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"rescore: `{rlvr} verify` failed: {run.stderr.strip()}")
    out = [json.loads(l) for l in run.stdout.splitlines() if l.strip()]
    if len(out) != len(rows):
        raise SystemExit(f"rescore: {len(rows)} samples in, {len(out)} verdicts out")
    return [o["correct"] for o in out]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="run directories or sample files")
    ap.add_argument("--rlvr", default="rlvr", help="the build whose checker scores (default: rlvr)")
    ap.add_argument("--show", type=int, default=5, help="differing samples to print per file")
    ap.add_argument("--fail-on-change", action="store_true",
                    help="exit 1 when any verdict differs")
    args = ap.parse_args()
    changed = 0
    for run in args.runs:
        path = sample_file(run)
        rows = read_lines(path)
        now = rescore(args.rlvr, rows)
        steps = OrderedDict()
        diffs = []
        for r, c in zip(rows, now):
            s = steps.setdefault(r.get("step", "-"), [0, 0, 0, 0])
            s[0] += 1
            s[1] += bool(r["correct"])
            s[2] += bool(c)
            if bool(c) != bool(r["correct"]):
                s[3] += 1
                diffs.append((r, c))
        changed += len(diffs)
        print(f"{path}: {len(rows)} samples, {len(diffs)} verdicts differ")
        print("  step  samples  run  re-scored  differ")
        for step, (n, was, c, d) in steps.items():
            print(f"  {step!s:>4}  {n:7d}  {was / n:.3f}  {c / n:9.3f}  {d:6d}")
        for r, c in diffs[: args.show]:
            verdict = "right" if c else "wrong"
            print(f"  step {r.get('step', '-')}, problem {r.get('problem', '-')}: "
                  f"now {verdict} (gold {r['answer']!r}): {r['response'][:160]!r}")
    sys.exit(1 if args.fail_on_change and changed else 0)


if __name__ == "__main__":
    main()
