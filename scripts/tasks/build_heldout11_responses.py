#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout11_responses.jsonl: an ELEVENTH held-out set of
real model responses, this time to UNIVERSITY PHYSICS problems with free-form answers (expressions in
the problem's symbols, values with units and powers of ten, labelled answers "E_b = ...", sentences),
from the committed outputs of 40 model runs on the PHYSICS benchmark, each with the benchmark's own
final answer, taken from a public project that no earlier fixture of this repository uses: not the
seven sources of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math,
wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval), nor
kojima's zero_shot_cot logs, nor the sources of heldout_responses.jsonl to heldout10_responses.jsonl
(OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval, veronica320/Faithful-COT,
Tebmer/Rereading-LLM-Reasoning, lz1oceani/verify_cot, protagolabs/odyssey-math, dvlab-research/Mr-Ben,
suzgunmirac/meta-prompting, suzgunmirac/BIG-Bench-Hard, ruixiangcui/AGIEval, dvlab-research/MR-GSM8K,
maitrix-org/llm-reasoners, kuk/simple-evals-ru, PRIME-RL/PRIME, sarahmart/HARDMath,
wellecks/lm-evaluation-harness, microsoft/rho, tianyi-lab/MiP-Overthinking, tangzhy/RealCritic,
mathllm/MATH-V), nor math-verify's tests, nor the peer pairs of checker_set.jsonl, nor the sources
kept for the maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG,
Abel, MathCoder). yale-nlp/Physics is not yale-nlp/DocMath-Eval (looked at for the seventh set and
not used): another benchmark, other data, other outputs. The set measures the checker; it was not
used to tune it (see docs/checker.md, "An eleventh held-out set").

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "physics:<model dir>:<run dir>:<problem id>" (model dir: the directory under outputs/,
  which names the model and, for "_self_reflect", the prompt; run dir: "<subject>_dataset" or
  "<subject>_dataset_textonly"; problem id: the benchmark's "id", e.g. "optics/2-68"), enough to
  find the row again.
- problem: the problem text (the answer key's "questions", its byte-order mark removed; figures,
  where a problem has one, are not part of the line), cut to its first PROBLEM_CHARS characters.
- gold: the answer key's one final answer ("final_answers"[0]), byte-order mark and outer
  whitespace removed.
- response: the model's response ("llm_answers", or "solution" in the files written in the
  evaluated format), cut in the middle when over MAX_RESPONSE characters (its first HEAD
  characters, a line "[... N characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: always null (some problems list options in their text, "(a) ... (b) ... (c)"; the gold is
  then an option's letter or value, and the line has no choices).
- math_verify: math-verify's verdict (see below).

Source. Read from a checkout of the repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key      repo @ commit                                                 license
  physics  yale-nlp/Physics @ 15dc8d90e7196690c279827f472bf27993b3d04e   MIT (LICENSE)
           PHYSICS/<subject>_dataset.jsonl (the answer key: 1,297 problems of six subjects, atomic,
           electro, mechanics, optics, quantum, statistics, each with "questions", "solutions" and a
           list "final_answers") and outputs/<model dir>/<run dir>/response.jsonl for every model
           and run directory the snapshot holds (the README's "Model Output"; 2025-03, newest commit
           2025-03-31). "PHYSICS: Benchmarking Foundation Models on University-Level Physics Problem
           Solving" (Feng et al., 2025; arXiv 2503.21821): PhD-qualifying-exam problems answered by
           the authors' evaluation runs, one response per problem and run, the system prompt "...
           Think step by step and provide solution and final answer. Provide the final answer at
           the end in Latex boxed format \\[\\boxed{}\\]." (api_evaluation/evaluate_gpt4o.py; the
           self-reflection runs revise a first answer). The 40 model directories: GPT-4o and
           GPT-4o self-reflect, o3-mini, Claude 3.5 Sonnet, Gemini 1.5 Pro and its self-reflect
           run, DeepSeek-R1, R1-Distill-Qwen-32B, QwQ-32B-Preview, Qwen2.5 7B/14B/32B/72B-Instruct,
           Qwen2.5-Math 1.5B/72B-Instruct and 7B, DeepSeek-Math-7B-RL, Llama 3.1 8B and 3.3 70B
           (and AWQ), Mistral 7B v0.3, Mistral-Small-24B, Mathstral 7B, Gemma 2 2B/9B/27B, Phi-4,
           Yi-1.5-34B, GLM-4-9B, ChatGLM3-6B, InternLM3-8B (AWQ), Command R and R 08-2024, Velvet
           14B, and the vision-language models Aria, InternVL2.5-38B, Pixtral-12B, Qwen2-VL-72B and
           DeepSeek-VL2-small (on the full problems; the text models on the text-only ones).
           The files' own "final_answers", "equivalency_results" and "accuracy" (the authors'
           extraction and GPT-4o-assisted grading) are not used. response.jsonl files over the
           snapshot's 4 MiB limit are absent and skipped (12 run directories); final_evaluation.jsonl
           is not read.

How the draw was settled, before any verdict was computed: every response, in path order, to a
problem whose key has exactly one final answer (432 of the 1,297 problems; 13,478 responses in the
snapshot), repeated (problem, response) rows kept once, then DRAW_N of them drawn with DRAW_SEED. The
problems with two or more final answers (one per part) are not read: a line has one gold. Nothing in
crates/rlvr-tasks/src changed in between. Of the 500 (39 of the 40 model directories drawn), 7
golds are plain integers.

Looked at for this set and not used (besides those the earlier builders' docstrings list): no license
(yale-nlp/FinanceMath, whose CoT and PoT outputs of about 60 models on its financial problems carry
numeric golds, for the 200 validation problems only); a sample only (inclusionAI/ABench, Apache-2.0,
whose Physics and Actuary folders hold 20 DeepSeek-R1 responses each); no committed outputs in the
index (lamalab-org/chembench, whose reports are not in the snapshot's index; yale-nlp/physics-verified).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout11_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout11_responses.py --physics DIR
Deterministic: one fixed seed, rows in source order before drawing.
"""

import hashlib
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout11_responses.jsonl"

COMMITS = {
    "physics": "15dc8d90e7196690c279827f472bf27993b3d04e",
}
SUBJECTS = ["atomic", "electro", "mechanics", "optics", "quantum", "statistics"]
# the answer key: every problem of the benchmark, with its list of final answers
KEY_FILE = "PHYSICS/{subject}_dataset.jsonl"
OUTPUTS = "outputs"
RESPONSE_FILE = "response.jsonl"
DRAW_N = 500
DRAW_SEED = 18001


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def clean(text):
    """A key text without its byte-order mark and outer whitespace."""
    return (text or "").replace("\ufeff", "").strip()


def jsonl(repo, rel):
    """The JSON lines of a file, split on newlines only (the responses hold U+2028)."""
    return [json.loads(l) for l in repo.read_text(rel).split("\n") if l.strip()]


def physics(repo):
    key = {}
    for subject in SUBJECTS:
        for q in jsonl(repo, KEY_FILE.format(subject=subject)):
            key[q["id"]] = q
    rows = []
    for path, _blob in repo.files(OUTPUTS):
        parts = path.split("/")
        if len(parts) != 4 or parts[3] != RESPONSE_FILE:
            continue
        model, run = parts[1], parts[2]
        try:
            lines = jsonl(repo, path)
        except Exception:  # a file the snapshot does not hold (over its size limit)
            continue
        for e in lines:
            q = key.get(e["id"])
            response = e.get("llm_answers", e.get("solution"))
            if q is None or len(q["final_answers"]) != 1 or not usable(response):
                continue
            rows.append(row(f"physics:{model}:{run}:{e['id']}", clean(q["questions"]),
                            clean(q["final_answers"][0]), response))
    return draw(distinct(rows), DRAW_N, DRAW_SEED)


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("physics", physics)], OUT)


if __name__ == "__main__":
    main()
