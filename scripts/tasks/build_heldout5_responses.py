#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout5_responses.jsonl: a FIFTH held-out set of
real model responses to math problems, each with the dataset's own gold answer, taken from the
committed outputs of a public project that no earlier fixture of this repository uses: not the
seven sources of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math,
wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval),
nor kojima's zero_shot_cot logs, nor the four of heldout_responses.jsonl (OpenLMLab/GAOKAO-Bench,
iamyb/llm-gaokao-math-eval, veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning), nor the
three of heldout2_responses.jsonl (lz1oceani/verify_cot, protagolabs/odyssey-math,
dvlab-research/Mr-Ben), nor the two of heldout3_responses.jsonl (suzgunmirac/meta-prompting,
suzgunmirac/BIG-Bench-Hard), nor the two of heldout4_responses.jsonl (ruixiangcui/AGIEval,
dvlab-research/MR-GSM8K), nor math-verify's tests, nor the peer pairs of checker_set.jsonl, nor
the sources kept for the maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH,
MathVista, PromptPG, Abel, MathCoder). The set measures the checker; it was not used to tune it
(see docs/checker.md, "A fifth held-out set"). Every answer is free-form (a number): no multiple
choice.

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "autorace-dbrx:gsm8k:<row>" or "autorace:<task>:<row>" (task gsm8k or
  multistep_arithmetic; row: the line of the data file, 0-based), enough to find the row again.
- problem: the problem text, cut to its first PROBLEM_CHARS characters.
- gold: the data set's own gold answer (an integer), as the file stores it, outer whitespace
  removed.
- response: the model's response, cut in the middle when over MAX_RESPONSE characters (its first
  HEAD characters, a line "[... N characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: always null.
- math_verify: math-verify's verdict (see below).

Sources. One repository, read at two commits (the DBRX outputs were removed from the tree before
the labelled chains were added under their present names); each from a checkout at the commit
below, or from a bare mirror of it (files are then read with `git show <commit>:<path>`). To
fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key            repo @ commit                                         license
  autorace-dbrx  maitrix-org/llm-reasoners @ 46967d527ea0e851ddb5f9b834b51146ead5e76c
                                                                       Apache-2.0 (LICENSE)
                 autorace/data/gsm8k_dbrx.jsonl
                 "LLM Reasoners" (Hao et al., 2024; arXiv 2404.05221), its AutoRace evaluation:
                 chain-of-thought answers of DBRX (the file name says which model; the
                 repository does not say which DBRX variant or prompt) to the 1,319 GSM8K test
                 questions, every one ending "The answer is 18." Response: "metadata_generation";
                 gold: "gt_answer"; problem: "question". AUTORACE_DBRX_N drawn.
  autorace       maitrix-org/llm-reasoners @ f94e5ac2cb9788c3d7d7dbf2173884ed4088e4b2
                                                                       Apache-2.0 (LICENSE)
                 autorace/data/eval_model/{gsm8k,multistep_arithmetic}.jsonl
                 The reasoning chains whose human labels AutoRace is measured against ("the
                 reasoning_chain with human labels", autorace/README.md; first committed under
                 autorace/data/gpt3/, the repository names no model beyond that):
                 - gsm8k: 200 GSM8K test questions, numbered steps with GSM8K's calculator
                   annotations ("Step 2 - ... 16 - 7 = <<16-7=9>>9 duck eggs are for sale",
                   "Step 4 - The answer is 18"). Every one.
                 - multistep_arithmetic: 300 BIG-Bench Hard integer expressions
                   ("((-1 + 2 + 9 * 5) - (-2 + -4 + -4 * -7)) ="), worked as "Step 1: This
                   equation can be written as ...", ending "So the answer is 1244".
                   AUTORACE_ARITH_N drawn.
                 Response: "reasoning_chain"; gold: "answer"; problem: "question". The
                 "human_label" field (whether the annotator found the chain flawed) is not used.

Looked at for this set and not used (besides those the earlier builders' docstrings list): no
license (iiis-ai/cumulative-reasoning's GPT-4 MATH results, zhentingqi/Math_LLM's Llama-2 GSM8K,
SVAMP and MultiArith outputs, hwelsters/sleepyresponse's ChatGPT ALG-514 and DRAW-1K answers,
shizhediao/active-prompt, MARIO-Math-Reasoning/MARIO_EVAL, RUCAIBox/CARP); no committed outputs
(meta-math/MetaMath, nlpxucan/WizardLM's WizardMath, OpenBMB/Eurus, microsoft/LMOps,
microsoft/CodeT's DIVERSE, microsoft/ProphetNet's CRITIC, google-deepmind/opro, qinyiwei/DIVE,
amazon-science/auto-cot, QwenLM/ProcessBench, facebookresearch/ParlAI's ROSCOE, whose annotated
chains are downloaded); no snapshot to read (TIGER-AI-Lab/MAmmoTH, FranxYao/chain-of-thought-hub);
Git LFS pointers only (openai/prm800k); the held-back check's author and data set
(lupantech/chameleon-llm's TabMWP outputs: TabMWP is PromptPG's).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout5_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout5_responses.py \\
        --autorace-dbrx DIR --autorace DIR
(the same checkout or bare mirror may be given for both). Deterministic: one fixed seed per draw,
rows in source order before drawing.
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout5_responses.jsonl"

COMMITS = {
    "autorace-dbrx": "46967d527ea0e851ddb5f9b834b51146ead5e76c",
    "autorace": "f94e5ac2cb9788c3d7d7dbf2173884ed4088e4b2",
}
AUTORACE_DBRX_N = 350
AUTORACE_ARITH_N = 150


# ---------------------------------------------------------------------------------------
# sources

def autorace_dbrx(repo):
    rows = []
    for i, e in enumerate(repo.jsonl("autorace/data/gsm8k_dbrx.jsonl")):
        resp = e["metadata_generation"]
        if not usable(resp):
            continue
        rows.append(row(f"autorace-dbrx:gsm8k:{i}", e["question"], str(e["gt_answer"]), resp))
    return draw(rows, AUTORACE_DBRX_N, 12001)


def autorace_task(repo, task):
    rows = []
    for i, e in enumerate(repo.jsonl(f"autorace/data/eval_model/{task}.jsonl")):
        resp = e["reasoning_chain"]
        if not usable(resp):
            continue
        rows.append(row(f"autorace:{task}:{i}", e["question"], str(e["answer"]), resp))
    return rows


def autorace(repo):
    out = autorace_task(repo, "gsm8k")
    out += draw(autorace_task(repo, "multistep_arithmetic"), AUTORACE_ARITH_N, 12002)
    return out


# ---------------------------------------------------------------------------------------

def main():
    builders = [("autorace-dbrx", autorace_dbrx), ("autorace", autorace)]
    run_builder(__doc__, COMMITS, builders, OUT)


if __name__ == "__main__":
    main()
