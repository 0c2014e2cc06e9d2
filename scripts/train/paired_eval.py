"""Held-out accuracy before and after training, with intervals over problems, from two sample
files of `rlvr eval --out` on the same problems (the base model's, then the checkpoint's):

    python3 scripts/train/paired_eval.py BEFORE.jsonl AFTER.jsonl

Each problem's score is its mean over its k samples (mean@k); the accuracy is the mean over
problems with a Student-t 95% interval over problems, and the change is the paired difference
per problem, with its own interval (problems are the unit: samples of one problem are not
independent). Standard library only.
"""

import json
import math
import sys
from collections import defaultdict

# two-sided 95% Student-t quantiles by degrees of freedom (above 120: the normal's 1.96)
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t95(df):
    if df > 120:
        return 1.96
    return T95[min(k for k in T95 if k >= df)]  # the next tabulated df down is wider: conservative


def per_problem(path):
    scores = defaultdict(list)
    with open(path) as f:
        for line in f:
            if line.strip():
                s = json.loads(line)
                scores[s["problem"]].append(1.0 if s["correct"] else 0.0)
    return {p: sum(v) / len(v) for p, v in scores.items()}


def interval(xs):
    n = len(xs)
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0
    half = t95(n - 1) * math.sqrt(var / n) if n > 1 else float("nan")
    return mean, mean - half, mean + half


def main(before_path, after_path):
    before, after = per_problem(before_path), per_problem(after_path)
    if set(before) != set(after):
        sys.exit(f"the two files hold different problems ({len(before)} and {len(after)})")
    problems = sorted(before)
    for name, d in (("before", before), ("after", after)):
        m, lo, hi = interval([d[p] for p in problems])
        print(f"{name}: mean@k {m:.3f} [{lo:.3f}, {hi:.3f}] over {len(problems)} problems")
    m, lo, hi = interval([after[p] - before[p] for p in problems])
    print(f"after - before: {m:+.3f} [{lo:+.3f}, {hi:+.3f}] (paired over problems, 95%)")


if __name__ == "__main__":
    main(*sys.argv[1:3])
