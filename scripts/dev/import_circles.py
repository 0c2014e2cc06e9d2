#!/usr/bin/env python3
"""Lists the import circles between the modules of each crate under crates/: module A names
module B (`use super::b`, `crate::x::b::f`, `super::b::f` outside comments and unit tests) and
B, directly or through others, names A. A parent naming its own child (or the reverse) is not
counted: a folder's mod.rs re-exports its files.

    python3 scripts/dev/import_circles.py [CRATES_DIR]

Prints one line per circle (crate, modules) and the count; exits 1 when there is one.
python/tests/test_repository.py runs it.
"""
import os
import re
import sys
from collections import defaultdict


def module_path(src, path):
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def references(text):
    text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
    text = re.sub(r"//[^\n]*", "", text)
    return re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", text)


def graph_of(crates):
    graph = defaultdict(set)
    for crate in sorted(os.listdir(crates)):
        src = os.path.join(crates, crate, "src")
        if not os.path.isdir(src):
            continue
        files = {}
        for d, _, names in os.walk(src):
            for n in names:
                if n.endswith(".rs"):
                    p = os.path.join(d, n)
                    files[module_path(src, p)] = p
        for m, p in files.items():
            with open(p, encoding="utf-8") as f:
                refs = references(f.read())
            for ref in refs:
                parts = ref.split("::")
                base, i = list(m), 0
                if parts[0] == "crate":
                    base, i = [], 1
                elif parts[0] == "self":
                    i = 1
                while i < len(parts) and parts[i] == "super":
                    base, i = base[:-1], i + 1
                path = base + parts[i:]
                for k in range(len(path), 0, -1):
                    t = tuple(path[:k])
                    if t in files:
                        related = t == m or m[: len(t)] == t or t[: len(m)] == m
                        if not related:
                            graph[(crate, m)].add((crate, t))
                        break
    return graph


def circles(graph):
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def main():
    crates = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "crates")
    found = circles(graph_of(crates))
    for comp in found:
        print(comp[0][0], " <-> ".join(sorted("/".join(m) for _, m in comp)))
    print(f"{len(found)} import circles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
