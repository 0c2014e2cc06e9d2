#!/usr/bin/env python3
"""Builds the labelled math-verifier test set: crates/rlvr-tasks/tests/fixtures/verifier_set.jsonl.

Each line: {"id", "source", "gold", "response", "label", "kind", "math_verify"}.

- gold: a gold answer taken from a benchmark in the data directory (math500, aime24, amc23,
  gsm8k, minerva_math, olympiadbench), chosen by answer shape (integers, decimals, fractions,
  radicals, pi expressions, tuples, intervals, sets/lists, text, degrees, equations, ...).
- response: a short model-style response that states an answer in one of several formats and
  positions (\\boxed{} at the end, "Answer:" line, "The answer is", "####", **Final Answer**).
- label: true when the stated answer is an equivalent rewrite of the gold answer (another
  notation, spacing, units, thousands separators, decimals for fractions, reordered sets, ...),
  false when it is a near miss (off by one, swapped fraction, other radicand, swapped tuple,
  other interval bracket, a missing element, ...). Labels hold by construction: each rewrite
  rule below is only applied to gold answers of the exact shape it matches.
- math_verify: the verdict of the Python package math-verify (`verify(parse(gold), parse(response))`)
  when it is installed, else null. Run with a venv that has it:
      python3 -m venv ~/venv-mv && ~/venv-mv/bin/pip install math-verify
      ~/venv-mv/bin/python scripts/tasks/build_verifier_set.py [--data-dir DIR]

Deterministic: a fixed seed, golds in file order.
"""
import argparse
import json
import os
import pathlib
import random
import re
from fractions import Fraction

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/rlvr-tasks/tests/fixtures/verifier_set.jsonl"

WORK = [
    "Let me work through this carefully. First, 2 + 3 = 5 and 7 - 4 = 3.",
    "We set up the equation and simplify step by step; the intermediate value 12 drops out.",
    "Consider the cases one at a time. Case 1 gives nothing new, case 2 gives the result.",
    "",
]


def fmt_response(ans, style, rng):
    work = rng.choice(WORK)
    if style == "boxed":
        return f"{work}\nTherefore, the final answer is $\\boxed{{{ans}}}$."
    if style == "answer_line":
        return f"{work}\n\nAnswer: {ans}"
    if style == "answer_is":
        return f"{work} So the answer is ${ans}$."
    if style == "hashes":
        return f"{work}\n#### {ans}"
    if style == "final_bold":
        return f"{work}\n\n**Final Answer:** $\\boxed{{{ans}}}$"
    if style == "boxed_mid":
        return f"{work} This gives $\\boxed{{{ans}}}$ as the result, which we double-check below. Indeed it works."
    raise ValueError(style)


STYLES = ["boxed", "answer_line", "answer_is", "final_bold", "boxed_mid"]

INT = re.compile(r"^-?\d+$")
DEC = re.compile(r"^-?\d+\.\d+$")
FRAC = re.compile(r"^(-?)\\frac\{(\d+)\}\{(\d+)\}$")
SQRT = re.compile(r"^(\d*)\\sqrt\{(\d+)\}$")
FRAC_SQRT = re.compile(r"^\\frac\{(\d*)\\sqrt\{(\d+)\}\}\{(\d+)\}$")
PI_MULT = re.compile(r"^(\d*)\\pi$")
PI_FRAC = re.compile(r"^\\frac\{(\d*)\\pi\}\{(\d+)\}$")
DEGREE = re.compile(r"^(\d+)\^\\circ$")
TEXT = re.compile(r"^\\text\{\(?([A-Za-z]+)\)?\}$")
EQ = re.compile(r"^([a-z])\s*=\s*(-?\d+)$")
SIMPLE = r"-?(?:\d+|\\frac\{\d+\}\{\d+\}|\\infty|\d+\.\d+)"
TUPLE = re.compile(r"^\\left\(\s*(" + SIMPLE + r")\s*,\s*(" + SIMPLE + r")\s*\\right\)$|^\(\s*(" + SIMPLE + r")\s*,\s*(" + SIMPLE + r")\s*\)$")
INTERVAL = re.compile(r"^(\\left)?([\[(])\s*(" + SIMPLE + r")\s*,\s*(" + SIMPLE + r")\s*(\\right)?([\])])$")
LIST = re.compile(r"^-?\d+(\s*,\s*-?\d+)+$")
THOUSANDS = re.compile(r"^\d{1,3}(,\d{3})+$")  # 58,500 is one number, not a list


def frac_value(s):
    m = FRAC.match(s)
    if m:
        return Fraction(int(m.group(2)), int(m.group(3))) * (-1 if m.group(1) else 1)
    return None


def terminating(fr):
    d = fr.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def dec_str(fr):
    # exact decimal of a terminating fraction
    s = f"{float(fr):.12f}".rstrip("0").rstrip(".")
    assert Fraction(s) == fr
    return s


def simple_alt(x):
    """An equivalent rewrite of a SIMPLE item."""
    m = FRAC.match(x)
    if m:
        return f"{m.group(1)}{m.group(2)}/{m.group(3)}"
    if DEC.match(x):
        return x + "0"
    return x


def simple_wrong(x):
    """A different value for a SIMPLE item."""
    if x.endswith("\\infty"):
        return "0"
    m = FRAC.match(x)
    if m:
        return f"{m.group(1)}\\frac{{{int(m.group(2)) + 1}}}{{{m.group(3)}}}"
    if DEC.match(x):
        return str(Fraction(x) + 1).replace("/", "") if False else f"{float(x) + 1:g}"
    return str(int(x) + 1)


def rewrites(gold, rng):
    """(response answer, label, kind) triples for one gold answer."""
    g = gold.strip()
    out = []
    if INT.match(g):
        n = int(g)
        out += [(f"{n}", True, "int same"), (f"{n}.0", True, "int as decimal"),
                (f"{n + 1}", False, "int off by one"), (f"{n - 1}", False, "int off by one")]
        if n != 0:
            out.append((f"{n * 10}", False, "int times ten"))
        if abs(n) >= 1000:
            out.append((f"{n:,}", True, "int thousands separators"))
            out.append((f"{n:,}".replace(",", "{,}"), True, "int latex thousands separators"))
        if n > 0:
            out.append((f"\\frac{{{2 * n}}}{{2}}", True, "int as fraction"))
            out.append((f"{n} \\text{{ units}}", True, "int with units"))
            out.append((f"-{n}", False, "int wrong sign"))
        if 10 <= n and str(n) != str(n)[::-1]:
            out.append((str(n)[::-1].lstrip("0") or "0", False, "int digits reversed"))
        return out
    if DEC.match(g):
        fr = Fraction(g)
        out += [(g + "0", True, "decimal trailing zero"), (f"{float(g) + 0.1:.6g}", False, "decimal off by 0.1")]
        if fr.denominator <= 1000:
            out.append((f"\\frac{{{fr.numerator}}}{{{fr.denominator}}}", True, "decimal as fraction"))
        if fr == int(fr):
            out.append((str(int(fr)), True, "decimal as int"))
        return out
    m = FRAC.match(g)
    if m:
        sign, a, b = m.group(1), int(m.group(2)), int(m.group(3))
        fr = frac_value(g)
        out += [(f"{sign}\\dfrac{{{a}}}{{{b}}}", True, "dfrac"),
                (f"{sign}{a}/{b}", True, "slash fraction"),
                (f"{sign}\\frac{{{2 * a}}}{{{2 * b}}}", True, "unreduced fraction"),
                (f"{sign}\\frac{{{b}}}{{{a}}}", False if a != b else True, "inverted fraction"),
                (f"{sign}\\frac{{{a}}}{{{b + 1}}}", False, "denominator off by one"),
                (f"{sign}\\frac{{{a + 1}}}{{{b}}}", False, "numerator off by one")]
        if terminating(fr):
            out.append((dec_str(fr), True, "fraction as decimal"))
        else:
            out.append((f"{float(fr):.3f}", False, "fraction rounded to 3 decimals"))
        if not sign and a > b:
            q, r = divmod(a, b)
            if r:
                out.append((f"{q}\\frac{{{r}}}{{{b}}}", True, "mixed number"))
        return [x for x in out if not (x[2] == "inverted fraction" and a == b)]
    m = SQRT.match(g)
    if m:
        k = int(m.group(1) or 1)
        r = int(m.group(2))
        out += [(f"{k if k > 1 else ''}\\sqrt{{{r}}}".replace("\\sqrt{", "\\sqrt {"), True, "radical spacing"),
                (f"\\sqrt{{{k * k * r}}}", True, "radical unsimplified"),
                (f"{k if k > 1 else ''}\\sqrt{{{r + 1}}}", False, "other radicand"),
                (f"{k + 1}\\sqrt{{{r}}}", False, "other coefficient")]
        if k > 1:
            out.append((f"{k}*{r}^{{1/2}}", True, "radical as power"))
        return out
    m = FRAC_SQRT.match(g)
    if m:
        k, r, d = m.group(1), int(m.group(2)), int(m.group(3))
        out += [(f"{k}\\sqrt{{{r}}}/{d}", True, "radical slash"),
                (f"\\frac{{{k}\\sqrt{{{r}}}}}{{{d + 1}}}", False, "radical other denominator"),
                (f"\\frac{{{k}\\sqrt{{{r + 1}}}}}{{{d}}}", False, "other radicand")]
        return out
    m = PI_MULT.match(g)
    if m:
        k = int(m.group(1) or 1)
        out += [(f"{k} \\pi" if k > 1 else "\\pi", True, "pi spacing"), (f"\\pi \\cdot {k}", True, "pi reordered"),
                (f"{k + 1}\\pi", False, "pi other coefficient"), (f"{k}", False, "pi dropped")]
        return out
    m = PI_FRAC.match(g)
    if m:
        k, d = m.group(1), int(m.group(2))
        kk = int(k or 1)
        out += [(f"{k}\\pi/{d}", True, "pi slash"), (f"\\frac{{{kk}}}{{{d}}}\\pi", True, "pi factored"),
                (f"\\frac{{{k}\\pi}}{{{d + 1}}}", False, "pi other denominator")]
        return out
    m = DEGREE.match(g)
    if m:
        n = int(m.group(1))
        out += [(f"{n}", True, "degrees dropped"), (f"{n}^{{\\circ}}", True, "degrees braces"),
                (f"{n} degrees", True, "degrees as word"), (f"{n + 1}^\\circ", False, "degrees off by one")]
        return out
    m = TEXT.match(g)
    if m:
        w = m.group(1)
        out += [(w, True, "text unwrapped"), (f"\\textbf{{{w}}}", True, "textbf")]
        if len(w) == 1:
            other = "A" if w != "A" else "B"
            out += [(f"({w})", True, "choice in parentheses"), (f"({other})", False, "other choice")]
        else:
            out.append((w + "s", False, "other word"))
        return out
    m = EQ.match(g)
    if m:
        v, n = m.group(1), int(m.group(2))
        out += [(f"{n}", True, "equation rhs only"), (f"{v} = {n}", True, "equation spacing"),
                (f"{v}={n + 1}", False, "equation off by one")]
        return out
    m = TUPLE.match(g)
    if m:
        a, b = [x for x in m.groups() if x is not None]
        out += [(f"({a}, {b})", True, "tuple without left/right"), (f"({simple_alt(a)},{simple_alt(b)})", True, "tuple items rewritten"),
                (f"({a}, {simple_wrong(b)})", False, "tuple item changed")]
        if a != b:
            out.append((f"({b}, {a})", False, "tuple swapped"))
        return out
    m = INTERVAL.match(g)
    if m:
        lo, a, b, hi = m.group(2), m.group(3), m.group(4), m.group(6)
        flip = {"(": "[", "[": "("}[lo] if "infty" not in a else lo
        out += [(f"{lo}{a},{b}{hi}", True, "interval spacing"), (f"\\left{lo} {a}, {b} \\right{hi}", True, "interval left/right")]
        if "infty" not in a:
            out.append((f"{flip}{a}, {b}{hi}", False, "interval other bracket"))
        out.append((f"{lo}{a}, {simple_wrong(b)}{hi}" if "infty" not in b else f"{lo}{simple_wrong(a)}, {b}{hi}", False, "interval other endpoint"))
        return out
    if THOUSANDS.match(g):
        n = int(g.replace(",", ""))
        return [(str(n), True, "thousands separators dropped"), (g.replace(",", "{,}"), True, "latex thousands separators"),
                (f"{n + 1:,}", False, "thousands off by one")]
    if LIST.match(g):
        items = [x.strip() for x in g.split(",")]
        rev = list(reversed(items))
        out += [(", ".join(rev), True, "list reordered"), ("\\{" + ", ".join(items) + "\\}", True, "list as set"),
                (", ".join(items[:-1]), False, "list missing an item"),
                (", ".join(items[:-1] + [str(int(items[-1]) + 1)]), False, "list item changed")]
        return out
    return out


def other_rewrites(gold):
    """Any other gold shape (expressions with variables, matrices, text, unions, ...):
    rewrites that hold for every answer. Correct: the same answer, and the same with \\dfrac,
    \\left/\\right dropped and a space after each comma. Wrong: the answer plus one."""
    g = gold.strip()
    out = [(g, True, "other: same answer")]
    alt = g.replace("\\frac", "\\dfrac").replace("\\left", "").replace("\\right", "")
    # a space after list commas, never inside a number (10,\\!080 or 1,000 stay as they are)
    alt = re.sub(r",(?!\\!|\d{3}(?!\d))(?=\S)", ", ", alt)
    if alt != g:
        out.append((alt, True, "other: dfrac, no left/right, spaces"))
    if "infty" not in g and "\\pm" not in g and "\\mp" not in g:
        out.append((f"{g}+1", False, "other: plus one"))
    return out


def golds(data_dir):
    """(source, gold) pairs, in file order."""
    d = pathlib.Path(data_dir)
    out = []
    for line in open(d / "math500/test.jsonl"):
        out.append(("math500", json.loads(line)["answer"]))
    for line in open(d / "aime24/test.jsonl"):
        out.append(("aime24", str(json.loads(line)["answer"])))
    for line in open(d / "amc23/test.jsonl"):
        out.append(("amc23", str(json.loads(line)["answer"])))
    for i, line in enumerate(open(d / "gsm8k/test.jsonl")):
        a = json.loads(line)["answer"].split("####")[-1].strip().replace(",", "")
        out.append(("gsm8k", a))
    for line in open(d / "olympiadbench/test.jsonl"):
        fa = json.loads(line)["final_answer"]
        if len(fa) == 1:
            out.append(("olympiadbench", fa[0].strip("$ ")))
    return out


def classify(g):
    for name, rx in [("thousands", THOUSANDS), ("int", INT), ("dec", DEC), ("frac", FRAC), ("sqrt", SQRT), ("frac_sqrt", FRAC_SQRT),
                     ("pi", PI_MULT), ("pi_frac", PI_FRAC), ("deg", DEGREE), ("text", TEXT), ("eq", EQ),
                     ("tuple", TUPLE), ("interval", INTERVAL), ("list", LIST)]:
        if rx.match(g.strip()):
            return name
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default=os.environ.get("RLVR_DATA_DIR"), required="RLVR_DATA_DIR" not in os.environ,
                    help="local data directory (default: $RLVR_DATA_DIR)")
    ap.add_argument("--per-shape", type=int, default=14, help="gold answers per (source, shape)")
    args = ap.parse_args()
    if not args.data_dir:
        ap.error("no data directory: pass --data-dir or set RLVR_DATA_DIR")
    rng = random.Random(20261129)

    try:
        from math_verify import parse, verify  # type: ignore
    except ImportError:
        parse = verify = None
        print("math-verify not installed: math_verify = null")

    taken = {}
    seen = set()
    rows = []
    for source, gold in golds(args.data_dir):
        shape = classify(gold)
        if (source, gold) in seen:
            continue
        if shape is None:
            if source not in ("math500", "olympiadbench") or len(gold) > 60:
                continue
            key = (source, "other")
            if taken.get(key, 0) >= args.per_shape * 4:
                continue
            taken[key] = taken.get(key, 0) + 1
            seen.add((source, gold))
            for ans, label, kind in other_rewrites(gold):
                style = rng.choice(["boxed", "final_bold", "boxed_mid"])
                rows.append({"source": source, "gold": gold, "response": fmt_response(ans, style, rng),
                             "label": label, "kind": f"{kind} [{style}]"})
            continue
        key = (source, shape)
        cap = args.per_shape if source != "math500" else args.per_shape * 2
        if taken.get(key, 0) >= cap:
            continue
        taken[key] = taken.get(key, 0) + 1
        seen.add((source, gold))
        for ans, label, kind in rewrites(gold, rng):
            style = rng.choice(STYLES + (["hashes"] if shape == "int" else []))
            resp = fmt_response(ans, style, rng)
            rows.append({"source": source, "gold": gold, "response": resp, "label": label,
                         "kind": f"{shape}: {kind} [{style}]"})

    for i, r in enumerate(rows):
        r["id"] = i
        if verify is not None:
            try:
                r["math_verify"] = bool(verify(parse(f"${r['gold']}$"), parse(r["response"])))
            except Exception as e:  # math-verify's own failure counts as "not equivalent"
                print(f"math-verify error on {i}: {e}")
                r["math_verify"] = False
        else:
            r["math_verify"] = None

    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w") as f:
        for r in rows:
            f.write(json.dumps({k: r[k] for k in ["id", "source", "gold", "response", "label", "kind", "math_verify"]}, ensure_ascii=False) + "\n")
    pos = sum(r["label"] for r in rows)
    print(f"wrote {OUT}: {len(rows)} pairs ({pos} correct, {len(rows) - pos} wrong)")
    print("shapes:", {f"{k[0]}/{k[1]}": v for k, v in sorted(taken.items())})
    if verify is not None:
        acc = sum(r["math_verify"] == r["label"] for r in rows) / len(rows)
        print(f"math-verify accuracy: {acc:.4f}")


if __name__ == "__main__":
    main()
