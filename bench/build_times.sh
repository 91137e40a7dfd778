#!/usr/bin/env bash
# bench/build_times.sh [MAKE TARGET...]   (default: all, as ./compile all builds it)
#
# Where a build's time goes: builds from nothing into a scratch BUILD and BIN (build/times*,
# removed first) with make -j on every core, every compile and link of $CXX and nvcc run
# through this script, which notes its wall time. Prints the 10 slowest files, the sum over
# every file and the build's wall time; the whole list is left in build/times.log.
# Make variables come from the environment as for ./compile: NO_CUDA=1, CUDA_ARCH=sm_90,
# CXX=clang++, NVCC=path, ... Example (CPU versions only): NO_CUDA=1 bench/build_times.sh
# Targets such as bin/seq mean the scratch BIN's (build/times-bin/seq); tools, all as they are.
set -u
if [ "${1:-}" = --wrap ]; then  # --wrap LOG COMPILER ARGS...: one timed compile or link
  log=$2; shift 2
  t0=$EPOCHREALTIME
  "$@"; rc=$?
  t1=$EPOCHREALTIME
  out="" prev=""
  for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
  # Probes of the Makefile (-o /dev/null) are timed too, under their own name.
  printf '%d %s\n' $(( (10#${t1//[.,]/} - 10#${t0//[.,]/}) / 1000 )) "${out:-?}" >>"$log"
  exit $rc
fi
self=$(readlink -f "$0")
cd "$(dirname "$self")/.." || exit 1
build=build/times bin=build/times-bin log=build/times.log
rm -rf "$build" "$bin" && mkdir -p "$build" && : >"$log"
cxx=${CXX:-g++}
args=(CXX="$self --wrap $PWD/$log $cxx" BUILD="$build" BIN="$bin")
if [ -z "${NO_CUDA:-}" ]; then
  nvcc=${NVCC:-$(command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)}
  [ -n "$nvcc" ] && args+=(NVCC="$self --wrap $PWD/$log $nvcc")
fi
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(all)
# Targets under bin/ are meant under the scratch BIN.
targets=("${targets[@]/#bin\//$bin/}")
t0=$EPOCHREALTIME
make -j"$(nproc)" "${args[@]}" "${targets[@]}" >build/times.make.log 2>&1 ||
  { tail -n 20 build/times.make.log; echo "build_times: make failed (build/times.make.log)" >&2; exit 1; }
t1=$EPOCHREALTIME
wall=$(( (10#${t1//[.,]/} - 10#${t0//[.,]/}) / 1000 ))
sort -rn "$log" -o "$log"
echo "slowest 10 (s, file; of $(grep -vc ' /dev/null$' "$log") compiles and links):"
grep -v ' /dev/null$' "$log" | head -n 10 | awk '{ printf "%8.1f  %s\n", $1 / 1000, $2 }'
awk -v wall="$wall" -v jobs="$(nproc)" '
  $2 == "/dev/null" { probes += $1; next } { sum += $1 }
  END { printf "sum %.1f s over the files (+ %.1f s of probes); wall %.1f s with make -j%d\n", sum / 1000, probes / 1000, wall / 1000, jobs }' "$log"
