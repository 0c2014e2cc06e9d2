#!/usr/bin/env python3
"""Rebuilds crates/rlvr-tasks/tests/fixtures/heldout_responses.jsonl: a HELD-OUT set of real
model responses to math problems, each with the dataset's own gold answer, taken from the
committed evaluation outputs of public projects that no earlier fixture of this repository
uses (not the seven sources of real_responses.jsonl, nor kojima's zero_shot_cot logs, nor
math-verify's tests, nor the peer pairs of checker_set.jsonl). The set measures the checker;
it was not used to tune it (see docs/checker.md, "A held-out set").

Each output line:
    {"id", "source", "problem", "gold", "response", "choices", "math_verify"}
- id: position in the file (0-based).
- source: "<source key>:<file or model>:<row>[:<variant>]", enough to find the row again.
- problem: the problem text, cut to its first PROBLEM_CHARS characters.
- gold: the dataset's own gold answer, as the source stores it (a letter, or for a
  multiple-answer question several letters, for multiple choice), outer whitespace removed.
- response: the model's response. A response over MAX_RESPONSE characters is cut in the
  middle only: its first HEAD characters, a line "[... N characters cut ...]", and its last
  MAX_RESPONSE - HEAD characters, so the end, where the answer is, stays whole.
- choices: for multiple choice, the option texts in letter order (choices[0] is option A,
  letter prefix removed); null otherwise.
- math_verify: math-verify's verdict (see below).

Sources. Each is read from a checkout of the repository at the commit below, or from a bare
mirror of it (a git directory: files are then read with `git show <commit>:<path>`). To fetch:
    git clone https://github.com/<repo> DIR && git -C DIR checkout <commit>

  key           repo @ commit                                          license
  gaokao-bench  OpenLMLab/GAOKAO-Bench @ 6dbb24f8d8439041e5431c4c184a582182a6ce9c
                                                                       Apache-2.0 (LICENSE)
                Results/gpt_4_0314_obj/gpt-4-0314_2010-2022_Math_{I,II}_MCQs.json
                Results/gpt_4_0314_sub/gpt-4-0314_2010-2022_Math_{I,II}_Fill-in-the-Blank.json
                GPT-4 (gpt-4-0314) on Chinese college-entrance (gaokao) mathematics, in
                Chinese; the prompt asks for "【解析】 ... <eoe> 【答案】 ... <eoa>".
                MCQs (4 options, written into the question as "A. ..." lines; choices
                parsed from them): response "model_output", gold "standard_answer"[0];
                GAOKAO_MCQ_N drawn per file. Fill-in-the-blank: response "model_output",
                gold "standard_answer" (LaTeX in $..$, sometimes Chinese text or several
                blanks); every one whose gold has at most GAOKAO_FILL_MAX_GOLD characters.
  gaokao-2026   iamyb/llm-gaokao-math-eval @ 7b58eaf4574046c73e49cd75590dd4e30bfe3adf
                                                                       MIT (LICENSE)
                eval/results/**/2026_gaokao_math_quanguo1*.json (every distinct blob)
                The 2026 national gaokao mathematics paper I (14 questions: single- and
                multiple-answer choice, fill-in) answered in Chinese by recent open models
                run locally (Qwen3.5/3.6/3.8 at several quantizations, gemma-4, DeepSeek-V4-
                Flash, Muse-Glimmer, Ternary-Bonsai) with "put the final answer in \\boxed{}";
                response: task_states.cases[*]["response"] (the final text, without the
                separate "reasoning_content"); gold: "expected" (several letters for a
                multiple-answer question); choices parsed from the prompt. Distinct responses
                only; GAOKAO_2026_N drawn.
  faithful-cot  veronica320/Faithful-COT @ 301784317c99cf348cfad92a1b3e8810900e095b
                                                                       MIT (LICENSE)
                output_dir/<data>/test/<model>_<prompt>/predictions.jsonl, gold from
                data/<data>/test.jsonl (matched by "id")
                Chain-of-thought ("COT"), least-to-most ("LtM") and answer-only ("standard")
                prompting of gpt-4, gpt-3.5-turbo, text-davinci-002/003 and code-davinci-001/002
                on GSM8K, SVAMP, MultiArith, ASDiv (numbers; gold after "####" where the data
                file has it; ASDiv rows whose gold is a list are left out) and AQuA
                (multiple choice, 5 options); response: "completion". FAITHFUL_N per data set,
                drawn from all (model, prompt) files of it pooled.
  rereading     Tebmer/Rereading-LLM-Reasoning @ 0dbad50be663c2ea8c46334c2f9a086980d3e318
                                                                       Apache-2.0 (LICENSE.txt)
                results/<file> for the files in REREADING_FILES
                Re2 ("read the question again") outputs of text-davinci-003, gpt-3.5-turbo and
                gpt-4o-mini on GSM8K and SVAMP, methods "vanilla", "cot" and "ps" (plan-and-
                solve; "pal" program outputs are left out); response: "<method>"
                ["generation"][0]; gold: "target". REREADING_N per file.

Verdicts. math-verify (pip install "math-verify[antlr4_13_2]"; 0.9.0 when written, the version
real_responses.jsonl records): verify(parse(gold), parse(response)), the gold wrapped in `$..$`
when it has no `$`, `\\boxed` or `\\(` (build_checker_set.py's mv_verdicts); an exception is
False. rlvr's verdicts are not stored: tests/heldout_responses.rs computes them.

Usage (python3.11, standard library; math-verify in the same interpreter):
    python3 -m venv /tmp/mv-venv && /tmp/mv-venv/bin/pip install "math-verify[antlr4_13_2]==0.9.0"
    /tmp/mv-venv/bin/python scripts/tasks/build_heldout_responses.py \\
        --gaokao-bench DIR --gaokao-2026 DIR --faithful-cot DIR --rereading DIR
Deterministic: one fixed seed per source, rows in source order before drawing.
"""
import argparse
import hashlib
import json
import pathlib
import random
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/heldout_responses.jsonl"
PROBLEM_CHARS = 2000
MAX_RESPONSE = 6000  # characters; longer responses are cut in the middle
HEAD = 1500

COMMITS = {
    "gaokao-bench": "6dbb24f8d8439041e5431c4c184a582182a6ce9c",
    "gaokao-2026": "7b58eaf4574046c73e49cd75590dd4e30bfe3adf",
    "faithful-cot": "301784317c99cf348cfad92a1b3e8810900e095b",
    "rereading": "0dbad50be663c2ea8c46334c2f9a086980d3e318",
}
GAOKAO_MCQ_N = 80
GAOKAO_FILL_MAX_GOLD = 60
GAOKAO_2026_N = 150
FAITHFUL_MODELS = ["gpt4", "gpt-3.5-turbo", "text003", "text002", "code002", "code001"]
FAITHFUL_PROMPTS = ["COT", "LtM", "standard"]
FAITHFUL_N = {"GSM8K": 110, "SVAMP": 60, "MultiArith": 50, "ASDiv": 60, "AQUA": 60}
# (file under results/, model, data set, methods)
REREADING_FILES = [
    ("gsm_topp1.0_temp0.0_majority1_20230828_141934.jsonl", "text-davinci-003", "gsm8k", ["vanilla", "cot"]),
    ("gsm_topp1.0_temp0.0_majority1_20230828_142302.jsonl", "text-davinci-003-re2", "gsm8k", ["vanilla", "cot"]),
    ("gsm_topp1.0_temp0.0_majority1_20230828_1157.jsonl", "gpt-3.5-turbo", "gsm8k", ["vanilla", "cot"]),
    ("gsm_topp1.0_temp0.0_majority1_20230828_1200.jsonl", "gpt-3.5-turbo-re2", "gsm8k", ["vanilla", "cot"]),
    ("gsm_gpt-4o-mini-2024-07-18_topp1.0_temp0.0_majority1_readtimes1_20240926_221724.jsonl",
     "gpt-4o-mini", "gsm8k", ["vanilla", "cot"]),
    ("gsm_gpt-4o-mini-2024-07-18_topp1.0_temp0.0_majority1_readtimes2_20240926_222057.jsonl",
     "gpt-4o-mini-re2", "gsm8k", ["vanilla", "cot"]),
    ("gsm_gpt-4o-mini-2024-07-18_topp1.0_temp0.0_majority1_readtimes1_20240929_233258.jsonl",
     "gpt-4o-mini", "gsm8k", ["ps"]),
    ("svamp_gpt-4o-mini-2024-07-18_topp1.0_temp0.0_majority1_readtimes1_20240926_223003.jsonl",
     "gpt-4o-mini", "svamp", ["vanilla", "cot", "ps"]),
]
REREADING_N = 30


class Repo:
    """A source repository: a checkout (files read from disk) or a bare git directory."""

    def __init__(self, path, commit):
        self.path = pathlib.Path(path)
        self.commit = commit
        self.bare = not (self.path / ".git").exists() and (self.path / "objects").is_dir()
        if not self.bare:
            head = subprocess.run(["git", "-C", str(self.path), "rev-parse", "HEAD"],
                                  capture_output=True, text=True)
            if head.returncode == 0 and head.stdout.strip() != commit:
                print(f"warning: {self.path} is at {head.stdout.strip()}, not {commit}",
                      file=sys.stderr)

    def _git(self, *args):
        base = ["git", "--git-dir", str(self.path)] if self.bare else ["git", "-C", str(self.path)]
        return subprocess.run(base + ["-c", "core.quotepath=off", *args], capture_output=True,
                              check=True).stdout

    def read_bytes(self, rel):
        if self.bare:
            return self._git("show", f"{self.commit}:{rel}")
        return (self.path / rel).read_bytes()

    def read_text(self, rel):
        return self.read_bytes(rel).decode("utf-8")

    def jsonl(self, rel):
        return [json.loads(l) for l in self.read_text(rel).splitlines() if l.strip()]

    def files(self, under):
        """(path, blob id) of every file under `under` at the commit, in path order."""
        out = []
        for line in self._git("ls-tree", "-r", "-z", self.commit, under).split(b"\0"):
            if line:
                meta, path = line.decode("utf-8").split("\t", 1)
                out.append((path, meta.split()[2]))
        return sorted(out)


def cut(resp):
    """The response, cut in the middle when longer than MAX_RESPONSE characters."""
    if len(resp) <= MAX_RESPONSE:
        return resp
    tail = MAX_RESPONSE - HEAD
    n = len(resp) - HEAD - tail
    return f"{resp[:HEAD]}\n[... {n} characters cut ...]\n{resp[-tail:]}"


def usable(resp):
    return isinstance(resp, str) and resp.strip() != ""


def row(source, problem, gold, response, choices=None):
    return {"source": source, "problem": (problem or "")[:PROBLEM_CHARS], "gold": gold.strip(),
            "response": cut(response), "choices": choices}


def draw(rows, n, seed):
    """n rows at random (seed), output in source order; all of them when there are fewer."""
    rng = random.Random(seed)
    idx = list(range(len(rows)))
    rng.shuffle(idx)
    return [rows[i] for i in sorted(idx[:n])]


def options_abcd(text, letters="ABCD"):
    """The options written into a question as 'A. x  B. y ...' (the last such run), or None."""
    pat = r"(?<![A-Za-z\\])%s\s*[\.．、]"
    ends = len(text)
    pos = []
    for letter in reversed(letters):
        ms = [m for m in re.finditer(pat % letter, text[:ends])]
        if not ms:
            return None
        pos.append(ms[-1])
        ends = ms[-1].start()
    pos.reverse()
    opts = []
    for i, m in enumerate(pos):
        end = pos[i + 1].start() if i + 1 < len(pos) else len(text)
        opts.append(text[m.end():end].strip())
    return opts


# ---------------------------------------------------------------------------------------
# sources

def gaokao_bench(repo):
    out = []
    for j, part in enumerate(["Math_I", "Math_II"]):
        rel = f"Results/gpt_4_0314_obj/gpt-4-0314_2010-2022_{part}_MCQs.json"
        rows = []
        for e in json.loads(repo.read_text(rel))["example"]:
            opts = options_abcd(e["question"])
            if opts is None or len(e["standard_answer"]) != 1 or not usable(e["model_output"]):
                continue
            rows.append(row(f"gaokao-bench:{part}_MCQs:{e['index']}", e["question"],
                            e["standard_answer"][0], e["model_output"], opts))
        out += draw(rows, GAOKAO_MCQ_N, 1001 + j)
    for part in ["Math_I", "Math_II"]:
        rel = f"Results/gpt_4_0314_sub/gpt-4-0314_2010-2022_{part}_Fill-in-the-Blank.json"
        for e in json.loads(repo.read_text(rel))["example"]:
            gold = e["standard_answer"]
            if isinstance(gold, list):
                gold = "".join(gold)
            gold = gold.strip()
            if not gold or len(gold) > GAOKAO_FILL_MAX_GOLD or not usable(e["model_output"]):
                continue
            out.append(row(f"gaokao-bench:{part}_Fill-in-the-Blank:{e['index']}", e["question"],
                           gold, e["model_output"]))
    return out


def gaokao_2026(repo):
    rows, seen_blobs, seen_resp = [], set(), set()
    for path, blob in repo.files("eval/results"):
        if not re.search(r"/2026_gaokao_math_quanguo1(_\d+)?\.json$", path) or blob in seen_blobs:
            continue
        seen_blobs.add(blob)
        d = json.loads(repo.read_text(path))
        run = path.split("/")[2]  # the experiment directory
        variant = re.search(r"quanguo1(_\d+)?\.json$", path).group(1) or "_0"
        for tid, c in sorted(d["task_states"]["cases"].items()):
            resp = c.get("response")
            if not usable(resp):
                continue
            key = hashlib.sha256(resp.encode("utf-8")).hexdigest()
            if key in seen_resp:
                continue
            seen_resp.add(key)
            prompt = c["prompt"]
            gold = str(c["expected"])
            choices = options_abcd(prompt) if re.fullmatch(r"[A-D]+", gold) else None
            rows.append(row(f"gaokao-2026:{run}:{d['model_name']}{variant}:{tid}", prompt, gold,
                            resp, choices))
    return draw(rows, GAOKAO_2026_N, 2001)


def faithful_cot(repo):
    out = []
    for j, (data, n) in enumerate(FAITHFUL_N.items()):
        golds = {}
        for r in repo.jsonl(f"data/{data}/test.jsonl"):
            golds[r["id"]] = r
        rows = []
        for model in FAITHFUL_MODELS:
            for prompt in FAITHFUL_PROMPTS:
                rel = f"output_dir/{data}/test/{model}_{prompt}/predictions.jsonl"
                for p in repo.jsonl(rel):
                    g = golds.get(p["id"])
                    if g is None or not usable(p.get("completion")):
                        continue
                    choices = None
                    if data == "AQUA":
                        gold = g["answer"]
                        choices = [re.sub(r"^\s*\(?[A-E]\)\s*", "", o) for o in g["options"]]
                    elif isinstance(g["answer"], list):
                        continue  # ASDiv questions with several answers
                    else:
                        gold = str(g["answer"]).split("####")[-1].strip()
                    question = g["question"].split("\n# Answer option:")[0]
                    rows.append(row(f"faithful-cot:{data}:{model}_{prompt}:{p['id']}", question,
                                    gold, p["completion"], choices))
        out += draw(rows, n, 3001 + j)
    return out


def rereading(repo):
    out = []
    for j, (rel, model, data, methods) in enumerate(REREADING_FILES):
        rows = []
        for r in repo.jsonl(f"results/{rel}"):
            for m in methods:
                gen = (r.get(m) or {}).get("generation") or []
                if not gen or not usable(gen[0]):
                    continue
                t = r["target"]
                gold = str(int(t)) if isinstance(t, float) and t.is_integer() else str(t)
                rows.append(row(f"rereading:{data}:{model}:{r['id']}:{m}", r["input"], gold,
                                gen[0]))
        out += draw(rows, REREADING_N, 4001 + j)
    return out


# ---------------------------------------------------------------------------------------
# verdicts

def mv_verdicts(rows):
    """math-verify's verdicts, by the convention of the checker fixture (build_checker_set.py's
    mv_verdicts: the gold wrapped in `$..$` when it has no delimiter)."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from build_checker_set import mv_verdicts as checker_set_mv_verdicts

    out = checker_set_mv_verdicts(rows)
    if out and out[0] is None:
        sys.exit("math-verify is not importable: install it in this interpreter (see --help)")
    return out



def write_set(builders, a, commits):
    """Runs each `(key, builder)` on its source (`a.<key>` at `commits[key]`), adds math-verify's
    verdict to every row and writes the rows, numbered, to `a.out` as JSON lines."""
    rows = []
    for key, fn in builders:
        got = fn(Repo(getattr(a, key.replace("-", "_")), commits[key]))
        print(f"{key}: {len(got)}", file=sys.stderr)
        rows += got
    for p, mv in zip(rows, mv_verdicts(rows)):
        p["math_verify"] = mv
    with open(a.out, "w") as f:
        for i, p in enumerate(rows):
            f.write(json.dumps({"id": i, **p}, ensure_ascii=False) + "\n")
    print(f"{len(rows)} responses -> {a.out}", file=sys.stderr)

def run_builder(doc, commits, builders, out):
    """The command line of a held-out builder: one `--<key> DIR` per source in `commits`
    (a checkout or bare git dir), `--out` (default `out`); then `write_set`. `doc` is the
    builder's docstring (its first line the description, the rest the help's epilog)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=doc)
    for key in commits:
        ap.add_argument(f"--{key}", required=True, metavar="DIR",
                        help=f"checkout or bare git dir of the {key} source")
    ap.add_argument("--out", default=str(out))
    write_set(builders, ap.parse_args(), commits)


def main():
    builders = [("gaokao-bench", gaokao_bench), ("gaokao-2026", gaokao_2026),
                ("faithful-cot", faithful_cot), ("rereading", rereading)]
    run_builder(__doc__, COMMITS, builders, OUT)


if __name__ == "__main__":
    main()
