#!/usr/bin/env bash
# tests/gpu/match.sh LOGDIR — template matching and the colour filter on the CUDA versions
# (called by tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive cuda-opt on the match, colour and grey cases, then cuda-opt's match
#      cases again with PARVIS_NO_NTT=1 PARVIS_NO_MAPPED_RESULT=1 (its FFT method takes the exact
#      NTT for most templates; this keeps its cuFFT path and the copied result record checked)
#   2. compute-sanitizer memcheck (leak check) on the match and colour cases, racecheck on the
#      matchcuda cases, of both versions, side by side
#   3. ./main bench match on both versions, and the GPU-side event timings
set -u
LOG=$1
. tests/gpu/lib.sh
gpu_test test-match -- seq cuda-naive cuda-opt --only match
gpu_test test-color -- seq cuda-naive cuda-opt --only color
gpu_test test-grey -- seq cuda-naive cuda-opt --only grey
gpu_test test-match-no-ntt PARVIS_NO_NTT=1 PARVIS_NO_MAPPED_RESULT=1 -- cuda-opt --only match
pids=()
for v in cuda-naive cuda-opt; do
  gpu_sanitize memcheck $v match & pids+=($!)
  gpu_sanitize memcheck $v color & pids+=($!)
  gpu_sanitize racecheck $v matchcuda & pids+=($!)
done
wait "${pids[@]}"

VERSIONS="cuda-naive cuda-opt" bench/run_match.sh --seconds 0.5 >"$LOG/bench-match.txt" 2>"$LOG/bench-match.err"
echo "bench match: exit $?"
bench/run_cuda_match_timing.sh cuda-naive 10 time >"$LOG/timing-cuda-naive.txt" 2>&1
bench/run_cuda_match_timing.sh cuda-opt 30 time >"$LOG/timing-cuda-opt.txt" 2>&1
echo "timing: exit $?"
timeout 120 bench/run_cuda_match_timing.sh cuda-opt 1 error >"$LOG/fft-error.txt" 2>&1
echo "fft error: exit $?"
