#!/usr/bin/env bash
# tests/gpu/integral.sh LOGDIR — the integral image on the CUDA versions (called by
# tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive cuda-opt on every integral case (integral.cases, integral_sizes.cases:
#      stdout — the last element and the checksum of every element — and the .npy outputs equal
#      seq's), then the size cases again with PARVIS_INTEGRAL_BAND_ROWS=7 (many bands, the carry
#      between them, on any card)
#   2. compute-sanitizer memcheck (leak check) and racecheck on the integral-cs cases (tiny and
#      thin sizes, the seed's 8x8) of both versions, side by side
#   3. 40000^2 u8 -> u64 on omp (the host), cuda-opt and cuda-naive in bands; 60000^2 on cuda-opt as
#      one band and in bands of 16384 rows, and on cuda-naive: each size's checksums must agree
#      (the progress line shows on stderr)
#   4. bench/run_integral.sh on the CUDA versions and the peers (PyTorch cumsum, OpenCV on
#      10000^2): LOGDIR/bench-integral.txt, its closing lines the targets against the floors
set -u
LOG=$1
. tests/gpu/lib.sh
gpu_test test-integral -- seq cuda-naive cuda-opt --only integral
gpu_test test-integral-bands PARVIS_INTEGRAL_BAND_ROWS=7 -- cuda-naive cuda-opt --only integral-sz
pids=()
for v in cuda-naive cuda-opt; do
  gpu_sanitize memcheck $v integral-cs & pids+=($!)
  gpu_sanitize racecheck $v integral-cs & pids+=($!)
done
wait "${pids[@]}"

# big_check NAME WxH "VERSION [ENV=...]"...: the runs' checksums must agree (one pass/fail line).
big_check() {
  local name=$1 size=$2; shift 2
  local sums=() run line
  for run in "$@"; do
    set -- $run
    line=$(env "${@:2}" bin/$1 integral --random "$size" --type u64 2>>"$LOG/$name.err")
    echo "$size $run: $line" | tee -a "$LOG/$name.txt"
    sums+=("${line##*checksum }")
  done
  local distinct; distinct=$(printf '%s\n' "${sums[@]}" | sort -u | wc -l)
  if [ -n "${sums[0]}" ] && [ "$distinct" = 1 ]; then
    echo "$name: checksums agree" && echo "1 passed, 0 failed, 0 skipped" >"$LOG/$name.log"
  else
    echo "FAIL $name: checksums differ or a run failed: ${sums[*]}" && echo "0 passed, 1 failed, 0 skipped" >"$LOG/$name.log"
  fi
}
# 40000^2 (1.6e9 pixels, the largest square a host image holds) on the host too; 60000^2 (3.6e9
# pixels: 64-bit indices) on the GPU only, one band, bands, and the seed's pipeline.
big_check integral-40000 40000x40000 "omp" "cuda-opt" "cuda-naive PARVIS_INTEGRAL_BAND_ROWS=10000"
big_check integral-60000 60000x60000 "cuda-opt" "cuda-opt PARVIS_INTEGRAL_BAND_ROWS=16384" "cuda-naive"
tail -n 4 "$LOG/integral-60000.err"

VERSIONS="cuda-naive cuda-opt" PEERS="torch opencv" bench/run_integral.sh --seconds 0.2 --max-reps 5 \
  >"$LOG/bench-integral.txt" 2>"$LOG/bench-integral.err"
echo "bench integral: exit $?"
sed -n '/^checksums/,$p' "$LOG/bench-integral.txt"
