#!/usr/bin/env bash
# tests/gpu/blur.sh LOGDIR — the blur map on the CUDA versions (called by tests/gpu_check.sh
# after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test on blur-v1 … blur-v5, cuda-naive, cuda-opt: every blur case against seq (blur-v1/v2
#      within +-1 on at most 2 % of the samples: `near` cases, whose pass lines say how many
#      differ); and cuda-opt's kernel body emulated on the host (tests/cuda/blur_emulate.cu)
#   2. compute-sanitizer memcheck (leak check) on the small cases of every version, side by
#      side (no blur kernel uses shared memory: nothing for racecheck)
#   3. bench/run_blur.sh: the three workloads on every version (seq on the 1920x1080 one only:
#      ~1 min per 4K workload) with the GPU's measured IMAD and dp2a rates, then the ladder's
#      threads-per-block sweep (32 … 1024) on the 4K radial workload (and V4, V5 on the noise one)
set -u
LOG=$1
. tests/gpu/lib.sh
ladder="blur-v1 blur-v2 blur-v3 blur-v4 blur-v5"
gpu_test test-blur -- seq $ladder cuda-naive cuda-opt --only blur

emu=$LOG/test-blur-emulate.log
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if "$NVCC" -std=c++17 -O2 -Iinclude -Isrc -Ibmp -Icuda tests/cuda/blur_emulate.cu src/blur/blur.cpp src/common/image.cpp \
     src/cli/cli.cpp src/common/parse.cpp src/common/timing.cpp -o build/blur_emulate >"$emu" 2>&1 && build/blur_emulate >>"$emu" 2>&1; then
  echo "1 passed, 0 failed, 0 skipped" >>"$emu"
else
  echo "0 passed, 1 failed, 0 skipped" >>"$emu"
fi
echo "test-blur-emulate: $(tail -n1 "$emu")"

pids=()
gpu_sanitize memcheck cuda-opt blur-61x43 & pids+=($!)
gpu_sanitize memcheck cuda-opt blur-2x3 & pids+=($!)
for v in $ladder cuda-naive; do
  gpu_sanitize memcheck $v blur-2x3 & pids+=($!)
done
wait "${pids[@]}"
gpu_sanitize memcheck cuda-opt blur-1x & pids+=($!)
gpu_sanitize memcheck blur-v5 blur-97x1 & pids+=($!)
wait

VERSIONS="seq" bench/run_blur.sh --workload 1920x1080x32-s2-radial >"$LOG/bench-blur-seq.txt" 2>&1
VERSIONS="simd omp $ladder cuda-naive cuda-opt" bench/run_blur.sh --seconds 0.5 >"$LOG/bench-blur.txt" 2>"$LOG/bench-blur.err"
echo "bench blur: exit $?"
# The sweep: every step on the radial map; on the noise map only the steps with constant memory.
sweep=32,64,128,256,512,1024
VERSIONS="$ladder" bench/run_blur.sh --workload 3840x2160x8-s4-radial --tpb $sweep --max-reps 3 --seconds 0 \
  >"$LOG/bench-blur-tpb-radial.txt" 2>&1
echo "bench blur tpb radial: exit $?"
VERSIONS="blur-v4 blur-v5" bench/run_blur.sh --workload 3840x2160x8-s4-noise --tpb $sweep --max-reps 3 --seconds 0 \
  >"$LOG/bench-blur-tpb-noise.txt" 2>&1
echo "bench blur tpb noise: exit $?"
