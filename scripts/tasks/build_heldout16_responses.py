#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout16_responses.jsonl: a SIXTEENTH held-out set of
real model responses, from the evaluation outputs committed with "Dynamic Cheatsheet: Test-Time
Learning with Adaptive Memory" (Suzgun, Yuksekgonul, Bianchi, Jurafsky, Zou, 2025; arXiv
2504.07952): Claude 3.5 Sonnet and GPT-4o, each under up to five ways of prompting (a bare
baseline, an empty cheatsheet, and three "dynamic cheatsheet" memories that carry strategies and
Python snippets from one question to the next, the model sometimes writing a program and a line
"EXECUTE CODE!" followed by its output), told to end on "FINAL ANSWER:" and the answer inside an
`<answer> ... </answer>` block. Two kinds of problem: AIME 2020-2025 (integer answers), and an
arithmetic "equation balancer" whose answer is an EQUATION ("Below is an equation with missing
operators ... fill in the blanks with +, -, *, or / ... Include the full equation with the
operators filled in", question "19 ? 8 ? 28 = -205", gold "19 - 8 * 28 = -205"): the comparison of
two equations, each true or false as arithmetic, is the new form this set tests (a checker that
evaluates both sides of both equations reads every true equation as the same value). Taken from a
public project that no earlier fixture of this repository uses: not the seven sources of
real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math,
wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval),
nor kojima's zero_shot_cot logs, nor the sources of heldout_responses.jsonl to
heldout15_responses.jsonl (OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval,
veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning, lz1oceani/verify_cot,
protagolabs/odyssey-math, dvlab-research/Mr-Ben, suzgunmirac/meta-prompting,
suzgunmirac/BIG-Bench-Hard, ruixiangcui/AGIEval, dvlab-research/MR-GSM8K,
maitrix-org/llm-reasoners, kuk/simple-evals-ru, PRIME-RL/PRIME, sarahmart/HARDMath,
wellecks/lm-evaluation-harness, microsoft/rho, tianyi-lab/MiP-Overthinking, tangzhy/RealCritic,
mathllm/MATH-V, yale-nlp/Physics, gpoesia/mathcamps, open-thought/reasoning-gym-eval,
lchen001/LLMDrift, lchen001/pricing-reversal), nor math-verify's tests, nor the peer pairs of
checker_set.jsonl, nor the sources kept for the maintainers' held-back check (TheoremQA,
ReasonEval, Omni-MATH, MathVista, PromptPG, Abel, MathCoder), nor any repository the earlier
builders' docstrings name as looked at. suzgunmirac/dynamic-cheatsheet shares an author with
suzgunmirac/meta-prompting and suzgunmirac/BIG-Bench-Hard (the third set's sources) and nothing
else: another repository, other models (Claude 3.5 Sonnet and GPT-4o of 2024, not GPT-4 of August
2023 or code-davinci-002), other problems (AIME and the equation balancer, not MGSM or BIG-Bench
Hard), another answer format (an `<answer>` block, not `>> FINAL ANSWER:` and a block in triple
quotes). The AIME problems are also in the fifteenth set (pricing-reversal's 2024-2025 runs) and
the thirteenth set had `<answer>` tags; the models, prompts and responses are new. The set measures
the checker; it was not used to tune it (see docs/checker.md, "A sixteenth held-out set").

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "dynamic-cheatsheet:<task>:<model>_<approach>:<n>" (task: "MathEquationBalancer",
  "AIME_2020_2024", "AIME_2024" or "AIME_2025", the results folder; model_approach: the file's name,
  e.g. "gpt-4o_EmptyCheatsheet"; n: the record's 1-based line in the file), enough to find the
  record again.
- problem: the record's "input" (the question as the model was given it inside the generator
  prompt, e.g. "Question #6:\\n<problem> (Please provide your answer in the form of an integer,
  e.g., 1234, ...)"; the shared generator prompt that asks for "FINAL ANSWER:" and an `<answer>`
  block, and the cheatsheet, are not included), cut to its first PROBLEM_CHARS characters.
- gold: the record's "target", outer whitespace removed ("12", "19 - 8 * 28 = -205").
- response: the record's "final_output", cut in the middle when over MAX_RESPONSE characters.
- choices: always null.
- math_verify: math-verify's verdict (see below).

Source. Read from a checkout of the repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key                 repo @ commit                                                       license
  dynamic-cheatsheet  suzgunmirac/dynamic-cheatsheet @ 1cf258c936edc28ef045202621bf9463f70a1988
                                                                                    MIT (LICENSE)
                      results/<task>/<model>_<approach>.jsonl for the files in FILES (the head of
                      main, 2025-04-11, "qed"; the results were committed with it). One JSON line
                      per question: "input", "target", "raw_input", "steps" (each round's prompt,
                      output and cheatsheet), "final_answer" (the authors' extraction: not used),
                      "final_output". FILES is every results file of the two mathematics tasks
                      under 4 MiB: the larger ones (AIME_2020_2024: claude-3-5-sonnet_
                      DynamicCheatsheet_RetrievalSynthesis and _Dynamic_Retrieval, gpt-4o_
                      DynamicCheatsheet_Cumulative, _RetrievalSynthesis and _Dynamic_Retrieval;
                      MathEquationBalancer: claude-3-5-sonnet_DynamicCheatsheet_Cumulative and
                      _Dynamic_Retrieval, gpt-4o_DynamicCheatsheet_Cumulative,
                      _RetrievalSynthesis and _Dynamic_Retrieval) were absent from the snapshot
                      this set was built from and are not read. Not read either: the GPQA-Diamond
                      and MMLU-Pro Engineering/Physics results (multiple-choice science, not
                      mathematics) and data/ (the questions, as Arrow files).

How the draw was settled, before any verdict was computed: every record of FILES, files in the
order listed, records in file order; an empty "final_output" left out (none) and a repeat of an
earlier (problem, response) kept once (none). That leaves 1,139 equation-balancer rows (the 250
questions of the task in four files and 139 of them in claude-3-5-sonnet_DynamicCheatsheet_
RetrievalSynthesis) and 1,265 AIME rows (133 questions of 2020-2024 in five files, 30 of 2024 and 30
of 2025 in ten each); every AIME gold is a plain integer but one, "080 or 081 (both were accepted)"
(AIME_TWO_ANSWERS). The set is: MEB_N of the equation-balancer rows drawn with MEB_SEED, then AIME_N
of the AIME rows drawn with AIME_SEED, each group in source order. 700 responses, 351 of them (50%)
with a gold other than a plain integer (the 350 equations and one row with the two-answer gold);
Claude 3.5 Sonnet 384, GPT-4o 316; bare or with an empty cheatsheet 530, with a cheatsheet memory
170. Nothing in crates/rlvr-tasks/src was changed for this set.

Looked at for this set and not used (besides those the earlier builders' docstrings list): no
license (rongrongrong233/GaoKao-bench, the 2026 gaokao national papers I and II answered in
`<answer>` tags by GPT-5.5, Claude Opus 4.6, Gemini 3.1 Pro, DeepSeek V4 Flash/Pro, Doubao Seed
2.0, Kimi K2.6 and GLM 5.1; Tuncay-Karahan/Study_Project_DeepSeek, German university examinations
answered by DeepSeek-R1, DeepSeek-Math and gpt-5-mini against worked solutions;
xrryyds/anyno, one model's MATH-500 run; jameszhu-pixel-time/Openeval, Qwen2.5 base models on
AIME; nikhilchandak/answer-matching, GPQA only; Man-snow/llm2025compet_Man-snow, evolved problems
and agent logs); answers that are not a final value (cosmaadrian/romath, whose committed judge set
holds Romanian proofs and perturbed solutions; Karifannaa/Auto-check-EGE-math, models grading
students' handwritten solutions; ZrrSkywalker/MathVerse, five template rows); too few rows
(the hint-RL repository whose committed samples are 5 problems x 32 samples); no committed
model outputs (TIGER-AI-Lab/General-Reasoner, Gen-Verse/ReasonFlux, ChenxinAn-fdu/POLARIS,
RLHFlow/Online-DPO-R1, TsinghuaC3I/MARTI, Muqi1029/NoThink-project (GSM8K only),
DynaMath/DynaMath, usail-hkust/benchmark_inference_time_computation_LLM, the
math-evaluation-harness forks Zhuofeng-Li, gunandrose4u and cpsu00, Open-DataFlow/Math-Eval,
ashtonrliu/LLM-Math-Evaluation, henrykmichalewski/math-evals (GSM8K programs)); no snapshot to
read (toloka/u-math, brando90/putnam-axiom); the fork snova-jayr/dynamic-cheatsheet (the same
results files as the source, read from the source instead).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout16_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout16_responses.py --dynamic-cheatsheet DIR
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
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout16_responses.jsonl"

COMMITS = {
    "dynamic-cheatsheet": "1cf258c936edc28ef045202621bf9463f70a1988",
}
# (task, [model_approach, ...]): every results file of the task under 4 MiB, in this order
MEB_FILES = ("MathEquationBalancer", [
    "claude-3-5-sonnet_Baseline", "claude-3-5-sonnet_DynamicCheatsheet_RetrievalSynthesis",
    "claude-3-5-sonnet_EmptyCheatsheet", "gpt-4o_Baseline", "gpt-4o_EmptyCheatsheet"])
AIME_FILES = [
    ("AIME_2020_2024", [
        "claude-3-5-sonnet_Baseline", "claude-3-5-sonnet_DynamicCheatsheet_Cumulative",
        "claude-3-5-sonnet_EmptyCheatsheet", "gpt-4o_Baseline", "gpt-4o_EmptyCheatsheet"]),
] + [(task, [f"{m}_{a}" for m in ["claude-3-5-sonnet", "gpt-4o"]
             for a in ["Baseline", "DynamicCheatsheet_Cumulative",
                       "DynamicCheatsheet_RetrievalSynthesis", "Dynamic_Retrieval",
                       "EmptyCheatsheet"]])
     for task in ["AIME_2024", "AIME_2025"]]
# the one AIME gold that is not a plain integer (AIME 2020-2024, five files)
AIME_TWO_ANSWERS = "080 or 081 (both were accepted)"
MEB_N = 350
MEB_SEED = 23001
AIME_N = 350
AIME_SEED = 23002


def plain_integer(gold):
    """Whether the gold, without its dollar signs and outer spaces, is a plain integer."""
    return re.fullmatch(r"-?[0-9]+", gold.strip().strip("$").strip()) is not None


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def task_rows(repo, task, names):
    """Every usable record of one task's files, files in the order given."""
    rows = []
    for name in names:
        for n, rec in enumerate(repo.jsonl(f"results/{task}/{name}.jsonl"), start=1):
            if not usable(rec.get("final_output")):
                continue
            rows.append(row(f"dynamic-cheatsheet:{task}:{name}:{n}", rec["input"],
                            str(rec["target"]), rec["final_output"]))
    return rows


def dynamic_cheatsheet(repo):
    meb = distinct(task_rows(repo, *MEB_FILES))
    aime = distinct([r for task, names in AIME_FILES for r in task_rows(repo, task, names)])
    assert {r["gold"] for r in aime if not plain_integer(r["gold"])} <= {AIME_TWO_ANSWERS}
    assert not any(plain_integer(r["gold"]) for r in meb)
    print(f"equation balancer: {len(meb)} rows, aime: {len(aime)} rows", file=sys.stderr)
    return draw(meb, MEB_N, MEB_SEED) + draw(aime, AIME_N, AIME_SEED)


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("dynamic-cheatsheet", dynamic_cheatsheet)], OUT)


if __name__ == "__main__":
    main()
