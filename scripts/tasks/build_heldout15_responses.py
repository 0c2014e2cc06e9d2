#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout15_responses.jsonl: a FIFTEENTH held-out set of
real model responses, this time to COMPETITION-STYLE PROBLEMS WITH FREE-FORM ANSWERS whose answer
key writes its answers in its own forms, mostly between dollar signs: fractions and radicals
"$\\frac{\\sqrt{6}}{4}$", "$8\\sqrt{5} - 16$", unions of intervals "$[-\\frac{1}{4}, 0) \\cup (0,
2)$", sets "$\\{2,5\\}$", points "$(2, 0)$", labelled and multi-part answers "$\\lambda=2\\sqrt{2},
A(\\pm 1, 0)$", "(1) The coordinates of point A are $(-4,0)$ ...; (2) $y=-(1/2)x$", sentences
"sufficient but not necessary condition", "The speed of the bus is 16 km/h, and the speed of the car
is 48 km/h.", expressions in n "$(-1)^{\\lceil n/2 \\rceil-1} 2 \\lceil \\frac{n}{2} \\rceil$",
degrees "$115^\\circ$", and integers; from the committed outputs of eight current chat and reasoning
models (Claude Haiku 4.5, Claude Opus 4.6 with thinking, Gemini 3 Flash preview, Gemini 3.1 Pro
preview, GPT-5 mini, GPT-5.2 at high effort, Kimi K2.5, MiniMax-M2.5) on LiveMathBench and on AIME
2024/2025 problems, each with the benchmark's own answer, taken from a public project that no
earlier fixture of this repository uses: not the seven sources of real_responses.jsonl
(Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math, wenhuchen/Program-of-Thoughts,
TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval), nor kojima's zero_shot_cot logs,
nor the sources of heldout_responses.jsonl to heldout14_responses.jsonl (OpenLMLab/GAOKAO-Bench,
iamyb/llm-gaokao-math-eval, veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning,
lz1oceani/verify_cot, protagolabs/odyssey-math, dvlab-research/Mr-Ben, suzgunmirac/meta-prompting,
suzgunmirac/BIG-Bench-Hard, ruixiangcui/AGIEval, dvlab-research/MR-GSM8K, maitrix-org/llm-reasoners,
kuk/simple-evals-ru, PRIME-RL/PRIME, sarahmart/HARDMath, wellecks/lm-evaluation-harness,
microsoft/rho, tianyi-lab/MiP-Overthinking, tangzhy/RealCritic, mathllm/MATH-V, yale-nlp/Physics,
gpoesia/mathcamps, open-thought/reasoning-gym-eval, lchen001/LLMDrift), nor math-verify's tests, nor
the peer pairs of checker_set.jsonl, nor the sources kept for the maintainers' held-back check
(TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel, MathCoder), nor jettjaniak/chainscope,
nor any repository the earlier builders' docstrings name as looked at. lchen001/pricing-reversal
shares an author with lchen001/LLMDrift (the fourteenth set's source) and nothing else: another
repository, other models (2026, not 2023), other problems, other prompts. The set measures the
checker; it was not used to tune it (see docs/checker.md, "A fifteenth held-out set").

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "pricing-reversal:<dataset>:<model>:<index>" (dataset: "livemathbench" for the
  data/consolidated/livemathbench-test-<model>.json files, "aime" for the
  data/consolidated/aime-hybrid-<model>.json files; model: the file's "model_name", e.g.
  "gpt-5.2-high"; index: the record's "index", the problem's 1-based number in the benchmark),
  enough to find the record again.
- problem: the record's "origin_query" (the problem without the format instruction; the prompt, the
  same for every record, is "Solve the following math problem step by step. The last line of your
  response should only contain your final answer inside a \\boxed{} command. <problem> Remember to
  put your final answer on the last line using the format \\boxed{$ANSWER} where $ANSWER is the
  answer to the problem."), cut to its first PROBLEM_CHARS characters.
- gold: the record's "ground_truth", outer whitespace removed (written as the file writes it, most
  of them between dollar signs).
- response: the record's "raw_output" (the visible answer; the thinking models' reasoning is not in
  it), cut in the middle when over MAX_RESPONSE characters (none is: the longest is 5,517).
- choices: always null.
- math_verify: math-verify's verdict (see below).

Source. Read from a checkout of the repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key               repo @ commit                                                     license
  pricing-reversal  lchen001/pricing-reversal @ 69f5f1a0e89ee5bdd6599d46a1bf74a55b22f27d  MIT (LICENSE)
                    data/consolidated/livemathbench-test-<model>.json and
                    data/consolidated/aime-hybrid-<model>.json for the eight models above (the
                    head of main, 2026-03-26, "feat: Add paper intro and links to sidebar"; the
                    files were committed in 5099462, 2026-03-26, and not changed since). The
                    evaluation runs of "The Price Reversal Phenomenon" (the repository's paper on
                    what reasoning models cost per query): each file is one model's run on one
                    benchmark, its "records" one per problem with the prompt, the model's
                    "raw_output", the benchmark's "ground_truth", and the authors' own extraction
                    and score ("prediction", "score": not used). LiveMathBench's English test split
                    (121 problems; gpt-5.2-high's file has 120), AIME 2024 and 2025 (60 problems;
                    the key gives one answer as "336^\\circ"). Not read: the other benchmarks'
                    files (GPQA, SimpleQA, ARC-AGI, Arena-Hard, HLE, LiveCodeBench, MMLU-Pro: not
                    free-form mathematics, or absent from the snapshot as over 4 MiB) and
                    data/repeated_trial/ (five more AIME runs of three of the models).

How the draw was settled, before any verdict was computed: every record of the sixteen files, the
files in path order (LiveMathBench's eight, then AIME's eight, each in model-name order), records in
file order; empty "raw_output" left out (MiniMax-M2.5 returned an empty answer to 73 LiveMathBench
and 55 AIME problems, Kimi K2.5 to 5 and 7) and a repeat of an earlier (problem, response) kept once
(none). That leaves 889 LiveMathBench rows, 462 of them with a gold other than a plain integer (the
gold without its dollar signs and outer spaces is not /-?[0-9]+/), and 418 AIME rows. The set is:
every LiveMathBench row with a gold other than a plain integer; LMB_INT_N of the 427 LiveMathBench
rows with an integer gold, drawn with LMB_INT_SEED; AIME_N of the 418 AIME rows, drawn with
AIME_SEED; in that order, each group in source order. 700 responses, 462 of them (66%) with a gold
other than a plain integer (none of the 88 AIME rows drawn is one of the seven "336^\\circ").
Nothing in crates/rlvr-tasks/src was changed for this set.

Looked at for this set and not used (besides those the earlier builders' docstrings list): no
license (pritamdas99/MATH-BENCH, Bengali matrix and calculus problems answered by GPT-5, Qwen2.5/3,
Llama 3.2, Gemma 3 and Ministral with keyed final answers, and no snapshot to read;
XuTiany1/MGSM-Pro, multilingual grade-school problems; Sabah-Naurin/bdmo-math-benchmark, ChatGPT on
Bangladesh olympiad problems; lunaatang/llm-math-reasoning-eval, Will3721/LLM-Math-Reasoning,
jungsuakim/llm-math-robustness, course projects on GSM8K variants); no committed model outputs
(cmu-l3/l1, whose later "Add Model Outputs" commit adds a README that links elsewhere;
microsoft/promptbase; grzegorz-aniol/RivaLLMatch, charts and scores only;
Haffi112/icelandic-math-eval, whose results/ is still not committed, and no license; hkust-nlp/
RL-Verifier-Pitfalls, test inputs only; apurvg14/math-reasoning-evals, SYSUSELab/EvolMathEval,
Buguerito/llm-math-reasoning-benchmark); an earlier source's file (zhuchichi56/matheval, whose only
output file is Qwen2.5-Math's evaluation example, already in real_responses.jsonl); not mathematics
(uclaml/Rephrase-and-Respond, llm-jp/simple-evals-mm's code); still no snapshot to read
(FranxYao/chain-of-thought-hub) or its data files still absent (ZJU-REAL/VerifyBench).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout15_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout15_responses.py --pricing-reversal DIR
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
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout15_responses.jsonl"

COMMITS = {
    "pricing-reversal": "69f5f1a0e89ee5bdd6599d46a1bf74a55b22f27d",
}
MODELS = ["MiniMax-M2.5", "claude-haiku-4.5", "claude-opus-4.6-thinking", "gemini-3-flash-preview",
          "gemini-3.1-pro-preview", "gpt-5-mini", "gpt-5.2-high", "kimi-k2.5"]
# (dataset, file name pattern)
DATASETS = [("livemathbench", "data/consolidated/livemathbench-test-{}.json"),
            ("aime", "data/consolidated/aime-hybrid-{}.json")]
LMB_INT_N = 150
LMB_INT_SEED = 22001
AIME_N = 88
AIME_SEED = 22002


def plain_integer(gold):
    """Whether the gold, without its dollar signs and outer spaces, is a plain integer."""
    return re.fullmatch(r"-?[0-9]+", gold.strip().strip("$").strip()) is not None


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def dataset_rows(repo, dataset, pattern):
    """Every usable record of one benchmark's eight files, files in model-name order."""
    rows = []
    for model in MODELS:
        run = json.loads(repo.read_text(pattern.format(model)))
        assert run["model_name"] == model, (pattern, run["model_name"])
        for rec in run["records"]:
            if not usable(rec.get("raw_output")):
                continue
            rows.append(row(f"pricing-reversal:{dataset}:{model}:{rec['index']}",
                            rec["origin_query"], rec["ground_truth"], rec["raw_output"]))
    return distinct(rows)


def pricing_reversal(repo):
    lmb = dataset_rows(repo, *DATASETS[0])
    aime = dataset_rows(repo, *DATASETS[1])
    other = [r for r in lmb if not plain_integer(r["gold"])]
    ints = [r for r in lmb if plain_integer(r["gold"])]
    print(f"livemathbench: {len(lmb)} rows ({len(other)} non-integer golds), aime: {len(aime)}",
          file=sys.stderr)
    return other + draw(ints, LMB_INT_N, LMB_INT_SEED) + draw(aime, AIME_N, AIME_SEED)


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("pricing-reversal", pricing_reversal)], OUT)


if __name__ == "__main__":
    main()
