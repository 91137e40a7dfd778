#!/usr/bin/env bash
# tests/gpu/filter.sh LOGDIR — the convolution filter on the CUDA versions (called by
# tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive cuda-opt on every filter case (filter.cases, filter_exact.cases: each
#      output equals seq's bit for bit; the selftest also checks that every variant equals the
#      default), then the filter-cs and filter-custom cases again with the other variants:
#      cuda-naive's vectorized kernel (PARVIS_FILTER_VARIANT=vec) and cuda-opt's CUDA-core kernel
#      (=direct) -- a subset, to stay within ~4 minutes (a CUDA process starts in ~0.3 s)
#   2. compute-sanitizer memcheck (leak check) and racecheck on the filter-cs cases (tiny and odd
#      sizes, custom kernels reaching every path) of both versions, side by side
#   3. bench/run_filter.sh on the CUDA versions and the peers (CuPy, PyTorch, OpenCV), the
#      threads-per-block sweep included; its tables go to LOGDIR/bench-filter.txt
set -u
LOG=$1
. tests/gpu/lib.sh
gpu_test test-filter -- seq cuda-naive cuda-opt --only filter
gpu_test test-filter-naive-vec PARVIS_FILTER_VARIANT=vec -- cuda-naive --only filter-c
gpu_test test-filter-opt-direct PARVIS_FILTER_VARIANT=direct -- cuda-opt --only filter-c
pids=()
for v in cuda-naive cuda-opt; do
  gpu_sanitize memcheck $v filter-cs & pids+=($!)
  gpu_sanitize racecheck $v filter-cs & pids+=($!)
done
wait "${pids[@]}"

VERSIONS="cuda-naive cuda-opt" bench/run_filter.sh --seconds 0.2 >"$LOG/bench-filter.txt" 2>"$LOG/bench-filter.err"
echo "bench filter: exit $?"
sed -n '/^targets/,$p' "$LOG/bench-filter.txt"
