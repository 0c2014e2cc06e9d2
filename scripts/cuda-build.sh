#!/usr/bin/env bash
# Compiles the `cuda` feature (candle's CUDA backend through cudarc) without a GPU: installs the
# CUDA 13.0 compiler, headers and libraries from the Python package registry once (see
# scripts/cuda-env.sh), then builds rlvr with `--features cuda` in a target directory of its
# own, so the CPU build's cache is left alone. Called by .ci/run after the tests.
#
#   scripts/cuda-build.sh [extra cargo build args, e.g. --all-targets]
#
# Environment: CUDA_TARGET_DIR (default $RLVR_CUDA_DIR/target, outside the checkout so that CI's
# fresh clones on the same machine reuse it), RLVR_CUDA_DIR, CUDA_COMPUTE_CAP (default 90), see
# scripts/cuda-env.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fetch --quiet
# shellcheck source=scripts/cuda-env.sh
. scripts/cuda-env.sh
nvcc --version | tail -2

export CARGO_TARGET_DIR="${CUDA_TARGET_DIR:-$RLVR_CUDA_DIR/target}"
start=$(date +%s)
# the workspace's crates that take the feature: rlvr-cli pulls rlvr-train and rlvr-model
cargo build --locked -p rlvr-cli -p rlvr-train -p rlvr-model --features \
    rlvr-cli/cuda,rlvr-train/cuda,rlvr-model/cuda "$@"
echo "cuda build took $(( $(date +%s) - start )) s (target dir $CARGO_TARGET_DIR, compute cap $CUDA_COMPUTE_CAP)"
