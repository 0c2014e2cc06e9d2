#!/usr/bin/env bash
# The Python half of the test suite (README: `cargo test --workspace && scripts/test-python.sh`):
# builds the `rlvr` wheel from python/ (maturin, the crates/rlvr-py PyO3 crate), installs it into
# a virtual environment with the real TRL and verl, and runs python/tests with pytest
# (TRL on a tiny random Qwen2 checkpoint on the CPU; verl's loss and advantage modules).
#
# The environment lives in ~/.cache/rlvr-py (RLVR_PY_CACHE) and is reused on the same machine
# (scripts/python-env.sh: reinstalled only when python/requirements-test.txt changes). The
# wheel's Rust build has its own target directory there too, so a second run only relinks what
# changed. The real model (scripts/real-model.sh, SmolLM2-135M-Instruct) is converted once into
# ~/.cache/rlvr-models and named to the tests by RLVR_REAL_MODEL (CI=true: a test that needs it
# fails when it is missing, elsewhere it skips).
# Needs python3 (>= 3.9, with venv), a C compiler and the network on the first run (PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${RLVR_PY_CACHE:-$HOME/.cache/rlvr-py}"
venv="$cache/venv"
scripts/python-env.sh
# the real model (converted once, cached): RLVR_REAL_MODEL names it to the tests
if [ -z "${RLVR_REAL_MODEL:-}" ]; then
    RLVR_REAL_MODEL="$(scripts/real-model.sh)" || { echo "test-python: the real model could not be fetched"; RLVR_REAL_MODEL=; }
    export RLVR_REAL_MODEL
fi
t1=$(date +%s)

# The wheel, built the way `pip install ./python` builds it (maturin, release profile, abi3),
# with a target directory that survives between runs.
user_target_dir="${CARGO_TARGET_DIR:-}"
export CARGO_TARGET_DIR="$cache/target"
rm -rf "$cache/wheels"
(cd python && "$venv/bin/maturin" build --release --locked -o "$cache/wheels" --interpreter "$venv/bin/python")
"$venv/bin/pip" install -q --force-reinstall --no-deps "$cache"/wheels/rlvr-*.whl
t2=$(date +%s)
wheel=$(ls "$cache"/wheels/rlvr-*.whl)
echo "test-python: wheel $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) built in $((t2 - t1)) s"

# `rlvr verify` for the fixture comparison: the binary `cargo test --workspace` just built, else build it.
if [ -z "${RLVR_BIN:-}" ]; then
    if [ -n "$user_target_dir" ]; then export CARGO_TARGET_DIR="$user_target_dir"; else unset CARGO_TARGET_DIR; fi
    RLVR_BIN="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/rlvr"
    # `cargo build -p rlvr-cli` alone resolves features for that package only and rebuilds
    # some dependencies: use the binary the workspace's tests built when it is there.
    [ -x "$RLVR_BIN" ] || cargo build -q -p rlvr-cli
    export RLVR_BIN
fi

# run from python/tests so that `import rlvr` is the installed wheel, not the source directory
cd python/tests
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@" .
echo "test-python: pytest took $(( $(date +%s) - t2 )) s"
