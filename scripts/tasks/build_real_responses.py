#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/real_responses.jsonl: real model responses to
math problems, taken from the committed evaluation outputs of public projects, each with the
dataset's own gold answer.

Each output line:
    {"id", "source", "problem", "gold", "response", "choices", "math_verify", "rlvr_baseline"}
- id: position in the file (0-based).
- source: "<source key>:<file or model>:<row>[:<sample>]", enough to find the row again.
- gold: the dataset's own gold answer, as the source stores it (a letter for multiple choice).
- response: the model's response, whole (responses over 16 KiB are skipped, never cut).
- choices: for multiple choice, the option texts in letter order (choices[0] is option A,
  with any "A)" prefix the source puts on it removed); null otherwise.
- math_verify: math-verify's verdict (see below), null when math-verify is not importable.
- rlvr_baseline: the verdict of `rlvr verify --jsonl` (with --rlvr BIN), else null.

Sources. Each is read from a checkout of the repository at the commit below, or from a bare
mirror of it (a git directory: files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>
(MMLU-Pro's outputs are ordinary git blobs, no LFS needed; the files read here are all in git.)

  key           repo @ commit                                          license
  qwen25-math   QwenLM/Qwen2.5-Math @ a45202bd16f1ec06f433442dc1152d0074773465
                evaluation/data/eval_rm_maj_example/math_cot_100.jsonl  MIT (evaluation/LICENSE)
                100 MATH test problems x 8 sampled chain-of-thought responses of a Qwen2.5-Math
                instruct model (boxed answers); gold: "answer". 220 drawn: the responses the
                file's own grader scored wrong first (at most a third), the rest at random.
  tora          microsoft/ToRA @ 213c1c995038c73fab10343814df7a42f990f026  MIT (LICENSE)
                src/outputs/llm-agents/{tora-70b-v1.0,tora-code-34b-v1.0}/gsm8k/
                test_tora_-1_seed0_t0.0_s0_e1319.jsonl
                GSM8K tool-integrated responses (program, ```output``` block, boxed answer);
                gold: "gt". 110 drawn from each model.
  gsm8k-gpt3    openai/grade-school-math @ 3101c7d5072418e28b9008a6636bde82a006892c  MIT
                grade_school_math/data/example_model_solutions.jsonl
                GPT-3 6B/175B solutions ending "A: <number>"; gold: the number after "#### "
                in grade_school_math/data/test.jsonl (same order). 220 drawn: the source's
                "is_correct" false first (at most half), the rest at random.
  pot-aqua      wenhuchen/Program-of-Thoughts @ 850399c3eff8c37458a9d642c4a98df287f50f3a  MIT
                outputs/aqua_gpt4_s0_e-1_03_31_22_24.jsonl
                GPT-4 chain-of-thought on AQuA-RAT (multiple choice, 5 options); response:
                "rationale"; gold: "answer" (a letter); choices: "options". 220 drawn.
  mmlu-pro      TIGER-AI-Lab/MMLU-Pro @ f418b116db00b065c2aea046518d8fcf74d39872  Apache-2.0
                eval_results/model_outputs_<model>_5shots.zip for the models in MMLU_PRO_MODELS
                Category "math" only (10 options); response: "generated_text" (5-shot CoT,
                cut at the generation limit in some models); gold: "answer" (a letter);
                choices: "options". 50 drawn per model.
  kojima        kojima-takeshi188/zero_shot_cot @ 5ef330fcdeec0cd26aee27943504f91f8ec1c33c
                log/aqua_zero_shot_cot.log, log/gsm8k_zero_shot_cot.log
                NO LICENSE in the repository, so its text is not committed: it is built only
                with --kojima, into --unlicensed-out (required with it; keep it outside the
                repository or uncommitted). The response is
                the "A: Let's think step by step." completion plus the answer-extraction turn
                ("Therefore, ... the answer is X."); gold: the log's "GT". 150 per log.
  skythought    NovaSky-AI/SkyThought @ e78bc0515831b0a7e0ad045a7860c52aba9bfe0f  Apache-2.0
                skythought/Qwen2.5-Math/evaluation/outputs/<model dir>/<data>_eval/<data>/
                test_<prompt>_-1_seed0_t0.0_s0_e-1.jsonl for the files in SKYTHOUGHT_FILES
                (a commit of 2025-01-27, "add corrupt and reflection eval results"; the
                outputs were deleted from the repository later, so read them at this commit).
                Qwen2.5-Math evaluation outputs (greedy, one response per problem): the Sky-T1
                long chain-of-thought models (QwQ-style "<|begin_of_thought|> ...
                <|end_of_thought|> <|begin_of_solution|> ... <|end_of_solution|>" markers left
                in the text, many cut at the generation limit), the base models Qwen2.5-Math-7B
                and Llama-3.1-8B (which continue past the answer, Llama with "<|im_start|>"
                turns), on MATH-500, Minerva-Math (science answers, units in the responses), AMC23 and
                AIME24;
                response: "code"[0]; gold: MATH-500's "answer" for math500 (units and
                \\text{} kept: "864 \\mbox{ inches}^2"), else "gt" (the answer the file's own
                grader used; Minerva's bare numbers, AMC/AIME integers).
                Drawn per file as SKYTHOUGHT_FILES says (all that fit where fewer than n do:
                Llama-3.1-8B's responses are often empty or over 16 KiB).
  zeroeval      yuchenlin/ZeroEval @ 570c6269a2e4930ee06a17e713fece1ba52cf1dd  Apache-2.0
                result_dirs/math-l5/<model>.json, result_dirs/gsm/Mistral-Nemo-Instruct-2407.json
                ZeroEval's zero-shot outputs: the prompt asks for a JSON object with
                "reasoning" and "answer" fields (models answer in a ```json block, in plain
                text, with "# Answer" headings, or run into repetition until the token limit);
                Mistral-Nemo's GSM8K outputs end in runs of decoded "</s>" tokens. response:
                "output"[0]; gold: "answer" (for gsm, its leading "# " removed). Drawn per file
                as ZEROEVAL_FILES says; for math-l5, first up to a third from the responses
                with no `"answer"` field, then at random.

Verdicts. math-verify (pip install math-verify; 0.9.0 when written):
    verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`,
    `\\boxed` or `\\(` (as scripts/tasks/build_checker_set.py does); an exception is False.
rlvr: `rlvr verify --jsonl - --details` on {"gold", "response"} lines (--rlvr BIN).

Usage (python3.11, standard library; math-verify in the same interpreter for its verdicts):
    python3 -m venv ~/venv-mv && ~/venv-mv/bin/pip install math-verify
    ~/venv-mv/bin/python scripts/tasks/build_real_responses.py \\
        --qwen25-math DIR --tora DIR --gsm8k-gpt3 DIR --pot-aqua DIR --mmlu-pro DIR \\
        --skythought DIR --zeroeval DIR \\
        [--kojima DIR --unlicensed-out FILE] [--rlvr target/debug/rlvr]
Deterministic: one fixed seed per source, rows in source order before drawing.
"""
import argparse
import ast
import io
import json
import pathlib
import random
import re
import subprocess
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/real_responses.jsonl"
MAX_RESPONSE = 16 * 1024  # bytes (UTF-8); longer responses are skipped

COMMITS = {
    "qwen25-math": "a45202bd16f1ec06f433442dc1152d0074773465",
    "tora": "213c1c995038c73fab10343814df7a42f990f026",
    "gsm8k-gpt3": "3101c7d5072418e28b9008a6636bde82a006892c",
    "pot-aqua": "850399c3eff8c37458a9d642c4a98df287f50f3a",
    "mmlu-pro": "f418b116db00b065c2aea046518d8fcf74d39872",
    "kojima": "5ef330fcdeec0cd26aee27943504f91f8ec1c33c",
    "skythought": "e78bc0515831b0a7e0ad045a7860c52aba9bfe0f",
    "zeroeval": "570c6269a2e4930ee06a17e713fece1ba52cf1dd",
}
MMLU_PRO_MODELS = [
    "Qwen1.5-7B-Chat",
    "mathstral-7B",
    "Meta-Llama-3_1-8B-Instruct",
    "Mistral-7B-Instruct-v0.2",
    "Phi-3-mini-4k-instruct",
]
# (model directory under skythought/Qwen2.5-Math/evaluation/outputs/, data set, prompt, n)
SKYTHOUGHT_FILES = [
    ("home/ubuntu/skyov1-dl/Sky-T1-math-correct-5K-27B", "math500", "Sky-T1", 45),
    ("home/ubuntu/skyov1-dl/Sky-T1-math-correct-5K-27B", "minerva_math", "Sky-T1", 25),
    ("home/ubuntu/skyov1-dl/Sky-T1-math-wrong-5K-27B", "minerva_math", "Sky-T1", 25),
    ("home/ubuntu/skyov1-dl/Sky-T1-math-wrong-5K-27B", "amc23", "Sky-T1", 10),
    ("home/ubuntu/skyov1-dl/Sky-T1-math-wrong-5K-27B", "aime24", "Sky-T1", 10),
    ("icml_models/Sky-T1-math-corrupt-0.2-32B", "amc23", "Sky-T1", 10),
    ("icml_models/Sky-T1-math-reflection-0.5-32B", "amc23", "Sky-T1", 10),
    ("Qwen/Qwen2.5-Math-7B", "math500", "qwen25-math-cot", 25),
    ("Qwen/Qwen2.5-Math-7B", "minerva_math", "qwen25-math-cot", 25),
    ("meta-llama/Llama-3.1-8B", "amc23", "qwen25-math-cot", 15),
    ("meta-llama/Llama-3.1-8B", "aime24", "qwen25-math-cot", 10),
]
# (file under result_dirs/, n)
ZEROEVAL_FILES = [
    ("gsm/Mistral-Nemo-Instruct-2407.json", 40),
    ("math-l5/Meta-Llama-3.1-70B-Instruct.json", 20),
    ("math-l5/Meta-Llama-3.1-8B-Instruct.json", 20),
    ("math-l5/Yi-1.5-9B-Chat.json", 25),
    ("math-l5/o1-mini-2024-09-12.json", 20),
    ("math-l5/o1-preview-2024-09-12.json", 20),
    ("math-l5/Qwen2.5-3B-Instruct.json", 20),
    ("math-l5/gemma-2-2b-it.json", 20),
    ("math-l5/Phi-3.5-mini-instruct.json", 20),
    ("math-l5/reka-core-20240501.json", 15),
]


class Repo:
    """A source repository: a checkout (files read from disk) or a bare git directory."""

    def __init__(self, path, commit):
        self.path = pathlib.Path(path)
        self.commit = commit
        self.bare = not (self.path / ".git").exists() and (self.path / "objects").is_dir()
        if not self.bare:
            head = subprocess.run(["git", "-C", str(self.path), "rev-parse", "HEAD"],
                                  capture_output=True, text=True)
            if head.returncode == 0 and head.stdout.strip() != commit:
                print(f"warning: {self.path} is at {head.stdout.strip()}, not {commit}",
                      file=sys.stderr)

    def read_bytes(self, rel):
        if self.bare:
            return subprocess.run(["git", "--git-dir", str(self.path), "show", f"{self.commit}:{rel}"],
                                  capture_output=True, check=True).stdout
        return (self.path / rel).read_bytes()

    def read_text(self, rel):
        return self.read_bytes(rel).decode("utf-8")

    def jsonl(self, rel):
        return [json.loads(l) for l in self.read_text(rel).splitlines() if l.strip()]


def fits(resp):
    return isinstance(resp, str) and resp.strip() != "" and len(resp.encode("utf-8")) <= MAX_RESPONSE


def strip_letter(opt):
    """'A)5(√3 + 1)' -> '5(√3 + 1)' (AQuA prefixes each option with its letter)."""
    return re.sub(r"^\s*\(?[A-J]\)\s*", "", opt)


def row(source, problem, gold, response, choices=None):
    return {"source": source, "problem": problem, "gold": gold, "response": response,
            "choices": choices}


def draw(rows, n, seed, wrong=None, max_wrong_frac=0.0):
    """n rows at random (seed); with `wrong` (a predicate), first up to max_wrong_frac*n of
    the rows it marks, then the rest from the others. Output in source order."""
    rng = random.Random(seed)
    idx = list(range(len(rows)))
    picked = []
    if wrong is not None and max_wrong_frac > 0:
        w = [i for i in idx if wrong(rows[i])]
        rng.shuffle(w)
        picked = w[: int(n * max_wrong_frac)]
    rest = [i for i in idx if i not in set(picked)]
    rng.shuffle(rest)
    picked += rest[: n - len(picked)]
    return [rows[i] for i in sorted(picked)]


# ---------------------------------------------------------------------------------------
# sources

def qwen25_math(repo, n=220):
    rel = "evaluation/data/eval_rm_maj_example/math_cot_100.jsonl"
    out = []
    for r in repo.jsonl(rel):
        for k, resp in enumerate(r["code"]):
            if fits(resp):
                x = row(f"qwen25-math:math_cot_100:{r['idx']}:{k}", r["question"], r["answer"], resp)
                x["_wrong"] = not r["score"][k]
                out.append(x)
    return draw(out, n, 101, wrong=lambda x: x["_wrong"], max_wrong_frac=1 / 3)


def tora(repo, n_each=110):
    out = []
    for j, model in enumerate(["tora-70b-v1.0", "tora-code-34b-v1.0"]):
        rel = f"src/outputs/llm-agents/{model}/gsm8k/test_tora_-1_seed0_t0.0_s0_e1319.jsonl"
        rows = [row(f"tora:{model}:gsm8k:{r['idx']}", r["question"], str(r["gt"]), r["code"][0])
                for r in repo.jsonl(rel) if fits(r["code"][0])]
        out += draw(rows, n_each, 201 + j)
    return out


def gsm8k_gpt3(repo, n=220):
    sols = repo.jsonl("grade_school_math/data/example_model_solutions.jsonl")
    test = repo.jsonl("grade_school_math/data/test.jsonl")
    assert len(sols) == len(test)
    out = []
    for i, (s, t) in enumerate(zip(sols, test)):
        assert s["question"] == t["question"], i
        gold = t["answer"].split("####")[-1].strip()
        for model in ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]:
            resp = s[model]["solution"]
            if fits(resp):
                x = row(f"gsm8k-gpt3:{model}:{i}", s["question"], gold, resp)
                x["_wrong"] = not s[model]["is_correct"]
                out.append(x)
    return draw(out, n, 301, wrong=lambda x: x["_wrong"], max_wrong_frac=1 / 2)


def pot_aqua(repo, n=220):
    rel = "outputs/aqua_gpt4_s0_e-1_03_31_22_24.jsonl"
    rows = []
    for i, r in enumerate(repo.jsonl(rel)):
        opts = r["options"]
        if isinstance(opts, str):
            opts = ast.literal_eval(opts)
        if fits(r["rationale"]):
            rows.append(row(f"pot-aqua:aqua_gpt4:{i}", r["question"], r["answer"], r["rationale"],
                            [strip_letter(o) for o in opts]))
    return draw(rows, n, 401)


def mmlu_pro(repo, n_each=50):
    out = []
    for j, model in enumerate(MMLU_PRO_MODELS):
        rel = f"eval_results/model_outputs_{model}_5shots.zip"
        z = zipfile.ZipFile(io.BytesIO(repo.read_bytes(rel)))
        data = json.load(z.open(z.namelist()[0]))
        rows = [row(f"mmlu-pro:{model}:{r['question_id']}", r["question"], r["answer"],
                    r["generated_text"], list(r["options"]))
                for r in data if r.get("category") == "math" and fits(r.get("generated_text"))]
        out += draw(rows, n_each, 501 + j)
    return out


def kojima_log(text, name):
    """Rows of a zero_shot_cot log: question, the 'A:' completion (to 'pred_before'), GT."""
    rows = []
    for block in text.split("*************************\n"):
        m = re.search(r"^Q: (.*?)\nA: (.*?)\npred_before :.*?^GT : (.*?)$", block, re.S | re.M)
        if not m:
            continue
        q, resp, gt = m.group(1), m.group(2), m.group(3).strip()
        n = re.search(r"^(\d+)st data", block, re.M)
        choices = None
        if "Answer Choices:" in q:
            q, opts = q.split("Answer Choices:", 1)
            choices = [o.strip() for o in re.split(r"\([A-E]\)", opts)[1:]]
        if fits(resp):
            rows.append(row(f"kojima:{name}:{n.group(1) if n else len(rows)}", q.strip(), gt,
                            resp, choices))
    return rows


def kojima(repo, n_each=150):
    out = []
    for j, name in enumerate(["aqua_zero_shot_cot", "gsm8k_zero_shot_cot"]):
        out += draw(kojima_log(repo.read_text(f"log/{name}.log"), name), n_each, 601 + j)
    return out


def skythought(repo, files=SKYTHOUGHT_FILES):
    out = []
    for j, (model_dir, data, prompt, n) in enumerate(files):
        rel = (f"skythought/Qwen2.5-Math/evaluation/outputs/{model_dir}/{data}_eval/{data}/"
               f"test_{prompt}_-1_seed0_t0.0_s0_e-1.jsonl")
        model = model_dir.rsplit("/", 1)[-1]
        # MATH-500's own "answer"; "gt" (parsed from the solution by the evaluation code)
        # drops "\\" and "\pm" there ("\begin{pmatrix}-18-4996\end{pmatrix}")
        gold_key = "answer" if data == "math500" else "gt"
        rows = [row(f"skythought:{model}:{data}:{r['idx']}", r["question"], str(r[gold_key]),
                    r["code"][0])
                for r in repo.jsonl(rel) if fits(r["code"][0])]
        out += draw(rows, n, 701 + j)
    return out


def zeroeval(repo, files=ZEROEVAL_FILES):
    out = []
    for j, (rel, n) in enumerate(files):
        data, model = rel.split("/")
        model = model[: -len(".json")]
        rows = []
        for r in json.loads(repo.read_text(f"result_dirs/{rel}")):
            resp = r["output"][0] if isinstance(r["output"], list) else r["output"]
            if not fits(resp):
                continue
            gold = str(r["answer"])
            if data == "gsm":
                gold = gold.lstrip("#").strip()
            x = row(f"zeroeval:{data}:{model}:{r['id']}", r.get("problem") or r.get("question"),
                    gold, resp)
            x["_wrong"] = '"answer"' not in resp
            rows.append(x)
        if data == "math-l5":
            out += draw(rows, n, 801 + j, wrong=lambda x: x["_wrong"], max_wrong_frac=1 / 3)
        else:
            out += draw(rows, n, 801 + j)
    return out


# ---------------------------------------------------------------------------------------
# verdicts

def mv_verdicts(rows):
    """math-verify's verdicts, by the convention of the checker fixture (build_checker_set.py's
    mv_verdicts: the gold wrapped in `$..$` when it has no delimiter)."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from build_checker_set import mv_verdicts as checker_set_mv_verdicts

    out = checker_set_mv_verdicts(rows)
    if out and out[0] is None:
        print("math-verify not importable: math_verify left null", file=sys.stderr)
    return out


def rlvr_verdicts(rows, binary):
    if not binary:
        return [None] * len(rows)
    inp = "".join(json.dumps({"gold": p["gold"], "response": p["response"]}, ensure_ascii=False) + "\n"
                  for p in rows)
    res = subprocess.run([binary, "verify", "--jsonl", "-", "--details"], input=inp,
                         capture_output=True, text=True, check=True)
    lines = [json.loads(l) for l in res.stdout.splitlines() if l.strip()]
    assert len(lines) == len(rows)
    return [bool(l["correct"]) for l in lines]


def write(rows, path, rlvr):
    for p, mv, rv in zip(rows, mv_verdicts(rows), rlvr_verdicts(rows, rlvr)):
        p.pop("_wrong", None)
        p["math_verify"] = mv
        p["rlvr_baseline"] = rv
    with open(path, "w") as f:
        for i, p in enumerate(rows):
            f.write(json.dumps({"id": i, **p}, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for key in ["qwen25-math", "tora", "gsm8k-gpt3", "pot-aqua", "mmlu-pro", "skythought",
                "zeroeval"]:
        ap.add_argument(f"--{key}", required=True, metavar="DIR",
                        help=f"checkout or bare git dir of the {key} source")
    ap.add_argument("--kojima", metavar="DIR", help="zero_shot_cot checkout (unlicensed: separate file)")
    ap.add_argument("--rlvr", help="rlvr binary for the rlvr_baseline verdicts")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--unlicensed-out", help="where the --kojima rows go")
    a = ap.parse_args()
    if a.kojima and not a.unlicensed_out:
        ap.error("--kojima needs --unlicensed-out (its rows are not to be committed)")

    builders = [("qwen25-math", qwen25_math), ("tora", tora), ("gsm8k-gpt3", gsm8k_gpt3),
                ("pot-aqua", pot_aqua), ("mmlu-pro", mmlu_pro), ("skythought", skythought),
                ("zeroeval", zeroeval)]
    rows = []
    for key, fn in builders:
        got = fn(Repo(getattr(a, key.replace("-", "_")), COMMITS[key]))
        print(f"{key}: {len(got)}", file=sys.stderr)
        rows += got
    write(rows, a.out, a.rlvr)
    print(f"{len(rows)} responses -> {a.out}", file=sys.stderr)
    if a.kojima:
        extra = kojima(Repo(a.kojima, COMMITS["kojima"]))
        path = a.unlicensed_out
        write(extra, path, a.rlvr)
        print(f"kojima (not to be committed): {len(extra)} -> {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
