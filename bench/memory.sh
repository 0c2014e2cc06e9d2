#!/usr/bin/env bash
# Peak resident memory of one training forward + backward of one sequence per length T, one
# process per shape (bench/examples/memory.rs), and least-squares fits per series
# (of the RSS step and of the live-heap peak): linear a + b T against quadratic a + c T^2 (their
# rms residuals), and a + b T + c T^2 with the size of its T^2 term.
# Usage: [LAYERS=n] bench/memory.sh [attn|vocab] [path] [ckpt] [T...]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-attn}; path=${2:-generic}; ckpt=${3:-ckpt}; shift 3 || true
ts=${*:-1024 2048 4096 8192}
bin=${CARGO_TARGET_DIR:-target}/release/examples/memory
cargo build --release -q -p rlvr-bench --example memory
out=$(for t in $ts; do "$bin" "$mode" "$t" "$path" "$ckpt"; done)
echo "mode T path ckpt base_MiB peak_MiB step_MiB heap_MiB secs"
echo "$out"
echo "$out" | python3 -c '
import sys
rows=[l.split() for l in sys.stdin if l.strip()]
T=[float(r[1]) for r in rows]
n=len(T)

def lstsq(X, y):
    """least squares coefficients of y ~ X (normal equations, Gaussian elimination)"""
    k=len(X[0])
    A=[[sum(X[r][i]*X[r][j] for r in range(n)) for j in range(k)] for i in range(k)]
    v=[sum(X[r][i]*y[r] for r in range(n)) for i in range(k)]
    for i in range(k):
        for j in range(i+1,k):
            f=A[j][i]/A[i][i]
            A[j]=[A[j][m]-f*A[i][m] for m in range(k)]; v[j]-=f*v[i]
    c=[0.0]*k
    for i in reversed(range(k)):
        c[i]=(v[i]-sum(A[i][m]*c[m] for m in range(i+1,k)))/A[i][i]
    rms=(sum((y[r]-sum(c[i]*X[r][i] for i in range(k)))**2 for r in range(n))/n)**0.5
    return c, rms

for col, name in ((6, "step_MiB"), (7, "heap_MiB")):
  y=[float(r[col]) for r in rows]
  tm=T[-1]
  if n >= 3:
      # linear a + b T against quadratic a + c T^2 (two parameters each), then both terms
      (a1,b1),r1=lstsq([[1.0,t] for t in T], y)
      (a2,c2),r2=lstsq([[1.0,t*t] for t in T], y)
      print(f"fit: {name} linear    = {a1:.1f} + {b1*1024:.2f} per 1k tokens: rms residual {r1:.1f} MiB")
      print(f"fit: {name} quadratic = {a2:.1f} + {c2*1024*1024:.3f} per (1k tokens)^2: rms residual {r2:.1f} MiB")
      if n >= 4:
          (a,b,c),r3=lstsq([[1.0,t,t*t] for t in T], y)
          print(f"fit: {name} = {a:.1f} + {b*1024:.2f} per 1k tokens + {c*1024*1024:.3f} per (1k tokens)^2 (rms residual {r3:.1f} MiB); at T={tm:.0f} the T^2 term is {c*tm*tm:.1f} MiB of {y[-1]:.0f}")
  for i in range(1,n):
      print(f"  {name}(T={T[i]:.0f}) / {name}(T={T[i-1]:.0f}) = {y[i]/y[i-1]:.2f}  (linear: {T[i]/T[i-1]:.0f}, quadratic: {(T[i]/T[i-1])**2:.0f})")
'
