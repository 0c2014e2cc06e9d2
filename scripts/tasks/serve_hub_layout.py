#!/usr/bin/env python3
"""Serves a directory written by make_hub_layout.py as a loopback Hugging Face hub, for a manual
check of the dataset presets end to end (docs/data.md, "Checking the hub readers"):

  python3 scripts/tasks/serve_hub_layout.py --root DIR --port 8765 &
  HF_ENDPOINT=http://127.0.0.1:8765 HF_HUB_CACHE=$(mktemp -d) \\
      rlvr train --config configs/dapo17k-qwen3-1.7b.toml --dry-run

Answers `GET`/`HEAD /datasets/<owner>/<name>/resolve/<revision>/<file>` from
`DIR/datasets/<owner>/<name>/<file>` with the headers rlvr's hub client reads: `ETag`,
`X-Repo-Commit` (the revision when it is a 40-hex commit, else a fixed commit), `Content-Length`,
and `Range: bytes=a-[b]` (206 with `Content-Range`). Binds 127.0.0.1 only. Standard library only.
"""
import argparse
import http.server
import pathlib
import re

BRANCH_COMMIT = "0123456789abcdef0123456789abcdef01234567"


def make_handler(root):
    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self, body):
            m = re.fullmatch(r"/datasets/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)", self.path.split("?")[0])
            path = root / "datasets" / m.group(1) / m.group(2) / m.group(4) if m else None
            if path is None or ".." in m.group(4).split("/") or not path.is_file():
                self.send_response(404)
                self.send_header("X-Error-Code", "EntryNotFound")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            rev = m.group(3)
            commit = rev if re.fullmatch(r"[0-9a-f]{40}", rev) else BRANCH_COMMIT
            st = path.stat()
            size = st.st_size
            start, end = 0, size - 1
            rng = self.headers.get("Range", "")
            ranged = rng.startswith("bytes=")
            if ranged:
                a, _, b = rng[6:].partition("-")
                start = int(a or 0)
                end = min(int(b), size - 1) if b else size - 1
                if start >= size:
                    self.send_response(416)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
            self.send_response(206 if ranged else 200)
            self.send_header("ETag", f'"{st.st_size:x}-{st.st_mtime_ns:x}"')
            self.send_header("X-Repo-Commit", commit)
            self.send_header("Content-Length", str(end - start + 1))
            if ranged:
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.end_headers()
            if body:
                with open(path, "rb") as f:
                    f.seek(start)
                    left = end - start + 1
                    while left > 0:
                        chunk = f.read(min(left, 1 << 20))
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        left -= len(chunk)

        def do_GET(self):
            self.answer(True)

        def do_HEAD(self):
            self.answer(False)

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True, help="directory holding datasets/<owner>/<name>/<file>")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    a = ap.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(pathlib.Path(a.root)))
    print(f"serving {a.root} at http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
