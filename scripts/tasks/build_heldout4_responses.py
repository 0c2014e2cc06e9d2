#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout4_responses.jsonl: a FOURTH held-out set of
real model responses to math problems, each with the dataset's own gold answer, taken from the
committed evaluation outputs of public projects that no earlier fixture of this repository uses:
not the seven sources of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA,
openai/grade-school-math, wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro,
NovaSky-AI/SkyThought, yuchenlin/ZeroEval), nor kojima's zero_shot_cot logs, nor the four of
heldout_responses.jsonl (OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval,
veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning), nor the three of
heldout2_responses.jsonl (lz1oceani/verify_cot, protagolabs/odyssey-math, dvlab-research/Mr-Ben),
nor the two of heldout3_responses.jsonl (suzgunmirac/meta-prompting, suzgunmirac/BIG-Bench-Hard),
nor math-verify's tests, nor the peer pairs of checker_set.jsonl, nor the sources kept for the
maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel,
MathCoder). The set measures the checker; it was not used to tune it (see docs/checker.md, "A
fourth held-out set").

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "agieval:<task>:<row>" (row: the line of the output file, 0-based) or
  "mr-gsm8k:<question type>:<file>:<row>" (file: the eval_results file the row was first read
  from, row: its index there), enough to find the row again.
- problem: the problem text, cut to its first PROBLEM_CHARS characters.
- gold: the data set's own gold answer (a letter for multiple choice, or the letters of a
  multiple-answer question as stored, "A C"; for the gaokao fill-ins the LaTeX answer as stored,
  several blanks joined by "; ", a trailing dot kept), outer whitespace removed.
- response: the model's response, cut in the middle when over MAX_RESPONSE characters (its first
  HEAD characters, a line "[... N characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: for multiple choice, the option texts in letter order ("(A)" prefix removed); null
  otherwise.
- math_verify: math-verify's verdict (see below).

Sources. Each is read from a checkout of the repository at the commit below, or from a bare
mirror of it (files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key        repo @ commit                                             license
  agieval    ruixiangcui/AGIEval @ 0491f8fe761d0d75810fcd3214e5d647c7c888c2
                                                                       MIT (LICENSE; data/
                                                                       v1/LICENSE: gaokao and
                                                                       SAT data MIT too)
             output/davinci-003/few_shot/{gaokao/mathcloze,gaokao/mathqa,sat/math}_samples.0.jsonl
             with the gold from data/gaokao/splits/test/{mathcloze,mathqa}.jsonl and
             data/sat/splits/test/math.jsonl at the same commit (the output row's "metadata" is
             the line of the data file). The outputs were committed with the data at this commit
             and removed from the repository later (the README now links them elsewhere).
             "AGIEval" (Zhong et al., 2023): text-davinci-003 with few-shot prompts.
             - gaokao mathcloze: Chinese college-entrance fill-in-the-blank mathematics, the
               prompt a run of "问题 N. ... 答案是 ..." ending "答案是 ": the response completes
               it with the bare answer in LaTeX ("$\\frac{\\sqrt{2}}{2}$.", "-128.", two blanks
               as "$m-n=2$, $E(\\xi)=\\frac{2}{3}$."); gold: "answer" (LaTeX, sometimes Chinese
               text or two blanks joined by "; "). Every one whose gold has at most
               AGIEVAL_CLOZE_MAX_GOLD characters.
             - gaokao mathqa: Chinese multiple choice (4 options); the response is a letter;
               gold: "label"; choices: "options". AGIEVAL_MATHQA_N drawn.
             - sat math: SAT mathematics, multiple choice (4 options), the few-shot examples
               being the official explanations: the response is an "Explanation for Problem 6:
               Choice B is correct. ..." paragraph ending "The answer is therefore B"; gold:
               "label"; choices: "options". Every one.
             Response: "choices"[0]["text"]; problem: the data file's "question".
  mr-gsm8k   dvlab-research/MR-GSM8K @ 3f666d60dd5f2fe31d619c528076bac54f4a13b7
                                                                       MIT (LICENSE)
             eval_results/gpt4-grading/<file>_eval_results.json for the files of MR_GSM8K_FILES
             "MR-GSM8K" (Zeng et al., ICLR 2025): a meta-reasoning benchmark whose items are
             GSM8K questions ("original") and their backward variants ("reversed": "If we know
             the answer to the above question is 2, what is the value of unknown variable X?"),
             each with a step-by-step solution for the evaluated models to check, generated by
             a model the README does not name, in MetaMath's format: "Step 1: ...", ...,
             "Step 9: #### 90", "Step 10: The answer is: 90". The benchmark's full data file is
             not in the snapshot (over its size limit); the eval_results files hold the items
             whose grading was re-checked with GPT-4, most of them solutions whose answer is
             wrong. Response: "model_output_steps" joined with newlines; gold:
             "ground_truth_answer"; problem: "question". Items are pooled over the files in
             order, each uuid kept once; the "POT" items (a program, no stated answer) are left
             out, and so are the reversed items whose gold is not a number (75,
             all "Let's think step by step."). MR_GSM8K_N drawn.

No source in another language than English and Chinese was found with a license that allows
redistribution (besides those the earlier sets use), nor committed outputs of recent open models
(Llama, Mistral, Qwen, DeepSeek) on math problems: those looked at either have no license
(sydney-machine-learning/LLM-mathematics, GAIR-NLP/AIME-Preview, GAIR-NLP/O1-Journey,
GAIR-NLP/LIMO, OpenLMLab/GAOKAO-Bench-2023, QwenLM/Qwen2-Math, math-eval/MathEval,
FranxYao/Complexity-Based-Prompting), do not commit their outputs (lu-wang-dl and aiomodel copies
of FranxYao/chain-of-thought-hub, CriticBench/CriticBench, WENGSYX/Self-Verification,
SakanaAI/evolutionary-model-merge, QwenLM/QwQ, open-compass/MathBench,
ZubinGou/math-evaluation-harness, mandyyyyii/scibench, eth-sri/matharena, hkust-nlp/dart-math),
commit programs rather than answers (reasoning-machines/pal's AQuA
outputs, madaan/self-refine's GSM8K outputs), or forbid redistribution (IAAR-Shanghai/xVerify,
CC BY-NC-ND).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout4_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout4_responses.py \\
        --agieval DIR --mr-gsm8k DIR
Deterministic: one fixed seed per draw, rows in source order before drawing.
"""
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout4_responses.jsonl"

COMMITS = {
    "agieval": "0491f8fe761d0d75810fcd3214e5d647c7c888c2",
    "mr-gsm8k": "3f666d60dd5f2fe31d619c528076bac54f4a13b7",
}
AGIEVAL_CLOZE_MAX_GOLD = 60
AGIEVAL_MATHQA_N = 80
MR_GSM8K_FILES = ["Claude", "GPT3_5", "llama2_70b", "mammoth_70B", "metamath_70B",
                  "wizardmath_70B"]
MR_GSM8K_N = 250
NUMBER = re.compile(r"-?[\d,]+(\.\d+)?")


def options(opts):
    """The option texts of an AGIEval question, without their "(A)" prefixes."""
    return [re.sub(r"^\s*\([A-E]\)\s*", "", o) for o in opts]


# ---------------------------------------------------------------------------------------
# sources

def agieval_task(repo, task, data_rel):
    """Every usable row of one AGIEval output file, with its gold from the data file."""
    data = repo.jsonl(data_rel)
    rows = []
    for i, e in enumerate(repo.jsonl(f"output/davinci-003/few_shot/{task}_samples.0.jsonl")):
        resp = e["choices"][0]["text"]
        if not usable(resp):
            continue
        d = data[e["metadata"]]
        if d.get("label"):
            gold, choices = d["label"], options(d["options"])
        else:
            gold, choices = (d.get("answer") or "").strip(), None
            if not gold or len(gold) > AGIEVAL_CLOZE_MAX_GOLD:
                continue
        rows.append(row(f"agieval:{task}:{i}", d["question"], gold, resp, choices))
    return rows


def agieval(repo):
    out = agieval_task(repo, "gaokao/mathcloze", "data/gaokao/splits/test/mathcloze.jsonl")
    out += draw(agieval_task(repo, "gaokao/mathqa", "data/gaokao/splits/test/mathqa.jsonl"),
                AGIEVAL_MATHQA_N, 10001)
    out += agieval_task(repo, "sat/math", "data/sat/splits/test/math.jsonl")
    return out


def mr_gsm8k(repo):
    rows, seen = [], set()
    for name in MR_GSM8K_FILES:
        rel = f"eval_results/gpt4-grading/{name}_eval_results.json"
        for i, e in enumerate(json.loads(repo.read_text(rel))):
            if e["uuid"] in seen:
                continue
            seen.add(e["uuid"])
            gold = str(e["ground_truth_answer"]).strip()
            if e["question_type"] == "POT" or not NUMBER.fullmatch(gold):
                continue
            resp = "\n".join(e["model_output_steps"])
            if not usable(resp):
                continue
            rows.append(row(f"mr-gsm8k:{e['question_type']}:{name}:{i}", e["question"], gold,
                            resp))
    return draw(rows, MR_GSM8K_N, 11001)


# ---------------------------------------------------------------------------------------

def main():
    builders = [("agieval", agieval), ("mr-gsm8k", mr_gsm8k)]
    run_builder(__doc__, COMMITS, builders, OUT)


if __name__ == "__main__":
    main()
