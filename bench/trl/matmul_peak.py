#!/usr/bin/env python
"""The f32 matrix-product ceiling of this machine, as torch (and numpy, when installed) reach it.

    python matmul_peak.py [--threads 2] [--reps 5] [--quick] [--out FILE]

For each shape (M x K) times (K x N): one warm-up call, then the best of --reps timings of a loop
sized to about --target-seconds; GFLOP/s = 2 M N K / seconds per product. torch is timed both as
torch.mm(A, B) and as F.linear(x, W) (x W^T, what nn.Linear runs); numpy as np.matmul.

Shapes: square 256 to 2048; Qwen2.5-0.5B-sized products (hidden 896, MLP 4864) over 4,096
tokens; and the benchmark models' own: their training products over 8,960 rows (64 sequences
x 140 tokens) and their 64-row decode products. The best of these is the ceiling that rlvr's
`rlvr bench matmul` figures and TRL's step are read against (BENCHMARKS.md).

Threads: --threads goes to torch.set_num_threads and to OMP_NUM_THREADS, MKL_NUM_THREADS and
OPENBLAS_NUM_THREADS, set before torch and numpy load their libraries.
Writes --out (default bench/out/results/matmul_peak.json) and prints a summary.
"""
import argparse
import contextlib
import io
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

SQUARE = [256, 384, 512, 768, 1024, 1536, 2048]
TRANSFORMER = [(4096, 896, 896), (4096, 896, 128), (4096, 896, 4864), (4096, 4864, 896)]  # (M, K, N)
BENCH_MODELS = [
    # bench-tiny and bench-small training products, 8,960 rows
    (8960, 256, 256), (8960, 256, 704), (8960, 704, 256), (8960, 256, 512),
    (8960, 512, 512), (8960, 512, 1408), (8960, 1408, 512), (8960, 512, 4096),
    # decode products, 64 rows
    (64, 256, 704), (64, 512, 1408), (64, 512, 4096),
]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--target-seconds", type=float, default=0.2, help="length of one timed loop")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "out", "results", "matmul_peak.json"))
    ap.add_argument("--quick", action="store_true", help="every third shape only")
    return ap.parse_args()


def best_gflops(product, flops, reps, target_seconds):
    """Best GFLOP/s over `reps` loops of `product`, each loop about `target_seconds` long."""
    product()  # warm-up
    begin = time.perf_counter()
    product()
    one = max(time.perf_counter() - begin, 1e-6)
    calls = max(1, int(target_seconds / one))
    best = float("inf")
    for _ in range(reps):
        begin = time.perf_counter()
        for _ in range(calls):
            product()
        best = min(best, (time.perf_counter() - begin) / calls)
    return flops / best / 1e9, best


def machine_info(torch, np, threads):
    info = {"python": sys.version.split()[0], "torch": torch.__version__, "threads": threads,
            "numpy": np.__version__ if np is not None else None, "os_cpu_count": os.cpu_count(),
            "torch_parallel_info": torch.__config__.parallel_info()}
    if np is not None:
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer):
                np.show_config()  # which BLAS numpy runs
            info["numpy_config"] = buffer.getvalue()
        except Exception as e:  # numpy's config printing differs between versions
            info["numpy_config"] = repr(e)
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
        info["cpu_model"] = next(l.split(":", 1)[1].strip() for l in lines if l.startswith("model name"))
        flags = next(l.split(":", 1)[1].split() for l in lines if l.startswith("flags"))
        info["cpu_simd_flags"] = [x for x in flags if x.startswith(("avx", "fma", "amx"))]
    except (OSError, StopIteration):
        pass
    return info


def main():
    args = parse_args()
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    # only now: the BLAS libraries read their thread counts when they load
    import torch
    import torch.nn.functional as F
    try:
        import numpy as np
    except ImportError:
        np = None

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    shapes = ([("square", (n, n, n)) for n in SQUARE] + [("transformer", s) for s in TRANSFORMER]
              + [("bench", s) for s in BENCH_MODELS])
    if args.quick:
        shapes = shapes[::3]

    rows = []
    for kind, (m, k, n) in shapes:
        flops = 2.0 * m * n * k
        a, b, w, c = torch.randn(m, k), torch.randn(k, n), torch.randn(n, k), torch.empty(m, n)
        row = {"kind": kind, "M": m, "K": k, "N": n}
        row["torch_mm_gflops"], row["torch_mm_s"] = best_gflops(
            lambda: torch.mm(a, b, out=c), flops, args.reps, args.target_seconds)
        row["torch_linear_gflops"], row["torch_linear_s"] = best_gflops(
            lambda: F.linear(a, w), flops, args.reps, args.target_seconds)
        line = (f"{kind:11s} {m:5d}x{k:5d}x{n:5d}  torch.mm {row['torch_mm_gflops']:7.1f}  "
                f"F.linear {row['torch_linear_gflops']:7.1f}")
        if np is not None:
            an, bn, cn = a.numpy(), b.numpy(), np.empty((m, n), dtype=np.float32)
            row["numpy_gflops"], row["numpy_s"] = best_gflops(
                lambda: np.matmul(an, bn, out=cn), flops, args.reps, args.target_seconds)
            line += f"  numpy {row['numpy_gflops']:7.1f}"
        rows.append(row)
        print(line + "  GFLOP/s", flush=True)

    def fastest(key, kinds=None):
        candidates = [r for r in rows if key in r and (kinds is None or r["kind"] in kinds)]
        r = max(candidates, key=lambda r: r[key])
        return {"gflops": r[key], "shape": f"{r['M']}x{r['K']}x{r['N']}"}

    summary = {"torch_mm_max": fastest("torch_mm_gflops"), "torch_linear_max": fastest("torch_linear_gflops"),
               "torch_mm_max_square": fastest("torch_mm_gflops", {"square"}),
               "torch_mm_max_transformer": fastest("torch_mm_gflops", {"transformer"})}
    if np is not None:
        summary["numpy_max"] = fastest("numpy_gflops")
    out = {"info": machine_info(torch, np, torch.get_num_threads()), "summary": summary, "rows": rows,
           "reps": args.reps, "target_seconds": args.target_seconds}
    out_path = os.path.normpath(args.out)
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(out, f, indent=2)
    print(json.dumps(summary, indent=1))
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
