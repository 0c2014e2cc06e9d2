#!/usr/bin/env python3
"""Rewrites rows of a local data directory into the layout of each preset's pinned Hugging Face
hub copy (docs/data.md): the same repository paths, file names, formats, column names, types
and nesting, DAPO-Math-17k's prompt wrapper and block repetition, and LiveCodeBench's private
tests as base64 of zlib of `pickle.dumps` of a JSON string (Python's own pickle, so rlvr's
reader is tested on bytes it did not write). The output directory is laid out as a hub root,
`datasets/<owner>/<name>/<file>`, the layout the loopback hub of the tests serves
(crates/rlvr-hub/tests/common/hub_server.rs).

Content comes from the local rows, so where a hub copy has rows we do not hold, the output has
ours instead (documented in docs/data.md, "Checking the hub readers"):
- polaris and deepscaler: the 975 AIME rows of deepscaler_components/aime.json;
- math_train: math_train/math.json (answers only), with a synthetic one-line solution
  `... $\\boxed{<answer>}$` in the hub's `solution` column;
- livecodebench: code/codeforces.json (stdin tests) and code/leetcode.json (functional tests
  converted from `check(candidate)` asserts to LiveCodeBench's one-JSON-value-per-line
  arguments), spread over test.jsonl ... test6.jsonl;
- olympiadbench: the local 675 rows less id 1965, which the pinned hub revision lacks.

Also writes MANIFEST.json next to `datasets/`: per preset, the problems and the de-duplicated
rows the reader must report, computed here from the rows written.

Usage (needs pyarrow):
  python3 scripts/tasks/make_hub_layout.py --out DIR           # every row ($RLVR_DATA_DIR)
  python3 scripts/tasks/make_hub_layout.py --small --out DIR   # a handful of rows per preset
The committed fixtures are `--small --out crates/rlvr-train/tests/fixtures/hub`.
"""
import argparse
import ast
import base64
import json
import os
import pathlib
import pickle
import shutil
import uuid
import zlib

import pyarrow as pa
import pyarrow.parquet as pq

DAPO_PREFIX = (
    "Solve the following math problem step by step. The last line of your response should be of the form "
    "Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\n"
)
DAPO_SUFFIX = '\n\nRemember to put your answer on its own line after "Answer:".'

MATH_SUBJECTS = {
    "Algebra": "algebra",
    "Counting & Probability": "counting_and_probability",
    "Geometry": "geometry",
    "Intermediate Algebra": "intermediate_algebra",
    "Number Theory": "number_theory",
    "Prealgebra": "prealgebra",
    "Precalculus": "precalculus",
}
LCB_FILES = ["test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl", "test6.jsonl"]


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class Writer:
    def __init__(self, out, small):
        self.root = pathlib.Path(out) / "datasets"
        self.small = small
        self.manifest = {}

    def path(self, repo, file):
        p = self.root / repo / file
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def parquet(self, repo, file, table):
        p = self.path(repo, file)
        pq.write_table(table, p, compression="snappy")
        return p

    def jsonl(self, repo, file, rows):
        p = self.path(repo, file)
        with open(p, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        return p

    def json(self, repo, file, rows):
        p = self.path(repo, file)
        with open(p, "w", encoding="utf-8") as f:
            json.dump(rows, f, ensure_ascii=False)
        return p

    def take(self, rows, n=4):
        return rows[:n] if self.small else rows


def dapo(w, data, repeat):
    t = pq.read_table(data / "dapo_math_17k/dapo_math_17k.parquet").to_pylist()
    block = [(r["prompt"][0]["content"], r["reward_model"]["ground_truth"]) for r in t]
    if w.small:
        # 4 rows, the last a whitespace variant of the first (same normalised text and answer)
        block = block[:3] + [("  " + block[0][0].replace(" ", "  ", 1) + "\n", block[0][1])]
    rows = []
    for i, (problem, answer) in enumerate(block):
        rows.append(
            {
                "data_source": "math_dapo",
                "prompt": [{"content": DAPO_PREFIX + problem + DAPO_SUFFIX, "role": "user"}],
                "ability": "MATH",
                "reward_model": {"ground_truth": answer, "style": "rule-lighteval/MATH_v2"},
                "extra_info": {"index": str(uuid.UUID(int=i + 1))},
            }
        )
    schema = pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", pa.list_(pa.struct([("content", pa.string()), ("role", pa.string())]))),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("ground_truth", pa.string()), ("style", pa.string())])),
            ("extra_info", pa.struct([("index", pa.string())])),
        ]
    )
    # the block repeated back to back, as the hub file holds it
    table = pa.concat_tables([pa.Table.from_pylist(rows, schema)] * repeat)
    w.parquet("BytedTsinghua-SIA/DAPO-Math-17k", "data/dapo-math-17k.parquet", table)
    distinct = {(" ".join(p.split()), a.strip()) for p, a in block}
    n = len(rows) * repeat
    w.manifest["dapo_math_17k"] = {"problems": len(distinct), "duplicates": n - len(distinct), "rows_read": n}


def math500(w, data):
    rows = w.take(read_jsonl(data / "math500/test.jsonl"))
    w.jsonl("HuggingFaceH4/MATH-500", "test.jsonl", rows)
    w.manifest["math500"] = {"problems": len(rows), "answers": [r["answer"] for r in rows[:4]]}


def aime24(w, data):
    rows = w.take(read_jsonl(data / "aime24/test.jsonl"))
    out = [
        {"id": r["id"], "problem": r["problem"], "solution": r["solution"], "answer": r["answer"], "url": r["url"], "year": "2024"}
        for r in rows
    ]
    schema = pa.schema([("id", pa.int64()), ("problem", pa.string()), ("solution", pa.string()), ("answer", pa.string()), ("url", pa.string()), ("year", pa.string())])
    w.parquet("HuggingFaceH4/aime_2024", "data/train-00000-of-00001.parquet", pa.Table.from_pylist(out, schema))
    w.manifest["aime24"] = {"problems": len(out), "answers": [r["answer"] for r in out[:4]]}


def aime25(w, data):
    rows = w.take(read_jsonl(data / "aime25/train.jsonl"))
    schema = pa.schema([("problem_idx", pa.int64()), ("problem", pa.string()), ("answer", pa.int64()), ("problem_type", pa.list_(pa.string()))])
    out = [{k: r[k] for k in ("problem_idx", "problem", "answer", "problem_type")} for r in rows]
    w.parquet("MathArena/aime_2025", "data/train-00000-of-00001.parquet", pa.Table.from_pylist(out, schema))
    w.manifest["aime25"] = {"problems": len(out), "answers": [str(r["answer"]) for r in out[:4]]}


def amc23(w, data):
    rows = w.take(read_jsonl(data / "amc23/test.jsonl"))
    schema = pa.schema([("id", pa.int64()), ("question", pa.string()), ("answer", pa.float64()), ("url", pa.string())])
    out = [{"id": r["id"], "question": r["problem"], "answer": float(r["answer"]), "url": r["url"]} for r in rows]
    w.parquet("math-ai/amc23", "test-00000-of-00001.parquet", pa.Table.from_pylist(out, schema))
    w.manifest["amc23"] = {"problems": len(out), "answers": [repr(r["answer"]) for r in out[:4]]}


def minerva(w, data):
    rows = w.take(read_jsonl(data / "minerva_math/test.jsonl"))
    schema = pa.schema([("problem", pa.string()), ("solution", pa.string()), ("type", pa.string()), ("idx", pa.int64())])
    out = [{k: r[k] for k in ("problem", "solution", "type", "idx")} for r in rows]
    w.parquet("knoveleng/Minerva-Math", "data/train-00000-of-00001.parquet", pa.Table.from_pylist(out, schema))
    w.manifest["minerva_math"] = {"problems": len(out)}


def olympiadbench(w, data):
    rows = [r for r in read_jsonl(data / "olympiadbench/test.jsonl") if r["id"] != 1965]
    rows = w.take(rows)
    fields = [
        ("id", pa.int64()), ("question", pa.string()), ("solution", pa.list_(pa.string())),
        ("final_answer", pa.list_(pa.string())), ("context", pa.string()),
    ] + [(f"image_{i}", pa.string()) for i in range(1, 10)] + [
        ("modality", pa.string()), ("difficulty", pa.string()), ("is_multiple_answer", pa.bool_()),
        ("unit", pa.string()), ("answer_type", pa.string()), ("error", pa.string()),
        ("question_type", pa.string()), ("subfield", pa.string()), ("subject", pa.string()), ("language", pa.string()),
    ]
    out = []
    for r in rows:
        o = {k: r.get(k) for k, _ in fields}
        o.update(modality="Text-only", difficulty="Competition", question_type="Open-ended", subject="Math", language="English")
        out.append(o)
    w.parquet(
        "Hothan/OlympiadBench",
        "OlympiadBench/OE_TO_maths_en_COMP/OE_TO_maths_en_COMP.parquet",
        pa.Table.from_pylist(out, pa.schema(fields)),
    )
    w.manifest["olympiadbench"] = {"problems": len(out), "answers": [", ".join(r["final_answer"]) for r in out[:4]]}


def gsm8k(w, data):
    schema = pa.schema([("question", pa.string()), ("answer", pa.string())])
    for split, preset in (("test", "gsm8k"), ("train", "gsm8k_train")):
        rows = w.take(read_jsonl(data / f"gsm8k/{split}.jsonl"))
        w.parquet("openai/gsm8k", f"main/{split}-00000-of-00001.parquet", pa.Table.from_pylist(rows, schema))
        w.manifest[preset] = {
            "problems": len(rows),
            "answers": [r["answer"].rsplit("####", 1)[1].strip().replace(",", "") for r in rows[:4]],
        }


def math_train(w, data):
    rows = read_json(data / "math_train/math.json")
    schema = pa.schema([("problem", pa.string()), ("level", pa.string()), ("type", pa.string()), ("solution", pa.string())])
    total = 0
    for subject, config in MATH_SUBJECTS.items():
        sub = w.take([r for r in rows if r["type"] == subject], 2)
        out = [
            {"problem": r["problem"], "level": f"Level {int(r['difficulty'])}", "type": r["type"], "solution": f"So the answer is $\\boxed{{{r['answer']}}}$."}
            for r in sub
        ]
        if w.small and config == "algebra":
            # a worked solution without a box: skipped and listed, not an error
            out.append({"problem": "What is $1+1$?", "level": "Level 1", "type": subject, "solution": "It is 2."})
        w.parquet("EleutherAI/hendrycks_math", f"{config}/train-00000-of-00001.parquet", pa.Table.from_pylist(out, schema))
        total += len(sub)
    w.manifest["math_train"] = {"problems": total, "skipped": 1 if w.small else None}


def deepscaler_and_polaris(w, data):
    rows = w.take(read_json(data / "deepscaler_components/aime.json"))
    w.json("agentica-org/DeepScaleR-Preview-Dataset", "deepscaler.json", [{"problem": r["problem"], "solution": r["solution"], "answer": r["answer"]} for r in rows])
    w.manifest["deepscaler"] = {"problems": len(rows), "answers": [r["answer"] for r in rows[:4]]}
    w.jsonl(
        "POLARIS-Project/Polaris-Dataset-53K",
        "polaris-data-53K.jsonl",
        [{"problem": r["problem"], "answer": r["answer"], "difficulty": f"{i % 9}/8"} for i, r in enumerate(rows)],
    )
    w.manifest["polaris"] = {"problems": len(rows), "answers": [r["answer"] for r in rows[:4]]}


def encode_private(tests, protocol):
    """LiveCodeBench's encoding: base64(zlib(pickle(json string)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests), protocol=protocol))).decode()


def functional_tests(check):
    """LeetCode `assert candidate(a = 1, b = [2]) == 3` lines as LiveCodeBench functional tests:
    one JSON value per argument per line, the output as JSON. None when an assert is not of that
    literal form."""
    tests = []
    try:
        tree = ast.parse(check)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        t = node.test
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)):
            return None
        call = t.left
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "candidate"):
            return None
        try:
            args = [ast.literal_eval(a) for a in call.args] + [ast.literal_eval(k.value) for k in call.keywords]
            out = ast.literal_eval(t.comparators[0])
            tests.append({"input": "\n".join(json.dumps(a) for a in args), "output": json.dumps(out), "testtype": "functional"})
        except (ValueError, TypeError, SyntaxError):
            return None
    return tests or None


def livecodebench(w, data):
    cf = read_json(data / "code/codeforces.json")
    lc = read_json(data / "code/leetcode.json")
    rows = []
    for i, r in enumerate(cf):
        tests = [dict(t, testtype="stdin") for t in r["tests"]]
        rows.append(("codeforces", f"cf{i}", r["problem"], "", tests, {}))
    for i, r in enumerate(lc):
        tests = functional_tests(r["tests"]["functional"])
        fn = r["tests"]["functional"].rsplit("check(Solution().", 1)
        if tests is None or len(fn) != 2:
            continue
        func = fn[1].split(")")[0]
        text = r["problem"]
        starter = ""
        if "```python\n" in text:
            text, starter = text.rsplit("```python\n", 1)
            starter = starter.split("```")[0]
        rows.append(("leetcode", f"lc{i}", text, starter, tests, {"func_name": func}))
    if w.small:
        # per file: one stdin row; functional rows in test.jsonl and test6.jsonl; a mixed row in test3
        stdin = [r for r in rows if r[0] == "codeforces"][:6]
        func = [r for r in rows if r[0] == "leetcode"][:2]
        mixed = ("codeforces", "mixed0", stdin[0][2], "", stdin[0][4] + func[0][4], {"func_name": func[0][5]["func_name"]})
        files = [[stdin[0], func[0]], [stdin[1]], [stdin[2], mixed], [stdin[3]], [stdin[4]], [stdin[5], func[1]]]
        skipped = {"livecodebench": 1, "livecodebench_v6": 0}
    else:
        n = len(rows)
        cuts = [0] + [n * k // 6 for k in range(1, 6)] + [n]
        files = [rows[cuts[k]:cuts[k + 1]] for k in range(6)]
        skipped = {"livecodebench": 0, "livecodebench_v6": 0}
    written = 0
    for k, (file, chunk) in enumerate(zip(LCB_FILES, files)):
        out = []
        for j, (platform, qid, text, starter, tests, meta) in enumerate(chunk):
            public, private = tests[:1], tests[1:]
            # older rows hold plain JSON private tests; the others the pickle encoding, at
            # every protocol LiveCodeBench's writers may have used
            private_text = json.dumps(private) if (k == 0 and j == 0) else encode_private(private, 2 + (written % 4))
            written += 1
            out.append(
                {
                    "question_title": qid,
                    "question_content": text,
                    "platform": platform,
                    "question_id": qid,
                    "contest_id": qid,
                    "contest_date": "2024-08-01T00:00:00",
                    "starter_code": starter,
                    "difficulty": "easy",
                    "public_test_cases": json.dumps(public),
                    "private_test_cases": private_text,
                    "metadata": json.dumps(meta),
                }
            )
        w.jsonl("livecodebench/code_generation_lite", file, out)
    total = sum(len(f) for f in files)
    w.manifest["livecodebench"] = {"problems": total - skipped["livecodebench"], "skipped": skipped["livecodebench"]}
    w.manifest["livecodebench_v6"] = {"problems": len(files[5]), "skipped": 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("RLVR_DATA_DIR"), help="local data directory (default: $RLVR_DATA_DIR)")
    ap.add_argument("--out", required=True, help="hub root to write (datasets/<owner>/<name>/<file>)")
    ap.add_argument("--small", action="store_true", help="a handful of rows per preset (the committed test fixtures)")
    ap.add_argument("--dapo-repeat", type=int, default=None, help="repeats of DAPO's block (default 100, or 3 with --small)")
    a = ap.parse_args()
    if not a.data_dir:
        ap.error("no data directory: pass --data-dir or set RLVR_DATA_DIR")
    data = pathlib.Path(a.data_dir)
    out = pathlib.Path(a.out)
    if (out / "datasets").exists():
        shutil.rmtree(out / "datasets")
    w = Writer(out, a.small)
    dapo(w, data, a.dapo_repeat or (3 if a.small else 100))
    math500(w, data)
    aime24(w, data)
    aime25(w, data)
    amc23(w, data)
    minerva(w, data)
    olympiadbench(w, data)
    gsm8k(w, data)
    math_train(w, data)
    deepscaler_and_polaris(w, data)
    livecodebench(w, data)
    (out / "MANIFEST.json").write_text(json.dumps(w.manifest, indent=1, sort_keys=True) + "\n")
    size = sum(p.stat().st_size for p in (out / "datasets").rglob("*") if p.is_file())
    print(f"wrote {out}/datasets ({size} bytes) and {out}/MANIFEST.json")
    for k, v in sorted(w.manifest.items()):
        print(f"  {k:<18} {v['problems']} problems")


if __name__ == "__main__":
    main()
