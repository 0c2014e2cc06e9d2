#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout14_responses.jsonl: a FOURTEENTH held-out set of
real model responses, this time to NUMBER-THEORY QUESTIONS WITH A YES/NO OR A COUNTED ANSWER whose
answer key writes its answers in its own forms: a lowercase or capitalised word "yes" / "No" for
"Is 17077 a prime number? ... answer "[Yes]" or "[No]"", and a count written as a LaTeX box with a
doubled backslash "\\\\boxed{1}" for "How many happy numbers are there between 4600 and 4606? ...
answer within "\\boxed""; from the committed outputs of four snapshots of two chat models
(gpt-3.5-turbo-0301 and -0613, gpt-4-0314 and -0613), each with the benchmark's own answer, taken
from a public project that no earlier fixture of this repository uses: not the seven sources of
real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math,
wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval), nor
kojima's zero_shot_cot logs, nor the sources of heldout_responses.jsonl to heldout13_responses.jsonl
(OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval, veronica320/Faithful-COT,
Tebmer/Rereading-LLM-Reasoning, lz1oceani/verify_cot, protagolabs/odyssey-math, dvlab-research/Mr-Ben,
suzgunmirac/meta-prompting, suzgunmirac/BIG-Bench-Hard, ruixiangcui/AGIEval, dvlab-research/MR-GSM8K,
maitrix-org/llm-reasoners, kuk/simple-evals-ru, PRIME-RL/PRIME, sarahmart/HARDMath,
wellecks/lm-evaluation-harness, microsoft/rho, tianyi-lab/MiP-Overthinking, tangzhy/RealCritic,
mathllm/MATH-V, yale-nlp/Physics, gpoesia/mathcamps, open-thought/reasoning-gym-eval), nor
math-verify's tests, nor the peer pairs of checker_set.jsonl, nor the sources kept for the
maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel, MathCoder),
nor jettjaniak/chainscope, nor any repository the earlier builders' docstrings name as looked at. The
set measures the checker; it was not used to tune it (see docs/checker.md, "A fourteenth held-out
set").

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "llmdrift:<task>:<model>:<row>" (task: "prime" for PRIME_FULL_EVAL.csv, "happy" for
  COUNTAHAPPYNUMBER_EVAL.csv; model: the row's "model", e.g. "openaichat/gpt-4-0613"; row: the row's
  0-based position in the file), enough to find the row again.
- problem: the row's "query" (the question with its format instruction), cut to its first
  PROBLEM_CHARS characters.
- gold: the row's "ref_answer", outer whitespace removed ("yes" and "No" for the prime task, whose
  "dataset" column says "prime" or "composite"; "\\\\boxed{N}" for the happy-number task, the
  backslash doubled as the file writes it).
- response: the row's "answer", cut in the middle when over MAX_RESPONSE characters (its first HEAD
  characters, a line "[... N characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: always null.
- math_verify: math-verify's verdict (see below).

Source. Read from a checkout of the repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key       repo @ commit                                                 license
  llmdrift  lchen001/LLMDrift @ 4938eb720aed5210dd2153644fa35cf38b9c6d26  Apache-2.0 (LICENSE)
            generation/PRIME_FULL_EVAL.csv and generation/COUNTAHAPPYNUMBER_EVAL.csv (the head of
            main, 2024-01-03, "update readme"). "How is ChatGPT's behavior changing over time?"
            (Chen, Zaharia, Zou, 2023; arXiv 2307.09009): the March and June 2023 snapshots of
            GPT-3.5 and GPT-4 asked, at temperature 0.1, whether each of 1,000 numbers (500 primes,
            500 composites) is prime ("Think step by step and then answer "[Yes]" or "[No]"", 4,000
            rows) and how many happy numbers lie in each of 500 short intervals ("Think step by step
            and then answer within "\\boxed" (e.g, \\boxed{10})", 2,000 rows); one answer per model
            and question. The files' other columns (latency, cost, tokens) are not used. Not read:
            the repository's other generation files (OpinionQA, sensitive questions, LeetCode,
            USMLE, HotpotQA, ARC: not mathematics; the last three are absent from the snapshot)
            and data/prime/ (the questions and answers alone).

How the draw was settled, before any verdict was computed: every row of the two files, in file
order, empty answers left out and repeated (problem, response) rows kept once: 6,000 rows in the
files, 3,971 prime rows kept (29 repeats of an earlier row) and all 2,000 happy-number rows. Of the prime rows, PRIME_N
were drawn with PRIME_SEED, and HAPPY_N of the happy-number rows with HAPPY_SEED; the set is the
drawn rows, the prime task first, each in file order. Nothing in crates/rlvr-tasks/src was changed
for this set.

Looked at for this set and not used (besides those the earlier builders' docstrings list): no final
answers in the key (deep-spin/math-benchmark, Portuguese olympiad problems answered by GPT-5,
Gemini 2.5, Claude Haiku 4.5, Qwen3, Llama 3.3 and Gemma 3, whose open-ended key holds worked
solutions only, and no license); a key of descriptions and proofs, and no snapshot to read
(Archangel-gabri/llm-university-math-benchmark, CC BY 4.0, 12 models on 75 Russian university
problems, many golds "through the characteristic equation"); no license and bare arithmetic
(PuZZleDucK/LLM-Simple-Math-Bench, Ollama models on sums and products); no committed outputs
(google-deepmind/bbeh, MadryLab/platinum-benchmarks, sieu-n/llm-math-benchmark, whose snapshot is
its first commit); a summary without the responses (the "GPT4 Equipped with Numeric Calculation"
report); no snapshot to read (wenrizhou/ThinkMore-Test-Time-Scaling-Strategies-for-Gemini-2.5-Flash-
on-Math-Benchmarks).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout14_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout14_responses.py --llmdrift DIR
Deterministic: one fixed seed per draw, rows in source order before drawing.
"""

import csv
import hashlib
import io
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout14_responses.jsonl"

COMMITS = {
    "llmdrift": "4938eb720aed5210dd2153644fa35cf38b9c6d26",
}
# (task, file)
FILES = [("prime", "generation/PRIME_FULL_EVAL.csv"),
         ("happy", "generation/COUNTAHAPPYNUMBER_EVAL.csv")]
PRIME_N = 250
PRIME_SEED = 21001
HAPPY_N = 250
HAPPY_SEED = 21002


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def task_rows(repo, task, path):
    """Every usable row of one evaluation file, in file order."""
    rows = []
    for i, r in enumerate(csv.DictReader(io.StringIO(repo.read_text(path)))):
        if not usable(r["answer"]):
            continue
        rows.append(row(f"llmdrift:{task}:{r['model']}:{i}", r["query"], r["ref_answer"],
                        r["answer"]))
    return distinct(rows)


def llmdrift(repo):
    out = []
    for (task, path), (n, seed) in zip(FILES, [(PRIME_N, PRIME_SEED), (HAPPY_N, HAPPY_SEED)]):
        rows = task_rows(repo, task, path)
        print(f"{task}: {len(rows)} rows", file=sys.stderr)
        out += draw(rows, n, seed)
    return out


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("llmdrift", llmdrift)], OUT)


if __name__ == "__main__":
    main()
