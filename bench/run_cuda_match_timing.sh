#!/usr/bin/env bash
# bench/run_cuda_match_timing.sh [VERSION] [REPS] [sizes|time|error] [WORKLOAD]
# GPU-side timing of template matching on a CUDA version (default cuda-opt): builds the version,
# links bench/cuda_match_timing.cpp with its objects (all but main.cpp.o) and runs it. Prints
# one line per measurement (see the driver's header). Environment knobs of cuda-opt worth
# trying (seed 000's stage table: ./main bench match on a CUDA version): PARVIS_TUNING with
# match.graph=0, match.direct_rows=4|8, match.fft_tune=0 (cuda/match/tuning.hpp).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
v=${1:-cuda-opt}; shift || true
BIN=${BIN:-bin}
make -s "$BIN/$v" >/dev/null
objs=$(make -s -n BIN=build/timing-nolink "build/timing-nolink/$v" | grep -- "-o build/timing-nolink/$v" |
       tr ' ' '\n' | grep '\.o$' | grep -v '/src/main\.cpp\.o$')
cuda_inc=$(dirname "$(dirname "$(command -v nvcc)")")/include
mkdir -p build
g++ -std=c++17 -O2 -Isrc -Ibmp -I"$cuda_inc" -c bench/cuda_match_timing.cpp -o build/cuda_match_timing.o
nvcc -o "build/timing-$v" build/cuda_match_timing.o $objs -lcufft
"build/timing-$v" "$@"
