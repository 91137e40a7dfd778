#!/usr/bin/env bash
# tests/gpu_check.sh [LOGDIR] — everything the CUDA versions must show on a GPU machine, in one go:
#   1. build (CUDA_ARCH from the environment, default native), ./test seq cuda-naive cuda-opt,
#      and cuda-opt's match cases again with PARVIS_NO_NTT=1 PARVIS_NO_MAPPED_RESULT=1 (its
#      cuFFT path on every size, the result copied back instead of written to mapped memory)
#   2. the match and colour cases of both CUDA versions under compute-sanitizer memcheck
#      (leak check on), and the matchcuda cases under racecheck (tests/sanitize.sh); runs side
#      by side (WORK=...)
#   3. ./main bench match on both versions (upload / compute / download and the stage table)
#   4. GPU-side event timings (bench/run_cuda_match_timing.sh)
# Logs go to LOGDIR (default build/gpu-check). The last line sums the tests and sanitizer runs
# ("N passed, N failed, N skipped"; a sanitizer report counts as a failure); exit 1 if any.
# Make overrides (STB_INCLUDE, FFTW_INCLUDE, FFTW_LIBDIR) come from the environment.
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
LOG=${1:-build/gpu-check}
mkdir -p "$LOG"
export CUDA_ARCH=${CUDA_ARCH:-native}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$LOG/gpu.txt" 2>&1
make -j"$(nproc)" all >"$LOG/build.log" 2>&1 || { tail -n 30 "$LOG/build.log"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

./test seq cuda-naive cuda-opt --no-build >"$LOG/test.log" 2>&1
echo "test: $(tail -n1 "$LOG/test.log")"; grep -E '^FAIL' "$LOG/test.log" | head -n 20
# cuda-opt's FFT method takes the exact NTT for most templates; the match cases once more with
# PARVIS_NO_NTT=1 keep its cuFFT path (large templates) tested on every size as well, and with
# PARVIS_NO_MAPPED_RESULT=1 the copy that replaces the mapped result record where a device
# cannot map host memory.
PARVIS_NO_NTT=1 PARVIS_NO_MAPPED_RESULT=1 WORK=build/test-no-ntt ./test cuda-opt --no-build --only match >"$LOG/test-no-ntt.log" 2>&1
echo "test (PARVIS_NO_NTT=1 PARVIS_NO_MAPPED_RESULT=1): $(tail -n1 "$LOG/test-no-ntt.log")"; grep -E '^FAIL' "$LOG/test-no-ntt.log" | head -n 20

# Sanitizer runs (tests/sanitize.sh): their outputs under their own WORK, one report per process.
sanitize() {  # tool version pattern
  local name=$1-$2-$3 dir=$LOG/cs-$1-$2-$3
  rm -rf "$dir" && mkdir -p "$dir"
  WORK=build/test-$name CUDA_RUNNER="tests/sanitize.sh $1 $dir" ./test "$2" --no-build --only "$3" >"$LOG/$name.log" 2>&1
  local reports; reports=$(cat "$dir"/*.log 2>/dev/null | grep -cE 'ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]')
  local runs; runs=$(ls "$dir" | wc -l)
  echo "$name: $(tail -n1 "$LOG/$name.log"); $runs sanitized processes, $reports with reports"
  echo "$reports" >"$LOG/$name.reports"
}
pids=()
for v in cuda-naive cuda-opt; do
  sanitize memcheck $v match & pids+=($!)
  sanitize memcheck $v color & pids+=($!)
  sanitize racecheck $v matchcuda & pids+=($!)
done
wait "${pids[@]}"

# The bench table (CPU-free: the CUDA versions only), rows appended to bench/results/times.csv.
VERSIONS="cuda-naive cuda-opt" bench/run_match.sh --seconds 0.5 >"$LOG/bench.txt" 2>"$LOG/bench.err"
echo "bench: exit $?"
# GPU-side event timings of prepared matchers (bench/cuda_match_timing.cpp).
bench/run_cuda_match_timing.sh cuda-naive 10 time >"$LOG/timing-cuda-naive.txt" 2>&1
bench/run_cuda_match_timing.sh cuda-opt 30 time >"$LOG/timing-cuda-opt.txt" 2>&1
echo "timing: exit $?"
timeout 120 bench/run_cuda_match_timing.sh cuda-opt 1 error >"$LOG/fft-error.txt" 2>&1
echo "fft error: exit $?"

total_p=0 total_f=0 total_s=0
for f in "$LOG"/test.log "$LOG"/test-no-ntt.log "$LOG"/memcheck-*.log "$LOG"/racecheck-*.log; do
  if [[ "$(tail -n1 "$f")" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    total_p=$((total_p + BASH_REMATCH[1])); total_f=$((total_f + BASH_REMATCH[2])); total_s=$((total_s + BASH_REMATCH[3]))
  else
    total_f=$((total_f + 1)); echo "no closing line in $f"
  fi
done
for f in "$LOG"/*.reports; do total_f=$((total_f + $(cat "$f"))); done
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" = 0 ]
