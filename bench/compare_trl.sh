#!/usr/bin/env bash
# Side-by-side GRPO throughput: Hugging Face TRL (bench/trl/trl_grpo_bench.py, BENCH_DIR) vs
# `rlvr bench grpo`, on the same random checkpoints and the same work (8 prompts x 8 responses x
# 128 new tokens, random 0/1 rewards, token-mean loss, one optimizer step per round, f32, CPU).
# Not run by CI: it needs TRL (about 6 GB) and takes minutes per model.
#
#   bench/compare_trl.sh [MODEL ...]           # default: bench-tiny bench-small
#
# Environment:
#   TRL_VENV     venv with torch, transformers, trl, accelerate, datasets; created (pip, from
#                bench/trl/requirements.txt) when it does not exist. Default: ~/.cache/rlvr-bench/venv-trl
#   BENCH_DIR    the TRL harness (trl_grpo_bench.py, make_models.py). Default: bench/trl (README.md there)
#   OUT          models, JSON results and logs. Default: bench/out
#   ROUNDS       alternating rounds per model (each round: one TRL run, one rlvr run). Default: 3
#   STEPS        GRPO steps per run, the first a warm-up. Default: 6
#   NICE         nice level for both. Default: 0
#   RLVR_BIN     the rlvr binary to time (default: build the release binary of this checkout)
# Each round runs TRL's GRPOTrainer (--mode trl) and `rlvr bench grpo` back to back, so that
# load from other processes hits both; the medians are over all timed steps of all rounds.
# rlvr's matmul GFLOP/s (`rlvr bench matmul`) is measured in the same run, once per model.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_DIR="${BENCH_DIR:-$ROOT/bench/trl}"
TRL_VENV="${TRL_VENV:-$HOME/.cache/rlvr-bench/venv-trl}"
OUT="${OUT:-$ROOT/bench/out}"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-6}"
NICE="${NICE:-0}"
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(bench-tiny bench-small)
mkdir -p "$OUT/models" "$OUT/results"

if [ ! -x "$TRL_VENV/bin/python" ]; then
    echo "== creating $TRL_VENV (torch, transformers, trl: several GB) =="
    python3 -m venv "$TRL_VENV"
    "$TRL_VENV/bin/pip" install --quiet -r "$ROOT/bench/trl/requirements.txt"
fi
PY="$TRL_VENV/bin/python"

if [ -n "${RLVR_BIN:-}" ]; then
    RLVR="$RLVR_BIN"
else
    echo "== building rlvr (release) =="
    (cd "$ROOT" && cargo build --release -p rlvr-cli --quiet)
    RLVR="${CARGO_TARGET_DIR:-$ROOT/target}/release/rlvr"
fi

for m in "${MODELS[@]}"; do
    if [ ! -f "$OUT/models/$m/model.safetensors" ]; then
        echo "== making the checkpoints in $OUT/models =="
        "$PY" "$BENCH_DIR/make_models.py" --out "$OUT/models"
        break
    fi
done

echo "== versions =="
"$PY" -c 'import torch, transformers, trl, platform; print(f"python {platform.python_version()}, torch {torch.__version__} (threads {torch.get_num_threads()}, MKL {torch.backends.mkl.is_available()}), transformers {transformers.__version__}, trl {trl.__version__}")'
"$RLVR" --version
rustc --version
grep -m1 "model name" /proc/cpuinfo || true
echo "cores: $(nproc); rlvr binary: $RLVR"

for m in "${MODELS[@]}"; do
    MD="$OUT/models/$m"
    echo "== $m: rlvr bench matmul =="
    nice -n "$NICE" "$RLVR" bench matmul --model "$MD" --json | tee "$OUT/results/${m}_matmul.log"
    for r in $(seq 1 "$ROUNDS"); do
        echo "== $m round $r/$ROUNDS: TRL ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)) =="
        nice -n "$NICE" "$PY" "$BENCH_DIR/trl_grpo_bench.py" --model "$MD" --mode trl \
            --max-steps "$STEPS" --workdir "$OUT" --out "$OUT/results/${m}_trl_$r.json" \
            > "$OUT/results/${m}_trl_$r.log" 2>&1 || { tail -20 "$OUT/results/${m}_trl_$r.log"; exit 1; }
        grep "^TRL GRPO" "$OUT/results/${m}_trl_$r.log"
        echo "== $m round $r/$ROUNDS: rlvr ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)) =="
        nice -n "$NICE" "$RLVR" bench grpo --model "$MD" --steps "$STEPS" --seed "$r" --json \
            > "$OUT/results/${m}_rlvr_$r.log" 2>&1 || { tail -20 "$OUT/results/${m}_rlvr_$r.log"; exit 1; }
        grep "^step_seconds\|^generation_seconds\|^forward_backward" "$OUT/results/${m}_rlvr_$r.log"
    done
done

echo "== medians over all timed steps (first step of each run dropped) =="
"$PY" - "$OUT/results" "$ROUNDS" "${MODELS[@]}" <<'PYEOF'
import json, statistics, sys
res, rounds, models = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
med = statistics.median
print("| model | phase | TRL s | rlvr s | rlvr / TRL throughput |")
print("|---|---|---|---|---|")
for m in models:
    trl = {"step": [], "generation": [], "fwd+bwd": [], "optimizer": []}
    rl = {"step": [], "generation": [], "fwd+bwd": [], "optimizer": [], "old": []}
    for r in range(1, rounds + 1):
        t = json.load(open(f"{res}/{m}_trl_{r}.json"))["trl"]
        for s in t["steps"][1:]:
            p = s["phases"]
            trl["step"].append(s["seconds"])
            trl["generation"].append(p.get("transformers.generate", float("nan")))
            # TRL's forward (compute_loss) + backward
            trl["fwd+bwd"].append(p.get("compute_loss", 0.0) + p.get("backward", 0.0))
            trl["optimizer"].append(p.get("optimizer.step", float("nan")))
        lines = open(f"{res}/{m}_rlvr_{r}.log").read().splitlines()
        j = json.loads(lines[-1])
        for s in j["steps"][1:]:
            rl["step"].append(s["seconds"])
            rl["generation"].append(s["generation"])
            rl["fwd+bwd"].append(s["forward_backward"])
            rl["optimizer"].append(s["optimizer"])
    for k in ("step", "generation", "fwd+bwd", "optimizer"):
        a, b = med(trl[k]), med(rl[k])
        print(f"| {m} | {k} (n={len(trl[k])}/{len(rl[k])}) | {a:.3f} | {b:.3f} | {a / b:.2f}x |")
PYEOF
