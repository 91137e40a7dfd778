#!/usr/bin/env bash
# ./compile.sh <version>|all : build bin/<version> and point ./main at it.
# `all` builds every version this machine can build (make -j on every core; CUDA for this
# machine's GPU only, unless CUDA_ARCH says otherwise) and points ./main at the one that is
# fastest for one plain call: omp where it was built, else simd, else seq. Never a CUDA version:
# its context alone costs about 200 ms per call, more than omp's whole match of the capsules.
# The choice is made from what was built, not from a timing. `./main --version` names it.
# Make variables come from the environment (CXX=clang++, CUDA_ARCH=sm_75, SANITIZE=1, ...).
set -u
cd "$(dirname "$(readlink -f "$0")")" || exit 1
BIN=${BIN:-bin}
known=$(sed -n 's/^VERSIONS_\(CPU\|CUDA\) := //p' Makefile | tr '\n' ' ')
if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  echo "usage: ./compile <version>|all    versions: $known"
  [ $# -eq 1 ] && exit 0 || exit 1
fi
v=$1
if [ "$v" != all ]; then
  case " $known " in *" $v "*) ;; *)
    echo "compile: unknown version '$v'; valid: $known all" >&2; exit 1 ;; esac
  buildable=$(make -s list 2>/dev/null | tr '\n' ' ')
  case " $buildable " in *" $v "*) ;; *)
    case "$v" in
      cuda-*|blur-v*) echo "compile: $v needs nvcc (the CUDA toolkit), which was not found; CPU versions: seq simd omp" >&2 ;;
      *) echo "compile: $v cannot be built here (OpenMP not found: install libomp-dev for clang, or use g++)" >&2 ;;
    esac
    exit 1 ;;
  esac
  make -j"$(nproc)" "$BIN/$v" tools || exit 1
  ln -sfn "$BIN/$v" main
  echo "./main -> $BIN/$v"
else
  make -j"$(nproc)" all || exit 1
  built=" $(make -s list 2>/dev/null | tr '\n' ' ')"
  for v in omp simd seq; do
    case "$built" in *" $v "*) [ -x "$BIN/$v" ] && break ;; esac
  done
  ln -sfn "$BIN/$v" main
  echo "built:$built"
  echo "./main -> $BIN/$v (./compile <version> points it at another)"
fi
