#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout18_responses.jsonl: an EIGHTEENTH held-out set of
real model responses, MOSTLY IN LANGUAGES OTHER THAN ENGLISH and many of them to SCIENCE PROBLEMS
WITH UNITS, from two public projects that no earlier fixture of this repository uses:

- bennumeval (440): the committed responses of "BenNumEval: A Benchmark to Assess LLMs' Numerical
  Reasoning Capabilities in Bengali" (Ahmed, Osama, Sharif, Hossain, Hoque; Findings of ACL 2025).
  Bengali problems of four of its six tasks: domain-specific (DS: chemistry, physics, trigonometry,
  probability, mensuration, computer science: molar masses, moles in a solution, heights thrown,
  arcs in radians), commonsense arithmetic (CA), fill-in-the-blank (FiB) and arithmetic word
  problems (AWP), each answered by five models (GPT-4o, Gemini 2.0 Flash, Llama 3.3 70B,
  DeepSeek-R1-Distill-Llama-70B, Mathstral 7B) under three prompts: BNaP (Bengali native
  prompting: the working and the answer line "উত্তর: ১৪" in Bengali, often in Bengali digits),
  XLP (cross-lingual prompting: an English answer) and XCoT (cross-lingual chain of thought: the
  problem translated, then worked in English, "Answer: 6.33"). The key is the benchmark's, mostly
  in Bengali digits: "৭২২", "৩/৪", "৫৩.৩৩" (a value the key rounds, units left out), "২৫/৪", "০.০১".
- langshapes (260): the committed evaluation runs of "Representation Efficiency in Neural
  Reasoning: Evidence from Multilingual Mathematical Benchmarks" (Yu, Ma, Liang; an MIT 6.7960
  course project, 2025-12): MMATH's 374 competition problems (AIME 2024/25, CNMO, MATH-500) in
  Chinese, Japanese, Thai and Spanish answered by ChatGPT-5.1, DeepSeek-V3.2 and Gemini-2.5-Flash,
  told to end on a line "#### <answer>" (answers in the problem's language or in English, boxes
  before the "####", Gemini's often cut at the token limit), and GSM8K translated into Chinese
  answered by Qwen3 8B and Llama 3.1 8B Instruct at token budgets of 128 to 4096 tokens, directly
  or "translate in your head, then solve", whose committed text is the whole decoded chat: the
  system turn, the Chinese prompt with its own "#### <number>" template and the problem, then the
  answer (cut mid-sentence at the small budgets).

Taken from public projects that no earlier fixture of this repository uses: not the seven sources
of real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math,
wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval),
nor kojima's zero_shot_cot logs, nor the sources of heldout_responses.jsonl to
heldout17_responses.jsonl (OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval,
veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning, lz1oceani/verify_cot,
protagolabs/odyssey-math, dvlab-research/Mr-Ben, suzgunmirac/meta-prompting,
suzgunmirac/BIG-Bench-Hard, ruixiangcui/AGIEval, dvlab-research/MR-GSM8K,
maitrix-org/llm-reasoners, kuk/simple-evals-ru, PRIME-RL/PRIME, sarahmart/HARDMath,
wellecks/lm-evaluation-harness, microsoft/rho, tianyi-lab/MiP-Overthinking, tangzhy/RealCritic,
mathllm/MATH-V, yale-nlp/Physics, gpoesia/mathcamps, open-thought/reasoning-gym-eval,
lchen001/LLMDrift, lchen001/pricing-reversal, suzgunmirac/dynamic-cheatsheet,
mahbubhimel/MathMist), nor math-verify's tests, nor the peer pairs of checker_set.jsonl, nor the
sources kept for the maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH, MathVista,
PromptPG, Abel, MathCoder), nor any repository the earlier builders' docstrings name as looked at.
(MMATH's problems were met before, through RUCAIBox/MMATH's own runs of other models; these
responses are new: other models, other prompt, other answer layout.) The set measures the
checker; it was not used to tune it (see tests/heldout18_responses.rs and the header of its
labels; docs/checker.md has no section for it yet).

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source:
    "bennumeval:<task>:<run>:<model>:<prompt>:<Q No.>" (task "CA", "DS", "FiB" or "AWP"; run
    "run1" or "run2", the folder Codes/Run_1 or Codes/Run_2; model the folder under
    "Model Responses", e.g. "Gpt_4o", "DeepSeek_R1_Distill_Llama_70B"; prompt "bnap", "xlp" or
    "xcot", from the file's name; Q No. the record's "Q No.");
    "langshapes:mmath-<lang>:<model>:<id>" (lang "zh", "ja", "th", "es"; model "chatgpt-5.1",
    "deepseek-v3.2", "gemini-2.5"; id the record's "id", "mmath_<n>_<lang>");
    "langshapes:gsm8k-zh:<model>_<mode>_maxtok<N>:<id>" (model "qwen3-8b" or "llama-3.1-8b";
    mode "direct" or "zh_translate_then_solve"; N the token budget; id "gsm8k_test_<n>").
- problem: bennumeval: the record's "Question" (Bengali); langshapes: the "question" of the
  processed data file with the record's id (data/processed/mmath/mmath_<lang>.jsonl,
  data/processed/gsm8k/gsm8k_zh_test.jsonl), the problem in the language as the model was given
  it, the prompt's instruction left out; cut to its first PROBLEM_CHARS characters.
- gold: bennumeval: the record's "Answer"; langshapes: the record's "gold" (equal to the data
  file's "answer"; some MMATH golds between dollar signs: "$\\frac{3}{4}$", "$[-\\frac{1}{4}, 0)
  \\cup (0, 2)$"); outer whitespace removed.
- response: bennumeval: the record's "Model Response"; langshapes: the record's "raw_output";
  cut in the middle when over MAX_RESPONSE characters.
- choices: always null.
- math_verify: math-verify's verdict (see below).

Sources. Read from a checkout of each repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key         repo @ commit                                                license
  bennumeval  kawsar-pie/BenNumEval @ 3c568bea497df3fcfd8f5919c4f4e981f338ddc0
                                                                           MIT (README.md,
              "BenNumEval is released under the [MIT License]"; the repository has no LICENSE
              file)
              Codes/Run_<1,2>/Model Responses/<model>/<model>_<prompt>_task<k>_random_<n>_responses.csv
              for k = 1 (CA), 2 (DS), 4 (FiB), 6 (AWP): one CSV row per problem, "Q No.",
              "Question", "Answer", "Model Response" (DS also "Domain", "Sub-Domain"; some files
              a "Chat History"). 5 models x 3 prompts x 2 runs a task (two random test sets of the
              benchmark, 150 or 250 problems, partly overlapping). The head of main (2025-07-27,
              "Update README.md"); the responses were committed in fc8065b (2025-05-27, "dataset
              and codes added"). Not read: tasks 3 (CQ: a choice between two options) and 5 (QNLI:
              entailment labels), the notebooks, Dataset/.
  langshapes  bowenyu066/language-shapes-reasoning @ 9cf81be3ce556f16998fc76ecb101b96afcdebc3
                                                                           MIT (README.md,
              "## License  MIT License - see LICENSE file for details"; no LICENSE file was ever
              committed)
              results/mmath/mmath_<model>_<lang>_direct_maxtok8192.csv for the three models and
              zh, ja, th, es; results/gsm8k/gsm8k_<model>_zh_<mode>_maxtok<N>.csv (every zh file
              of the folder: Qwen3 8B at 128-4096 tokens, Llama 3.1 8B at 128-4096, direct and
              translate-then-solve); columns "id", "model", "language", "mode", "max_tokens",
              "gold", "pred", "correct", "raw_output". The head of main (2026-01-17, "Refactor
              README.md"); the results were committed 2025-12-07 to 2025-12-09. Not read: the
              English MMATH and GSM8K runs (English), results/gsm8k_finetuned/ (LoRA checkpoints
              of Llama), the token records.

How the draw was settled, before any verdict was computed:
- bennumeval: for each task in the order DS, CA, FiB, AWP, every record of its 30 files, files in
  path order (Run_1 before Run_2), records in file order; an empty response left out (1: Gemini
  2.0 Flash, XCoT, DS) and a repeat of an earlier (problem, response) kept once (1, DS); that
  leaves DS 7,498 rows, CA, FiB and AWP 4,500 each; then the task's count of BENNUMEVAL_TASKS
  drawn with BENNUMEVAL_SEED + the task's position (0-3): DS 240, CA 60, FiB 80, AWP 60.
- langshapes: for each language in the order zh, ja, th, es, every record of its three files
  (path order), an empty "raw_output" left out (148, all Gemini-2.5-Flash: zh 43, ja 44, th 24,
  es 37; no repeats), MMATH_N (50) drawn from the 1,078 to 1,098 left with MMATH_SEED + the
  language's position; then every record of the 20 zh GSM8K files (path order, 26,380 records,
  none empty), a repeat of an earlier (problem, response) kept once (271: the same short answer
  committed at several budgets), GSM8K_N (60) drawn from the 26,109 left with GSM8K_SEED.
Each group in source order, the groups in the order above. 700 responses: 440 bennumeval (by
model: Gemini 2.0 Flash 99, GPT-4o 92, Mathstral 7B 87, Llama 3.3 70B 84, DeepSeek-R1-Distill 78),
200 MMATH (ChatGPT-5.1 83, DeepSeek-V3.2 59, Gemini-2.5-Flash 58), 60 GSM8K-zh; 429 with a gold
other than a plain ASCII integer (Bengali digits, fractions, decimals, MMATH's LaTeX golds).
Nothing in crates/rlvr-tasks/src was changed for this set.

Looked at for this set and not used (besides those the earlier builders' docstrings list): no
license (BUPT-Reasoning-Lab/FinanceReasoning and its fork Staudinger0325/FinanceReasoning: CoT
and program-of-thought outputs of o1, o3-mini, DeepSeek-R1, Claude 3.5 Sonnet, Gemini 2.0 and
others on financial calculations, no license in any commit; joshbarua/MCLM, a fork of
gauss5930/MCLM with MR1 outputs in 55 languages, no license); no committed outputs
(YangLabHKUST/UGPhysics, CMPhysBench/CMPhysBench, THUDM/SciGLM, OpenDFM/SciEval). Within the
sources: BenNumEval's tasks 3 and 5 (options and entailment labels, not values), the English
runs of language-shapes-reasoning.

Looked at by a parallel search for a set of recent chat and reasoning models on competition
mathematics (about 120 repositories; none usable, so this set took the number 18): no license
(vegetable-yx/IntegralBench, committed outputs of nine models incl. o3-mini, DeepSeek-R1, Qwen3,
GPT-4.1 on definite integrals, the best candidate if its license is settled; zhusq20/reasoning-evals;
MotaTasher/llm-olympiad-bench, Russian olympiad logs of 2025-26 models; macklinhrw/llm-reasoning;
BainMcHaleCMU/GSM_Symbolic_Robustness; SagnikMukherjee/PARC; akarim23131/Lost_in_Cultural_Translation;
Erica-Liu/cot-faithfulness-math-hints; eth-nlped/mathdial; Emart29/llm-reasoning-eval;
labrem/neus2026-labre; Jaemnani/ai-benchmark-suneung; jaeukmoon/csat-eval;
METR/claude-3.7-CoT-Faithfullness-Replication; StanchPillow55/Algoverse-Self-Correction-Classification;
perfectbullet/math_eval_pipeline; Dongximing/semantic; YuFish131416's and BrenchCC's course
projects); licensed but no response text (zhiyuanZhai20/how-much-thinking-is-enough,
andynik/combi-puzzles, andynik/math-domains-comp-24, NVIDIA-NeMo/Gym: five example rollouts per
server, parkertomf/llm-reasoning-evaluator, LongHorizonReasoning/longcot); GPL
(YangLabHKUST/UGMathBench); data on Hugging Face only (IAAR-Shanghai/xFinder, SuperGPQA,
NLPForUA/ZNO, whose data is CC BY-NC); not free-form mathematics
(thylinao1/bayes-cot-faithfulness, DeerSteak/local-ai-bench, aanerohan/cs194,
MattYoon/reasoning-models-confidence); no committed outputs (RUCAIBox/Slow_Thinking_with_LLMs,
google-deepmind/superhuman, JamesRoggeveen/hardmath2_data, howard-yen's, stevolopolis's and
kennethleungty's simple-evals forks, yukangZhuu/basic_evaluator, zldscr0/eval, CongdaSir/AdaptiveTTS,
Trustworthy-Information-Access/Reasoning-Affects-LLM-Judge, iie-ycx/DEER, zjunlp/LightThinker,
VainF/Thinkless, LLM360/Reasoning360, Inc44/ZNOB).

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout18_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout18_responses.py --bennumeval DIR \\
        --langshapes DIR
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
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout18_responses.jsonl"

COMMITS = {
    "bennumeval": "3c568bea497df3fcfd8f5919c4f4e981f338ddc0",
    "langshapes": "9cf81be3ce556f16998fc76ecb101b96afcdebc3",
}
# task code -> (task number in the file names, rows drawn)
BENNUMEVAL_TASKS = {"DS": (2, 240), "CA": (1, 60), "FiB": (4, 80), "AWP": (6, 60)}
BENNUMEVAL_SEED = 26001
MMATH_LANGUAGES = ["zh", "ja", "th", "es"]
MMATH_MODELS = ["chatgpt-5.1", "deepseek-v3.2", "gemini-2.5"]
MMATH_N = 50
MMATH_SEED = 26101
GSM8K_N = 60
GSM8K_SEED = 26201

csv.field_size_limit(1 << 30)


def csv_rows(repo, path):
    return list(csv.DictReader(io.StringIO(repo.read_text(path), newline="")))


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def bennumeval(repo):
    out = []
    for j, (code, (task, n)) in enumerate(BENNUMEVAL_TASKS.items()):
        rows = []
        for path, _ in repo.files("Codes"):
            m = re.fullmatch(r"Codes/Run_(\d)/Model Responses/([^/]+)/\2_(bnap|xlp|xcot)_task"
                             + str(task) + r"_random_\d+_responses\.csv", path)
            if not m:
                continue
            run, model, prompt = m.groups()
            for rec in csv_rows(repo, path):
                if not usable(rec["Model Response"]):
                    continue
                rows.append(row(f"bennumeval:{code}:run{run}:{model}:{prompt}:{rec['Q No.']}",
                                rec["Question"], rec["Answer"], rec["Model Response"]))
        rows = distinct(rows)
        print(f"bennumeval {code}: {len(rows)} rows", file=sys.stderr)
        out += draw(rows, n, BENNUMEVAL_SEED + j)
    return out


def questions(repo, path):
    return {q["id"]: q for q in repo.jsonl(path)}


def langshapes(repo):
    out = []
    for j, lang in enumerate(MMATH_LANGUAGES):
        qs = questions(repo, f"data/processed/mmath/mmath_{lang}.jsonl")
        rows = []
        for model in MMATH_MODELS:
            path = f"results/mmath/mmath_{model}_{lang}_direct_maxtok8192.csv"
            for rec in csv_rows(repo, path):
                if not usable(rec["raw_output"]):
                    continue
                q = qs[rec["id"]]
                assert q["answer"].strip() == rec["gold"].strip(), (path, rec["id"])
                rows.append(row(f"langshapes:mmath-{lang}:{model}:{rec['id']}", q["question"],
                                rec["gold"], rec["raw_output"]))
        rows = distinct(rows)
        print(f"langshapes mmath-{lang}: {len(rows)} rows", file=sys.stderr)
        out += draw(rows, MMATH_N, MMATH_SEED + j)
    qs = questions(repo, "data/processed/gsm8k/gsm8k_zh_test.jsonl")
    rows = []
    for path, _ in repo.files("results/gsm8k"):
        m = re.fullmatch(r"results/gsm8k/gsm8k_([a-z0-9.-]+)_zh_(direct|zh_translate_then_solve)"
                         r"_maxtok(\d+)\.csv", path)
        if not m:
            continue
        model, mode, budget = m.groups()
        for rec in csv_rows(repo, path):
            if not usable(rec["raw_output"]):
                continue
            q = qs[rec["id"]]
            assert str(q["answer"]).strip() == rec["gold"].strip(), (path, rec["id"])
            rows.append(row(f"langshapes:gsm8k-zh:{model}_{mode}_maxtok{budget}:{rec['id']}",
                            q["question"], rec["gold"], rec["raw_output"]))
    rows = distinct(rows)
    print(f"langshapes gsm8k-zh: {len(rows)} rows", file=sys.stderr)
    out += draw(rows, GSM8K_N, GSM8K_SEED)
    return out


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("bennumeval", bennumeval), ("langshapes", langshapes)], OUT)


if __name__ == "__main__":
    main()
