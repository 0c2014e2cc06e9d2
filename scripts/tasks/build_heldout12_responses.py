#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout12_responses.jsonl: a TWELFTH held-out set of
real model responses, this time to GRADE-SCHOOL MATHEMATICS from a curriculum (the US Common Core,
grades K to 8) whose answer key writes its answers in the forms a solver's code prints them:
fractions "7702/2093", decimals with SymPy's trailing zeros "52.6000000000000", comparison signs
"<", ">" and "=", lists of factor pairs "[(1, 27), (3, 9)]" and solutions of two equations
"{q: 373/321, s: 2291/642}"; from the committed outputs of 28 models (GPT-4o, GPT-3.5 Turbo, the
three Claude 3 models, Gemini 1.5 Pro and Flash, Llama 3, Mistral and Mixtral, Gemma, Phi-2, Code
Llama, DeepSeek, and the base mathematics models Llemma, DeepSeek-Math, InternLM2-Math, Qwen2-Math and
NuminaMath-TIR) on the MathCAMPS benchmark, each with the benchmark's own answer, taken from a public
project that no earlier fixture of this repository uses: not the seven sources of
real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math,
wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval), nor
kojima's zero_shot_cot logs, nor the sources of heldout_responses.jsonl to heldout11_responses.jsonl
(OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval, veronica320/Faithful-COT,
Tebmer/Rereading-LLM-Reasoning, lz1oceani/verify_cot, protagolabs/odyssey-math, dvlab-research/Mr-Ben,
suzgunmirac/meta-prompting, suzgunmirac/BIG-Bench-Hard, ruixiangcui/AGIEval, dvlab-research/MR-GSM8K,
maitrix-org/llm-reasoners, kuk/simple-evals-ru, PRIME-RL/PRIME, sarahmart/HARDMath,
wellecks/lm-evaluation-harness, microsoft/rho, tianyi-lab/MiP-Overthinking, tangzhy/RealCritic,
mathllm/MATH-V, yale-nlp/Physics), nor math-verify's tests, nor the peer pairs of checker_set.jsonl,
nor the sources kept for the maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH,
MathVista, PromptPG, Abel, MathCoder), nor any repository the earlier builders' docstrings name as
looked at. The set measures the checker; it was not used to tune it (see docs/checker.md, "A twelfth
held-out set").

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "mathcamps:<model>:<problem id>" (model: the page's directory under models/, which names
  the model, e.g. "gpt-4o-2024-05-13", "meta-llama/Llama-3-70b-chat-hf"; problem id: MathCAMPS's
  "id", e.g. "5.NF.A.1-0-0", whose first field is the Common Core standard), enough to find the row
  again.
- problem: the problem statement as the page shows it, HTML entities decoded, cut to its first
  PROBLEM_CHARS characters.
- gold: the page's "Expected answer" (MathCAMPS's "answer"), HTML entities decoded, outer whitespace
  removed.
- response: the model's response (the page's "model-raw-response" block, HTML entities decoded), cut
  in the middle when over MAX_RESPONSE characters (its first HEAD characters, a line "[... N
  characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: always null (no problem lists options; the comparison problems ask for one of the signs
  <, > or =, and the line has no choices).
- math_verify: math-verify's verdict (see below).

Source. Read from a checkout of the repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key        repo @ commit                                                 license
  mathcamps  gpoesia/mathcamps @ d0d1af633f889934d1e2df42f7be0bb11de01045  MIT (LICENSE)
             models/<model>/<standard>/index.html for every model and standard the commit holds
             (the head of the repository's gh-pages branch, 2024-10-02, "Fix model names": the
             project's website, one page per model and Common Core standard, published with the
             model evaluation in 2d601cb, 2024-08-15). "MathCAMPS: Fine-grained Synthesis of
             Mathematical Problems From Human Curricula" (Mishra, Poesia, Mo, Goodman, 2024;
             arXiv 2407.00900): 4,900 word and arithmetic problems synthesized from 44 standards of
             grades K-8 (and 4,707 follow-up questions), answered by 28 models with the prompt of
             prompts/eval_prompt.json on the main branch (a system message "You are a mathematics
             teacher that solves all problems correctly and explains your reasoning. Write your final
             answer in the last line of your response. The last line should always be formatted as
             follows: "### Answer: <<your final answer here.>>"." and one worked GSM8K example); the
             base models continue past their answer with new turns of their own. Each page shows,
             per problem, the problem, the model's raw response, the expected answer and the
             authors' grading ("Correct?", not used). The JSON files of model-responses/v1/ on the
             main branch (the same responses) are over the snapshot's 4 MiB limit and not read. The
             28 model directories: gpt-4o-2024-05-13, gpt-3.5-turbo-0125, claude-3-opus-20240229,
             claude-3-sonnet-20240229, claude-3-haiku-20240307, gemini-1.5-pro-001,
             gemini-1.5-flash-001, meta-llama/Llama-3-70b-chat-hf and -8b-chat-hf,
             mistralai/Mistral-7B-Instruct-v0.3, Mixtral-8x7B- and Mixtral-8x22B-Instruct-v0.1,
             google/gemma-2b-it and -7b-it, microsoft/phi-2, codellama/CodeLlama-7b/13b/34b-Instruct-hf,
             deepseek-ai/deepseek-llm-67b-chat, deepseek-coder-33b-instruct and deepseek-math-7b-base,
             EleutherAI/llemma_7b and llemma_34b, internlm/internlm2-math-base-7b and -20b,
             Qwen/Qwen2-Math-7B and -72B, AI-MO/NuminaMath-7B-TIR.

How the draw was settled, before any verdict was computed: every response to an original problem
(the follow-up questions, asked in the same conversation after a first answer, are not read), in
path order and page order, empty responses left out and repeated (problem, response) rows kept
once: 137,200 responses on the pages, 136,894 of them not empty, 130,328 rows once repeats are
removed, 43,300 of them with a gold other than a plain integer (fractions, decimals, comparison
signs, factor pairs, solutions of two equations: the golds of 1,582 of the 4,900 problems). Of
those, NOT_INTEGER_N were drawn with NOT_INTEGER_SEED, and INTEGER_N of the 87,028 rows whose gold is
a plain integer with INTEGER_SEED; the set is the drawn rows in source order. Nothing in
crates/rlvr-tasks/src changed in between.

Looked at for this set and not used (besides those the earlier builders' docstrings list): a
license that restricts use (M3RG-IITD/MaScQA, CC BY-NC-SA 4.0, whose gate_* folders hold GPT-4 and
ChatGPT answers to materials-science exam questions); no license (neulab/gemini-benchmark, Gemini
Pro, GPT-3.5/4 Turbo and Mixtral on GSM8K, SVAMP, ASDiv and MAWPS, integer answers, the GSM8K and
ASDiv files over the 4 MiB limit; qtli/GSM-Plus, GSM8K answers of GPT, MetaMath, Abel, ToRA and
SEGO); no committed outputs (hgaurav2k/JEEBench, the questions only; PrismaX-Team/PhysUniBenchmark;
ScienceOne-AI/ScienceEval; dxzxy12138/PhysReason; Haffi112/icelandic-math-eval, whose results/ is
not committed; yale-nlp/faithful_lrm and yale-nlp/RLMF); still no snapshot to read
(FranxYao/chain-of-thought-hub, toloka/u-math, consequentai/fneval).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout12_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout12_responses.py --mathcamps DIR
Deterministic: one fixed seed per draw, rows in source order before drawing.
"""

import hashlib
import html
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout12_responses.jsonl"

COMMITS = {
    "mathcamps": "d0d1af633f889934d1e2df42f7be0bb11de01045",
}
# the website's pages: models/<model>/<standard>/index.html, the model's name holding a "/" for
# the open models ("meta-llama/Llama-3-70b-chat-hf")
PAGES = "models"
PAGE = "index.html"
NOT_INTEGER_N = 700
NOT_INTEGER_SEED = 19001
INTEGER_N = 100
INTEGER_SEED = 19002
# a gold that is a plain integer: drawn apart
PLAIN_INTEGER = re.compile(r"-?\d+")

# one problem's block on a page: its class ("model-response", with "model-response-followup" for a
# follow-up question), its id, and its fields
BLOCK = re.compile(r'<div\s+class="(model-response[^"]*)"\s+id="([^"]+)"\s*>(.*?)\n    </div>',
                   re.S)
PROBLEM = re.compile(r'<span class="response-field">Problem:</span>\s*(.*?)\s*</p>', re.S)
RESPONSE = re.compile(r'<pre class="model-raw-response">(.*?)</pre>', re.S)
EXPECTED = re.compile(r'<span class="response-field">Expected answer:</span>\s*(.*?)\s*</p>', re.S)


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

def page_rows(repo, path):
    """The original problems of one page (models/<model>/<standard>/index.html), in page order."""
    model = path[len(PAGES) + 1:].rsplit("/", 2)[0]
    rows = []
    for cls, pid, body in BLOCK.findall(repo.read_text(path)):
        if "followup" in cls:
            continue
        problem, response, gold = PROBLEM.search(body), RESPONSE.search(body), EXPECTED.search(body)
        if problem is None or response is None or gold is None:
            sys.exit(f"{path}: block {pid} lacks a field")
        response = html.unescape(response.group(1))
        if not usable(response):
            continue
        rows.append(row(f"mathcamps:{model}:{pid}", html.unescape(problem.group(1)),
                        html.unescape(gold.group(1)), response))
    return rows


def mathcamps(repo):
    rows = []
    for path, _blob in repo.files(PAGES):
        parts = path.split("/")
        # a model's own index.html (models/<model>/ or models/<org>/<model>/) lists its standards
        # and holds no problem block: it adds no row
        if parts[-1] != PAGE or len(parts) < 4:
            continue
        rows += page_rows(repo, path)
    rows = distinct(rows)
    keep = {id(r) for r in draw([r for r in rows if not integer(r)], NOT_INTEGER_N,
                                NOT_INTEGER_SEED)}
    keep |= {id(r) for r in draw([r for r in rows if integer(r)], INTEGER_N, INTEGER_SEED)}
    return [r for r in rows if id(r) in keep]


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("mathcamps", mathcamps)], OUT)


if __name__ == "__main__":
    main()
