#!/usr/bin/env bash
# The Python test environment (torch, transformers, TRL, verl, SkyRL, maturin, pytest:
# python/requirements-test.txt) in ~/.cache/rlvr-py/venv (RLVR_PY_CACHE), reused on the same
# machine: (re)installed only when python/requirements-test.txt changes. Used by
# scripts/test-python.sh and scripts/real-model.sh. Needs python3 (>= 3.9, with venv) and, on
# the first run, the package registry (PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${RLVR_PY_CACHE:-$HOME/.cache/rlvr-py}"
venv="$cache/venv"
reqs=python/requirements-test.txt
stamp="$venv/.rlvr-requirements"
mkdir -p "$cache"

t0=$(date +%s)
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$reqs" "$stamp"; then
    echo "python-env: installing the test environment into $venv (torch, transformers, trl, verl, skyrl, maturin, pytest)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --upgrade pip
    # verl and SkyRL without their dependencies: only their loss and advantage modules are
    # imported (no Ray cluster, no vLLM, no jax); the few packages they import are in the
    # requirements file, the engines themselves on its "# name==version" lines.
    "$venv/bin/pip" install -q -r "$reqs"
    # shellcheck disable=SC2046 # one word per pin
    "$venv/bin/pip" install -q --no-deps $(grep -E '^# [A-Za-z0-9_.-]+==' "$reqs" | sed 's/^# //')
    cp "$reqs" "$stamp"
fi
echo "python-env: environment ready in $(( $(date +%s) - t0 )) s"
