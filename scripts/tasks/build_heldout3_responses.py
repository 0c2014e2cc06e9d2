#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout3_responses.jsonl: a THIRD held-out set of
real model responses to math problems, each with the dataset's own gold answer, taken from the
committed evaluation outputs of public projects that no earlier fixture of this repository uses:
not the seven sources of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA,
openai/grade-school-math, wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro,
NovaSky-AI/SkyThought, yuchenlin/ZeroEval), nor kojima's zero_shot_cot logs, nor the four of
heldout_responses.jsonl (OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval,
veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning), nor the three of
heldout2_responses.jsonl (lz1oceani/verify_cot, protagolabs/odyssey-math, dvlab-research/Mr-Ben),
nor math-verify's tests, nor the peer pairs of checker_set.jsonl, nor the sources kept for the
maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel,
MathCoder). The set measures the checker; it was not used to tune it (see docs/checker.md, "A
third held-out set").

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "<source key>:<method>:<task>:<row>", enough to find the row again (row: the line of
  the output file, 0-based).
- problem: the problem text, cut to its first PROBLEM_CHARS characters.
- gold: the data set's own gold answer (a number), outer whitespace removed.
- response: the model's response, cut in the middle when over MAX_RESPONSE characters (its first
  HEAD characters, a line "[... N characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: always null (no multiple choice here).
- math_verify: math-verify's verdict (see below).

Sources. Each is read from a checkout of the repository at the commit below, or from a bare
mirror of it (files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key             repo @ commit                                        license
  meta-prompting  suzgunmirac/meta-prompting @ 40422564938d772c3e3e6b9614b1df48b8dd6a08
                                                                       MIT (LICENSE)
                  outputs/<method>/<task><suffix>.jsonl for the methods of META_METHODS and the
                  tasks MGSM_{BN,DE,ES,FR,JA,RU,SW,TE,TH,ZH} and multistep_arithmetic_two
                  "Meta-Prompting" (Suzgun and Kalai, 2024; arXiv 2401.12954): GPT-4 (August 2023)
                  under seven zero-shot scaffolds -- standard, zero-shot chain of thought, static
                  and dynamic expert prompting, multipersona, and meta-prompting with and without
                  a Python expert -- every one told to end with the block
                      >> FINAL ANSWER:
                      \"\"\"
                      [final answer]
                      \"\"\"
                  MGSM: the 250 GSM8K problems translated into ten languages (Bengali, German,
                  Spanish, French, Japanese, Russian, Swahili, Telugu, Thai, Chinese); the
                  responses are written in the problem's language or in English, and the final
                  answer is a bare number, a number with a unit in either language ("64ドル",
                  "260頭", "18美元", "$694") or a sentence ("There are 260 sheep in total ...",
                  "Jumla ya gharama ilikuwa $694."). multistep_arithmetic_two (BIG-Bench Hard):
                  an integer expression such as "((-1 + 2 + 9 * 5) - (-2 + -4 + -4 * -7)) =".
                  Response: "output" (the last assistant turn: for meta-prompting, the final
                  block, sometimes after a sentence or two); gold: "target"; problem: "input".
                  Per task, all seven methods' files pooled, identical responses to one problem
                  kept once, then META_MGSM_N drawn per language and META_ARITH_N from
                  multistep_arithmetic_two.
  bbh             suzgunmirac/BIG-Bench-Hard @ 9ee07bd481feebf959a6b59d61ea57bdcf30964d
                                                                       MIT (LICENSE)
                  code-davinci-002-outputs/code-davinci-002-{cot,direct}/<task>_few_shot_template_
                  0-255000.json for the tasks multistep_arithmetic_two and object_counting
                  "Challenging BIG-Bench Tasks and Whether Chain-of-Thought Can Solve Them"
                  (Suzgun et al., 2023): code-davinci-002 with three-shot chain-of-thought prompts
                  ("Let's think step by step. ... So the answer is 24.") and three-shot answer-only
                  prompts (a bare number). Response: "prediction"; gold: "target" (an integer);
                  problem: the last "Q: " of the few-shot "input", without the "A:" that follows.
                  Per task, the cot and direct files pooled, then BBH_N drawn.

No source in another language than English was found with a license that allows redistribution
apart from meta-prompting's MGSM outputs; no committed outputs of open models (Llama, Mistral,
Qwen, DeepSeek) on math problems with a license were found either: those looked at either have
no license (PremiLab-Math/MathCheck, open-compass/GAOKAO-Eval, AGI-Edgerunners/Plan-and-Solve-
Prompting, chuanyang-Zheng/Progressive-Hint, XuZhao0/Model-Selection-Reasoning,
OFA-Sys/gsm8k-ScRel, NJUNLP/MAPO) or do not commit their outputs (microsoft/MathOctopus,
CONE-MT/BenchMAX, RUCAIBox/MMATH, QwenLM/PolyMath, XiaoMi/cmath, deepseek-ai/DeepSeek-Math,
whose outputs.zip is not in the snapshot).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout3_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout3_responses.py \\
        --meta-prompting DIR --bbh DIR
Deterministic: one fixed seed per draw, rows in source order before drawing.
"""
import hashlib
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout3_responses.jsonl"

COMMITS = {
    "meta-prompting": "40422564938d772c3e3e6b9614b1df48b8dd6a08",
    "bbh": "9ee07bd481feebf959a6b59d61ea57bdcf30964d",
}
# (directory under outputs/, file-name suffix after the task name)
META_METHODS = [
    ("Standard", "-zero-shot-cot"),
    ("ZeroShotCoT", "-zero-shot-cot"),
    ("ExpertStatic", "-zero-shot-cot"),
    ("ExpertDynamic", "-zero-shot-cot"),
    ("MultiPersona", "-zero-shot-cot"),
    ("MetaPromptingWithPython", ""),
    ("MetaPromptingWithoutPython", ""),
]
META_LANGUAGES = ["BN", "DE", "ES", "FR", "JA", "RU", "SW", "TE", "TH", "ZH"]
META_MGSM_N = 50
META_ARITH_N = 100
BBH_TASKS = ["multistep_arithmetic_two", "object_counting"]
BBH_N = 80


def gold_text(target):
    return str(target).strip()


# ---------------------------------------------------------------------------------------
# sources

def meta_task_rows(repo, task):
    """Every distinct response of the seven methods to `task`, in method then row order."""
    rows, seen = [], set()
    for method, suffix in META_METHODS:
        for i, e in enumerate(repo.jsonl(f"outputs/{method}/{task}{suffix}.jsonl")):
            resp = e.get("output")
            if not usable(resp):
                continue
            digest = hashlib.sha256(f"{e['input']}\0{resp}".encode("utf-8")).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            rows.append(row(f"meta-prompting:{method}:{task}:{i}", e["input"],
                            gold_text(e["target"]), resp))
    return rows


def meta_prompting(repo):
    out = []
    for j, lang in enumerate(META_LANGUAGES):
        out += draw(meta_task_rows(repo, f"MGSM_{lang}"), META_MGSM_N, 8001 + j)
    out += draw(meta_task_rows(repo, "multistep_arithmetic_two"), META_ARITH_N, 8101)
    return out


def bbh_question(prompt):
    """The last question of a few-shot BBH prompt: after its last 'Q: ', before its 'A:'."""
    q = prompt[prompt.rindex("Q: ") + 3:]
    return q[:q.rindex("\nA:")].strip()


def bbh(repo):
    out = []
    for j, task in enumerate(BBH_TASKS):
        rows = []
        for mode in ["cot", "direct"]:
            rel = (f"code-davinci-002-outputs/code-davinci-002-{mode}/"
                   f"{task}_few_shot_template_0-255000.json")
            for i, e in enumerate(json.loads(repo.read_text(rel))["outputs"]):
                if not usable(e.get("prediction")):
                    continue
                rows.append(row(f"bbh:code-davinci-002-{mode}:{task}:{i}",
                                bbh_question(e["input"]), gold_text(e["target"]),
                                e["prediction"]))
        out += draw(rows, BBH_N, 9001 + j)
    return out


# ---------------------------------------------------------------------------------------

def main():
    builders = [("meta-prompting", meta_prompting), ("bbh", bbh)]
    run_builder(__doc__, COMMITS, builders, OUT)


if __name__ == "__main__":
    main()
