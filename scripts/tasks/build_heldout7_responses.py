#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout7_responses.jsonl: a SEVENTH held-out set of
real model responses to math problems, each with the data set's own gold answer, taken from the
committed outputs of public projects that no earlier fixture of this repository uses: not the seven
sources of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math,
wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval),
nor kojima's zero_shot_cot logs, nor the four of heldout_responses.jsonl (OpenLMLab/GAOKAO-Bench,
iamyb/llm-gaokao-math-eval, veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning), nor the
three of heldout2_responses.jsonl (lz1oceani/verify_cot, protagolabs/odyssey-math,
dvlab-research/Mr-Ben), nor the two of heldout3_responses.jsonl (suzgunmirac/meta-prompting,
suzgunmirac/BIG-Bench-Hard), nor the two of heldout4_responses.jsonl (ruixiangcui/AGIEval,
dvlab-research/MR-GSM8K), nor the one of heldout5_responses.jsonl (maitrix-org/llm-reasoners), nor
the two of heldout6_responses.jsonl (kuk/simple-evals-ru, PRIME-RL/PRIME), nor math-verify's tests,
nor the peer pairs of checker_set.jsonl, nor the sources kept for the maintainers' held-back check
(TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel, MathCoder). The set measures the
checker; it was not used to tune it (see docs/checker.md, "A seventh held-out set"). Every answer is
free-form and its gold is NOT a plain integer (the fifth set tests those): LaTeX expressions in
subscripted variables with fractional powers, decimals to two places, fractions, polynomials,
dollars, percents, a point.

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "hardmath:<subset>:<k>shot:<model>:<key>" (subset: the results directory; k: the number
  of worked examples in the prompt; model and k from the file name; key: the problem's key in the
  file) or "owm-evals:<model>:math_algebra_easy:<i>" (i: the row of the file's cache, 0-based),
  enough to find the row again.
- problem: the problem text (for hardmath, the prompt from its last "Question:" on, without the
  worked examples before it), cut to its first PROBLEM_CHARS characters.
- gold: the data set's own gold answer as the source stores it, outer whitespace removed.
- response: the model's response, cut in the middle when over MAX_RESPONSE characters (its first
  HEAD characters, a line "[... N characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: always null.
- math_verify: math-verify's verdict (see below).

Sources. Each is read from a checkout of the repository at the commit below, or from a bare mirror
of it (files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>
(for owm-evals the commit is on the fork's open-web-math branch; for hardmath it is on main, the
parent of the commit that stopped tracking the results folder on 2024-12-07).

  key        repo @ commit                                            license
  hardmath   sarahmart/HARDMath @ 7c4885cd2be8f7b88fae4a5c8aa661ed68cdb54e
                                                                      MIT (LICENSE)
             evaluation/results/responses/<subset>/<subset>_<k>shot_<model>.json for the subsets
             nondimensionalization_numeric and nondimensionalization_symbolic (19 files each)
             "HARDMath: A Benchmark Dataset for Challenging Problems in Applied Mathematics" (Fan,
             Martinson et al., 2024; arXiv 2410.09988): the authors' evaluation runs of GPT-3.5,
             GPT-4, o1-mini, Llama 3 (8B), Llama 3.1, Code Llama and Mistral 7B, 0-, 1-, 5- and
             10-shot, on nondimensionalizing a trinomial: "Nondimensionalize the polynomial a_{1}
             x^{n} + a_{2} x^{m} + a_{3} into one of the form epsilon y^{n} + y^{m} + 1. Express
             epsilon as a function of a_1, a_2, and a_3" (symbolic) or, with numeric coefficients,
             "Solve for epsilon ... a floating-point number with two decimal places ... inside a
             Latex box \\[boxed{}\\]" (numeric). Response: "response"; gold: "extracted_answer"
             (symbolic: `\\frac{a_{1} \\left(\\frac{a_{3}}{a_{2}}\\right)^{\\frac{7}{2}}}{a_{3}}` or
             `\\frac{a_{1} a_{3}^{2}}{a_{2}^{3}}`, in some files in SymPy's syntax
             `a_{1}(a_{3}/a_{2})**(7/2)/a_{3}`; numeric: "0.08", "4.0", "16.23"); problem: the last
             "Question:" of "prompt". The files' own "model_answer" and "score" (the authors'
             grading) are not used. Its other subsets (polynomial roots, ODEs, integrals) store no
             final-answer gold (the ground truth is inside a GPT-4 grading prompt, with partial
             credit) and are not read. Of the 1,454 distinct symbolic rows, the 868 whose gold is
             written in SymPy's `**` syntax are left out (see "How the draw was settled") and all
             586 others kept; of the 1,642 distinct numeric rows, HARDMATH_NUMERIC_N drawn.
  owm-evals  wellecks/lm-evaluation-harness @ 1ca4e1c75bab21bb2b47343783c92bfcee652283
                                                                      MIT (LICENSE.md)
             output/<model>_maj1.json for the files of OWM_FILES
             A fork of EleutherAI's lm-evaluation-harness used for the OpenWebMath paper (Paster et
             al., 2023; arXiv 2310.06786), with its evaluation logs ("output logs", 2023-09-27):
             1.4B Pythia and four 1B models trained on OpenWebMath, the Pile, Proof-Pile and a mix,
             greedy with five worked "Problem: ... Answer: ... The answer is \\boxed{..}." examples,
             on the 178 level-1 algebra problems of MATH ("math_algebra_easy"). Response:
             cache[...]["metadata"]["candidates"] (the generation; the models often go on to invent
             new "Problem:" turns, or loop until the generation limit); gold: "answer" (MATH's:
             "\\frac{7}{11}", "x^2 + 7x + 10", "\\$180", "80 \\%", "20\\text{ miles}", "(6,0)");
             problem: "problem". The file's "acc" is not used. Rows whose gold is a plain integer
             are left out; all 112 distinct rows left (23 problems) are kept. The fork's later
             outputs of Llemma 7B/34B, Code Llama and Llama 2 (output/*_maj1.json at 834a050) are
             over the snapshot's 4 MiB limit and not read.

How the draw was settled. Before any response was graded, the rows of both sources whose gold is not
a plain integer were scored by the frozen checker and math-verify: the numeric HARDMath rows gave 3
disagreements in 1,642, the symbolic ones 80 in 1,454, the OpenWebMath rows 4 in 112; every one of
the 868 symbolic rows whose gold is in SymPy's `**` syntax was called wrong by both checkers
(neither reads that syntax as a gold; the same problems have LaTeX golds in the other files). Those
868 were left out, the 586 LaTeX-gold symbolic rows and the 112 OpenWebMath rows kept whole, and 200
numeric rows drawn with the seed below (for their answer forms, `\\boxed{\\epsilon \\approx 0.22}`,
two decimals; the draw holds none of the 3 numeric disagreements); nothing in crates/rlvr-tasks/src
changed in between.

Looked at for this set and not used (besides those the earlier builders' docstrings list): files
over the snapshot's 4 MiB limit (dair-iitd/jeebench, whose data.zip holds the questions and the
model responses; YilunZhou/champ-dataset, whose dataset file holds the annotated generations); no
license (JamesRoggeveen/hardmath2_eval, HARDMath2 results; LittleDijkstraZ/AIMO, integer AIMO
answers; LeoLjl/eval, a text file of GPT-3.5 MATH answers;
toolanzyhhh1234/representation-of-equivalent-math-as-math-capability-predictors; tengxiaoliu/XoT,
GSM8K demo outputs only; the Stanford CS336 assignment5-alignment forks such as
damek/assignment5-alignment, whose generations are quoted in reports); no committed model outputs
(aadityasingh/HARP, cfpark00/RL-Wall, yiranwu0/MathChat, NingMiao/SelfCheck, GAIR-NLP/OlympicArena,
OpenBMB/OlympiadBench, RUCAIBox/OlymMATH, RUCAIBox/JiuZhang3.0, open-compass/GPassK,
Xwin-LM/Xwin-LM, dvlab-research/Step-DPO, Qihoo360/Light-R1, knoveleng/open-rs, simplescaling/s1,
ypwang61/One-Shot-RLVR, LeapLabTHU/limit-of-RLVR, Kyriection/Soft-Thinking, microsoft/rStar,
trotsky1997/MathBlackBox, EleutherAI/math-lm, yale-nlp/DocMath-Eval, TIGER-AI-Lab/MAmmoTH2,
TheDuckAI/arb, Kaffaljidhmah2/MATH-Perturb, JamesRoggeveen/hardmath2_data, the Qwen2.5-Math forks
yangalan123, wangjp1010 and wantbook-book, and the openai/simple-evals forks howard-yen,
stevolopolis, zai-org/glm-simple-evals, fedric95/simpler-simple-evals and HAE-RAE/hr-simple-evals);
outputs of another kind (THUDM/ChatGLM-Math, MIT, GPT-4 answers to MathUserEval whose references are
worked solutions and proofs, not final answers; InternLM/InternLM-Math, miniF2F proof searches only;
adorosario/simple-evals, audit logs of a retrieval study; PrimeIntellect-ai/verifiers, MIT, whose
committed math evaluation results are Git LFS pointers or 15-row multi-turn tool runs in the
snapshot, the larger runs the index lists being at commits the snapshot does not hold); no snapshot
to read (centerforaisafety/simple-evals, rezashamji/openai-simple-evals, toloka/u-math).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout7_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout7_responses.py \\
        --hardmath DIR --owm-evals DIR
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
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout7_responses.jsonl"

COMMITS = {
    "hardmath": "7c4885cd2be8f7b88fae4a5c8aa661ed68cdb54e",
    "owm-evals": "1ca4e1c75bab21bb2b47343783c92bfcee652283",
}
HARDMATH_NUMERIC_N = 200
# a gold that is a plain integer is left out (the fifth set tests those)
PLAIN_INTEGER = re.compile(r"-?\d+")
HARDMATH_ROOT = "evaluation/results/responses/"
HARDMATH_SUBSETS = ["nondimensionalization_numeric", "nondimensionalization_symbolic"]
# file name: <subset>_<k>shot_<model>.json
HARDMATH_FILE = re.compile(r"(?P<subset>[a-z_]+)_(?P<shot>\d+shot)_(?P<model>[A-Za-z0-9.]+)\.json")
# (file under output/, the model the file's config names)
OWM_FILES = [
    ("mix_1b_v1.3_maj1.json", "open-web-math/mix_1b_v1.3"),
    ("owm_1b_v1.3_maj1.json", "open-web-math/owm_1b_v1.3"),
    ("pile-sample_1b_v1.3_maj1.json", "open-web-math/pile-sample_1b_v1.3"),
    ("proof-pile-v1_1b_v1.3_maj1.json", "open-web-math/proof-pile-v1_1b_v1.3"),
    ("pythia-1.4b_maj1.json", "EleutherAI/pythia-1.4b"),
]


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def last_question(prompt):
    """The question a few-shot prompt ends with: from its last "Question:" on."""
    i = prompt.rfind("Question:")
    return prompt[i:] if i >= 0 else prompt


# ---------------------------------------------------------------------------------------
# sources

def hardmath_rows(repo):
    rows = []
    for path, _ in repo.files(HARDMATH_ROOT.rstrip("/")):
        rel = path[len(HARDMATH_ROOT):]
        sub, _, name = rel.partition("/")
        m = HARDMATH_FILE.fullmatch(name)
        if sub not in HARDMATH_SUBSETS or not m or m["subset"] != sub:
            continue
        data = json.loads(repo.read_text(path))
        for key in sorted(data, key=int):
            e = data[key]
            resp, gold = e.get("response"), e.get("extracted_answer")
            if not usable(resp) or gold is None or not str(gold).strip():
                continue
            gold = str(gold)
            if PLAIN_INTEGER.fullmatch(gold.strip()):
                continue
            rows.append(row(f"hardmath:{sub}:{m['shot']}:{m['model']}:{key}",
                            last_question(e["prompt"]), gold, resp))
    return distinct(rows)


def owm_rows(repo):
    rows = []
    for name, model in OWM_FILES:
        d = json.loads(repo.read_text(f"output/{name}"))
        assert d["config"]["model_args"] == f"pretrained={model}", name
        for i, e in enumerate(d["cache"]["math_algebra_easy"]):
            resp = e["metadata"]["candidates"]
            gold = e["answer"]
            if not usable(resp) or PLAIN_INTEGER.fullmatch(gold.strip()):
                continue
            rows.append(row(f"owm-evals:{model.split('/')[-1]}:math_algebra_easy:{i}",
                            e["problem"], gold, resp))
    return distinct(rows)


def hardmath(repo):
    rows = hardmath_rows(repo)
    symbolic = [r for r in rows if ":nondimensionalization_symbolic:" in r["source"]
                and "**" not in r["gold"]]
    numeric = [r for r in rows if ":nondimensionalization_numeric:" in r["source"]]
    return draw(numeric, HARDMATH_NUMERIC_N, 14001) + symbolic  # path order


def owm_evals(repo):
    return owm_rows(repo)


# ---------------------------------------------------------------------------------------

def main():
    builders = [("hardmath", hardmath), ("owm-evals", owm_evals)]
    run_builder(__doc__, COMMITS, builders, OUT)


if __name__ == "__main__":
    main()
