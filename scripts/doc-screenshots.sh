#!/usr/bin/env bash
# The screenshots of docs/watching.md: a default testbed run written to TensorBoard, shown by
# TensorBoard in headless Chromium, and its `rlvr report` page.
#
#   scripts/doc-screenshots.sh [WORK_DIR]
#
# Needs: target/release/rlvr (or RLVR=path), a Python with tensorboard (TENSORBOARD=path to
# its `tensorboard` script; `pip install tensorboard` into any venv), Chromium (CHROMIUM,
# default /usr/bin/chromium). Everything is served on 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
rlvr=${RLVR:-target/release/rlvr}
tensorboard=${TENSORBOARD:-tensorboard}
chromium=${CHROMIUM:-/usr/bin/chromium}
port=${PORT:-6123}
out=docs/img

run=$work/runs/testbed-balanced-s0
if [ ! -f "$run/metrics.jsonl" ]; then
  "$rlvr" train --set "trainer.logger=['console','tensorboard']" --set "trainer.runs_dir=$work/runs"
fi
"$rlvr" report --out "$work/report" "$run"

shot() { # URL FILE WIDTH HEIGHT
  "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d)" --hide-scrollbars --window-size="$3,$4" \
    --virtual-time-budget=15000 --screenshot="$2" "$1" 2>/dev/null
}

"$tensorboard" --logdir "$work/runs" --host 127.0.0.1 --port "$port" >"$work/tensorboard.log" 2>&1 &
tb=$!
trap 'kill $tb 2>/dev/null || true' EXIT
for _ in $(seq 60); do
  curl -sf "http://127.0.0.1:$port/" >/dev/null && break
  sleep 1
done
# the curves rlvr adds (rlvr/...) beside verl's reward, length and accuracy cards
filter="critic/score/mean|response_length/mean|val-core|rlvr/positive_share|rlvr/pos_neg_gap$|rlvr/response_length/cv"
shot "http://127.0.0.1:$port/?smoothing=0&tagFilter=$(python3 -c 'import sys,urllib.parse;print(urllib.parse.quote(sys.argv[1]))' "$filter")#timeseries" \
  "$out/tensorboard.png" 1400 1500
shot "file://$work/report/report.html" "$out/report.png" 1100 1600
echo "wrote $out/tensorboard.png $out/report.png"
