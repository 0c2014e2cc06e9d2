#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout17_responses.jsonl: a SEVENTEENTH held-out set of
real model responses, this time MOSTLY IN LANGUAGES OTHER THAN ENGLISH, to textbook mathematics
problems with FREE-FORM answers: the cross-lingual zero-shot runs committed with "MathMist: A
Parallel Multilingual Benchmark Dataset for Mathematical Problem Solving and Reasoning" (Sobhani,
Sayeedi, Mohiuddin, Islam, Shatabda, 2025; arXiv 2510.14305). 150 problems from Bangladeshi
school textbooks (sets in roster and set-builder form, relations, factorizations, expansions,
logarithms, sequences and series, inequalities, trigonometry in radians, binomial expansions,
measurements in metres, hectares and cubic metres, systems of equations, domains and ranges), in
their Bangla originals, in English and translated into Finnish, French, Kazakh, Lithuanian and
Turkish, each asked of four models run locally through Ollama (Qwen3 8B without thinking, GPT-OSS
20B, Mathstral 7B and DeepSeek-R1 7B, as the files name them) with an English instruction that the
problem is in the language and that the concise final answer should be in it too, ending in a
`<final> ... </final>` tag. The answer key is the textbook's, in the problem's language:
"32,987 cm (noin)", "{y: 1 \\le y \\le 7}", "(x+2)(x²+x+1)", "16.16  metres, 648   cubic metres",
"$x=\\frac{c(b - c)}{a(b - a)}$,$y= \\frac{c(c - a)}{b(b - a)}$", "D_f = \\mathbb{R} , R_f =
\\{-1, 0, 1\\}", "\\dfrac{\\pi}{4}, \\dfrac{\\pi}{3} and \\dfrac{5\\pi}{12}"; answers come back in
Bangla digits ("৬.৫২০৩"), with decimal commas, in Cyrillic and Bengali script, in `<final>` tags,
boxes or bare. Taken from a public
project that no earlier fixture of this repository uses: not the seven sources of
real_responses.jsonl (Qwen2.5-Math, microsoft/ToRA, openai/grade-school-math,
wenhuchen/Program-of-Thoughts, TIGER-AI-Lab/MMLU-Pro, NovaSky-AI/SkyThought, yuchenlin/ZeroEval),
nor kojima's zero_shot_cot logs, nor the sources of heldout_responses.jsonl to
heldout16_responses.jsonl (OpenLMLab/GAOKAO-Bench, iamyb/llm-gaokao-math-eval,
veronica320/Faithful-COT, Tebmer/Rereading-LLM-Reasoning, lz1oceani/verify_cot,
protagolabs/odyssey-math, dvlab-research/Mr-Ben, suzgunmirac/meta-prompting,
suzgunmirac/BIG-Bench-Hard, ruixiangcui/AGIEval, dvlab-research/MR-GSM8K,
maitrix-org/llm-reasoners, kuk/simple-evals-ru, PRIME-RL/PRIME, sarahmart/HARDMath,
wellecks/lm-evaluation-harness, microsoft/rho, tianyi-lab/MiP-Overthinking, tangzhy/RealCritic,
mathllm/MATH-V, yale-nlp/Physics, gpoesia/mathcamps, open-thought/reasoning-gym-eval,
lchen001/LLMDrift, lchen001/pricing-reversal, suzgunmirac/dynamic-cheatsheet), nor math-verify's
tests, nor the peer pairs of checker_set.jsonl, nor the sources kept for the maintainers'
held-back check (TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel, MathCoder), nor
jettjaniak/chainscope, nor any repository the earlier builders' docstrings name as looked at
(pritamdas99/MATH-BENCH, Bengali problems too, is another project with no license). The set
measures the checker; it was not used to tune it (see tests/heldout17_responses.rs and the header
of its labels; docs/checker.md has no section for it yet).

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "mathmist:<language>:<model>:<problem_index>" (language: the folder, "Bangla", "English",
  "Finnish", "French", "Kazakh", "Lithuanian" or "Turkish"; model: the file's name between the
  language and "_150.json": "DeepSeek", "GPT", "Mathstral", "Qwen", and in French "DeepSeek_R1",
  "GPT_OSS_20B", "Mathstral_7B", "Qwen"; problem_index: the record's "problem_index", 0-149),
  enough to find the record again.
- problem: the record's "question" (the problem in the language, as the model was given it; some
  translations keep the translator's preamble, "Voici la traduction professionnelle ..."; the
  format instruction is not included), cut to its first PROBLEM_CHARS characters.
- gold: the record's "exact_answer", outer whitespace removed (the key as the file writes it: with
  or without dollar signs, in the language, with units and "(approx.)").
- response: the record's "generated_answer" (its "thinking_content" is empty in every record: the
  models ran without a separate thinking channel, and DeepSeek-R1's reasoning, where it shows, is in
  the answer), cut in the middle when over MAX_RESPONSE characters (none of the 700 is: the longest
  drawn has 2,411).
- choices: always null.
- math_verify: math-verify's verdict (see below).

Source. Read from a checkout of the repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key       repo @ commit                                                    license
  mathmist  mahbubhimel/MathMist @ fba35cc6434047360bd5572febff694d7e913a1b  Apache-2.0 (LICENSE)
            Evaluation Results/Corss Lingual Zero-Shot Evaluation/<language>/<language>_<model>_150.json
            for the seven languages and four models (the head of main, 2025-10-15, "Update
            README.md"; the results were committed in 1a413ab, "Version 1 Added", and not changed
            since). One JSON object per problem: "problem_index", "question", "generated_answer",
            "thinking_content", "exact_answer", "raw_answer_type" ("Numerical", "Symbolic" or
            "Proof": the problem's type in the corpus), "canonical_answer_type", the authors'
            extraction ("extracted_final_answer": not used) and "evaluation_method". Not read: the
            files under "Accuracy Check/" (the same responses with a Gemini judge's verdicts), the
            1,445-problem Bangla and English runs under CoT/, Zero Shot/ and Code Switching/ (two
            languages only; read for a later set if wanted), the MCQ and perturbation results
            (multiple choice; judgements of perturbed solutions) and Data/ (the corpus).

How the draw was settled, before any verdict was computed: for each language in the order above,
every record of its four files, files in path order, records in file order; a record whose
"raw_answer_type" is "Proof" left out (50 problems in every file: "show that ...", whose key is the
statement to be shown or the proof's last line, not a value to compare), an empty
"generated_answer" left out (12: Finnish 2, French 1, Kazakh 6, Lithuanian 2, Turkish 1, Bangla and
English none) and a repeat of an earlier (problem, response) kept once (2: English 1, French 1).
That leaves 394 to 400 rows a language (2,786 in all). The set is LANG_N of each language's rows
drawn with LANG_SEED + the language's position (0-6), each group in source order, the languages in
the order above. 700 responses, 100 a language, 600 (86%) not in English; 585 (84%) with a gold
other than a plain integer (the gold without its dollar signs and outer spaces is not
/-?[0-9]+/); by model, Qwen3 8B 180, Mathstral 7B 179, DeepSeek-R1 7B 169, GPT-OSS 20B 172.
Nothing in crates/rlvr-tasks/src was changed for this set.

Looked at for this set and not used (besides those the earlier builders' docstrings list): a
snapshot over the 500 MiB limit (gauss5930/MCLM, "Linguistic Generalizability of Test-Time Scaling
in Mathematical Reasoning", competition problems in 55 languages and its evaluation results: a 771
MB repository); a license that does not allow it (roboco-io/KSAT-AI-Benchmark, Korean CSAT answers
of GPT, Claude and Gemini, CC BY-NC 4.0 by its README). Within the source, the 1,445-problem Bangla
and English runs (CoT/, Zero Shot/, Code Switching/) were left for a later set: two languages only,
and the same four models.

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False (one line, #603, is a
math-verify timeout, read as False; its answer is wrong). rlvr's verdicts are not stored:
tests/heldout17_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout17_responses.py --mathmist DIR
Deterministic: one fixed seed per draw, rows in source order before drawing.
"""

import hashlib
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from build_heldout_responses import draw, row, run_builder, usable  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout17_responses.jsonl"

COMMITS = {
    "mathmist": "fba35cc6434047360bd5572febff694d7e913a1b",
}
BASE = "Evaluation Results/Corss Lingual Zero-Shot Evaluation"
LANGUAGES = ["Bangla", "English", "Finnish", "French", "Kazakh", "Lithuanian", "Turkish"]
LANG_N = 100
LANG_SEED = 24001


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def language_rows(repo, lang):
    """Every usable record of one language's four files, files in path order."""
    files = [p for p, _ in repo.files(f"{BASE}/{lang}/")
             if p.endswith("_150.json") and "/Accuracy Check/" not in p]
    assert len(files) == 4, files
    rows = []
    for path in files:
        model = path.rsplit("/", 1)[1][len(lang) + 1:-len("_150.json")]
        for rec in json.loads(repo.read_text(path)):
            if rec["raw_answer_type"] == "Proof" or not usable(rec.get("generated_answer")):
                continue
            rows.append(row(f"mathmist:{lang}:{model}:{rec['problem_index']}", rec["question"],
                            str(rec["exact_answer"]), rec["generated_answer"]))
    return distinct(rows)


def mathmist(repo):
    out = []
    for j, lang in enumerate(LANGUAGES):
        rows = language_rows(repo, lang)
        print(f"{lang}: {len(rows)} rows", file=sys.stderr)
        out += draw(rows, LANG_N, LANG_SEED + j)
    return out


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("mathmist", mathmist)], OUT)


if __name__ == "__main__":
    main()
