#!/usr/bin/env bash
# The Python half of the test suite (README: `cargo test --workspace && scripts/test-python.sh`):
# builds the `rlvr` wheel from python/ (maturin, the crates/rlvr-py PyO3 crate), installs it into
# a virtual environment with the real TRL and verl, and runs python/tests with pytest
# (TRL on a tiny random Qwen2 checkpoint on the CPU; verl's loss and advantage modules).
#
# The environment lives in ~/.cache/rlvr-py (RLVR_PY_CACHE) and is reused on the same machine:
# it is (re)installed only when python/requirements-test.txt changes. The wheel's Rust build has
# its own target directory there too, so a second run only relinks what changed.
# Needs python3 (>= 3.9, with venv), a C compiler and the network on the first run (PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${RLVR_PY_CACHE:-$HOME/.cache/rlvr-py}"
venv="$cache/venv"
reqs=python/requirements-test.txt
stamp="$venv/.rlvr-requirements"
mkdir -p "$cache"

t0=$(date +%s)
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$reqs" "$stamp"; then
    echo "test-python: installing the test environment into $venv (torch, transformers, trl, verl, maturin, pytest)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
    # verl without its dependencies: only its loss and advantage modules are imported (no Ray
    # cluster, no vLLM); the few packages they import are in the requirements file.
    "$venv/bin/pip" install -q -r "$reqs"
    "$venv/bin/pip" install -q --no-deps "$(grep -E '^# verl==' "$reqs" | sed 's/^# //')"
    cp "$reqs" "$stamp"
fi
t1=$(date +%s)
echo "test-python: environment ready in $((t1 - t0)) s"

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
