#!/usr/bin/env bash
# tests/gpu_upload_quick.sh [LOGDIR] — cuda-opt's upload (cuda/upload/) on a GPU machine in about
# two minutes: make, then the checks side by side, then the benchmark alone:
#   1. ./test on the upload cases (matchupload, filterupload: 1x1, 7x3, 1327x1025 RGB, 3840x2161)
#      against seq under the default (auto) and each PARVIS_UPLOAD mode, staged also with
#      5000-byte pieces on 3 threads (pieces dividing no row count), with the pinned bytes capped
#      (upload.pinned=60000, and 1M: the slots), with the pool asleep at the copy (upload.hot=0),
#      with memcpy into the pinned memory (upload.nt=0) and with odd one-pass pieces;
#      the matchcuda and matchncc cases (NCC now on the device), tests/ncc_check.py on cuda-opt;
#      compute-sanitizer memcheck on matchupload (odd pieces, pageable), filterupload and three
#      matchncc groups. Each prints "name: N passed, N failed, N skipped" (logs in LOGDIR);
#   2. bench/run_upload.sh --seconds 0.05 (UPLOAD_BENCH_ARGS="--quick --seconds 0.03" for less):
#      GB/s of every way at 0.26-100 MB, rows appended to bench/results/times.csv, the best way
#      per size printed (the numbers that choose auto);
#   3. one plain `match` call per way (auto, pageable, staged, auto with the pinned bytes capped
#      at 1 and 4 MiB, auto with upload.hot=0) on 3840x2160 grey (fft), 1326x1025 RGB and
#      3840x2160 RGB (24.9 MB): the timing line "[upload N us, M MB at G GB/s, how]" (the
#      process's first copy); then 1326x1025 grey (1.36 MB), 12 calls of the default (its upload
#      should stay at or below 60 us: the median is printed); and NCC on the device vs
#      PARVIS_TUNING=match.ncc_host=1.
#   UPLOAD_BENCH_ARGS="--first --seconds 0.2": step 2 times only what one call pays.
# Not in tests/gpu/ (gpu_check.sh runs every script there): tests/gpu/match.sh and filter.sh hold
# the same checks for the full run.
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
LOG=${1:-build/upload-quick}
mkdir -p "$LOG"
. tests/gpu/lib.sh
start=$SECONDS
make -j16 bin/cuda-opt bin/seq tools >"$LOG/make.log" 2>&1 || { tail -n 20 "$LOG/make.log"; echo "make failed"; exit 1; }
echo "make: $((SECONDS - start)) s"
WORK=build/test-uq-data ./test --no-build seq --only no-such-case >/dev/null 2>&1  # the test data, once

pids=()
gpu_test uq-upload-auto -- seq cuda-opt --only upload & pids+=($!)
for mode in pageable staged; do
  gpu_test "uq-upload-$mode" PARVIS_UPLOAD=$mode -- cuda-opt --only upload & pids+=($!)
done
gpu_test uq-upload-cold PARVIS_TUNING=upload.hot=0 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-slots PARVIS_TUNING=upload.pinned=1M -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-memcpy PARVIS_TUNING=upload.nt=0 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-small-pieces PARVIS_TUNING=upload.piece=4K,upload.min=0 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-pageable-hostgrey PARVIS_UPLOAD=pageable PARVIS_GRAY=host -- cuda-opt --only matchupload & pids+=($!)
gpu_test uq-upload-cap PARVIS_TUNING=upload.pinned=60000,upload.threads=3,upload.min=0 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-odd PARVIS_UPLOAD=staged PARVIS_TUNING=upload.chunk=5000,upload.threads=3 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-matchcuda -- cuda-opt --only matchcuda & pids+=($!)
gpu_test uq-matchncc -- cuda-opt --only matchncc & pids+=($!)
(python3 tests/ncc_check.py bin/cuda-opt >"$LOG/ncc-check.log" 2>&1; echo "ncc-check: $(tail -n1 "$LOG/ncc-check.log")") & pids+=($!)
PARVIS_UPLOAD=staged PARVIS_TUNING=upload.chunk=5000,upload.threads=3 gpu_sanitize memcheck cuda-opt matchupload odd & pids+=($!)
PARVIS_UPLOAD=staged PARVIS_TUNING=upload.chunk=5000,upload.threads=3 gpu_sanitize memcheck cuda-opt filterupload odd & pids+=($!)
PARVIS_UPLOAD=pageable gpu_sanitize memcheck cuda-opt matchupload pageable & pids+=($!)
for g in matchncc-flat matchncc-tiny matchncc-noise-odd; do gpu_sanitize memcheck cuda-opt $g & pids+=($!); done
wait "${pids[@]}"
echo "checks: $((SECONDS - start)) s"

bench/run_upload.sh ${UPLOAD_BENCH_ARGS:---seconds 0.05} >"$LOG/bench-upload.txt" 2>"$LOG/bench-upload.err"
echo "bench upload: exit $? ($((SECONDS - start)) s); best per size:"
sed -n '/^best per size/,$p' "$LOG/bench-upload.txt"

G=bin/parvis-gen
$G noise 3840x2160 "$LOG/s4k.pgm" --gray --seed 1 && $G crop "$LOG/s4k.pgm" 1001 701 128 128 "$LOG/t4k.pgm"
$G noise 1326x1025 "$LOG/s1326.bmp" --seed 2 && $G crop "$LOG/s1326.bmp" 400 300 479 432 "$LOG/t1326.bmp"
$G crop "$LOG/s1326.bmp" 600 500 24 16 "$LOG/t24.bmp"
$G noise 3840x2160 "$LOG/s25.ppm" --seed 3 && $G crop "$LOG/s25.ppm" 2001 901 96 64 "$LOG/t25.ppm"  # 24.9 MB RGB
# One plain call per way (a process each: its upload is that process's first copy).
for how in auto pageable staged "auto upload.pinned=1M" "auto upload.pinned=4M" "auto upload.hot=0"; do
  set -- $how
  mode=$1 tuning=${2:-}
  for wl in "s4k.pgm t4k.pgm" "s1326.bmp t1326.bmp" "s25.ppm t25.ppm"; do
    set -- $wl
    echo "$how $1: $(PARVIS_UPLOAD=$mode PARVIS_TUNING=$tuning bin/cuda-opt match "$LOG/$1" "$LOG/$2" --method fft 2>&1 >/dev/null | grep '^time')"
  done
done
# The 1.36 MB grey source of seed 000's workload, 12 plain calls of the default: the upload span's
# median (the target: at most 60 us).
$G noise 1326x1025 "$LOG/g1326.pgm" --gray --seed 4 && $G crop "$LOG/g1326.pgm" 400 300 479 432 "$LOG/tg1326.pgm"
for i in $(seq 12); do
  bin/cuda-opt match "$LOG/g1326.pgm" "$LOG/tg1326.pgm" --method fft 2>&1 >/dev/null | sed -n 's/.*\[upload \([0-9]*\) us.*/\1/p'
done | sort -n | awk '{ v[NR] = $1 } END { m = v[int((NR + 1) / 2)]; printf "1.36 MB grey, %d calls: upload median %s us (%s)\n", NR, m, m + 0 <= 60 ? "target met: <= 60" : "ABOVE 60" }'
for ncc in device host; do
  env $([ $ncc = host ] && echo PARVIS_TUNING=match.ncc_host=1) bin/cuda-opt match "$LOG/s1326.bmp" "$LOG/t24.bmp" --metric ncc >"$LOG/ncc-$ncc.out" 2>"$LOG/ncc-$ncc.err"
  echo "ncc on the $ncc: $(cat "$LOG/ncc-$ncc.out" | head -n1) | $(grep '^time' "$LOG/ncc-$ncc.err")"
done
cmp -s "$LOG/ncc-device.out" "$LOG/ncc-host.out" && echo "ncc device = host: same stdout" || echo "FAIL ncc device and host stdout differ"
echo "total: $((SECONDS - start)) s"
