#!/usr/bin/env bash
# tests/gpu/integral.sh LOGDIR — the integral image on the CUDA versions (called by
# tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive cuda-opt on every integral case (integral.cases, integral_sizes.cases:
#      stdout — the last element and the checksum of every element — and the .npy outputs equal
#      seq's), then the size cases again with PARVIS_TUNING=integral.band_rows=7 (many bands, the
#      carry between them, on any card); --explain's kernel and bands
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
gpu_test test-integral-bands PARVIS_TUNING=integral.band_rows=7 -- cuda-naive cuda-opt --only integral-sz
pids=()
for v in cuda-naive cuda-opt; do
  gpu_sanitize memcheck $v integral-cs & pids+=($!)
  gpu_sanitize racecheck $v integral-cs & pids+=($!)
done
wait "${pids[@]}"

# --explain names the kernel and its bands: one band where the card holds the image, the cap's
# bands with integral.band_rows.
{
  p=0 f=0
  say() { if eval "$2"; then p=$((p + 1)); echo "ok    $1"; else f=$((f + 1)); echo "FAIL  $1"; fi; }
  for v in cuda-naive cuda-opt; do
    one=$(bin/$v integral --random 1000x700 --explain 2>/dev/null | grep '^explain:')
    say "$v --explain: one band ($one)" '[[ "$one" == *"$v: "*"1 band of 700 rows"* ]]'
    cap=$(PARVIS_TUNING=integral.band_rows=100 bin/$v integral --random 1000x700 --explain 2>/dev/null | grep '^explain:')
    say "$v --explain, integral.band_rows=100: 7 bands ($cap)" '[[ "$cap" == *"7 bands of 100 rows"*"integral.band_rows=100" ]]'
  done
  echo "$p passed, $f failed, 0 skipped"
} >"$LOG/test-integral-explain.log" 2>&1
echo "test-integral-explain: $(tail -n1 "$LOG/test-integral-explain.log")"
grep -E '^FAIL' "$LOG/test-integral-explain.log"

# big_check NAME WxH EXPECTED "VERSION [ENV=...]"...: the runs' checksums must agree, and equal
# EXPECTED (the checksum seq/omp gave; - for none) (one pass/fail line).
big_check() {
  local name=$1 size=$2 expected=$3; shift 3
  local sums=() run line
  for run in "$@"; do
    set -- $run
    line=$(env "${@:2}" bin/$1 integral --random "$size" --type u64 2>>"$LOG/$name.err")
    echo "$size $run: $line" | tee -a "$LOG/$name.txt"
    sums+=("${line##*checksum }")
  done
  local distinct; distinct=$(printf '%s\n' "${sums[@]}" | sort -u | wc -l)
  if [ -n "${sums[0]}" ] && [ "$distinct" = 1 ] && { [ "$expected" = - ] || [ "${sums[0]}" = "$expected" ]; }; then
    echo "$name: checksums agree" && echo "1 passed, 0 failed, 0 skipped" >"$LOG/$name.log"
  else
    echo "FAIL $name: checksums differ or a run failed: ${sums[*]}" && echo "0 passed, 1 failed, 0 skipped" >"$LOG/$name.log"
  fi
}
# 40000^2 (1.6e9 pixels, the largest square a host image holds) on the host too; 60000^2 (3.6e9
# pixels: 64-bit indices) on the GPU only, one band, bands, and the seed's pipeline.
# Known checksums (u64, seed 1; the last elements 203998397441 and 458994468480).
sum40=f7c06a9f3ed57434 sum60=6f4662f1dcf6ce5a
big_check test-integral-40000 40000x40000 $sum40 "omp" "cuda-opt" "cuda-naive PARVIS_TUNING=integral.band_rows=10000"
big_check test-integral-60000 60000x60000 $sum60 "cuda-opt" "cuda-opt PARVIS_TUNING=integral.band_rows=16384" "cuda-naive"
tail -n 4 "$LOG/test-integral-60000.err"

VERSIONS="cuda-naive cuda-opt" PEERS="torch opencv" bench/run_integral.sh --seconds 0.2 --max-reps 5 \
  >"$LOG/bench-integral.txt" 2>"$LOG/bench-integral.err"
echo "bench integral: exit $?"
sed -n '/^checksums/,$p' "$LOG/bench-integral.txt"
