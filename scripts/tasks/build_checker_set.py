#!/usr/bin/env python3
"""Builds the answer-checker fixture: crates/rlvr-tasks/tests/fixtures/checker_set.jsonl.

Each line: {"id", "gold", "response", "label", "kind", "source", "math_verify"}.

Two parts, real material first:

1. **math-verify's own test suite** (huggingface/Math-Verify, MIT): every
   `@pytest.mark.parametrize` case of its tests whose verdict does not depend on a non-default
   option (precision, strict=False, allow_set_relation_comp), read with `ast` from the sdist:
       pip download --no-binary :all: --no-deps math-verify==0.9.0 -d /tmp/mv
       tar xzf /tmp/mv/math_verify-0.9.0.tar.gz -C /tmp/mv
   (`--mv-tests /tmp/mv/math_verify-0.9.0/tests`). Labels are the test's expected value,
   except where OVERRIDES says the test pins a quirk rather than the truth (each with why).
   Source: "math-verify:<test function>".
2. **Gold answers of the benchmarks** in the data directory (MATH-500, OlympiadBench,
   Minerva, AIME 2024/2025), chosen by shape (integer, fraction, radical, pi, tuple,
   interval, set/list, equation, matrix, degrees, text, expression). The response is the
   benchmark's own reference solution (its last box replaced) where it has one, else a
   one-line model-style ending; the answer put in it is either an equivalent rewrite of the
   gold (label true) or a near miss (label false), by construction: each rewrite applies only
   to golds of the exact shape it matches. Source: "<benchmark>:<row>".
   Plus kinds of answers that no benchmark gold shows (relations, identities, complex
   numbers, units, labels), written here by construction with near misses ("constructed").

math_verify: the verdict of math-verify (`verify(parse(gold), parse(response))`, the gold
wrapped in `$..$` when it has no `$` or box) when it is importable, else null:
    python3 -m venv ~/venv-mv && ~/venv-mv/bin/pip install math-verify
    ~/venv-mv/bin/python scripts/tasks/build_checker_set.py --mv-tests DIR [--data-dir D]

Deterministic: fixed seed, golds in file order.
"""
import argparse
import ast
import glob
import json
import os
import pathlib
import random
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/checker_set.jsonl"

# math-verify test cases whose expected value pins a behaviour of math-verify, not the truth
OVERRIDES = {
    # 1 - 1/e and 1 + 1/e differ (the test expects 1: mathrm{e} read as a symbol, both sides
    # failing the same way)
    ("$1 - \\frac{1}{\\mathrm{e}}$", "$1 + \\frac{1}{\\mathrm{e}}$"): False,
    # the response does state 9; the test pins that math-verify's inline-math pattern stops
    # at a line break
    ("$9$", "Answer $ \n 9 \n $"): True,
    ("$9$", "Answer \\( \n 9 \n \\)"): True,
    # a float print of 1/12 is an approximation, not the value: the grading policy's rule 2
    # (a rounded decimal is right only when rounding is asked or the gold itself is rounded),
    # which every hand-graded held-out set follows (docs/checker.md, "Rounded decimals")
    ("$\\frac{1}{12}$", "$0.0833333333333333$"): False,
}
# cases skipped: their verdict depends on a non-default option, or the string holds a tab
# from an unescaped "\t" in the test source
SKIP_PARAMS = {"precision", "strict", "allow_set_relation_comp"}


def mv_cases(tests_dir):
    out = []
    for f in sorted(glob.glob(os.path.join(tests_dir, "*.py"))):
        tree = ast.parse(open(f).read())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for d in fn.decorator_list:
                if not (isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "parametrize"):
                    continue
                names = [n.strip() for n in ast.literal_eval(d.args[0]).split(",")]
                try:
                    vals = ast.literal_eval(d.args[1])
                except ValueError:
                    continue
                for v in vals:
                    row = dict(zip(names, v))
                    gold, pred = row["gold"], row["pred"]
                    exp = row.get("expected", row.get("result"))
                    if any(k in row for k in SKIP_PARAMS):
                        # keep only cases whose verdict holds under the default option
                        if row.get("precision", 6) != 6 or row.get("strict", True) is not True:
                            continue
                        if "allow_set_relation_comp" in row:
                            continue
                    if "\t" in gold or "\t" in pred or "\f" in gold or "\f" in pred:
                        continue
                    label = bool(exp)
                    label = OVERRIDES.get((gold, pred), label)
                    out.append(dict(gold=gold, response=pred, label=label,
                                    kind=fn.name.removeprefix("test_"),
                                    source=f"math-verify:{fn.name}"))
    return out


# ---------------------------------------------------------------------------------------
# benchmark golds

ENDINGS = [
    "Therefore, the final answer is $\\boxed{{{a}}}$.",
    "Final Answer: The final answer is ${a}$. I hope it is correct.",
    "**Final Answer**\n\\[\n\\boxed{{{a}}}\n\\]",
    "So the answer is $\\boxed{{{a}}}$.",
    "Thus, the answer is: $\\boxed{{{a}}}$",
]


def last_boxed_span(s):
    i = s.rfind("\\boxed")
    if i < 0:
        return None
    j = s.find("{", i)
    if j < 0:
        return None
    depth = 0
    for k in range(j, len(s)):
        if s[k] == "{":
            depth += 1
        elif s[k] == "}":
            depth -= 1
            if depth == 0:
                return (j + 1, k)
    return None


def respond(solution, answer, rng):
    if solution:
        span = last_boxed_span(solution)
        if span:
            s = solution[: span[0]] + answer + solution[span[1]:]
            return s[-1500:] if len(s) > 1500 else s
    return rng.choice(ENDINGS).format(a=answer)


INT = re.compile(r"^-?\d+$")
FRAC = re.compile(r"^(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}$")
SQRT = re.compile(r"^(\d*)\\sqrt\{(\d+)\}$")
PI = re.compile(r"^(\d*)\\pi$")
DEC = re.compile(r"^-?\d+\.\d+$")
TUPLE = re.compile(r"^\\left\(\s*(.+?)\s*\\right\)$|^\((.+)\)$")
DEG = re.compile(r"^(\d+)\^\\circ$")
TEXT = re.compile(r"^\\text\{\(?([A-E])\)?\}$")


def split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return parts


def rewrites(gold, rng):
    """(answer, label, kind) variants of a gold answer, by its shape."""
    g = gold.strip().strip("$").strip()
    out = []
    if INT.match(g):
        n = int(g)
        out.append((g, True, "integer"))
        if abs(n) >= 1000:
            s = f"{n:,}"
            out.append((s, True, "integer with thousands commas"))
            out.append((s.replace(",", "{,}"), True, "integer with {,} separators"))
            out.append((s.replace(",", ", "), False, "comma list, not a number"))
        out.append((f"{n}\\text{{ units}}", True, "integer with unit text"))
        out.append((str(n + 1), False, "off by one"))
        if n != 0:
            out.append((str(n * 10), False, "times ten"))
        out.append((f"{n}.5", False, "extra decimal"))
        out.append((f"{n}, {n + 2}", False, "two answers for one"))
        out.append((f"x = {n}", True, "label x="))
        if n > 0:
            out.append((f"-{n}", False, "sign flipped"))
    elif FRAC.match(g):
        sign, a, b = FRAC.match(g).groups()
        a, b = int(a), int(b)
        out.append((f"{sign}{a}/{b}", True, "fraction as a/b"))
        out.append((f"{sign}\\dfrac{{{2 * a}}}{{{2 * b}}}", True, "unreduced dfrac"))
        den = b
        for p in (2, 5):
            while den % p == 0:
                den //= p
        if den == 1:
            out.append((f"{sign}{a / b:g}", True, "terminating decimal"))
        else:
            out.append((f"{sign}{round(a / b, 2)}", False, "decimal rounded to 2 places"))
            # rounded past the places a question would ask for, still an approximation (rule 2)
            out.append((f"{sign}{a / b:.7g}", False, "decimal rounded to 7 significant digits"))
        if a != b:
            out.append((f"{sign}\\frac{{{b}}}{{{a}}}", False, "reciprocal"))
        out.append((f"{sign}\\frac{{{a + 1}}}{{{b}}}", False, "numerator off by one"))
    elif SQRT.match(g):
        c, r = SQRT.match(g).groups()
        c = int(c or 1)
        out.append((f"\\sqrt{{{c * c * int(r)}}}", True, "radical unsimplified"))
        if len(r) == 1:  # \sqrt 13 is sqrt(1)*3 in LaTeX: only one-digit radicands
            out.append((f"{c}\\sqrt {r}" if c != 1 else f"\\sqrt {r}", True, "radical without braces"))
        out.append((f"{c}\\sqrt{{{int(r) + 1}}}", False, "other radicand"))
        out.append((f"{c + 1}\\sqrt{{{r}}}", False, "other coefficient"))
        out.append((f"{c * (int(r) ** 0.5):.2f}", False, "decimal rounded to 2 places"))
    elif PI.match(g):
        c = PI.match(g).group(1)
        c = int(c or 1)
        out.append((f"\\pi \\cdot {c}" if c != 1 else "\\pi", True, "pi reordered"))
        out.append((f"{c * 3.14:.2f}", False, "pi as 3.14"))
        out.append((f"{c + 1}\\pi", False, "other multiple of pi"))
    elif DEC.match(g):
        out.append((g + "0", True, "decimal with trailing zero"))
        d = g.split(".")[1]
        bump = f"{float(g) + 10 ** -len(d):.{len(d)}f}"
        out.append((bump, False, "last digit off"))
    elif DEG.match(g):
        n = int(DEG.match(g).group(1))
        out.append((str(n), True, "degrees without the sign"))
        out.append((f"{n}^{{\\circ}}", True, "degrees braced"))
        out.append((f"{n + 1}^\\circ", False, "other angle"))
    elif TEXT.match(g):
        c = TEXT.match(g).group(1)
        out.append((f"({c})", True, "choice letter in parentheses"))
        other = "B" if c != "B" else "C"
        out.append((f"\\text{{({other})}}", False, "other choice"))
    elif (m := TUPLE.match(g)) and len(split_top(m.group(1) or m.group(2))) >= 2:
        items = split_top(m.group(1) or m.group(2))
        out.append(("(" + ", ".join(items) + ")", True, "tuple without left/right"))
        out.append(("\\left( " + ",".join(items) + " \\right)", True, "tuple with left/right"))
        if items[0] != items[1]:
            sw = [items[1], items[0]] + items[2:]
            out.append(("(" + ", ".join(sw) + ")", False, "tuple swapped"))
        out.append(("(" + ", ".join(items[:-1]) + ")" if len(items) > 2 else "(" + items[0] + ")", False, "tuple missing an entry"))
    elif g.startswith("[") or g.startswith("(") and ("\\infty" in g or "\\cup" in g):
        out.append((g.replace(" ", ""), True, "interval without spaces"))
        # change a bracket at a finite end (at an infinite end the set is the same)
        if not g.startswith("(-\\infty") and not g.startswith("[-\\infty"):
            out.append((("(" if g[0] == "[" else "[") + g[1:], False, "interval bracket changed"))
        elif g.endswith("]") or g.endswith(")"):
            out.append((g[:-1] + (")" if g[-1] == "]" else "]"), False, "interval bracket changed"))
    elif "\\begin{pmatrix}" in g:
        out.append((g.replace("pmatrix", "bmatrix"), True, "matrix pmatrix as bmatrix"))
        inner = g.replace("\\begin{pmatrix}", "").replace("\\end{pmatrix}", "")
        out.append(("\\left[\\begin{array}{" + "c" * (inner.split("\\\\")[0].count("&") + 1) + "}" + inner + "\\end{array}\\right]", True, "matrix as array"))
        m2 = re.sub(r"(-?\d+)", lambda mm: str(int(mm.group(1)) + 1), g, count=1)
        if m2 != g:
            out.append((m2, False, "matrix entry changed"))
    elif "," in g and not any(c in g for c in "()[]\\{}=") and not re.match(r"^\d{1,3}(,\d{3})+$", g):
        items = split_top(g)
        if len(items) >= 2:
            out.append((", ".join(reversed(items)), True, "list reordered"))
            out.append(("\\{" + ", ".join(items) + "\\}", True, "list as a set"))
            out.append((", ".join(items[:-1]), False, "list missing an element"))
    elif re.match(r"^[a-zA-Z]\s*=", g) or re.match(r"^[a-z]\([a-z]\)\s*=", g):
        rhs = g.split("=", 1)[1].strip()
        out.append((rhs, True, "label dropped"))
        out.append((g.replace(" ", ""), True, "equation without spaces"))
        out.append((g + "+1", False, "equation plus one"))
    elif re.search(r"[a-z]", g) and not re.search(r"[a-z]\.[a-z]", g) and not re.search(r"\\(text|mathrm|begin|cup|cap|in)\b", g) and len(g) < 60:
        out.append(("\\left(" + g + "\\right)", True, "expression in parentheses"))
        out.append((g + "+1", False, "expression plus one"))
        out.append(("2\\left(" + g + "\\right)", False, "expression doubled"))
    return out


def load_golds(data_dir):
    rows = []
    def jl(p):
        return [json.loads(l) for l in open(os.path.join(data_dir, p))]
    for i, r in enumerate(jl("math500/test.jsonl")):
        rows.append(("math500", i, r["answer"], r.get("solution")))
    for i, r in enumerate(jl("olympiadbench/test.jsonl")):
        if len(r["final_answer"]) == 1:
            sol = r["solution"][0] if r.get("solution") else None
            rows.append(("olympiadbench", i, r["final_answer"][0], None if sol is None else sol + "\n\nThe answer is $\\boxed{X}$."))
    for i, r in enumerate(jl("minerva_math/test.jsonl")):
        span = last_boxed_span(r["solution"])
        if span:
            rows.append(("minerva", i, r["solution"][span[0]:span[1]], r["solution"]))
    for i, r in enumerate(jl("aime24/test.jsonl")):
        rows.append(("aime24", i, str(r["answer"]), r.get("solution")))
    for i, r in enumerate(jl("aime25/train.jsonl")):
        rows.append(("aime25", i, str(r["answer"]), None))
    return rows


def bench_pairs(data_dir, rng, per_kind=6):
    pairs, seen = [], {}
    for src, i, gold, sol in load_golds(data_dir):
        for ans, label, kind in rewrites(gold, rng):
            key = (src.split(":")[0], kind)
            if seen.get(key, 0) >= per_kind:
                continue
            seen[key] = seen.get(key, 0) + 1
            pairs.append(dict(gold=gold, response=respond(sol, ans, rng), label=label,
                              kind=kind, source=f"{src}:{i}"))
    return pairs


# ---------------------------------------------------------------------------------------
# constructed: kinds of answers that no benchmark gold shows (true and near-miss pairs)

CONSTRUCTED = [
    # relations
    ("x \\geq 5", "x >= 5", True), ("x \\geq 5", "x \\ge 5", True), ("x\\ge 5", "5 \\le x", True),
    ("x \\geq 5", "x > 5", False), ("x \\geq 5", "x \\leq 5", False), ("x < 3", "x \\lt 3", True),
    ("y > -2", "y \\gt -2", True), ("y > -2", "-2 < y", True), ("y > -2", "y > 2", False),
    ("x \\neq 3", "x != 3", True), ("x \\neq 3", "x \\ne 3", True), ("x \\neq 3", "x = 3", False),
    ("t \\le 4", "4 \\geq t", True), ("t \\le 4", "t \\geq 4", False),
    ("-1 < x < 2", "(-1, 2)", True), ("-1 < x < 2", "[-1, 2)", False), ("-1 \\le x \\le 2", "[-1,2]", True),
    ("0 < f(x) < 1", "(0,1)", True), ("x > 3", "(3, \\infty)", True), ("x \\geq 3", "(3, \\infty)", False),
    ("x \\le -1", "(-\\infty, -1]", True), ("x \\in [2, 5)", "[2,5)", True), ("x \\in [2, 5)", "(2,5)", False),
    ("\\cos(x)=\\frac{3}{7}", "\\sin(x)=\\frac{3}{7}", False), ("\\cos(x)=\\frac{3}{7}", "\\frac{3}{7}", False),
    ("\\tan \\theta = 2", "\\tan \\theta = 2", True), ("\\tan \\theta = 2", "\\cot \\theta = 2", False),
    ("3x - 2y = 6", "y = \\frac{3}{2}x - 3", True), ("3x - 2y = 6", "y = \\frac{3}{2}x + 3", False),
    ("x^2+y^2=4", "2x^2+2y^2=8", True), ("x^2+y^2=4", "x^2+y^2=2", False),
    # numbers
    ("32349", "32, 349", False), ("32349", "32{,}349", True), ("14916", "14{,}916", True),
    ("1234567", "1,234,567", True), ("1234567", "1,234,568", False), ("1,234", "1234", True),
    ("4210_{7}", "4210_7", True), ("4210_{7}", "4201_7", False), ("101_2", "101_{2}", True), ("101_2", "101_3", False),
    ("\\frac{3}{2}", "1 1/2", True), ("\\frac{5}{2}", "2\\frac12", True), ("\\frac{5}{2}", "2\\frac13", False),
    ("1\\frac{1}{2}", "1.5", True), ("1\\frac{1}{2}", "0.5", False),
    ("25\\%", "25", True), ("25\\%", "0.25", True), ("25\\%", "2.5", False), ("0.25", "25", False),
    # a rounded decimal answer approximates an exact gold (rule 2); a rounded gold stands for the
    # exact value that rounds to it (rule 10)
    ("\\frac{1}{3}", "0.333333", False), ("\\frac{1}{3}", "0.33333", False), ("\\frac{1}{3}", "0.33", False), ("\\pi", "3.14", False), ("\\pi", "3.14159", False),
    ("0.333333", "\\frac{1}{3}", True), ("3.14159", "\\pi", True), ("1.414214", "\\sqrt{2}", True),
    ("\\sqrt{2}", "1.41", False), ("\\sqrt{2}", "1.414214", False), ("2^{100}", "1267650600228229401496703205376", True),
    ("2^{100}", "1267650600228229401496703205377", False), ("10^{20}", "100000000000000000000", True),
    # units and words
    ("10", "10\\text{ cm}^{2}", True), ("10", "10 square units", True), ("125", "125\\textnormal{ miles}", True),
    ("125", "126\\textnormal{ miles}", False), ("6\\text{ m}", "6", True), ("4 \\mathrm{~cm}", "4", True),
    ("30^\\circ", "30", True), ("30^\\circ", "30 degrees", True), ("30^\\circ", "60^\\circ", False),
    ("\\$18.90", "18.90", True), ("\\$18.90", "18.9", True), ("\\$18.90", "18.09", False),
    ("\\text{Tuesday}", "Tuesday", True), ("\\text{Tuesday}", "\\text{Monday}", False),
    # labels
    ("(p,q)=(3,2)", "(3,2)", True), ("(p,q)=(3,2)", "(2,3)", False), ("|AB|=1", "1", True), ("|AB|=1", "2", False),
    ("V_1:V_2=11:21", "11:21", True), ("V_1:V_2=11:21", "21:11", False), ("k = 7", "7", True), ("7", "n=7", True),
    ("f(x) = 2x+1", "2x+1", True), ("f(x) = 2x+1", "2x-1", False), ("7 = 11a + c", "11a+c", False),
    ("a+b=5", "5", False), ("x = 4", "y = 4", False),
    # several answers
    ("\\{1,2,3\\}", "\\boxed{1}, \\boxed{2} and \\boxed{3}", True), ("\\{1,2,3\\}", "\\boxed{1}, \\boxed{2}", False),
    ("\\pm 2021", "\\{-2021, 2021\\}", True), ("\\pm 2021", "2021", False), ("\\pm 2021", "-2021, 2021", True),
    ("\\{a, 2b\\}", "\\{2b, a\\}", True), ("\\{a, 2b\\}", "\\{2a, b\\}", False), ("-2, 1", "x = 1 \\text{ or } x = -2", True),
    ("3, 5", "5 and 3", True), ("3, 5", "3 and 4", False), ("3, 5", "3", False), ("1 \\pm \\sqrt{3}", "1+\\sqrt3, 1-\\sqrt3", True),
    ("1 \\pm \\sqrt{3}", "1+\\sqrt3", False), ("(1,2), (3,4)", "(3,4), (1,2)", True), ("(1,2), (3,4)", "(1,2), (4,3)", False),
    # identities and complex numbers
    ("\\sec x", "\\frac{1}{\\cos x}", True), ("\\sec x", "\\frac{1}{\\sin x}", False), ("\\tan^2 y+1", "\\sec^2 y", True),
    ("\\tan^2 y+1", "\\csc^2 y", False), ("i(2-i)", "1+2i", True), ("i(2-i)", "2+i", False), ("\\sin(90^\\circ-x)", "\\cos x", True),
    ("\\sin(90^\\circ-x)", "\\sin x", False), ("\\frac{1+i}{1-i}", "i", True), ("\\frac{1+i}{1-i}", "-i", False),
    ("(1+i)^2", "2i", True), ("e^{i\\pi}", "-1", True), ("\\sin 2x", "2\\sin x\\cos x", True), ("\\sin 2x", "2\\sin x", False),
    ("\\cos^2 x - \\sin^2 x", "\\cos 2x", True), ("\\log_2 8", "3", True), ("\\ln(e^2)", "2", True), ("\\ln 6", "\\ln 2 + \\ln 3", True),
    ("\\ln 6", "\\ln 2 \\cdot \\ln 3", False), ("\\arctan 1", "\\frac{\\pi}{4}", True), ("\\arcsin \\frac12", "\\frac{\\pi}{3}", False),
    ("\\sqrt{x^2}", "|x|", True), ("\\sqrt{x^2}", "x", False), ("(x+1)^2", "x^2+2x+1", True), ("(x+1)^2", "x^2+x+1", False),
    ("\\frac{x^2-1}{x-1}", "x+1", True), ("\\binom{5}{2}", "10", True), ("5!", "120", True), ("5!", "24", False),
    # matrices
    ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}", True),
    ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\left[\\begin{array}{cc} 1 & 2 \\\\ 3 & 4 \\end{array}\\right]", True),
    ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\begin{pmatrix} 1 & 3 \\\\ 2 & 4 \\end{pmatrix}", False),
    ("\\begin{pmatrix} 1 \\\\ -2 \\end{pmatrix}", "\\begin{pmatrix} 1 \\\\ -2 \\end{pmatrix}", True),
    ("\\begin{pmatrix} 1 \\\\ -2 \\end{pmatrix}", "\\begin{pmatrix} -2 \\\\ 1 \\end{pmatrix}", False),
    ("\\begin{pmatrix} \\frac12 & 0 \\\\ 0 & 1 \\end{pmatrix}", "\\begin{pmatrix} 0.5 & 0 \\\\ 0 & 1 \\end{pmatrix}", True),
    # extraction
    ("34", "Final Answer: The largest $n$ is 34.", True), ("34", "Final Answer: The largest $n$ is 35.", False),
    ("12", "The answer is 12. I hope it is correct.", True), ("12", "The answer is 13. I hope it is correct 12.", False),
]


def constructed_pairs():
    out = []
    for g, r, label in CONSTRUCTED:
        resp = r if "\\boxed" in r or "Answer" in r or "answer" in r else f"Therefore, the answer is $\\boxed{{{r}}}$."
        out.append(dict(gold=g, response=resp, label=label, kind="constructed", source="constructed"))
    return out


def mv_verdicts(pairs):
    try:
        from math_verify import parse, verify
    except ImportError:
        return [None] * len(pairs)
    out = []
    for p in pairs:
        g = p["gold"]
        if "$" not in g and "\\boxed" not in g and "\\(" not in g:
            g = f"${g}$"
        try:
            out.append(bool(verify(parse(g), parse(p["response"]))))
        except Exception:
            out.append(False)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=os.environ.get("RLVR_DATA_DIR"), required="RLVR_DATA_DIR" not in os.environ,
                    help="local data directory (default: $RLVR_DATA_DIR)")
    ap.add_argument("--mv-tests", required=True, help="tests/ of the math-verify sdist")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    if not a.data_dir:
        ap.error("no data directory: pass --data-dir or set RLVR_DATA_DIR")
    rng = random.Random(10)
    pairs = mv_cases(a.mv_tests) + bench_pairs(a.data_dir, rng) + constructed_pairs()
    for p, mv in zip(pairs, mv_verdicts(pairs)):
        p["math_verify"] = mv
    with open(a.out, "w") as f:
        for i, p in enumerate(pairs):
            row = {"id": i, **p}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    n_true = sum(p["label"] for p in pairs)
    print(f"{len(pairs)} pairs ({n_true} true, {len(pairs) - n_true} false) -> {a.out}")


if __name__ == "__main__":
    main()
