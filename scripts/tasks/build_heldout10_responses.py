#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout10_responses.jsonl: a TENTH held-out set of
real model responses to competition mathematics, this time from the committed outputs of a
MULTIMODAL benchmark (MATH-Vision: problems from real mathematics competitions, each with a figure),
answered by twelve vision-language and text models in two prompt styles, each with the data set's
own gold answer, taken from a public project that no earlier fixture of this repository uses: not
the seven sources of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math,
wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval),
nor kojima's zero_shot_cot logs, nor the four of heldout_responses.jsonl (OpenLMLab/GAOKAO-Bench,
iamyb/llm-gaokao-math-eval, veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning), nor the three
of heldout2_responses.jsonl (lz1oceani/verify_cot, protagolabs/odyssey-math, dvlab-research/Mr-Ben),
nor the two of heldout3_responses.jsonl (suzgunmirac/meta-prompting, suzgunmirac/BIG-Bench-Hard), nor
the two of heldout4_responses.jsonl (ruixiangcui/AGIEval, dvlab-research/MR-GSM8K), nor the one of
heldout5_responses.jsonl (maitrix-org/llm-reasoners), nor the two of heldout6_responses.jsonl
(kuk/simple-evals-ru, PRIME-RL/PRIME), nor the two of heldout7_responses.jsonl (sarahmart/HARDMath,
wellecks/lm-evaluation-harness), nor the one of heldout8_responses.jsonl (microsoft/rho), nor the two
of heldout9_responses.jsonl (tianyi-lab/MiP-Overthinking, tangzhy/RealCritic), nor math-verify's
tests, nor the peer pairs of checker_set.jsonl, nor the sources kept for the maintainers' held-back
check (TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel, MathCoder). MATH-Vision is not
MathVista (lupantech's benchmark, held back): it is a different data set (3,040 problems drawn from
AMC, AIME, Kangaroo, Math Kangaroo and other competitions, with their figures) by different authors;
its first author also wrote MathCoder (held back), whose data sets (GSM8K, MATH) and outputs are not
this one's. The set measures the checker; it was not used to tune it (see docs/checker.md, "A tenth
held-out set"). Most problems are MATH-Vision's free-form ones (no options): every row whose gold is
not a plain integer (decimals such as "4.8", "8.0", "2.37"; LaTeX fractions, radicals and pi, some
written inside `$..$` or `\\boxed{}`, "7/3", "525/2", "1:2", "(3,-4)", "45^2", "69{degrees}",
"8\\sqrt{3}{squareinches}", a gold whose "\\f" a JSON writer read as a form feed, so that it is
"rac{36}{13}" once its outer whitespace is removed, and three letters) from the long-answer files, a seeded draw of the same problems' short answers, and
a seeded draw of plain-integer golds (about a ninth of the set); the rest, a seeded draw of the
multiple-choice problems whose five options are not the bare letters "A" to "E" (mostly words,
values and expressions, "Wednesday", "$2 \\cdot 4+3$", "3 h 5 min"; for a few problems whose options
are drawn in the figure, the labels "(A)".."(E)" or "A)".."E)"), with the options as "choices" and a
letter as gold.

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "mathv:<output file>:<problem id>" (output file: the file's name under outputs/ without
  ".jsonl", which names the model and its prompt, e.g. "Gemini-Pro-CoT", "GPT4-CoT (Text Only)";
  problem id: MATH-Vision's "id"), enough to find the row again.
- problem: the problem text (MATH-Vision's "question", with its "<image1>" placeholders; the figure
  is not part of the line), cut to its first PROBLEM_CHARS characters.
- gold: MATH-Vision's "answer" as data/test.jsonl stores it, outer whitespace removed.
- response: the model's response, cut in the middle when over MAX_RESPONSE characters (its first
  HEAD characters, a line "[... N characters cut ...]", its last MAX_RESPONSE - HEAD characters).
- choices: null for the free-form problems; for the multiple-choice ones, the five option texts in
  letter order (MATH-Vision's "options"; the problem then ends with them as "(A) ..." lines, as the
  prompt wrote them).
- math_verify: math-verify's verdict (see below).

Source. Read from a checkout of the repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key    repo @ commit                                                  license
  mathv  mathllm/MATH-V @ a1f5cc3add200c0cd080fad463e500f44ef1fb41      MIT (LICENSE)
         data/test.jsonl (problems and answer key) and outputs/<dir>/<file>.jsonl for the files of
         LONG_FILES and SHORT_FILES (committed with the data in the repository's first commit,
         1d36118, 2024-03-22, unchanged since; read at the newest commit)
         "Measuring Multimodal Mathematical Reasoning with the MATH-Vision Dataset" (Wang, Pan, Shi,
         Lu, Ren, Zhou, Zhan and Li; NeurIPS 2024 Datasets and Benchmarks; arXiv 2402.14804): the
         authors' evaluation runs on the 3,040 test problems, one response per problem and file.
         Two prompts (models/GPT4.py, models/Qwen-VL.py): step by step, 'Please solve the problem
         step by step and put your answer in one "\\boxed{}". If it is a multiple choice question,
         only one letter is allowed in the "\\boxed{}".' before the question (the "-CoT" files); or
         short answer, the question then "Answer the question using a single word or phrase." (the
         files without "-CoT", the repository's naming suggests; InternLM-XComposer2-VL boxes its
         answer without the step-by-step prompt too, "The answer is \\boxed{8}.", and is read with the
         long answers). The models, by file
         ("model" field): GPT4-CoT (Text Only) (gpt-4-0125-preview given the question without its
         figure, so it often asks for the figure or assumes one), ChatGPT3.5-CoT (Text+Image Caption)
         (gpt-3.5-turbo-0125 given the question and a GPT-4V caption of the figure), Gemini-Pro-CoT
         and Gemini-Pro (gemini-pro-vision), Qwen-VL-Max-CoT, Qwen-VL-Max and Qwen-VL-Plus,
         InternLM-XComposer2-VL-CoT and InternLM-XComposer2-VL, LLaVA-v1.5-7B and -13B,
         ShareGPT4V-7B and -13B, SPHINX-MoE and SPHINX-v2. Response: "response"; gold: the answer
         key's "answer" for the line's "id"; problem: the key's "question". The files' own
         "model_answer" and "correct" (the authors' extraction and grading) are not used. The GPT-4V
         files and GPT4-CoT (Text+Image Caption) are over the snapshot's 4 MiB limit and not read;
         outputs/Random-Chance.jsonl is not a model's and is not read. Of the 1,532
         multiple-choice problems, the 384 whose options are the bare letters "A" to "E" (drawn in
         the figure) and the 5 whose options are images are not read.

How the draw was settled. A first draw, settled before any verdict was computed, read the
free-form problems only: every row of LONG_FILES whose gold is not a plain integer (134 problems x 6
files), NOT_INTEGER_SHORT_N of the rows of SHORT_FILES on the same problems, and INTEGER_LONG_N of the
rows of LONG_FILES whose gold is a plain integer, each drawn with its seed below; repeated (problem,
response) rows kept once (short answers repeat across models): 976 rows. Scored by the frozen checker
and math-verify, those 976 rows gave a single disagreement (72 both right, 903 both wrong: most of
these models answer these problems wrongly, in forms both checkers read alike), too few to test the
first half of the bar. Before any response was graded, the set was extended, by answer form and not
by verdict, with MC_LONG_N rows of LONG_FILES and MC_SHORT_N rows of SHORT_FILES on the
multiple-choice problems whose options are not the bare letters (drawn with the seeds below; the long
files' prompt asks for one letter in the box, the short answers give a letter or an option's text),
so that letters and option texts against a letter gold are tested too; the free-form part is the
first draw unchanged. Nothing in crates/rlvr-tasks/src changed in between.

Looked at for this set and not used (besides those the earlier builders' docstrings list): no license
(Chen-Yuanmeng/Score-LLMs-in-Mathematics, a UCAS course project's graded answers of DeepSeek, Llama,
Mathstral and Qwen to college calculus, linear algebra and statistics questions in Chinese and
English; g1y5x3/llm_gaokao, 2024 gaokao answers of a dozen chat models graded by hand;
friederrr/GHOSTS, ChatGPT and GPT-4 answers to MATH problems rated by mathematicians, no gold answer
field; HeyixInn/DynamicTimeScaling; DanielSongShen/cs224w-project, whose data folder is not
committed); files over the snapshot's 4 MiB limit (ZJU-REAL/VerifyBench, MIT, whose verify_bench.jsonl
holds human-labelled completions of a dozen models with reference answers; its copy in
cjj826/LongJudgeBench, MIT, keeps only 316 long VerifyBench-Hard completions, half of them not
mathematics, whose "answer" field is a worked solution rather than a final answer); no committed
outputs (emrgnt-cmplxty/zero-shot-replication, rejected before for the same reason: its MATH runs
were never committed, in any commit; THU-KEG/RM-Bench,
open-compass/CriticEval, open-compass/CompassVerifier, SalesforceAIResearch/ReasoningJudgeBench,
THUDM/AlignBench, THUDM/MathGLM, microsoft/LEMA, gauss5930/HRM8K, thu-wyz/inference_scaling,
efficientscaling/Z1, Pranjal2041/AdaptiveConsistency, whose outputs are downloaded,
UMich-FATML/matharena and eth-sri/matharena, whose outputs are uploaded elsewhere, the simple-evals
forks bofenghuang, ECNU3D, Zeju1997, cxxz and kennethleungty); outputs of another kind
(ScalerLab/JudgeBench, response pairs without the gold answer; RicharMd/RealMath-Eval, human proofs
graded by judges; QuangDiy/ViMATH-Verify, reformatted reference solutions; jmeadows17/
deriving-equations-with-LLMs, derivations; manyagupta13/srm, GSM8K and GPQA only;
lm-sys/FastChat, MT-Bench's ten mathematics questions); a sample only (HossamAmer12/Qwen2.5-Math, a
fork whose one output file is a 93 KB best-of-4 run of a few MATH-500 problems);
still no snapshot to read (FranxYao/chain-of-thought-hub, consequentai/fneval, toloka/u-math);
still over the limit or without the runs (YilunZhou/champ-dataset, its one dataset file absent;
PrimeIntellect-ai/verifiers, whose tool-use math runs the index lists are at commits the snapshot
still does not hold).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout10_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout10_responses.py --mathv DIR
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
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout10_responses.jsonl"

COMMITS = {
    "mathv": "a1f5cc3add200c0cd080fad463e500f44ef1fb41",
}
KEY_FILE = "data/test.jsonl"
# long answers: the step-by-step prompt, and InternLM-XComposer2-VL, which boxes its answer anyway
LONG_FILES = [
    "outputs/closed-source/GPT/ChatGPT3.5-CoT (Text+Image Caption).jsonl",
    "outputs/closed-source/GPT/GPT4-CoT (Text Only).jsonl",
    "outputs/closed-source/Gemini/Gemini-Pro-CoT.jsonl",
    "outputs/closed-source/Qwen/Qwen-VL-Max-CoT.jsonl",
    "outputs/open-source/Internlm/InternLM-XComposer2-VL-CoT.jsonl",
    "outputs/open-source/Internlm/InternLM-XComposer2-VL.jsonl",
]
# short answers: "Answer the question using a single word or phrase."
SHORT_FILES = [
    "outputs/closed-source/Gemini/Gemini-Pro.jsonl",
    "outputs/closed-source/Qwen/Qwen-VL-Max.jsonl",
    "outputs/closed-source/Qwen/Qwen-VL-Plus.jsonl",
    "outputs/open-source/LLavA/LLaVA-v1.5-13B.jsonl",
    "outputs/open-source/LLavA/LLaVA-v1.5-7B.jsonl",
    "outputs/open-source/ShereGPT4V/ShareGPT4V-13B.jsonl",
    "outputs/open-source/ShereGPT4V/ShareGPT4V-7B.jsonl",
    "outputs/open-source/Sphinx/SPHINX-MoE.jsonl",
    "outputs/open-source/Sphinx/SPHINX-v2.jsonl",
]
# multiple choice whose options are written as text (not drawn in the figure)
MC_LONG_N = 150
MC_LONG_SEED = 17003
MC_SHORT_N = 50
MC_SHORT_SEED = 17004
NOT_INTEGER_SHORT_N = 60
NOT_INTEGER_SHORT_SEED = 17001
INTEGER_LONG_N = 130
INTEGER_LONG_SEED = 17002
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


def integer(r):
    return PLAIN_INTEGER.fullmatch(r["gold"]) is not None


# ---------------------------------------------------------------------------------------
# source

def options_text(q):
    """The options as the prompt wrote them (models/GPT4.py): "(A) ..." lines."""
    return "".join(f"({'ABCDE'[i]}) {o}\n" for i, o in enumerate(q["options"]))


def text_options(q):
    """A multiple-choice problem whose five options are not the bare letters "A".."E" (options
    drawn in the figure) nor images: written as text (or, for a few problems, labels such as
    "(A)")."""
    opts = q["options"]
    return (len(opts) == 5 and "".join(opts) != "ABCDE"
            and not any("<image" in o for o in opts))


def mathv_rows(repo, files, key, multiple_choice=False):
    """The rows of `files` for the free-form problems, or (`multiple_choice`) for the problems
    whose options are written as text, with the options as "choices"."""
    rows = []
    for path in files:
        stem = pathlib.PurePosixPath(path).name[: -len(".jsonl")]
        for e in repo.jsonl(path):
            q = key[str(e["id"])]
            if not usable(e["response"]):
                continue
            if not multiple_choice and not q["options"]:
                rows.append(row(f"mathv:{stem}:{q['id']}", q["question"], str(q["answer"]),
                                e["response"]))
            elif multiple_choice and text_options(q):
                rows.append(row(f"mathv:{stem}:{q['id']}",
                                f"{q['question']}\n{options_text(q)}", str(q["answer"]),
                                e["response"], choices=list(q["options"])))
    return rows


def mathv(repo):
    key = {str(q["id"]): q for q in repo.jsonl(KEY_FILE)}
    long_rows = distinct(mathv_rows(repo, LONG_FILES, key))
    short_rows = distinct(mathv_rows(repo, SHORT_FILES, key))
    keep = {id(r) for r in long_rows if not integer(r)}
    keep |= {id(r) for r in draw([r for r in short_rows if not integer(r)], NOT_INTEGER_SHORT_N,
                                 NOT_INTEGER_SHORT_SEED)}
    keep |= {id(r) for r in draw([r for r in long_rows if integer(r)], INTEGER_LONG_N,
                                 INTEGER_LONG_SEED)}
    # source order: the long files, then the short ones; a short answer that repeats a kept long
    # answer to the same problem word for word is kept once
    free = distinct([r for r in long_rows + short_rows if id(r) in keep])
    mc_long = distinct(mathv_rows(repo, LONG_FILES, key, multiple_choice=True))
    mc_short = distinct(mathv_rows(repo, SHORT_FILES, key, multiple_choice=True))
    mc = draw(mc_long, MC_LONG_N, MC_LONG_SEED) + draw(mc_short, MC_SHORT_N, MC_SHORT_SEED)
    return free + distinct(mc)


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("mathv", mathv)], OUT)


if __name__ == "__main__":
    main()
