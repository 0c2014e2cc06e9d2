#!/usr/bin/env bash
# Determinism check of the testbed run on this machine: the same command twice, then with
# RAYON_NUM_THREADS=1 and =2. Each run recomputes its warm start (own cache directory). Prints
# per run: the sha256 of the final weights, the warm start's final loss, the held-out accuracy
# before/after, and which runs have bit-identical weights and metrics (timings left out).
# Usage: [RUNS="a b t1 t2"] scripts/train/determinism.sh [RLVR_BINARY] [extra --set overrides...]
# RUNS picks the runs (a, b: plain; tN: RAYON_NUM_THREADS=N), default a b t1 t2.
# Default: the full default run (about 4 minutes each on 2 idle cores); for a quick check pass e.g.
#   --set trainer.total_training_steps=10 --set testbed.warm_start_steps=60
set -euo pipefail
BIN=${1:-target/release/rlvr}
shift || true
OUT=$(mktemp -d)
run() { # name, env...
  local name=$1; shift
  env "$@" "$BIN" train --set trainer.runs_dir="\"$OUT\"" --set trainer.run_name="$name" \
    --set testbed.cache_dir="\"$OUT/cache-$name\"" --set logging.progress=false "${EXTRA[@]}" \
    > "$OUT/$name.log" 2>&1
  local w; w=$(sha256sum "$OUT/$name/checkpoint/model.safetensors" | cut -c1-16)
  # metrics without timing fields
  python3 - "$OUT/$name/metrics.jsonl" > "$OUT/$name.metrics" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    print(json.dumps({k: v for k, v in d.items() if not (k.startswith("time") or k.endswith("_per_s") or k in ("secs", "wall_s"))}, sort_keys=True))
PY
  local m; m=$(sha256sum "$OUT/$name.metrics" | cut -c1-16)
  local ws; ws=$(grep -o "final loss [0-9.]*" "$OUT/$name.log" | head -1)
  local acc; acc=$(grep -o "mean@4 sampled): [0-9.]* before -> [0-9.]* after" "$OUT/$name.log" | head -1)
  echo "$name: weights $w metrics $m; warm start $ws; $acc"
}
EXTRA=("$@")
for r in ${RUNS:-a b t1 t2}; do
  case $r in
    a|b) run "$r" ;;
    t[0-9]*) run "$r" RAYON_NUM_THREADS="${r#t}" ;;
    *) echo "unknown run $r" >&2; exit 2 ;;
  esac
done
echo "runs in $OUT"
