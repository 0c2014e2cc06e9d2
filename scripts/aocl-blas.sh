#!/usr/bin/env bash
# AMD's AOCL-BLAS as a user gets it from the package registry: the PyPI package `aoclda`
# (5.3.0.1, AMD's AOCL Data Analytics) ships AOCL-BLAS 5.3 (`libblis-mt`, with its bf16 GEMM
# `aocl_gemm_bf16bf16f32of32` and `cblas_sgemm`) and its OpenMP runtime in the wheel's
# `aoclda.libs` directory, renamed by auditwheel. The wheel is downloaded without its
# dependencies, checked against its pinned SHA-256, and only that directory is unpacked, in a
# virtual environment's layout (ENV/lib/python3.11/site-packages/aoclda.libs), so that rlvr's
# library search finds it exactly as in a user's environment with `VIRTUAL_ENV=ENV`
# (crates/rlvr-model/src/cpu/blas_choice.rs). Used by .ci/run to test that search and AOCL's
# calling convention.
#
#   scripts/aocl-blas.sh         # prints ENV (cached: a second run is instant); on a machine
#                                # other than x86-64 Linux prints nothing (no wheel for it)
#
# Cache: RLVR_AOCL_CACHE (default ~/.cache/rlvr-aocl). Written under a temporary name and renamed.
set -euo pipefail

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "aocl-blas: no AOCL wheel for $(uname -s)-$(uname -m)" >&2
    exit 0
fi
version=5.3.0.1
# the cp311 wheel: the libraries in aoclda.libs do not depend on Python's version
wheel=aoclda-$version-cp311-cp311-manylinux_2_28_x86_64.whl
sha256=44d692c89574470a9eac72caf1f743026238d232560a05fb6a39be65c3303b5a
cache="${RLVR_AOCL_CACHE:-$HOME/.cache/rlvr-aocl}"
env="$cache/aoclda-$version"
if [ -f "$env/.complete" ]; then
    echo "$env"
    exit 0
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.partial.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# pip from the Python test environment (scripts/python-env.sh) where it exists: a system python3
# may have no pip module
py="${RLVR_PY_CACHE:-$HOME/.cache/rlvr-py}/venv/bin/python"
[ -x "$py" ] || py=python3
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_28_x86_64 "aoclda==$version" -d "$tmp/wheel" >&2
echo "$sha256  $tmp/wheel/$wheel" | sha256sum -c --quiet - >&2
site="$tmp/env/lib/python3.11/site-packages"
mkdir -p "$site"
python3 - "$tmp/wheel/$wheel" "$site" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if name.startswith("aoclda.libs/"):
            z.extract(name, sys.argv[2])
EOF
touch "$tmp/env/.complete"
rm -rf "$env"
mv "$tmp/env" "$env"
echo "$env"
