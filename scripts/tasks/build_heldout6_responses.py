#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout6_responses.jsonl: a SIXTH held-out set of
real model responses to math problems, each with the dataset's own gold answer, taken from the
committed outputs of public projects that no earlier fixture of this repository uses: not the
seven sources of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math,
wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval),
nor kojima's zero_shot_cot logs, nor the four of heldout_responses.jsonl (OpenLMLab/GAOKAO-Bench,
iamyb/llm-gaokao-math-eval, veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning), nor the
three of heldout2_responses.jsonl (lz1oceani/verify_cot, protagolabs/odyssey-math,
dvlab-research/Mr-Ben), nor the two of heldout3_responses.jsonl (suzgunmirac/meta-prompting,
suzgunmirac/BIG-Bench-Hard), nor the two of heldout4_responses.jsonl (ruixiangcui/AGIEval,
dvlab-research/MR-GSM8K), nor the one of heldout5_responses.jsonl (maitrix-org/llm-reasoners), nor
math-verify's tests, nor the peer pairs of checker_set.jsonl, nor the sources kept for the
maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel,
MathCoder). The set measures the checker; it was not used to tune it (see docs/checker.md, "A sixth
held-out set"). Every answer is free-form and its gold is NOT a plain integer (the fifth set tests
those): LaTeX fractions, radicals, pi, intervals, tuples, sets, matrices, expressions, equations,
scientific notation, degrees, bases, names.

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "simple-evals-ru:<run>:<row>" (run: the results file's name without .jsonl, which names
  the model; row: its line, 0-based) or "prime:<model>:<data set>:<idx>" (idx: the harness's "idx",
  the problem's position in the data set), enough to find the row again.
- problem: the problem text, cut to its first PROBLEM_CHARS characters.
- gold: the data set's own gold answer as the source stores it, outer whitespace removed.
- response: the model's response, cut in the middle when over MAX_RESPONSE characters (its first
  HEAD characters, a line "[... N characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: always null. (A few golds are a letter: MATH's "Enter the letter of the correct option"
  questions, gold "\\text{(E)}", and nine GaoKao2023-En questions with ACT-style options (F)-(K);
  their options are written in the problem and the letter is compared as a letter.)
- math_verify: math-verify's verdict (see below).

Sources. Each is read from a checkout of the repository at the commit below, or from a bare mirror
of it (files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>
and for prime, whose commit is reachable only from pull request #1:
    git clone https://github.com/PRIME-RL/PRIME DIR && git -C DIR fetch origin pull/1/head \\
        && git -C DIR checkout <commit>

  key              repo @ commit                                       license
  simple-evals-ru  kuk/simple-evals-ru @ 5fb1507eafd70be92ff3379440c13ee5272963ce
                                                                       MIT (LICENSE)
                   data/results/math/<run>.jsonl (29 runs) with the gold from
                   data/benches/math.jsonl (matched by "id")
                   "simple-evals-ru" (A. Kukushkin, 2025): OpenAI simple-evals' MATH-500 prompt ("Solve
                   the following math problem step by step. The last line of your response should be
                   of the form Answer: $ANSWER ... you do not need to use a \\boxed command"), run on
                   200 of the MATH-500 problems (100 for the first three runs) through OpenRouter,
                   GigaChat and YandexGPT APIs: 29 runs of 27 chat models (simple/registry.py):
                   gemini-flash-1.5, Llama 3.2 1B/3B, Llama 3.1 8B and Llama 3.3 70B (each from two
                   providers), Qwen 2.5 7B/32B/72B Instruct, DeepSeek-V3, GigaChat Lite/Pro/Max (two
                   generations), YandexGPT 4 Lite/Pro and 5 Lite/Pro, T-lite and T-pro, Saiga
                   (YandexGPT 8B, Nemo 12B), Vikhr-YandexGPT-5-Lite-8B, RuadaptQwen2.5-32B (two),
                   Cotype-Nano. Responses end "Answer: ..." (also "**Answer:**", "Final Answer:",
                   "Ответ:" in Russian, or a box where the model ignored the instruction). Response:
                   "answer"; gold: the bench's "target" (MATH's answer: "\\frac 59", "864 \\mbox{
                   inches}^2", "\\$36", "(-2,1)", "\\text{Evelyn}"); problem: the bench's "problem".
                   The file's own "pred" and "is_correct" (an LLM judge's) are not used. Rows whose
                   gold is a plain integer are left out; of the 1,930 distinct (problem, response)
                   rows left, SIMPLE_EVALS_RU_N drawn.
  prime            PRIME-RL/PRIME @ e787b9cefff7c43c40a98a41c2254cddd38ebd09
                                                                       Apache-2.0 (LICENSE)
                   PRIME_ROOT<run>/<data set>/PRIME_FILE for the runs and data sets of PRIME_RUNS
                   The Qwen2.5-Math evaluation harness outputs ("qwen25-math-cot" prompt: "Please
                   reason step by step, and put your final answer within \\boxed{}", greedy, one
                   response per problem) that a PRIME author (H. Wang) committed with the evaluation
                   scripts in pull request #1 ("update eval scripts", 2025-01-04) and deleted in a
                   later commit of the same pull request; the commit is reachable from
                   refs/pull/1/head only. Runs: Qwen2.5-Math-7B-Instruct, Meta-Llama-3.1-8B-Instruct,
                   and "all_abla_numina_oly_orca" (a checkpoint the repository names only by that
                   directory, an ablation of PRIME's SFT data; its responses work in
                   "[ASSESS]/[ADVANCE]/[VERIFY]/[OUTPUT]" steps), on OlympiadBench (675 problems),
                   Minerva-Math (272) and GaoKao2023-En (385). The college_math files and the
                   ablation's olympiadbench file are over the snapshot's 4 MiB limit and not read.
                   Response: "code"[0]; gold: "gt" (the harness's parsed answer: "(4,\\log_{10}2)",
                   "-1,2,-2", "9e11", "\\frac{1}{s}-\\frac{1}{s}e^{-sT}", one empty); problem:
                   "question". Rows whose gold is a plain integer, and GaoKao2023-En's multiple choice
                   with a letter gold A-E (its options are only in the problem), are left out; of the
                   1,704 distinct rows left, PRIME_N drawn. (Its nine questions with ACT-style options
                   lettered (F)-(K) were not caught by that test and stay in, gold a letter.)

How the draw was settled. A first draw of 900 that kept plain-integer golds (450 from each source,
seeds 13001 and 13002) had 20 disagreements between the two checkers, all on golds that are not plain
integers: the integer golds are the fifth set's form, where the checkers agree. The set was then
restricted to golds that are not plain integers and drawn again with the seeds below, before any
response was graded; nothing in crates/rlvr-tasks/src changed in between.

Looked at for this set and not used (besides those the earlier builders' docstrings list): no
committed outputs (hkust-nlp/simpleRL-reason, sail-sg/understand-r1-zero,
Open-Reasoner-Zero/Open-Reasoner-Zero, RUCAIBox/Slow_Thinking_with_LLMs, NVIDIA/NeMo-Skills, whose
test data are inputs; bwu1234/math500-eval-prm, code and an HTML report;
cc1107yss/limit-of-rlvr-qwen7b-math500-reproduction, audit summaries and manifests only); outputs of
another kind (huggingface/lighteval's tests/reference_details, parquet files of SmolLM2 and
Qwen2.5-VL on multiple-choice tasks and GSM8K; thushana/simple-evals, AP exams, mostly multiple
choice and not mathematics); simple-evals-ru's own MGSM results (integer answers, the fifth set's
form).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout6_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout6_responses.py \\
        --simple-evals-ru DIR --prime DIR
Deterministic: one fixed seed per draw, rows in source order before drawing.
"""

import hashlib
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout6_responses.jsonl"

COMMITS = {
    "simple-evals-ru": "5fb1507eafd70be92ff3379440c13ee5272963ce",
    "prime": "e787b9cefff7c43c40a98a41c2254cddd38ebd09",
}
SIMPLE_EVALS_RU_N = 500
PRIME_N = 450
# a gold that is a plain integer is left out: the fifth set tests those
PLAIN_INTEGER = re.compile(r"-?\d+")
# (directory under PRIME_ROOT, the model, the data sets whose output file the snapshot holds;
# the others are over its 4 MiB limit)
PRIME_ROOT = "eval/scripts/eval/Qwen25-Math/evaluation/outputs/home/test/test05/whb/"
PRIME_RUNS = [
    ("models/Qwen2.5-Math-7B-Instruct/math_eval", "Qwen2.5-Math-7B-Instruct",
     ["gaokao2023en", "minerva_math", "olympiadbench"]),
    ("project/eval-cgq-new/o1_results_1205/Meta-Llama-3.1-8B-Instruct/qwen_math",
     "Meta-Llama-3.1-8B-Instruct", ["gaokao2023en", "minerva_math", "olympiadbench"]),
    ("project/eval-cgq-new/o1_results_1205/all_abla_numina_oly_orca/qwen_math",
     "all_abla_numina_oly_orca", ["gaokao2023en", "minerva_math"]),
]
PRIME_FILE = "test_qwen25-math-cot_-1_seed0_t0.0_s0_e-1.jsonl"


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


# ---------------------------------------------------------------------------------------
# sources

def simple_evals_ru(repo):
    bench = {e["id"]: e for e in repo.jsonl("data/benches/math.jsonl")}
    rows = []
    for path, _ in repo.files("data/results/math"):
        model = pathlib.PurePosixPath(path).stem
        for i, e in enumerate(repo.jsonl(path)):
            resp = e.get("answer")
            if not usable(resp):
                continue
            b = bench[e["id"]]
            if PLAIN_INTEGER.fullmatch(b["target"].strip()):
                continue
            rows.append(row(f"simple-evals-ru:{model}:{i}", b["problem"], b["target"], resp))
    return draw(distinct(rows), SIMPLE_EVALS_RU_N, 13011)


def prime(repo):
    rows = []
    for run, model, datas in PRIME_RUNS:
        for data in datas:
            for e in repo.jsonl(f"{PRIME_ROOT}{run}/{data}/{PRIME_FILE}"):
                resp = e["code"][0]
                gold = str(e["gt"])
                if not usable(resp) or PLAIN_INTEGER.fullmatch(gold.strip()):
                    continue
                if re.fullmatch(r"\s*[A-E]\s*", gold):
                    continue  # gaokao2023en's multiple choice (a letter gold) is left out
                rows.append(row(f"prime:{model}:{data}:{e['idx']}", e["question"], gold, resp))
    return draw(distinct(rows), PRIME_N, 13012)


# ---------------------------------------------------------------------------------------

def main():
    builders = [("simple-evals-ru", simple_evals_ru), ("prime", prime)]
    run_builder(__doc__, COMMITS, builders, OUT)


if __name__ == "__main__":
    main()
