#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout13_responses.jsonl: a THIRTEENTH held-out set of
real model responses, this time to PROCEDURALLY GENERATED ALGEBRA, ARITHMETIC AND GEOMETRY TASKS whose
answer key writes its answers in the task generators' own forms: SymPy expressions with ** and an
integration constant "-2*x*asin(x) - 2*sqrt(1 - x**2) + C", complex numbers "-3.0 - 3.0i",
comma-separated roots "-1.0211, 1.0211", hexadecimal integers "-0x3a4", weekday names "Wednesday",
durations "01:29:27.345", prime factorizations "2 × 2 × 2 × 5 × 7", fractions "1229/2040" and
"$\\frac{279}{428}$", floats in e notation "-2.429882024519227e-19", decimals to 3 places; from the
committed zero-shot evaluation outputs of 11 chat and reasoning models (o3-mini, DeepSeek-R1, QwQ-32B,
Grok 3 mini, Claude 3.5 Sonnet and Claude Sonnet 4, Gemma 3 27B, Llama 3.3 70B, Llama 4 Maverick and
Scout, Mistral Small 3.1 24B) told to put their answer in <answer>...</answer> tags, each with the
task generator's own answer, taken from a public project that no earlier fixture of this repository
uses: not the seven sources of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA,
openai/grade-school-math, wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought,
yuchenlin/ZeroEval), nor kojima's zero_shot_cot logs, nor the sources of heldout_responses.jsonl to
heldout12_responses.jsonl (OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval,
veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning, lz1oceani/verify_cot,
protagolabs/odyssey-math, dvlab-research/Mr-Ben, suzgunmirac/meta-prompting,
suzgunmirac/BIG-Bench-Hard, ruixiangcui/AGIEval, dvlab-research/MR-GSM8K, maitrix-org/llm-reasoners,
kuk/simple-evals-ru, PRIME-RL/PRIME, sarahmart/HARDMath, wellecks/lm-evaluation-harness, microsoft/rho,
tianyi-lab/MiP-Overthinking, tangzhy/RealCritic, mathllm/MATH-V, yale-nlp/Physics, gpoesia/mathcamps),
nor math-verify's tests, nor the peer pairs of checker_set.jsonl, nor the sources kept for the
maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel, MathCoder),
nor any repository the earlier builders' docstrings name as looked at. The set measures the checker;
it was not used to tune it (see docs/checker.md, "A thirteenth held-out set").

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "reasoning-gym:<difficulty>/<run>:<category>/<task>:<question>:<completion>" (difficulty:
  "easy" or "hard", the directory under zero-shot/; run: the run's directory, which names the model
  and the run's time, e.g. "openai_o3-mini_20250315_181742"; category and task: the file's folder and
  name, e.g. "algebra/simple_integration"; question: the index in the file's "results", 0-based;
  completion: the index in that result's "completions", 0-based), enough to find the row again.
- problem: the result's "question" (the task's prompt, its format instructions included), cut to
  its first PROBLEM_CHARS characters. The run's system prompt (the file's "system_prompt", the same
  for every task: think step by step, then give the answer as "<answer>answer here</answer>", only
  the final answer inside the tags) is not part of the line.
- gold: the result's "expected_answer" (the generator's answer), outer whitespace removed.
- response: the completion's "full_model_response", cut in the middle when over MAX_RESPONSE
  characters (its first HEAD characters, a line "[... N characters cut ...]", its last
  MAX_RESPONSE - HEAD characters).
- choices: always null (no task lists options).
- math_verify: math-verify's verdict (see below).

Source. Read from a checkout of the repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key            repo @ commit                                                 license
  reasoning-gym  open-thought/reasoning-gym-eval @ 5f09fecc342a25d693895b7304a9dec43b47f436
                                                                               Apache-2.0 (LICENSE)
                 reasoninggym-paper-experiments/zero-shot/<difficulty>/<run>/<category>/<task>.json
                 for every run directory of the commit and the tasks of the categories algebra,
                 arithmetic and geometry (the head of main, 2025-07-04, "Merge pull request #14 from
                 open-thought/fix/reorg-folders"). The evaluation outputs of "REASONING GYM: Reasoning
                 Environments for Reinforcement Learning with Verifiable Rewards" (Stojanovski et al.,
                 2025; arXiv 2505.24760): the library's procedurally generated tasks, 50 per task and
                 configuration (seed 45), answered through OpenRouter by each model, three completions
                 per prompt on the "easy" configurations (one for the Llama 4 Scout run) and one on the
                 "hard" ones. The 26 tasks read: algebra (complex_arithmetic,
                 intermediate_integration, polynomial_equations, polynomial_multiplication,
                 simple_equations, simple_integration), arithmetic (basic_arithmetic,
                 bitwise_arithmetic, calendar_arithmetic, chain_sum, count_bits, decimal_arithmetic,
                 decimal_chain_sum, dice, fraction_simplification, gcd, gsm_symbolic, lcm,
                 leg_counting, number_format, power_function, prime_factorization, products,
                 time_intervals), geometry (advanced_geometry, simple_geometry). The 20 run
                 directories: easy/ anthropic_claude-3.5-sonnet, anthropic_claude-sonnet-4,
                 deepseek_deepseek-r1, google_gemma-3-27b-it, meta-llama_llama-3.3-70b-instruct,
                 meta-llama_llama-4-maverick, meta-llama_llama-4-scout,
                 mistralai_mistral-small-3.1-24b-instruct, openai_o3-mini, qwen_qwq-32b; hard/ the same
                 but Claude Sonnet 4, and x-ai_grok-3-mini-beta. The files' own "model_answer" (the
                 text in the last answer tags) and "score" (the task's own scorer, with partial
                 credit), and the results' "best_*" fields (a copy of one completion), are not used.
                 Not read: the other categories (algorithmic, arc, code, cognition, games, graphs,
                 induction, logic: puzzles, not mathematics), and the paper's other experiments
                 (math-evals/, Qwen2.5-3B and its reasoning-gym fine-tune in Qwen2.5-Math's harness on
                 MATH, GSM8K and the like, the sixth set's form; intra- and inter-generalisation/, a 3B
                 model's scores during training).

How the draw was settled, before any verdict was computed: every completion, in path order, result
order and completion order, empty responses left out and repeated (problem, response) rows kept once:
49,400 completions in the files, 48,562 of them not empty, 33,884 rows once repeats are removed
(a model's three completions are often the same bare "<answer>...</answer>"), 20,872 of them with a
gold other than a plain integer. Of those, NOT_INTEGER_N were drawn with NOT_INTEGER_SEED, and
INTEGER_N of the 13,012 rows whose gold is a plain integer with INTEGER_SEED;
the set is the drawn rows in source order. Nothing in crates/rlvr-tasks/src was changed for this set.

Looked at for this set and not used (besides those the earlier builders' docstrings list): the same
repository's math-evals/ and generalisation folders (above); open-thought/reasoning-gym itself
(the task generators and evaluation code, Apache-2.0; its eval/ folder commits one test run of
knights_knaves, not mathematics).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout13_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout13_responses.py --reasoning-gym DIR
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
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout13_responses.jsonl"

COMMITS = {
    "reasoning-gym": "5f09fecc342a25d693895b7304a9dec43b47f436",
}
# zero-shot/<difficulty>/<run>/<category>/<task>.json
RUNS = "reasoninggym-paper-experiments/zero-shot"
CATEGORIES = ["algebra", "arithmetic", "geometry"]
NOT_INTEGER_N = 600
NOT_INTEGER_SEED = 20001
INTEGER_N = 100
INTEGER_SEED = 20002
# a gold that is a plain integer: drawn apart
PLAIN_INTEGER = re.compile(r"-?\d+")


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def integer(r):
    return PLAIN_INTEGER.fullmatch(r["gold"]) is not None


# ---------------------------------------------------------------------------------------
# source

def task_rows(repo, path):
    """Every completion of one task file (<difficulty>/<run>/<category>/<task>.json), in order."""
    difficulty, run, category, name = path[len(RUNS) + 1:].split("/")
    task = f"{category}/{name[:-len('.json')]}"
    rows = []
    for i, result in enumerate(json.loads(repo.read_text(path))["results"]):
        for j, c in enumerate(result["completions"]):
            response = c.get("full_model_response")
            if not usable(response):
                continue
            rows.append(row(f"reasoning-gym:{difficulty}/{run}:{task}:{i}:{j}", result["question"],
                            result["expected_answer"], response))
    return rows


def reasoning_gym(repo):
    rows = []
    for path, _blob in repo.files(RUNS):
        parts = path[len(RUNS) + 1:].split("/")
        # the run's summary.json and checkpoint.json sit beside the category folders
        if len(parts) != 4 or parts[2] not in CATEGORIES or not parts[3].endswith(".json"):
            continue
        rows += task_rows(repo, path)
    rows = distinct(rows)
    keep = {id(r) for r in draw([r for r in rows if not integer(r)], NOT_INTEGER_N,
                                NOT_INTEGER_SEED)}
    keep |= {id(r) for r in draw([r for r in rows if integer(r)], INTEGER_N, INTEGER_SEED)}
    return [r for r in rows if id(r) in keep]


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("reasoning-gym", reasoning_gym)], OUT)


if __name__ == "__main__":
    main()
