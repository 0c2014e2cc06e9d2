#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout19_responses.jsonl: a NINETEENTH held-out set of
real model responses, this time to ARITHMETIC WITH LARGE AND SIGNED INTEGERS and to SCHOOL-EXAM
MULTIPLE CHOICE IN PORTUGUESE, from three small public projects that no earlier fixture uses:
- llmmath (sanand0/llmmath, "Can LLMs do mental math?", 2025-04): 52 chat and reasoning models
  reached through OpenAI and OpenRouter (o3, o3-mini-high, o4-mini, o1-mini, GPT-4.5-preview,
  GPT-4.1, GPT-4o, GPT-3.5-turbo, Claude 3.7 Sonnet with thinking, Claude 3 Opus, Gemini 2.5 Pro and
  Flash, Gemini 1.5, Gemma 3 1B-27B, Llama 4 Maverick and Scout, Llama 3.x and 2, DeepSeek-R1 and
  V3, Qwen 2 72B, Grok 3, Amazon Nova) asked "Calculate <a> times <b>. Reply without commas." for
  seven products from 12 x 12 = 144 to 987654321 x 123456789 = 121932631112635269 (a gold past
  2^53: an exact answer and one off in its last digits are the same double); answers bare
  ("56088"), in a sentence ("The result of 1234567 multiplied by 8901234 is 10988877438138."),
  bold, in LaTeX, with digit groups or after a long multiplication worked by hand;
- bbmistake (WHGTyen/BIG-Bench-Mistake, "LLMs cannot find reasoning errors, but can correct them!",
  Tyen et al., 2023): PaLM 2-L (Unicorn) chain-of-thought traces on BIG-Bench's multistep
  arithmetic ("((-1 - -8 + 1 * -4) - (-2 - 1 + 5 - -8)) ="), each trace a list of steps ending "So
  the answer is -78", against the task's target; most traces hold a mistake (the data set was
  built to annotate them), so most answers are wrong, by one sign or one product;
- enem (piresramon/gpt-4-enem, "Evaluating GPT-3.5 and GPT-4 Models on Brazilian University
  Admission Exams", Nunes et al., 2023): code-davinci-002, gpt-3.5-turbo-0301 and gpt-4-0314 on the
  22 mathematics questions of the 2022 ENEM (the Brazilian national exam) kept by the study, zero-
  shot, three-shot and three-shot chain-of-thought, in Portuguese: answers "E. 1 350 000 000,00.",
  "C. 6" or a worked explanation ending "Resposta: E.", decimal commas and space-grouped thousands
  in the working; five options a question, the gold a letter.
Taken from public projects that no earlier fixture of this repository uses: not the seven sources
of real_responses.jsonl, nor kojima's zero_shot_cot logs, nor the sources of
heldout_responses.jsonl to heldout18_responses.jsonl (see their builders' docstrings), nor
math-verify's tests, nor the peer pairs of checker_set.jsonl, nor the sources kept for the
maintainers' held-back check (TheoremQA, ReasonEval, Omni-MATH, MathVista, PromptPG, Abel,
MathCoder), nor any repository the earlier builders' docstrings name as looked at. The set
measures the checker; it was not used to tune it (see tests/heldout19_responses.rs and the header
of its labels; docs/checker.md has no section for it yet).

The line format is heldout_responses.jsonl's (build_heldout_responses.py, whose helpers this
script uses):
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source:
    "llmmath:<testIdx>:<provider>" (testIdx 0-6, the seven products in the order above; provider
    the promptfoo provider id, e.g. "openrouter:openai/o3-mini-high", "openai:o3",
    "google/gemma-3-27b-it", itself holding ':' where the file's does);
    "bbmistake:multistep_arithmetic:<n>" (n the 0-based line of multistep_arithmetic.jsonl);
    "enem:<engine>_<k>shot[_cot]:<id>" (engine "code-davinci-002", "gpt-3.5-turbo-0301" or
    "gpt-4-0314"; k the few-shot count, 0 or 3; "_cot" for the chain-of-thought task; id the
    question's "ENEM_2022_<number>").
- problem: llmmath: the prompt as sent ("Calculate 1234567 times 8901234. Reply without commas.");
  bbmistake: the record's "input" (the expression, ending " ="); enem: the question as the study's
  prompt lays it out, "Cabeçalho: <context>\\nEnunciado: <question>\\nAlternativas:\\nA. <option>
  ..." (data/enem/2022.json, the record with the report's id; the few-shot examples and the
  "Explicação:" cue of the chain-of-thought prompt left out); cut to its first PROBLEM_CHARS
  characters.
- gold: llmmath: the test's "expected" as promptfooconfig.yaml writes it (an integer, checked to be
  a x b; the export's "vars" hold the seventh as the double 121932631112635260, which is not the
  product: noticed while grading a first build of this set that read the export's value, the
  fixture was rebuilt from the config and the samples drawn again, see the labels' header);
  bbmistake: the record's "target" (an integer, often negative); enem: the report's "gold" without
  its period ("E").
- response: llmmath: the result's response "output"; bbmistake: the record's "steps" joined by
  newlines (the data set stores the trace as a list of steps, without the "Thought N:" prefixes of
  the generation prompt); enem: the report's "response" (zero- and three-shot answers are the
  letter and the option's text, "C. 6"; chain-of-thought answers end "Resposta: E."). Cut in the
  middle when over MAX_RESPONSE characters (none of the 700 is).
- choices: enem: the question's five "options" (option A first); null otherwise.
- math_verify: math-verify's verdict (see below).

Sources. Read from a checkout of each repository at the commit below, or from a bare mirror of it
(files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key        repo @ commit                                                        license
  llmmath    sanand0/llmmath @ a6da7768cfda8b5e15d985c2fa1bb09aba680c79           MIT (LICENSE)
             multiplication.json, the promptfoo eval export (results.results: 364 results, 52
             providers x 7 tests; "provider", "testIdx", "vars" {a, b, expected}, "prompt"
             {raw}, "response" {output}) and promptfooconfig.yaml (the seven tests' a, b and
             expected, as written). The commit is "ENH: Add Grok 3. Show responses in
             popovers" (2025-04-27); the later commits 8ddc927 and f9cc4c5 ("each multiplication
             5 times", 2025-05-16) replace the file with five samples a test, a blob the mirror
             this set was built from does not hold, so the one-sample export is read.
  bbmistake  WHGTyen/BIG-Bench-Mistake @ 270683a4ecce6f3b22c4ab28a204ab8fa09f2517 Apache-2.0
                                                                                  (LICENSE)
             multistep_arithmetic.jsonl (300 records: "input", "steps", "answer", "target",
             "mistake_index"), the head of main (2024-01-25). Not read: the other four tasks
             (word sorting, Dyck languages: strings; tracking shuffled objects, logical
             deduction: options), whose answers are not mathematics.
  enem       piresramon/gpt-4-enem @ cbba7fdd735845bb45ac80d5090baae1b949d782     MIT (LICENSE)
             reports/engine=<engine>_numfewshot=<k>_task=enem[_cot]_2022.json (nine files:
             three engines x 0-shot, 3-shot, 3-shot CoT; 118 records each, "id", "response",
             "pred", "gold", "area"), the records with "area" "mathematics" (22 a file); the
             question from data/enem/2022.json. The head of main (2024-12-06). Not read: the
             other three areas (languages, human and natural sciences), the 2023 and 2024 data
             (no committed reports) and the multimodal task.

How the draw was settled, before any verdict was computed: llmmath: every result in file order,
an empty output left out (2: Llama 2 70B chat on two tests), a repeat of an earlier (problem,
response) kept once (125: the many bare "144", "56088", "7006652"), all 237 left kept;
bbmistake: every record in file order (300, none empty, none repeated), BBMISTAKE_N (288) drawn
with BBMISTAKE_SEED; enem: the nine report files in path order, their mathematics records in file
order (198), an empty response left out (6: code-davinci-002 and gpt-3.5-turbo-0301 zero-shot, 3
each), a repeat of an earlier (problem, response) kept once (17: the same bare letter, "D.", or
letter and option, "C. 42/64", from two runs), all 175 left kept. The groups in the order llmmath,
bbmistake, enem: 700 responses, 525 with a gold that is a plain integer (every llmmath and
bbmistake gold; 145 of the 288 bbmistake golds negative), 175 multiple choice with five options.
Nothing in crates/rlvr-tasks/src was changed for this set.

Looked at for this set and not used (besides those the earlier builders' docstrings list; a
search first for regional and multilingual benchmarks with committed outputs, then for older
models on GSM8K-like sets, then for applied and arithmetic outputs): no license
(Ipouyall/Benchmarking_ChatGPT_for_Persian, GPT-3.5 on Persian elementary and entrance-exam
mathematics; yenniejun/project-euler-gpt-langs, GPT-4 on Project Euler in 16 languages;
LightChen233/reasoning-granularity, GPT-3.5/GPT-4o/o1 on BigGSM; hwelsters/chatgpt-mwp-performance-
prediction, ChatGPT on DRAW-1K and ALG-514, a sibling of the rejected sleepyresponse;
nglebm19/zalo_ai_challenge_2023, GPT-3.5 on Vietnamese elementary mathematics;
maxim-saplin/llm_arithmetic, per-trial outputs of 40-odd recent models on integer and decimal
arithmetic to 10 digits, the best candidate if it is ever licensed; qywu/FinQAExperiments, LLaMA,
Vicuna, Koala and GPT outputs on ConvFinQA, programs rather than answers;
githubnext/gpt4-with-calc, an early GPT-4's calculation logs, whose LICENSE was removed before the
head; songjeongjun320/Increase_MLLM_Ability, Korean MMLU only); no committed outputs or only
metrics (juletx/self-translate, lm-eval MGSM accuracies only; kvadityasrivatsa/analyzing-llms-for-
mwps, responses on Google Drive; CONE-MT/MindMerger; pphuc25/distil-cd; YuxiXie/SelfEval-Guided-
Decoding; deepakn97/MAF; GanjinZero/math401-llm, the problems only; Xalp/Tab-CoT;
CLUEbenchmark/SuperCLUE-Math6; DAMO-NLP-SG/M3Exam; Xdao85/VNHSGE, the exam only; eth-lre/mathgap-
experiments; hiyouga/MathUtils; HLTCHKUST/chatgpt-evaluation; sarbol/NumericalReasoningModels,
notebooks only; microsoft/MEGAVERSE); not usable as a gold (GAIR-NLP/factool, ChatGPT on GSM-Hard
with claim-level factuality labels and an "answer" field that is sometimes the response's own
value; ethanedwards/LLMmath, GPT-4 on multiplication in several numeral systems, its one committed
output file a sample with empty completions, deleted since); not mathematics
(reasoning-machines/prompt-lib, whose outputs.zip holds only the sports task; McGill-NLP/mSTEB;
greenturtlefrank/2025-OPDTL, pruned-Llama logs under Meta's licence); not found here
(McGill-NLP/IrokoBench, kaist-ai/LangBridge: no snapshot). Within the sources: llmmath's five-
sample export (not in the mirror), BIG-Bench-Mistake's other tasks, ENEM's other areas.

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written):
verify(parse(gold), parse(response)), the gold wrapped in `$..$` when it has no `$`, `\\boxed`
or `\\(` (build_checker_set.py's mv_verdicts); an exception is False. rlvr's verdicts are not
stored: tests/heldout19_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout19_responses.py --llmmath DIR \\
        --bbmistake DIR --enem DIR
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
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout19_responses.jsonl"

COMMITS = {
    "llmmath": "a6da7768cfda8b5e15d985c2fa1bb09aba680c79",
    "bbmistake": "270683a4ecce6f3b22c4ab28a204ab8fa09f2517",
    "enem": "cbba7fdd735845bb45ac80d5090baae1b949d782",
}
BBMISTAKE_N = 288
BBMISTAKE_SEED = 25001
LETTERS = "ABCDE"


def distinct(rows):
    """`rows` without a repeat of an earlier row's (problem, response)."""
    seen, out = set(), []
    for r in rows:
        key = hashlib.sha256(json.dumps([r["problem"], r["response"]]).encode("utf-8")).hexdigest()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def llmmath_tests(repo):
    """The seven tests of promptfooconfig.yaml as written: [(a, b, expected)], exact integers (the
    export's "vars" hold them as JSON numbers, the last one rounded to a double)."""
    tests = [tuple(int(x) for x in m) for m in re.findall(
        r"vars: \{ a: (\d+), b: (\d+), expected: (\d+) \}", repo.read_text("promptfooconfig.yaml"))]
    assert len(tests) == 7 and all(a * b == e for a, b, e in tests), tests
    return tests


def llmmath(repo):
    tests = llmmath_tests(repo)
    results = json.loads(repo.read_text("multiplication.json"))["results"]["results"]
    rows = []
    for r in results:
        out = (r.get("response") or {}).get("output")
        if not usable(out):
            continue
        a, b, expected = tests[r["testIdx"]]
        assert (r["vars"]["a"], r["vars"]["b"]) == (a, b), r["testIdx"]
        assert r["prompt"]["raw"] == f"Calculate {a} times {b}. Reply without commas.", r["prompt"]
        rows.append(row(f"llmmath:{r['testIdx']}:{r['provider']['id']}", r["prompt"]["raw"],
                        str(expected), out))
    return distinct(rows)


def bbmistake(repo):
    rows = []
    for n, r in enumerate(repo.jsonl("multistep_arithmetic.jsonl")):
        resp = "\n".join(r["steps"])
        if not usable(resp):
            continue
        rows.append(row(f"bbmistake:multistep_arithmetic:{n}", r["input"], str(r["target"]), resp))
    rows = distinct(rows)
    print(f"bbmistake: {len(rows)} rows", file=sys.stderr)
    return draw(rows, BBMISTAKE_N, BBMISTAKE_SEED)


def enem_problem(q):
    text = f"Cabeçalho: {q['context']}\nEnunciado: {q['question']}\nAlternativas:\n"
    text += "".join(f"{LETTERS[i]}. {opt}\n" for i, opt in enumerate(q["options"]))
    return text.strip()


def enem(repo):
    questions = {q["id"]: q for q in json.loads(repo.read_text("data/enem/2022.json"))}
    rows = []
    for path, _ in repo.files("reports/"):
        m = re.fullmatch(r"reports/engine=(.+)_numfewshot=(\d+)_task=enem(_cot)?_2022\.json", path)
        assert m, path
        run = f"{m.group(1)}_{m.group(2)}shot{m.group(3) or ''}"
        for r in json.loads(repo.read_text(path)):
            if r["area"] != "mathematics" or not usable(r["response"]):
                continue
            q = questions[r["id"]]
            gold = r["gold"].strip().rstrip(".")
            assert gold == q["label"].upper(), (r["id"], gold, q["label"])
            assert len(q["options"]) == 5, r["id"]
            rows.append(row(f"enem:{run}:{r['id']}", enem_problem(q), gold, r["response"],
                            list(q["options"])))
    return distinct(rows)


# ---------------------------------------------------------------------------------------

def main():
    run_builder(__doc__, COMMITS, [("llmmath", llmmath), ("bbmistake", bbmistake), ("enem", enem)],
                OUT)


if __name__ == "__main__":
    main()
