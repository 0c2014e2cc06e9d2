#!/usr/bin/env bash
# Peak resident memory of one training forward + backward of one sequence per length T, one
# process per shape (crates/rlvr-model/examples/memory.rs), and a least-squares fit of
# peak = a + b T + c T^2 per series (of the RSS step and of the live-heap peak).
# Usage: [LAYERS=n] scripts/model/memory.sh [attn|vocab] [path] [ckpt] [T...]
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-attn}; path=${2:-generic}; ckpt=${3:-ckpt}; shift 3 || true
ts=${*:-1024 2048 4096 8192}
bin=${CARGO_TARGET_DIR:-target}/release/examples/memory
cargo build --release -q -p rlvr-model --example memory
out=$(for t in $ts; do "$bin" "$mode" "$t" "$path" "$ckpt"; done)
echo "mode T path ckpt base_MiB peak_MiB step_MiB heap_MiB secs"
echo "$out"
echo "$out" | python3 -c '
import sys
rows=[l.split() for l in sys.stdin if l.strip()]
T=[float(r[1]) for r in rows]
n=len(T)
for col, name in ((6, "step_MiB"), (7, "heap_MiB")):
  y=[float(r[col]) for r in rows]
  if n >= 3:
      # least squares y = a + b T + c T^2 (normal equations, 3x3)
      X=[[1.0,t,t*t] for t in T]
      A=[[sum(X[k][i]*X[k][j] for k in range(n)) for j in range(3)] for i in range(3)]
      v=[sum(X[k][i]*y[k] for k in range(n)) for i in range(3)]
      for i in range(3):
          p=A[i][i]
          for j in range(i+1,3):
              f=A[j][i]/p
              A[j]=[A[j][m]-f*A[i][m] for m in range(3)]; v[j]-=f*v[i]
      c=v[2]/A[2][2]; b=(v[1]-A[1][2]*c)/A[1][1]; a=(v[0]-A[0][1]*b-A[0][2]*c)/A[0][0]
      tm=T[-1]
      print(f"fit: {name} = {a:.1f} + {b*1024:.2f} per 1k tokens + {c*1024*1024:.3f} per (1k tokens)^2; at T={tm:.0f} the T^2 term is {c*tm*tm:.1f} MiB of {y[-1]:.0f}")
      for i in range(1,n):
          print(f"  {name}(T={T[i]:.0f}) / {name}(T={T[i-1]:.0f}) = {y[i]/y[i-1]:.2f}  (linear: {T[i]/T[i-1]:.0f}, quadratic: {(T[i]/T[i-1])**2:.0f})")
'
