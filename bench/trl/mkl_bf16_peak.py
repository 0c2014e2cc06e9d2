#!/usr/bin/env python
"""MKL's f32 and bf16 matrix products on one thread: what a bf16 product path through MKL's
`cblas_gemm_bf16bf16f32` (bf16 operands, f32 accumulation and output) would gain over f32 on
this CPU, and how far its result is from float64.

    python mkl_bf16_peak.py LIBMKL_RT [--size 1024] [--reps 5]

LIBMKL_RT: MKL's single dynamic library (pip's `mkl` package puts `libmkl_rt.so.3` in the
environment's `lib/`). Needs numpy. MKL is set to one thread (`MKL_Set_Num_Threads(1)`), as rlvr
runs each library (one call per thread). The operands are uniform in [0, 1), rounded to bf16 by
round-to-nearest-even; GFLOP/s = 2 n^3 / best of --reps; the error is the largest absolute
difference from the float64 product of the f32 operands, over the largest entry.
"""
import argparse
import ctypes
import time

import numpy as np


def bf16(x):
    """f32 array -> bf16 bits (uint16), round to nearest even."""
    u = x.view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("library")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    lib = ctypes.CDLL(args.library)
    lib.MKL_Set_Num_Threads(1)
    n = args.size
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    ptr = ctypes.c_void_p
    sig = [ctypes.c_int] * 6 + [ctypes.c_float, ptr, ctypes.c_int, ptr, ctypes.c_int,
                                ctypes.c_float, ptr, ctypes.c_int]
    for f in (lib.cblas_sgemm, lib.cblas_gemm_bf16bf16f32):
        f.argtypes = sig

    def rate(f, x, y):
        best = float("inf")
        for _ in range(args.reps + 1):  # the first is a warm-up
            t = time.perf_counter()
            # row-major (101), no transposes (111)
            f(101, 111, 111, n, n, n, 1.0, x.ctypes.data, n, y.ctypes.data, n, 0.0, c.ctypes.data, n)
            best = min(best, time.perf_counter() - t)
        return 2 * n**3 / best / 1e9

    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = lambda: float(np.abs(c - ref).max() / np.abs(ref).max())
    f32 = rate(lib.cblas_sgemm, a, b)
    f32_err = err()
    h = rate(lib.cblas_gemm_bf16bf16f32, bf16(a), bf16(b))
    h_err = err()
    print(f"MKL sgemm, 1 thread, {n}^3: {f32:.1f} GFLOP/s, max error {f32_err:.2e}")
    print(f"MKL gemm_bf16bf16f32, 1 thread, {n}^3: {h:.1f} GFLOP/s, max error {h_err:.2e}")


if __name__ == "__main__":
    main()
