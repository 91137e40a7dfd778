#!/usr/bin/env bash
# tests/gpu/match.sh LOGDIR — template matching and the colour filter on the CUDA versions
# (called by tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive cuda-opt on the match, colour and grey cases, then cuda-opt's match
#      cases again with PARVIS_NO_NTT=1 PARVIS_NO_MAPPED_RESULT=1 (its FFT method takes the exact
#      NTT for most templates; this keeps its cuFFT path and the copied result record checked);
#      tests/ncc_check.py on both (NCC maps against numpy's definition and OpenCV)
#   2. compute-sanitizer memcheck (leak check) on the match and colour cases, racecheck on the
#      matchcuda cases, of both versions, side by side
#   3. ./main bench match on both versions, and the GPU-side event timings
#   (1 and 2 include the batches, matchbatch-* of match_batch.cases, and 1 their contract,
#   tests/match_batch.sh per version: every batch equals its single calls; memcheck on them in 2)
#   4. cuda-opt's upload modes (PARVIS_UPLOAD=whole|chunked|direct|register): the matchcuda cases
#      under each, memcheck under chunked, and each mode's upload time (bench-upload.txt)
#   5. bench/run_match_batch.sh: 8 templates / 8 sources in one call against 8 calls
set -u
LOG=$1
. tests/gpu/lib.sh
gpu_test test-match -- seq cuda-naive cuda-opt --only match
gpu_test test-color -- seq cuda-naive cuda-opt --only color
gpu_test test-grey -- seq cuda-naive cuda-opt --only grey
gpu_test test-match-no-ntt PARVIS_NO_NTT=1 PARVIS_NO_MAPPED_RESULT=1 -- cuda-opt --only match
# NCC / ccorr-normed (match_ncc.cases run above, as matchncc-*): the maps against their
# definitions (numpy, exact sums) and OpenCV on both CUDA versions.
python3 tests/ncc_check.py bin/cuda-naive bin/cuda-opt >"$LOG/ncc-check.log" 2>&1
echo "ncc-check: $(tail -n1 "$LOG/ncc-check.log")"
grep -E '^FAIL' "$LOG/ncc-check.log" | head -n 20
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

# cuda-opt's upload of the user's pageable image (PARVIS_UPLOAD, cuda/match/opt.cu): each mode on
# the matchcuda cases against seq, then its upload time on two sizes (bench lines
# "<method>/upload-<mode>": ms; GB/s = W H / ms / 1e6; target >= 25 GB/s, bench/README.md).
for mode in chunked direct register; do
  gpu_test "test-upload-$mode" PARVIS_UPLOAD=$mode -- cuda-opt --only matchcuda
done
PARVIS_UPLOAD=chunked gpu_sanitize memcheck cuda-opt matchcuda
for mode in whole chunked direct register; do
  for wl in 1326x1025/479x432 3840x2160/128x128; do
    PARVIS_UPLOAD=$mode bin/cuda-opt bench match --workload "$wl" --method ssd-fft --seconds 0.5 \
      2>>"$LOG/bench-upload.err" | grep -E 'ssd-fft |ssd-fft/upload' >>"$LOG/bench-upload.txt"
  done
done
echo "upload modes: exit $? (see $LOG/bench-upload.txt)"

# Batches (issue 14): one process, one context, against the same work as separate calls.
VERSIONS="cuda-naive cuda-opt" bench/run_match_batch.sh 3 >"$LOG/bench-match-batch.txt" 2>&1
echo "bench match batch: exit $? (see $LOG/bench-match-batch.txt)"
grep -E 'calls/batch' "$LOG/bench-match-batch.txt"
