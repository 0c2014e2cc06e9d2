#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout2_responses.jsonl: a SECOND held-out set of
real model responses to math problems, each with the dataset's own gold answer, taken from the
committed evaluation outputs of public projects that no earlier fixture of this repository uses:
not the seven sources of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA,
openai/grade-school-math, wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro,
NovaSky-AI/SkyThought, yuchenlin/ZeroEval), nor kojima's zero_shot_cot logs, nor the four of
heldout_responses.jsonl (OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval,
veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning), nor math-verify's tests, nor the peer
pairs of checker_set.jsonl, nor the sources kept for the maintainers' held-back check (TheoremQA,
ReasonEval, Omni-MATH, MathVista, PromptPG, Abel, MathCoder). The set measures the checker; it was
not used to tune it (see docs/checker.md, "A second held-out set").

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "<source key>:<task or model>:<row>[...]", enough to find the row again.
- problem: the problem text, cut to its first PROBLEM_CHARS characters.
- gold: the dataset's own gold answer (a letter for multiple choice), outer whitespace removed;
  for odyssey-math, also the LaTeX layout the answer key ends with (see below).
- response: the model's response, cut in the middle when over MAX_RESPONSE characters (its first
  HEAD characters, a line "[... N characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: for multiple choice, the option texts in letter order; null otherwise.
- math_verify: math-verify's verdict (see below).

Sources. Each is read from a checkout of the repository at the commit below, or from a bare
mirror of it (files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key           repo @ commit                                          license
  verify-cot    lz1oceani/verify_cot @ b458aa02880d9be95ab1d702277081c781e880cb
                                                                       CC-BY-4.0 (LICENSE)
                data/human_annotation/{gsm8k,aqua_rat,MATH,addsub}_100.json
                "Deductive Verification of Chain-of-Thought Reasoning" (Ling et al., NeurIPS
                2023): gpt-3.5-turbo reasoning chains in the "Natural Program" format (numbered
                premises "#1. ...", steps "#6. (by #2 #5) Step 1: ...", ending "So the answer to
                this question is ..."; AQuA adds "Among all the answer choices, the best option
                is D) ..."), 50 valid and 50 flawed chains per task as the authors sampled them
                for human annotation. Response: "answer"; gold: "final_answer" (the data set's
                answer: a number, a MATH answer, an AQuA letter); choices: "choices" (AQuA, 5
                options). VERIFY_COT_N drawn per task.
  odyssey-math  protagolabs/odyssey-math @ fe9e83df06111728e1b06ddaee0a60837c07d6c9
                                                                       MIT (LICENSE)
                final-odyssey-math-with-levels.jsonl (problems and answer key),
                jsonl/<model file> for the files in ODYSSEY_FILES
                MathOdyssey (GAIC Math 2024, 387 problems: high-school competition, high-school
                and university mathematics; arXiv 2406.18321). Responses of gpt-3.5-turbo-0125,
                gpt-4-0613, gpt-4-1106-preview, gpt-4-0125-preview, gpt-4-turbo-2024-04-09,
                o1-preview and DeepSeek-V3 to a prompt asking for a JSON object with "reasoning"
                and "answer" (some with a written solution before the JSON block). Gold: the
                key's "answer", with the LaTeX layout the key ends every answer with (trailing
                `\\\\` line breaks, `\\noindent`, whitespace) removed and nothing else changed
                ("$\\frac{40}{243}$." keeps its dollars and dot). Multiple choice (gold a
                letter, with or without `$..$` or a dot after it): the letter, choices parsed
                from the problem ("A) ..." lines or an align* of "\\text{A)}\\ & ..." cells;
                2-5 options). Problem: the key's "question" without its `\\end{problem}` and
                the same layout tail. All model files pooled, identical responses to one
                problem kept once, ODYSSEY_N drawn.
  mr-ben        dvlab-research/Mr-Ben @ 6eb1eca8861be411838c7c1c189dba208c140e06
                                                                       MIT (LICENSE)
                data/math.json
                MR-Ben (NeurIPS 2024): MMLU high-school and college mathematics (4 options)
                answered step by step by Claude2, GPT-3.5 and mistral-medium, each response
                ending "Solution: Choice_X" (also "Choice X", "Choice\\_X", "None of the
                choices ..."). Response: the "Model_Solution_Steps" joined with newlines; gold:
                "Ground_Truth_Answer"; choices parsed from "Options" ("A: ..." lines). The
                annotators' step labels are not used. MR_BEN_N drawn.

No source in another language than English (and the LaTeX of the answer keys) was found with a
license that allows redistribution: the multilingual evaluation outputs looked at (MGSM outputs of
LightChen233/cross-lingual-prompting, laihuiyuan/mCoT, NJUNLP/QAlign,
BatsResearch/crosslingual-test-time-scaling, Mara4444/MSc_Thesis) state none.

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout2_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout2_responses.py \\
        --verify-cot DIR --odyssey-math DIR --mr-ben DIR
Deterministic: one fixed seed per source, rows in source order before drawing.
"""
import hashlib
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import Repo, draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout2_responses.jsonl"

COMMITS = {
    "verify-cot": "b458aa02880d9be95ab1d702277081c781e880cb",
    "odyssey-math": "fe9e83df06111728e1b06ddaee0a60837c07d6c9",
    "mr-ben": "6eb1eca8861be411838c7c1c189dba208c140e06",
}
VERIFY_COT_TASKS = ["gsm8k", "aqua_rat", "MATH", "addsub"]
VERIFY_COT_N = 60
# (file under jsonl/, model) -- the model files of the repository, each answering all 387
ODYSSEY_FILES = [
    ("gpt-3.5-turbo-0125.jsonl", "gpt-3.5-turbo-0125"),
    ("gpt-3.5-turbo-0125-solution.jsonl", "gpt-3.5-turbo-0125"),
    ("gpt-4-0613-solution.jsonl", "gpt-4-0613"),
    ("gpt-4-0613-solution-last.jsonl", "gpt-4-0613"),
    ("gpt-4-1106-preview.jsonl", "gpt-4-1106-preview"),
    ("gpt-4-1106-preview-solution.jsonl", "gpt-4-1106-preview"),
    ("gpt-4-0125-preview-solution.jsonl", "gpt-4-0125-preview"),
    ("gpt-4-0125-preview-solution-new.jsonl", "gpt-4-0125-preview"),
    ("gpt-4-turbo-2024-04-09.jsonl", "gpt-4-turbo-2024-04-09"),
    ("gpt-4-turbo-2024-04-09-second.jsonl", "gpt-4-turbo-2024-04-09"),
    ("gpt-4-turbo-2024-04-09-solution.jsonl", "gpt-4-turbo-2024-04-09"),
    ("gpt-4-o1-preview-solution.jsonl", "o1-preview"),
    ("deepseek-v3-Instruct-solution.jsonl", "deepseek-v3"),
]
ODYSSEY_N = 300
MR_BEN_N = 300


# ---------------------------------------------------------------------------------------
# sources

def verify_cot(repo):
    out = []
    for j, task in enumerate(VERIFY_COT_TASKS):
        rows = []
        for i, e in enumerate(json.loads(repo.read_text(f"data/human_annotation/{task}_100.json"))):
            if not usable(e.get("answer")):
                continue
            choices = e.get("choices") if task == "aqua_rat" else None
            rows.append(row(f"verify-cot:{task}:{i}", e["question"], str(e["final_answer"]),
                            e["answer"], choices))
        out += draw(rows, VERIFY_COT_N, 5001 + j)
    return out


# the LaTeX layout every MathOdyssey answer ends with: line breaks, \noindent, whitespace
ODYSSEY_TAIL = re.compile(r"(?:\\\\|\\noindent|\s)+$")
# an option marker at a line's start: "A) ...", "A. ..." or an align* cell "\text{A)}\ & ..."
ODYSSEY_OPTION = re.compile(r"(?m)^[ \t]*(?:\\text\{([A-E])\)\}|([A-E])[\)\.])")
ODYSSEY_OPTION_JUNK = re.compile(
    r"^(?:\\ |&|\s)+|(?:&|\\\\?|\\end\{align\*\}|\\end\{problem\}|\\noindent|\s)+$")


def odyssey_options(question):
    """The options written into a MathOdyssey problem, in letter order from A, or None."""
    marks = []
    for m in ODYSSEY_OPTION.finditer(question):
        letter = m.group(1) or m.group(2)
        if letter == chr(ord("A") + len(marks)):
            marks.append(m)
        elif letter == "A":
            marks = [m]  # a later run starting again at A replaces an earlier one
    if len(marks) < 2:
        return None
    opts = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(question)
        opts.append(ODYSSEY_OPTION_JUNK.sub("", question[m.end():end]))
    return opts


def odyssey_math(repo):
    key = {}
    for line in repo.read_text("final-odyssey-math-with-levels.jsonl").splitlines():
        if line.strip():
            (name, e), = json.loads(line).items()
            key[name] = e
    rows, seen = [], set()
    for rel, model in ODYSSEY_FILES:
        for line in repo.read_text(f"jsonl/{rel}").splitlines():
            if not line.strip():
                continue
            (name, resp), = json.loads(line).items()
            e = key.get(name)
            if e is None or not usable(resp):
                continue
            digest = hashlib.sha256(f"{name}\0{resp}".encode("utf-8")).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            gold = ODYSSEY_TAIL.sub("", e["answer"]).strip()
            question = e["question"]
            choices = None
            letter = re.fullmatch(r"\$?([A-E])\$?\.?", gold)
            if letter:
                gold = letter.group(1)
                choices = odyssey_options(question)
            question = ODYSSEY_TAIL.sub("", question.replace("\\end{problem}", "")).strip()
            rows.append(row(f"odyssey-math:{rel.removesuffix('.jsonl')}:{name}", question, gold,
                            resp, choices))
    return draw(rows, ODYSSEY_N, 6001)


MR_BEN_OPTION = re.compile(r"(?m)^\s*([A-D]):[ \t]?(.*?)\s*$")


def mr_ben(repo):
    rows = []
    for uuid, entries in json.loads(repo.read_text("data/math.json")).items():
        for e in entries:
            steps = e.get("Model_Solution_Steps") or []
            resp = "\n".join(steps)
            if not usable(resp):
                continue
            opts = {m.group(1): m.group(2) for m in MR_BEN_OPTION.finditer(e["Options"] or "")}
            choices = [opts[c] for c in "ABCD"] if all(c in opts for c in "ABCD") else None
            rows.append(row(f"mr-ben:{e['Subject']}:{e['Sampled_Model']}:{uuid}", e["Question"],
                            e["Ground_Truth_Answer"], resp, choices))
    return draw(rows, MR_BEN_N, 7001)


# ---------------------------------------------------------------------------------------

def main():
    builders = [("verify-cot", verify_cot), ("odyssey-math", odyssey_math), ("mr-ben", mr_ben)]
    run_builder(__doc__, COMMITS, builders, OUT)


if __name__ == "__main__":
    main()
