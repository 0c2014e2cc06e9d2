#!/usr/bin/env bash
# Soak: 1,000 GRPO steps of the tiny testbed (one layer of width 32, 4 prompts x 4 responses,
# no warm start, no evaluation, a checkpoint every 100 steps) with the process's resident memory
# (VmRSS) sampled every 100 steps. Prints "step rss_kib" lines and the growth from step 100 to
# the end. Usage: scripts/train/soak.sh [RLVR_BINARY] [STEPS]
set -euo pipefail
BIN=${1:-target/release/rlvr}
STEPS=${2:-1000}
DIR=$(mktemp -d)
"$BIN" train --set trainer.runs_dir="\"$DIR\"" --set trainer.run_name=soak \
  --set testbed.hidden_size=32 --set testbed.num_hidden_layers=1 --set testbed.num_attention_heads=2 \
  --set testbed.intermediate_size=64 --set trainer.total_training_steps="$STEPS" \
  --set trainer.train_batch_size=4 --set algorithm.ppo_mini_batch_size=4 \
  --set rollout.num_generations=4 --set rollout.max_response_length=48 \
  --set testbed.warm_start_steps=0 --set trainer.save_freq=100 --set eval.test_freq=0 \
  --set eval.n_problems=8 --set logging.progress=false --set logging.print_freq=0 \
  > "$DIR/out.log" 2>&1 &
PID=$!
METRICS="$DIR/soak/metrics.jsonl"
next=100
while kill -0 "$PID" 2>/dev/null; do
  steps=$( (grep -c '"kind":"train"' "$METRICS" 2>/dev/null || true) | tail -1)
  steps=${steps:-0}
  if [ "$steps" -ge "$next" ]; then
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status" 2>/dev/null || echo 0)
    echo "$steps $rss"
    next=$((next + 100))
  fi
  sleep 0.5
done
wait "$PID"
echo "done: $(grep -c '"kind":"train"' "$METRICS") train lines; log $DIR/out.log"
