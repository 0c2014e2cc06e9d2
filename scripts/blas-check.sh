#!/usr/bin/env bash
# Checks that an rlvr binary (argument; default target/release/rlvr) has no link-time BLAS, finds
# and measures OpenBLAS when the shared library is installed (the default product is the fastest
# library measured on the machine: OpenBLAS or a built-in crate, crates/rlvr-model/src/cpu/
# blas_choice.rs), runs OpenBLAS when RLVR_BLAS names it, and without the library chooses among
# the built-in crates, saying that OpenBLAS was not found; with AOCL_ENV (an environment from
# scripts/aocl-blas.sh), that the search finds AMD's AOCL-BLAS there, for f32 and bf16 products.
# Used by .ci/run.
#
# The library is hidden from one run by bind-mounting /dev/null over it in a private mount
# namespace (needs root or unprivileged user namespaces); where that is refused, RLVR_BLAS
# names a library that does not exist instead (the gemm crate then runs, saying why), and the
# script says which was done. The measured choice is cached in a directory of the script's own.
set -euo pipefail
bin=${1:-target/release/rlvr}
[ -x "$bin" ] || { echo "blas-check: $bin is not an executable"; exit 1; }
# a matmul benchmark small enough to take a second: its first line names the library
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export XDG_CACHE_HOME="$cache"
# (arguments after the binary's go to `bench matmul`)
header() { local bin=$1 out; shift; out=$("$bin" bench matmul --tokens 64 --reps 1 "$@"); echo "${out%%$'\n'*}"; }

if ldd "$bin" | grep -i 'blas'; then
    echo "blas-check: FAILED: $bin is linked against a BLAS library (above)"
    exit 1
fi
echo "blas-check: $bin has no link-time BLAS dependency"

lib=$(ldconfig -p | awk '/libopenblas\.so\.0 / {print $NF; exit}')
if [ -z "$lib" ]; then
    echo "blas-check: FAILED: libopenblas.so.0 is not installed (Debian/Ubuntu: libopenblas0)"
    exit 1
fi
with=$(header "$bin")
echo "with OpenBLAS:    $with"
case $with in
    *"chosen by measurement ("*"GFLOP/s on one thread: OpenBLAS "*) ;;
    *) echo "blas-check: FAILED: the installed OpenBLAS was not measured for the default"; exit 1 ;;
esac
named=$(RLVR_BLAS=libopenblas.so.0 header "$bin")
echo "RLVR_BLAS names it: $named"
case $named in
    *OpenBLAS*"loaded libopenblas.so.0"*) ;;
    *) echo "blas-check: FAILED: the installed OpenBLAS was not used when named"; exit 1 ;;
esac

real=$(readlink -f "$lib")
if without=$(unshare -m sh -c 'mount --bind /dev/null "$1" && shift && "$@" bench matmul --tokens 64 --reps 1' \
        sh "$real" "$bin" 2>/dev/null); then
    without=${without%%$'\n'*}
    how="library hidden by a bind mount of /dev/null over $real"
else
    without=$(RLVR_BLAS=/nonexistent/libopenblas.so.0 header "$bin")
    how="mount namespaces refused here: RLVR_BLAS names a missing library instead"
fi
echo "without OpenBLAS: $without ($how)"
case $without in
    *"(pure Rust, "*" kernel): chosen by measurement ("*"not found: OpenBLAS ("*) ;;
    *"gemm crate "*"(pure Rust, "*" kernel): "*"could not be loaded"*) ;;
    *) echo "blas-check: FAILED: without the library the run did not choose a built-in crate, saying why"; exit 1 ;;
esac
# AMD's AOCL-BLAS where AOCL_ENV names an environment holding it as pip's `aoclda` wheel does
# (scripts/aocl-blas.sh): with VIRTUAL_ENV set to it, the f32 default measures BLIS among the
# candidates, and the bf16 products measure AOCL's bf16 GEMM beside the rounded route.
if [ -n "${AOCL_ENV:-}" ]; then
    f32=$(VIRTUAL_ENV="$AOCL_ENV" header "$bin")
    echo "with AOCL-BLAS:   $f32"
    case $f32 in
        *"chosen by measurement ("*"GFLOP/s on one thread: "*"BLIS "*) ;;
        *) echo "blas-check: FAILED: AOCL-BLAS in $AOCL_ENV was not measured for the default"; exit 1 ;;
    esac
    bf16=$(VIRTUAL_ENV="$AOCL_ENV" header "$bin" --matmul-dtype bf16)
    echo "bf16 with AOCL:   $bf16"
    case $bf16 in
        *"chosen by measurement"*"aocl_gemm_bf16bf16f32of32 of $AOCL_ENV/"*"rounded "*) ;;
        *) echo "blas-check: FAILED: AOCL's bf16 GEMM in $AOCL_ENV was not measured for bf16 products"; exit 1 ;;
    esac
fi
echo "blas-check: OK"
