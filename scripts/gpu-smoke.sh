#!/usr/bin/env bash
# GPU smoke check, for one NVIDIA GPU, no network (about 8 minutes with the crates already in
# ~/.cargo/registry; see "Needs" below):
#   1. builds rlvr-model / rlvr-train with `--features cuda` (release);
#   2. runs the GPU tests (crates/rlvr-model/tests/gpu.rs, ignored by a plain cargo test): log-prob parity
#      with the CPU (f32 within 1e-4, bf16 within 0.1 nats max and 0.02 mean), gradients
#      against the CPU's, sampling on the GPU against the training forward and the CPU sampler;
#   3. 3 GRPO steps of a random Qwen2.5-0.5B-shaped policy (bf16) with 1024-token responses
#      (bench/examples/grpo_smoke.rs), printing sampling and training tokens/s,
#      and the peak GPU memory (nvidia-smi, sampled every 200 ms).
#
# Needs: the Rust toolchain and the crates of Cargo.lock (`cargo fetch` beforehand: the build
# runs offline); a CUDA toolkit with nvcc 11.4-13.4 (cudarc's range): the system's (PATH,
# $CUDA_HOME or /usr/local/cuda), else the one scripts/cuda-env.sh installs from the Python
# package registry (this needs the network once); the NVIDIA driver (libcuda.so.1).
#
#   scripts/gpu-smoke.sh [--steps N] [--response-len L]   (passed to the GRPO example)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - start ))s] $*"; }

nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader
if [ -z "${CUDA_COMPUTE_CAP:-}" ]; then
    CUDA_COMPUTE_CAP="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')"
    export CUDA_COMPUTE_CAP
fi
if ! command -v nvcc >/dev/null 2>&1; then
    for root in "${CUDA_HOME:-}" /usr/local/cuda; do
        if [ -n "$root" ] && [ -x "$root/bin/nvcc" ]; then
            export CUDA_HOME="$root" CUDA_PATH="$root" CUDA_ROOT="$root"
            export PATH="$root/bin:$PATH"
            export LD_LIBRARY_PATH="$root/lib64:$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            break
        fi
    done
fi
if ! command -v nvcc >/dev/null 2>&1; then
    # shellcheck source=scripts/cuda-env.sh
    . scripts/cuda-env.sh
fi
nvcc --version | tail -1
export CARGO_NET_OFFLINE=true
export CARGO_TARGET_DIR="${CUDA_TARGET_DIR:-$PWD/target-cuda}"
features=rlvr-model/cuda,rlvr-train/cuda

stamp "build (release, --features cuda, compute cap $CUDA_COMPUTE_CAP)"
cargo build --release -p rlvr-model -p rlvr-train -p rlvr-bench --features "$features" --tests --examples

peak_file="$(mktemp)"
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$peak_file" &
smi_pid=$!
trap 'kill $smi_pid 2>/dev/null || true' EXIT

stamp "GPU tests"
timeout 180 cargo test --release -p rlvr-model --features "$features" \
    --test gpu -- --ignored --nocapture --test-threads 1

stamp "3 GRPO steps, random Qwen2.5-0.5B shape, bf16, 1024-token responses"
timeout 300 cargo run --release -p rlvr-bench --features "$features" --example grpo_smoke -- \
    --device cuda --dtype bf16 --steps 3 --response-len 1024 "$@"

kill $smi_pid 2>/dev/null || true
peak="$(sort -n "$peak_file" | tail -1)"
stamp "done; peak GPU memory used ${peak:-?} MiB (nvidia-smi, whole device)"
