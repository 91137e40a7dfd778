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
# cuda-opt's "lookback" variant (PARVIS_INTEGRAL_VARIANT=lookback, cuda/integral/opt_lookback.cuh)
# goes through 1-3 beside the default (also in bands of 7 rows, and with bands of 16 rows a block,
# PARVIS_INTEGRAL_LB_ROWS=16; memcheck, racecheck and synccheck), is emulated on the host
# (tests/cuda/integral_emulate.cu), and 5. is benchmarked against the default at 10000^2, 40000^2
# and 60000^2 (bench-integral-variants.txt: GB/s, the targets, the checksums against the known).
# INTEGRAL_ONLY=lookback runs the variant's parts alone (2-3 minutes on an H100, estimated).
set -u
LOG=$1
. tests/gpu/lib.sh
all=1
[ "${INTEGRAL_ONLY:-}" = lookback ] && all=""
LB=PARVIS_INTEGRAL_VARIANT=lookback

# The host emulation (no GPU needed), built and run beside the GPU runs below.
emu=$LOG/test-integral-emulate.log
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
(if "$NVCC" -std=c++17 -O2 -Isrc -Ibmp -Icuda tests/cuda/integral_emulate.cu src/integral/seq.cpp \
      src/integral/integral.cpp src/common/image.cpp src/common/cli.cpp -o build/integral_emulate >"$emu" 2>&1 &&
    build/integral_emulate >>"$emu" 2>&1; then
   echo "1 passed, 0 failed, 0 skipped" >>"$emu"
 else
   echo "0 passed, 1 failed, 0 skipped" >>"$emu"
 fi) &
emu_pid=$!

# The variant's runs, the first alone (./test may regenerate build/testdata), the others beside
# the default's (small cases: they share the GPU well).
gpu_test test-integral-lookback $LB -- seq cuda-opt --only integral
gpu_test test-integral-lookback-bands $LB PARVIS_INTEGRAL_BAND_ROWS=7 -- cuda-opt --only integral-sz & lb_pids=($!)
gpu_test test-integral-lookback16 $LB PARVIS_INTEGRAL_LB_ROWS=16 -- cuda-opt --only integral-sz & lb_pids+=($!)
if [ -n "$all" ]; then
  gpu_test test-integral -- seq cuda-naive cuda-opt --only integral
  gpu_test test-integral-bands PARVIS_INTEGRAL_BAND_ROWS=7 -- cuda-naive cuda-opt --only integral-sz
fi
wait "${lb_pids[@]}"
pids=()
if [ -n "$all" ]; then
  for v in cuda-naive cuda-opt; do
    gpu_sanitize memcheck $v integral-cs & pids+=($!)
    gpu_sanitize racecheck $v integral-cs & pids+=($!)
  done
fi
for tool in memcheck racecheck synccheck; do
  (export $LB; gpu_sanitize $tool cuda-opt integral-cs lookback) & pids+=($!)
done
(export $LB; gpu_sanitize memcheck cuda-opt 1027x769 lookback) & pids+=($!)
wait "${pids[@]}"
wait "$emu_pid"
echo "test-integral-emulate: $(tail -n1 "$emu")"

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
if [ -n "$all" ]; then
  big_check test-integral-40000 40000x40000 $sum40 "omp" "cuda-opt" "cuda-naive PARVIS_INTEGRAL_BAND_ROWS=10000"
  big_check test-integral-60000 60000x60000 $sum60 "cuda-opt" "cuda-opt PARVIS_INTEGRAL_BAND_ROWS=16384" "cuda-naive"
  tail -n 4 "$LOG/test-integral-60000.err"
fi
big_check test-integral-lookback-40000 40000x40000 $sum40 "cuda-opt $LB" "cuda-opt $LB PARVIS_INTEGRAL_BAND_ROWS=10000"
big_check test-integral-lookback-60000 60000x60000 $sum60 "cuda-opt $LB" "cuda-opt $LB PARVIS_INTEGRAL_BAND_ROWS=16384"

# 5. The variants side by side (one run of each; GB/s of the u8 read + the u64 written once).
for variant in tiles lookback lookback16; do
  rows=32; [ $variant = lookback16 ] && rows=16
  PARVIS_INTEGRAL_VARIANT=${variant%16} PARVIS_INTEGRAL_LB_ROWS=$rows bin/cuda-opt bench integral \
    --size "10000 40000 60000" --seconds 0.2 --max-reps 5 2>>"$LOG/bench-integral-variants.err" | sed "s/^cuda-opt/cuda-opt:$variant/"
done >"$LOG/bench-integral-variants.txt"
awk -v s40=$sum40 -v s60=$sum60 '
  { split($2, d, ":"); split(d[2], wh, "x"); px = wh[1] * wh[2]; gbs = px * 9 / ($5 * 1e6)
    floor_ms = px * 9 / 3.0e9; target = wh[1] == 10000 ? 0.45 : wh[1] == 40000 ? 6.5 : 0
    want = wh[1] == 40000 ? s40 : wh[1] == 60000 ? s60 : ""
    verdict = target ? ($5 <= target ? "target " target " ms met" : "target " target " ms MISSED") : ""
    check = want == "" ? "" : ($7 == want ? "checksum ok" : "CHECKSUM WRONG")
    printf "%-20s %-13s %9.3f ms %6.0f GB/s (floor %.2f ms) %s %s\n", $1, wh[1] "^2", $5, gbs, floor_ms, verdict, check
    if (!(wh[1] in first)) first[wh[1]] = $7; else if (first[wh[1]] != $7) print "CHECKSUMS DIFFER at " wh[1] "^2" }
' "$LOG/bench-integral-variants.txt"
[ -n "$all" ] || exit 0

VERSIONS="cuda-naive cuda-opt" PEERS="torch opencv" bench/run_integral.sh --seconds 0.2 --max-reps 5 \
  >"$LOG/bench-integral.txt" 2>"$LOG/bench-integral.err"
echo "bench integral: exit $?"
sed -n '/^checksums/,$p' "$LOG/bench-integral.txt"
