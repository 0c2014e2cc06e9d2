# Sourced (not run) by scripts/cuda-build.sh and scripts/gpu-smoke.sh: installs the CUDA
# toolkit pieces the `cuda` feature needs from the Python package registry, once, into a
# directory of its own outside the repository (reused by later runs on the same machine), and
# exports the environment that cudarc's and candle-kernels' build scripts read.
#
# Version: CUDA 13.0 (the `cuda-toolkit==13.0.2` meta-package). candle 0.11.1 uses cudarc
# 0.19.10, whose build script accepts CUDA 11.4-13.4 (SUPPORTED_CUDA_VERSIONS in its build.rs,
# read from `nvcc --version`); the registry's 12.x nvcc wheel (`nvidia-cuda-nvcc-cu12`) ships
# ptxas only, so 13.x is the only registry toolkit with nvcc, and 13.0 is the one that needs the
# oldest driver (r580) to JIT candle's PTX at run time.
#
# Linking: cudarc links the driver library (-lcuda). The wheels do not ship the driver or its
# link stub, so we generate a stub libcuda.so (soname libcuda.so.1, every cu* entry point of
# cudarc's driver bindings returning CUDA_ERROR_STUB_LIBRARY) into lib/stubs/: it is used at
# link time only; at run time the loader finds the real libcuda.so.1 of the machine's driver.
#
# Environment in: RLVR_CUDA_DIR (default $HOME/.cache/rlvr-cuda), CUDA_COMPUTE_CAP (default 90,
# an H100/H200: set it to your GPU's when building for another one).
# Environment out: CUDA_HOME, CUDA_PATH, CUDA_ROOT, PATH, LD_LIBRARY_PATH, CUDA_COMPUTE_CAP.

RLVR_CUDA_DIR="${RLVR_CUDA_DIR:-$HOME/.cache/rlvr-cuda}"
rlvr_cuda_pkgs="cuda-toolkit[nvcc,crt,nvvm,cudart,cublas,curand,nvrtc,cccl]==13.0.2"
rlvr_cuda_stamp="$RLVR_CUDA_DIR/installed-13.0.2-v1"

if [ ! -f "$rlvr_cuda_stamp" ]; then
    echo "cuda-env: installing $rlvr_cuda_pkgs into $RLVR_CUDA_DIR/venv"
    rm -rf "$RLVR_CUDA_DIR/venv"
    mkdir -p "$RLVR_CUDA_DIR"
    python3 -m venv "$RLVR_CUDA_DIR/venv"
    "$RLVR_CUDA_DIR/venv/bin/pip" install --quiet --disable-pip-version-check "$rlvr_cuda_pkgs"
fi

CUDA_HOME="$(echo "$RLVR_CUDA_DIR"/venv/lib/python3*/site-packages/nvidia/cu13)"
if [ ! -x "$CUDA_HOME/bin/nvcc" ]; then
    echo "cuda-env: no nvcc under $CUDA_HOME (delete $RLVR_CUDA_DIR to reinstall)" >&2
    return 1 2>/dev/null || exit 1
fi

if [ ! -f "$rlvr_cuda_stamp" ]; then
    # unversioned names for the linker (the wheels ship only libX.so.N)
    for lib in "$CUDA_HOME"/lib/lib{cudart,cublas,cublasLt,curand,nvrtc}.so.*; do
        base="${lib##*/}"
        ln -sf "$base" "$CUDA_HOME/lib/${base%%.so.*}.so"
    done
    # the driver's link stub (see above)
    cudarc_src="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-0.19.10 | head -1)"
    if [ ! -f "$cudarc_src/src/driver/sys/mod.rs" ]; then
        echo "cuda-env: cudarc 0.19.10 sources not found (run cargo fetch first)" >&2
        return 1 2>/dev/null || exit 1
    fi
    mkdir -p "$CUDA_HOME/lib/stubs"
    grep -oE '^pub unsafe fn cu[A-Za-z0-9_]+' "$cudarc_src/src/driver/sys/mod.rs" |
        sed -E 's/^pub unsafe fn (.*)$/int \1(void) { return 34; }/' | sort -u \
        >"$CUDA_HOME/lib/stubs/libcuda-stub.c"
    cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$CUDA_HOME/lib/stubs/libcuda.so" \
        "$CUDA_HOME/lib/stubs/libcuda-stub.c"
    touch "$rlvr_cuda_stamp"
fi

CUDA_PATH="$CUDA_HOME"
CUDA_ROOT="$CUDA_HOME"
CUDA_COMPUTE_CAP="${CUDA_COMPUTE_CAP:-90}"
PATH="$CUDA_HOME/bin:$PATH"
# run time: the toolkit's libraries; the driver's libcuda.so.1 comes from the system
LD_LIBRARY_PATH="$CUDA_HOME/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CUDA_HOME CUDA_PATH CUDA_ROOT CUDA_COMPUTE_CAP PATH LD_LIBRARY_PATH
