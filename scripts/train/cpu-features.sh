#!/usr/bin/env bash
# Does the CPU's feature set change a run's numbers? Runs the same short training (5 warm-start
# steps, 1 GRPO step, 8 eval problems) natively and under qemu-user emulating other CPUs, and
# prints the sha256 of the warm-start weights of each. Not run by CI (needs qemu-user:
# `apt-get install qemu-user`; an emulated run takes minutes).
#
#   scripts/train/cpu-features.sh [CPU ...]      # default: native max SandyBridge
#
# RLVR_BIN: the rlvr binary (default: target/release/rlvr). OUT: where runs go (default: a
# temporary directory). `qemu-x86_64 -cpu help` lists the CPU models.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${RLVR_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/rlvr}"
OUT="${OUT:-$(mktemp -d)}"
CPUS=("$@")
[ ${#CPUS[@]} -gt 0 ] || CPUS=(native max SandyBridge)
EXTRA=(--set testbed.warm_start_steps=5 --set trainer.total_training_steps=1
       --set eval.n_problems=8 --set logging.progress=false)
for cpu in "${CPUS[@]}"; do
    run=(); [ "$cpu" = native ] || run=(qemu-x86_64 -cpu "$cpu")
    rm -rf "$OUT/$cpu" "$OUT/cache-$cpu"
    "${run[@]}" "$BIN" train --set trainer.runs_dir="\"$OUT\"" --set trainer.run_name="$cpu" \
        --set testbed.cache_dir="\"$OUT/cache-$cpu\"" "${EXTRA[@]}" > "$OUT/$cpu.log" 2>&1
    echo "$cpu: rc=$? warm-start weights $(sha256sum "$OUT"/cache-"$cpu"/*/model.safetensors 2>/dev/null | cut -c1-16) $(grep -o 'final loss [0-9.]*' "$OUT/$cpu.log" | head -1)"
done
