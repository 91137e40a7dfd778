#!/usr/bin/env bash
# tests/gpu/integral.sh LOGDIR — the integral image on the CUDA versions (called by
# tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive cuda-opt on every integral case (integral.cases, integral_sizes.cases:
#      stdout — the last element and the checksum of every element — and the .npy outputs equal
#      seq's), then the size cases again with PARVIS_INTEGRAL_BAND_ROWS=7 (many bands, the carry
#      between them, on any card)
#   2. compute-sanitizer memcheck (leak check) and racecheck on the integral-cs cases (tiny and
#      thin sizes, the seed's 8x8) of both versions, side by side
#   3. 60000^2 u8 -> u64 on cuda-opt as one band and as bands of 16384 rows, and on cuda-naive:
#      the three checksums must agree (the progress line shows on stderr)
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

big=()
for run in "cuda-opt" "cuda-opt PARVIS_INTEGRAL_BAND_ROWS=16384" "cuda-naive"; do
  set -- $run
  line=$(env "${@:2}" bin/$1 integral --random 60000x60000 --type u64 2>>"$LOG/integral-60000.err")
  echo "60000^2 $run: $line" | tee -a "$LOG/integral-60000.txt"
  big+=("${line##*checksum }")
done
if [ -n "${big[0]}" ] && [ "${big[0]}" = "${big[1]}" ] && [ "${big[0]}" = "${big[2]}" ]; then
  echo "60000^2 checksums agree" && echo "1 passed, 0 failed, 0 skipped" >"$LOG/integral-60000.log"
else
  echo "FAIL 60000^2 checksums differ or a run failed: ${big[*]}" && echo "0 passed, 1 failed, 0 skipped" >"$LOG/integral-60000.log"
fi
tail -n 4 "$LOG/integral-60000.err"

VERSIONS="cuda-naive cuda-opt" PEERS="torch opencv" bench/run_integral.sh --seconds 0.5 \
  >"$LOG/bench-integral.txt" 2>"$LOG/bench-integral.err"
echo "bench integral: exit $?"
sed -n '/^checksums/,$p' "$LOG/bench-integral.txt"
