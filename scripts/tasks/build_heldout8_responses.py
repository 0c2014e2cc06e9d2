#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout8_responses.jsonl: an EIGHTH held-out set of
real model responses to competition mathematics (MATH-500), each with the data set's own gold
answer, taken from the committed outputs of a public project that no earlier fixture of this
repository uses: not the seven sources of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA,
openai/grade-school-math, wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro,
NovaSky-AI/SkyThought, yuchenlin/ZeroEval), nor kojima's zero_shot_cot logs, nor the four of
heldout_responses.jsonl (OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval,
veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning), nor the three of heldout2_responses.jsonl
(lz1oceani/verify_cot, protagolabs/odyssey-math, dvlab-research/Mr-Ben), nor the two of
heldout3_responses.jsonl (suzgunmirac/meta-prompting, suzgunmirac/BIG-Bench-Hard), nor the two of
heldout4_responses.jsonl (ruixiangcui/AGIEval, dvlab-research/MR-GSM8K), nor the one of
heldout5_responses.jsonl (maitrix-org/llm-reasoners), nor the two of heldout6_responses.jsonl
(kuk/simple-evals-ru, PRIME-RL/PRIME), nor the two of heldout7_responses.jsonl (sarahmart/HARDMath,
wellecks/lm-evaluation-harness), nor math-verify's tests, nor the peer pairs of checker_set.jsonl,
nor the sources kept for the maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH,
MathVista, PromptPG, Abel, MathCoder). The set measures the checker; it was not used to tune it (see
docs/checker.md, "An eighth held-out set"). The problems are MATH-500's (the 500 test problems of
"Let's Verify Step by Step"); some of the sixth set's and of real_responses.jsonl's problems are
among them, but every response here is new. Every answer is free-form: LaTeX fractions, radicals,
pi, intervals, tuples, complex numbers, expressions, equations, degrees, bases, text, and plain
integers (about a quarter of the set, see "How the draw was settled").

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "rho:<model>:<prompt>:<idx>" (model: the output directory, which names the model; prompt:
  "cot" or "tora", the harness's prompt type in the file name; idx: the harness's "idx", the
  problem's position in MATH-500), enough to find the row again.
- problem: the problem text, cut to its first PROBLEM_CHARS characters.
- gold: MATH-500's own answer as the file stores it ("answer"), outer whitespace removed.
- response: the model's response, cut in the middle when over MAX_RESPONSE characters (its first
  HEAD characters, a line "[... N characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: always null. (MATH-500's few "Enter the letter of the correct option" questions have the
  options written in the problem and a gold such as "\\text{(C)}"; they are compared as text.)
- math_verify: math-verify's verdict (see below).

Source. Read from a checkout of the repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key  repo @ commit                                                  license
  rho  microsoft/rho @ 32965907a2aa71192e8b760fe6391b7c5246d4dc       MIT (LICENSE)
       rho-1/outputs.zip (committed 2024-04-11 in afe2e8f, "model release"; the README: "Our
       reproduced outputs are provided in rho-1/outputs.zip"), the members
       outputs/<model>/minerva_math/test_<prompt>_-1_seed0_t0.0_s0_e-1.jsonl for RHO_FILES
       "Rho-1: Not All Tokens Are What You Need" (Lin et al., 2024; arXiv 2404.07965): the authors'
       own evaluation runs, with the math-evaluation-harness of ToRA's authors (a submodule of the
       repository), of four of their models on the harness's "minerva_math" data, which is MATH-500
       (the same 500 problems, in the same order, with the same answers as HuggingFaceH4/MATH-500):
       - Rho-Math-1B-v0.1 and Rho-Math-7B-v0.1, base models continually pretrained on
         OpenWebMath, with the harness's four-shot Minerva prompt ("cot", its
         prompts/cot/minerva_math.md at the submodule's commit 7fd4949, whose worked examples are
         written with doubled backslashes: `$\\\\frac{\\\\sqrt{x-2}}{\\\\sqrt{5-x}}$`), greedy. They
         answer "Final Answer: The final answer is $X$. I hope it is correct." and often copy the
         doubled backslashes into their LaTeX (`$9\\\\cdot7=\\\\boxed{63}$`, `\\\\frac{3}{4}`); the 1B
         model in particular often loops on a line until the generation limit.
       - Rho-Math-1B-Interpreter-v0.1 and Rho-Math-7B-Interpreter-v0.1, the same models fine-tuned
         for tool-integrated reasoning ("tora"): a Python program, its ```output``` block, then a
         sentence ending in \\boxed{} ("The value of $x$ is $\\boxed{46^\\circ}$.").
       Response: "code"[0]; gold: "answer" (MATH-500's: "\\left( 3, \\frac{\\pi}{2} \\right)",
       "p - q", "\\frac{14}{3}", "6 - 5i", "\\text{Evelyn}", "52_8", "11\\sqrt2", ".35625");
       problem: "question". The file's own "gt" (the harness's normalized answer), "pred" and
       "score" (its grading) are not used. Some lines of the tora files store each field as the
       Python text of its value (`"['```python ...']"`, `"[True]"`); those are read with
       ast.literal_eval. The harness's GSM8K files in the same archive (integer answers, not
       competition problems) are not read.

How the draw was settled, before any verdict was computed: of the 2,000 rows of the four files
(1,962 distinct (problem, response) rows: 38 responses of the 7B interpreter repeat the 1B
interpreter's word for word and are kept once), every row whose gold is not a plain integer is kept
(740: the 189 MATH-500 problems with such a gold in each file, less 16 repeats), and 260 of the
1,222 rows whose gold is a plain integer are drawn with the seed below, so that the set has
RHO_TOTAL rows, about a quarter of them plain integers (the fifth set tests that form; these keep
the answer forms of integer problems in these responses represented: degrees, boxed sentences,
base-model loops). Nothing in crates/rlvr-tasks/src changed in between.

Looked at for this set and not used (besides those the earlier builders' docstrings list): no
committed model outputs (McGill-NLP/thoughtology, the paper and site only; hemingkx/TokenSkip,
hao-ai-lab/Dynasor, RLHFlow/Self-rewarding-reasoning-LLM, ulab-uiuc/multi-agent-evolve-clean,
AIMO-CMU-MATH/CMU_MATH-AIMO and GAIR-NLP/LIMR, evaluation data, prompts or scores only;
GAIR-NLP/ToRL, zwhe99/DeepMath, PRIME-RL/TTRL, RLHFlow/Minimal-RL, sail-sg/oat-zero;
ScalingIntelligence/Archon, AlpacaEval and MT-Bench outputs only; LeGenAI/entropymath_eval, summary
files only, its raw traces ignored by git; AlexCuadron/OpenHands, MATH-500 benchmark code only;
rasbt/reasoning-from-scratch, evaluation scripts only; emrgnt-cmplxty/zero-shot-replication, GSM8K,
HumanEval and LeetCode results but no MATH results; mattdepaolis/llm-evaluation, one-sample task
reports; kaariger/slm-math-evaluation, configurations only); a sample only
(kimsh0507/RewardMATH_official, MIT, whose committed RewardMATH files hold two MATH-500 problems'
solutions, the full set being published elsewhere); no license (NgOchOcc/persistent-sampling, a
results/math500_results.json of its own sampler; VikhrModels/DeathMath, GPT-4o and GigaChat details
on its Russian olympiad set; MotaTasher/llm-olympiad-bench, Russian olympiad problems, many of them
proofs, graded by hand); no snapshot to read (PrimeIntellect-ai/prime-environments,
consequentai/fneval, TIGER-AI-Lab/Critique-Fine-Tuning). The index of public files was also searched
by exact path for the usual output files of the Qwen2.5-Math, ToRA and lm-evaluation-harness tools
on MATH-500 (outputs/.../math500/test_qwen25-math-cot_-1_seed0_t0.0_s0_e-1.jsonl,
results/math500.json, outputs/math500_results.jsonl and the like); its hits were the no-license
repositories above, toolanzyhhh1234/representation-of-equivalent-math-as-math-capability-predictors
(already rejected), Jerry-723/TTS (s1.1 outputs on MATH-500, no license) and Jelwery/MLS (MATH-500,
AMC and OlympiadBench problems, no outputs).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout8_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout8_responses.py --rho DIR
Deterministic: one fixed seed for the draw, rows in source order before drawing.
"""

import ast
import hashlib
import io
import json
import pathlib
import re
import sys
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout8_responses.jsonl"

COMMITS = {
    "rho": "32965907a2aa71192e8b760fe6391b7c5246d4dc",
}
RHO_ZIP = "rho-1/outputs.zip"
# (model directory, prompt type) of the members read, in this order
RHO_FILES = [
    ("rho-math-1b-v0.1", "cot"),
    ("rho-math-7b-v0.1", "cot"),
    ("rho-math-1b-interpreter-v0.1", "tora"),
    ("rho-math-7b-interpreter-v0.1", "tora"),
]
RHO_MEMBER = "outputs/{model}/minerva_math/test_{prompt}_-1_seed0_t0.0_s0_e-1.jsonl"
RHO_TOTAL = 1000
RHO_SEED = 15001
# a gold that is a plain integer: drawn, not kept whole
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


def field(v):
    """A field of a harness line: some lines store each value as the Python text of it."""
    if isinstance(v, str) and v[:1] == "[":
        return ast.literal_eval(v)
    return v


# ---------------------------------------------------------------------------------------
# source

def rho_rows(repo):
    archive = zipfile.ZipFile(io.BytesIO(repo.read_bytes(RHO_ZIP)))
    rows = []
    for model, prompt in RHO_FILES:
        text = archive.read(RHO_MEMBER.format(model=model, prompt=prompt)).decode("utf-8")
        for line in text.splitlines():
            if not line.strip():
                continue
            e = json.loads(line)
            code = field(e["code"])
            resp = code[0] if code else None
            if not usable(resp):
                continue
            rows.append(row(f"rho:{model}:{prompt}:{int(e['idx'])}", e["question"],
                            str(e["answer"]), resp))
    return distinct(rows)


def rho(repo):
    rows = rho_rows(repo)
    integer = [r for r in rows if PLAIN_INTEGER.fullmatch(r["gold"])]
    other = [r for r in rows if not PLAIN_INTEGER.fullmatch(r["gold"])]
    keep = {id(r) for r in other + draw(integer, RHO_TOTAL - len(other), RHO_SEED)}
    return [r for r in rows if id(r) in keep]  # source order


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("rho", rho)], OUT)


if __name__ == "__main__":
    main()
