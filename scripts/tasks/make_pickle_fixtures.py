#!/usr/bin/env python3
"""Writes crates/rlvr-tasks/tests/fixtures/pickles.json: byte streams made by Python's own
`pickle.dumps` (never by rlvr), for the tests of rlvr's single-str pickle reader
(crates/rlvr-tasks/src/pickle.rs). Each entry: `name`, the stream as `hex` (or, for
the large ones, `zlib_b64`: base64 of its zlib compression, to keep the file small), and either
`str` (the string the reader must return; `repeat` + `times` for the large one) or `refuse` (a
word the reader's error must contain).

Nothing here is unpickled by rlvr; the exploit entry is only dumped (its __reduce__ names
os.system, which pickle.dumps records without calling).

Run: python3 scripts/tasks/make_pickle_fixtures.py   (standard library only; not run in CI)
"""
import json
import os
import pathlib
import pickle
import zlib
import base64

OUT = pathlib.Path(__file__).resolve().parents[2] / "crates/rlvr-tasks/tests/fixtures/pickles.json"


class Exploit:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


texts = {
    "ascii": "hello",
    "unicode": "h\u00e9llo \u2713 \U0001d538\n\ttab",
    "empty": "",
    # LiveCodeBench's private tests: one JSON string
    "tests_json": json.dumps([{"input": "3\n1 2 3\n", "output": "6\n", "testtype": "stdin"}]),
    # 300 bytes: BINUNICODE inside a FRAME at protocol 4+
    "medium": "x" * 300,
}
LARGE = ("0123456789", 7000)  # 70,000 bytes: written outside any frame at protocol 4+

entries = []
for proto in range(2, 6):
    for name, text in texts.items():
        entries.append({"name": f"{name}-p{proto}", "hex": pickle.dumps(text, protocol=proto).hex(), "str": text})
    data = pickle.dumps(LARGE[0] * LARGE[1], protocol=proto)
    entries.append({
        "name": f"large-p{proto}",
        "zlib_b64": base64.b64encode(zlib.compress(data)).decode(),
        "repeat": LARGE[0],
        "times": LARGE[1],
    })

refusals = [
    ("list-p2", pickle.dumps(["a"], protocol=2), "EMPTY_LIST"),
    ("list-p4", pickle.dumps(["a"], protocol=4), "EMPTY_LIST"),
    ("int-p2", pickle.dumps(5, protocol=2), "BININT1"),
    ("int-p5", pickle.dumps(123456, protocol=5), "BININT"),
    ("bytes-p4", pickle.dumps(b"abc", protocol=4), "SHORT_BINBYTES"),
    ("tuple-of-two-p4", pickle.dumps(("a", "b"), protocol=4), "second object"),
    ("exploit-global-reduce-p2", pickle.dumps(Exploit(), protocol=2), "GLOBAL"),
    ("exploit-stack-global-reduce-p4", pickle.dumps(Exploit(), protocol=4), "second object"),
    ("protocol-0-text", pickle.dumps("abc", protocol=0), "UNICODE"),
    ("trailing-byte-p4", pickle.dumps("abc", protocol=4) + b"x", "after STOP"),
    ("two-pickles-p2", pickle.dumps("a", protocol=2) + pickle.dumps("b", protocol=2), "after STOP"),
    ("truncated-p4", pickle.dumps("abcdef", protocol=4)[:-4], "truncated"),
    ("truncated-large-p4", pickle.dumps("y" * 70000, protocol=4)[:-1000], "truncated"),
    ("no-stop-p2", pickle.dumps("abc", protocol=2)[:-1], "without STOP"),
]
for name, data, word in refusals:
    if len(data) > 4096:
        entries.append({"name": name, "zlib_b64": base64.b64encode(zlib.compress(data)).decode(), "refuse": word})
    else:
        entries.append({"name": name, "hex": data.hex(), "refuse": word})

# LiveCodeBench's encoding of private tests: base64(zlib(pickle(json string)))
lcb = json.dumps([{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}])
entries.append({
    "name": "livecodebench-private-tests",
    "base64": base64.b64encode(zlib.compress(pickle.dumps(lcb))).decode(),
    "str": lcb,
})

OUT.parent.mkdir(parents=True, exist_ok=True)
OUT.write_text(json.dumps(entries, indent=1) + "\n")
print(f"wrote {OUT} ({len(entries)} entries, {OUT.stat().st_size} bytes)")
