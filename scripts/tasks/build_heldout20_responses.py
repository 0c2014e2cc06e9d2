#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout20_responses.jsonl: a TWENTIETH held-out set of
real model responses, this time to OLYMPIAD INEQUALITIES whose golds are EQUATIONS ("$C = \\frac{27}{2}$",
"$$C = \\sqrt{\\frac{n}{n-1}}$$", "$$C = (n-1)(m-1)$$") and to UNIVERSITY MATHEMATICS with FREE-FORM
golds in plain text ("3sin(x**2) - 2", "y(x) = C * exp(-x^2)", "x=11/4, y=97/44, z=-4/11, w=-15/22",
"[1,0,0,-2;0,1,0,3;0,0,1,-8]", "Center (-1,0), radius sqrt(5)", "9.92 mg"), from two public projects
that no earlier fixture uses:
- ineqmath (lupantech/ineqmath, "Solving Inequality Proofs with Large Language Models", Sheng, Lu et
  al., 2025): the committed runs of gpt-4o-mini (10K-token budget) on the 100 problems of the
  IneqMath dev split under four prompts (zero-shot, three-shot, the three most frequent theorems as
  hints, the three most frequent training problems and solutions as hints), told to end "The answer
  is $C=X$" (bound problems: the largest or smallest constant of an inequality) or "The answer is
  (Letter) Symbol" (relation problems: which of $\\leq$, $\\geq$, $=$, $<$, $>$ or "None of the
  above" fills the blank, six options); and o4-mini's "enhanced" training solutions (the project's
  SFT data: o4-mini asked to rewrite the reference solution of 200 sampled training problems in
  detail, given the answer, ending in the same answer line, often in plain-text Unicode, "The answer
  is (B) ≥", "C = 3");
- mathq (idrori/mathQ, "A neural network solves, explains, and generates university math problems by
  program synthesis and few-shot learning at human level", Drori et al., PNAS 2022): GPT-3's
  answers, zero-shot, to the questions of six MIT courses (18.01 single-variable calculus, 18.02
  multivariable calculus, 18.03 differential equations, 18.05 probability and statistics, 18.06
  linear algebra, 6.042 mathematics for computer science), Columbia's COMS3251 (computational linear
  algebra) and 90 MATH problems, as the study's spreadsheets record them: short answers in
  sentences ("The area is 8π.", "The series diverges."), equations and sympy or MATLAB notation
  ("y = c_1e^{3t} + c_2e^{-it}", "R = [1,0,0,0,0;0,1,0,...]"), sometimes Python comments or code;
  the key is the spreadsheet's "Solution", in plain text.
Taken from public projects that no earlier fixture of this repository uses: not the seven sources
of real_responses.jsonl, nor kojima's zero_shot_cot logs, nor the sources of
heldout_responses.jsonl to heldout19_responses.jsonl (see their builders' docstrings), nor
math-verify's tests, nor the peer pairs of checker_set.jsonl, nor the sources kept for the
maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel,
MathCoder), nor any repository the earlier builders' docstrings name as looked at (lupantech's
chameleon-llm, PromptPG and MathVista are other projects of the same author). The set measures
the checker; it was not used to tune it (see tests/heldout20_responses.rs and the header of its
labels; docs/checker.md has no section for it yet).

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source:
    "ineqmath:dev:<prompt>:<data_id>" (prompt "zero_shot", "few_shot", "theorem_hints" or
    "solution_hints", the four result folders below; data_id the record's "data_id", 0-99);
    "ineqmath:train-o4-mini:<data_id>" (data_id the record's "data_id" in the 200-problem sample);
    "mathq:<course>:<Id>" (course the spreadsheet's name, "18.01" ... "COMS3251", "MATH"; Id its
    "Id" column).
- problem: ineqmath: the record's "problem" (the inequality and, for a relation problem, its six
  options as the prompt lists them; the task description and the few-shot examples or hints of the
  prompt are not included); mathq: the spreadsheet's "Original Problem" (GPT-3 was given the
  original question; the "Codex Input" column is the study's rewording for its program synthesis);
  cut to its first PROBLEM_CHARS characters.
- gold: ineqmath bound problems: the record's "answer" as stored ("$C = 4$" in the dev runs,
  "$$C = 3$$" in the training data); ineqmath relation problems: the letter of the record's
  "answer" ("(D) $<$" -> "D"); mathq: the spreadsheet's "Solution" (outer whitespace removed).
- response: ineqmath dev: the record's "response"; ineqmath training: the record's
  "enhanced_solution"; mathq: the spreadsheet's "GPT-3 Response"; cut in the middle when over
  MAX_RESPONSE characters (one of the 700 is, a gpt-4o-mini response with training solutions as
  hints).
- choices: ineqmath relation problems: the six options without their "(A) " prefixes, ["$\\\\leq$",
  "$\\\\geq$", "$=$", "$<$", "$>$", "None of the above"] (the dev record's "choices"; the training
  records have none, and their problems list the same six, checked); null otherwise.
- math_verify: math-verify's verdict (see below).

Sources. Read from a checkout of each repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key       repo @ commit                                                     license
  ineqmath  lupantech/ineqmath @ f572cc9c6d2f33e590cb212d0c8b1c1b1d4195ea     MIT (LICENSE); the
            README puts "the new contributions to our dataset" (the problems' reformulations and
            answers) under CC BY-SA 4.0, with the condition that the TEST split is not used for
            training; this set reads the dev and training splits, to measure only
            results/<folder>/results.json for the four dev folders
              models_results_dev_data/gpt-4o-mini_tokens_10000                          zero_shot
              few_shot_results_dev_data/gpt-4o-mini_tokens_10000_shot_num_3             few_shot
              frequent_theorems_as_hints_results_dev_data/gpt-4o-mini_tokens_10000_theorem_num_3
                                                                                     theorem_hints
              frequent_solution_as_hints_results_dev_data/gpt-4o-mini_tokens_10000_solution_num_3
                                                                                    solution_hints
            (a JSON list of 100 records each, "data_id", "problem", "answer", "type" "bound" or
            "relation", "choices", "prompt", "response", "success"; all 400 succeeded, none
            empty); and data_curation/training_data_enhancement/enhanced_training_data/
            training_data_sampled_200/enhanced_data_training_data_sampled_200.json (200 records,
            "data_id", "problem", "type", "answer", "solution", "enhanced_solution"; o4-mini, per
            sft_data_generation.sh). The head of main (2025-08-26, "update assets"); the results
            were committed 2025-08-17 ("add results and scores file"), the training data
            2025-08-18 ("upload data enhancement"). Not read: the *_test_data folders (the test
            split's answers are withheld: every "answer" is empty; models_results_test_data/
            gpt-4o-mini_tokens_10000/results.json is the dev file's blob), the raw/*.md renderings
            of the same records, data/json (problems only).
  mathq     idrori/mathQ @ 9088a54068b0a9f33ddc6ef3cff20901ff64b4a9           MIT (LICENSE)
            code/csv/<course>.csv for 18.01, 18.02, 18.03, 18.05, 18.06, 6.042, COMS3251 and
            MATH (columns "Id", "Course", "Original Problem", "Codex Input", "Solution", "Codex
            Code", ..., "GPT-3 Response", "GPT-3 Evaluation"). The head of master (2022-12-23,
            "Update README.md"); the spreadsheets were committed 2022-05-23 and not changed since.
            Not read: the Codex programs (code, not answers), data/*.json (the same rows), the
            figures' data.

How the draw was settled, before any verdict was computed:
- ineqmath dev: the four files in the order above, records in file order (400; none empty, none
  a repeat of an earlier (problem, response)); the 200 bound records all kept; DEV_RELATION_N
  (120) of the 200 relation records drawn with DEV_RELATION_SEED.
- ineqmath training: the 200 records in file order (none empty or repeated); the 100 bound records
  all kept; TRAIN_RELATION_N (60) of the 100 relation records drawn with TRAIN_RELATION_SEED.
- mathq: the eight spreadsheets in the order above, rows in file order; a row left out when its
  "GPT-3 Response" is empty (61, all 6.042), when its "Solution" is empty, spans several lines or
  is over MATHQ_MAX_GOLD (60) characters (the 18.06 answers are worked solutions, "This problem
  gives the diagonals ..."; a Codex program; numpy matrices; 31 in all), names a picture rather
  than a value ("Graph", "Image", "Spiral of Archimedes Graph": 10) or is a fraction that the
  spreadsheet turned into a date ("12-Jan" for 1/12, "5-Feb", "13-May", "23-May": 4); all 220 left
  kept.
Each group in source order, the groups in the order ineqmath dev, ineqmath training, mathq: 700
responses (bound 300, relation 180, mathq 220).
Nothing in crates/rlvr-tasks/src was changed for this set.

Looked at for this set and not used (besides those the earlier builders' docstrings list; a search
for free-form golds first, then for older models' outputs on university mathematics):
maxim-saplin/LiveBench (a LiveBench fork with per-model answers of Gemma 2 and 3, GPT-4.1 mini and
nano and Mercury Coder on AMPS_Hard, integrals and derivatives with LaTeX golds, and on
math_comp and olympiad: every model_answer file is a Git LFS pointer, its content not in the
snapshot); fgenie/rims_minimal (ChatGPT, GPT-4 Turbo, Llama 3 8B and Phi-3 on MATH and Minerva's
OCW courses: no license in any branch); iiis-ai/IterativeQuestionComposing (four MMIQC models on
the 2023 Hungarian national exam: no license, and the outputs hold no gold); idrori/stemQ and
idrori/mlfinalsQ (the same authors' STEM and machine-learning finals questions: MIT, but no model
responses in any commit); rayhuaruijia/LLM_Evaluation (ChatGPT and Gemini on 60 problems: no
license); phybench-official/* and GaoZhitao121/phybench (PHYBench's pipeline and problems: no
committed outputs); RamanujanMachine/ASyMOB (symbolic perturbations: no committed responses);
ericosmic/TP-Agent-answer-for-TPBench (an agent's plans for a few physics problems, not answers to
a key); mindrones/livebenchviz and Willexi8/livebench-irt (LiveBench scores only). Within the
sources: IneqMath's test-split runs (no answers), the Codex programs of mathQ.

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout20_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout20_responses.py --ineqmath DIR --mathq DIR
Deterministic: one fixed seed per draw, rows in source order before drawing.
"""

import csv
import hashlib
import io
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout20_responses.jsonl"

COMMITS = {
    "ineqmath": "f572cc9c6d2f33e590cb212d0c8b1c1b1d4195ea",
    "mathq": "9088a54068b0a9f33ddc6ef3cff20901ff64b4a9",
}
# (folder under results/, prompt label)
DEV_RUNS = [
    ("models_results_dev_data/gpt-4o-mini_tokens_10000", "zero_shot"),
    ("few_shot_results_dev_data/gpt-4o-mini_tokens_10000_shot_num_3", "few_shot"),
    ("frequent_theorems_as_hints_results_dev_data/gpt-4o-mini_tokens_10000_theorem_num_3",
     "theorem_hints"),
    ("frequent_solution_as_hints_results_dev_data/gpt-4o-mini_tokens_10000_solution_num_3",
     "solution_hints"),
]
TRAIN_FILE = ("data_curation/training_data_enhancement/enhanced_training_data/"
              "training_data_sampled_200/enhanced_data_training_data_sampled_200.json")
DEV_RELATION_N = 120
DEV_RELATION_SEED = 27001
TRAIN_RELATION_N = 60
TRAIN_RELATION_SEED = 27002
OPTIONS = ["$\\leq$", "$\\geq$", "$=$", "$<$", "$>$", "None of the above"]
MATHQ_COURSES = ["18.01", "18.02", "18.03", "18.05", "18.06", "6.042", "COMS3251", "MATH"]
MATHQ_MAX_GOLD = 60
MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"

csv.field_size_limit(1 << 30)


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def relation_letter(answer):
    """The letter of a relation answer, "(D) $<$" -> "D"."""
    m = re.fullmatch(r"\(([A-F])\)\s*(.*)", answer.strip())
    assert m and m.group(2).strip() == OPTIONS["ABCDEF".index(m.group(1))], answer
    return m.group(1)


def listed_options(problem):
    """The options a relation problem lists, without their "(A) " prefixes."""
    opts = re.findall(r"^\(([A-F])\)\s*(.*?)\s*$", problem, re.M)
    assert [l for l, _ in opts] == list("ABCDEF"), problem
    return [o for _, o in opts]


def ineq_row(source, rec, response):
    if rec["type"] == "bound":
        return row(source, rec["problem"], rec["answer"], response)
    assert rec["type"] == "relation", rec["type"]
    return row(source, rec["problem"], relation_letter(rec["answer"]), response, list(OPTIONS))


def ineqmath(repo):
    bound, relation = [], []
    for folder, label in DEV_RUNS:
        for rec in json.loads(repo.read_text(f"results/{folder}/results.json")):
            assert rec["data_split"] == "dev" and str(rec["success"]) == "True", rec["data_id"]
            if not usable(rec.get("response")):
                continue
            if rec["type"] == "relation":
                assert json.loads(rec["choices"]) == [f"({l}) {o}" for l, o in
                                                     zip("ABCDEF", OPTIONS)], rec["choices"]
            r = ineq_row(f"ineqmath:dev:{label}:{rec['data_id']}", rec, rec["response"])
            (bound if rec["type"] == "bound" else relation).append(r)
    bound, relation = distinct(bound), distinct(relation)
    print(f"ineqmath dev: {len(bound)} bound, {len(relation)} relation", file=sys.stderr)
    dev = sorted(bound + draw(relation, DEV_RELATION_N, DEV_RELATION_SEED),
                 key=lambda r: order_key(r["source"]))
    bound, relation = [], []
    for rec in json.loads(repo.read_text(TRAIN_FILE)):
        if not usable(rec.get("enhanced_solution")):
            continue
        if rec["type"] == "relation":
            assert listed_options(rec["problem"]) == OPTIONS, rec["data_id"]
        r = ineq_row(f"ineqmath:train-o4-mini:{rec['data_id']}", rec, rec["enhanced_solution"])
        (bound if rec["type"] == "bound" else relation).append(r)
    bound, relation = distinct(bound), distinct(relation)
    print(f"ineqmath training: {len(bound)} bound, {len(relation)} relation", file=sys.stderr)
    train = sorted(bound + draw(relation, TRAIN_RELATION_N, TRAIN_RELATION_SEED),
                   key=lambda r: order_key(r["source"]))
    return dev + train


def order_key(source):
    """Source order within an ineqmath group: the run's position, then the record's data_id."""
    parts = source.split(":")
    if parts[1] == "dev":
        run = [label for _, label in DEV_RUNS].index(parts[2])
        return (run, int(parts[3]))
    return (0, int(parts[2]))


def mathq_gold_usable(gold):
    return (gold != "" and "\n" not in gold and len(gold) <= MATHQ_MAX_GOLD
            and not re.search(r"graph|image|plot|sketch", gold, re.I)
            and not re.fullmatch(rf"\d{{1,2}}-({MONTHS})", gold))


def mathq(repo):
    out = []
    for course in MATHQ_COURSES:
        text = repo.read_text(f"code/csv/{course}.csv")
        for rec in csv.DictReader(io.StringIO(text, newline="")):
            resp, gold = rec.get("GPT-3 Response"), (rec.get("Solution") or "").strip()
            if not usable(resp) or not mathq_gold_usable(gold):
                continue
            out.append(row(f"mathq:{course}:{rec['Id']}", rec["Original Problem"], gold, resp))
    out = distinct(out)
    print(f"mathq: {len(out)} rows", file=sys.stderr)
    return out


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("ineqmath", ineqmath), ("mathq", mathq)], OUT)


if __name__ == "__main__":
    main()
