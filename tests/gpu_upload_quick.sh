#!/usr/bin/env bash
# tests/gpu_upload_quick.sh [LOGDIR] — issue 14 on a GPU machine in about two minutes (the H100
# host: make, then the checks side by side, then the benchmark alone):
#   1. ./test on the upload cases (matchupload, filterupload: 1x1, 7x3, 1327x1025 RGB, 3840x2161)
#      against seq under the default (auto) and each PARVIS_UPLOAD mode (linear included),
#      staged also with 5000-byte pieces on 3 threads (pieces dividing no row count), with
#      PARVIS_UPLOAD_2D=1, with the pinned bytes capped (PARVIS_UPLOAD_PINNED=60000) and with
#      PARVIS_UPLOAD_WARM=0, PARVIS_UPLOAD_ONEPASS=0, PARVIS_UPLOAD_NT=0, PARVIS_UPLOAD_AHEAD=1
#      (also the match error cases under it);
#      the matchcuda and matchncc cases (NCC now on the device), tests/ncc_check.py on cuda-opt;
#      compute-sanitizer memcheck on matchupload (odd pieces), filterupload and three matchncc
#      groups. Each prints "name: N passed, N failed, N skipped" (logs in LOGDIR);
#   2. bench/run_upload.sh --seconds 0.05 (UPLOAD_BENCH_ARGS="--quick --seconds 0.03" for less): GB/s of every way at 0.26-100 MB, rows appended to
#      bench/results/times.csv, the best way per size printed (the numbers that choose auto);
#   3. one plain `match` call per way (auto, pageable, staged, register, linear, auto with the
#      pinned bytes capped at 1 and 4 MiB, auto with PARVIS_UPLOAD_ONEPASS=0, with _WARM=0 _HOT=0,
#      with _AHEAD=1) on 3840x2160 grey (fft), 1326x1025 RGB and 3840x2160
#      RGB (24.9 MB): the timing line "[upload N us, M MB at G GB/s, how]" (the process's first
#      copy); and NCC on the device vs PARVIS_TUNING=match.ncc_host=1.
#   UPLOAD_BENCH_ARGS="--first --seconds 0.2": step 2 times only what one call pays (issue 14).
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
for mode in pageable staged register linear; do
  gpu_test "uq-upload-$mode" PARVIS_UPLOAD=$mode -- cuda-opt --only upload & pids+=($!)
done
gpu_test uq-upload-cold PARVIS_UPLOAD_WARM=0 PARVIS_UPLOAD_HOT=0 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-slots PARVIS_UPLOAD_ONEPASS=0 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-memcpy PARVIS_UPLOAD_NT=0 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-ahead PARVIS_UPLOAD_AHEAD=1 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-ahead-errors PARVIS_UPLOAD_AHEAD=1 -- cuda-opt --only match_err & pids+=($!)
gpu_test uq-upload-autolinear PARVIS_UPLOAD_LINEAR=4M -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-linear-hostgrey PARVIS_UPLOAD=linear PARVIS_GRAY=host -- cuda-opt --only matchupload & pids+=($!)
gpu_test uq-upload-cap PARVIS_UPLOAD_PINNED=60000 PARVIS_UPLOAD_THREADS=3 PARVIS_UPLOAD_MIN=0 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-odd PARVIS_UPLOAD=staged PARVIS_UPLOAD_CHUNK=5000 PARVIS_UPLOAD_THREADS=3 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-upload-2d PARVIS_UPLOAD=staged PARVIS_UPLOAD_2D=1 -- cuda-opt --only upload & pids+=($!)
gpu_test uq-matchcuda -- cuda-opt --only matchcuda & pids+=($!)
gpu_test uq-matchncc -- cuda-opt --only matchncc & pids+=($!)
(python3 tests/ncc_check.py bin/cuda-opt >"$LOG/ncc-check.log" 2>&1; echo "ncc-check: $(tail -n1 "$LOG/ncc-check.log")") & pids+=($!)
PARVIS_UPLOAD=staged PARVIS_UPLOAD_CHUNK=5000 PARVIS_UPLOAD_THREADS=3 gpu_sanitize memcheck cuda-opt matchupload odd & pids+=($!)
PARVIS_UPLOAD=staged PARVIS_UPLOAD_CHUNK=5000 PARVIS_UPLOAD_THREADS=3 gpu_sanitize memcheck cuda-opt filterupload odd & pids+=($!)
PARVIS_UPLOAD=linear gpu_sanitize memcheck cuda-opt matchupload linear & pids+=($!)
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
for how in auto pageable staged register linear "auto PARVIS_UPLOAD_PINNED=1M" "auto PARVIS_UPLOAD_PINNED=4M" \
           "auto PARVIS_UPLOAD_ONEPASS=0" "auto PARVIS_UPLOAD_WARM=0 PARVIS_UPLOAD_HOT=0" "auto PARVIS_UPLOAD_AHEAD=1"; do
  set -- $how
  mode=$1; shift
  for wl in "s4k.pgm t4k.pgm" "s1326.bmp t1326.bmp" "s25.ppm t25.ppm"; do
    set -- $wl
    echo "$how $1: $(env "PARVIS_UPLOAD=$mode" ${how#$mode} bin/cuda-opt match "$LOG/$1" "$LOG/$2" --method fft 2>&1 >/dev/null | grep '^time')"
  done
done
for ncc in device host; do
  env $([ $ncc = host ] && echo PARVIS_TUNING=match.ncc_host=1) bin/cuda-opt match "$LOG/s1326.bmp" "$LOG/t24.bmp" --metric ncc >"$LOG/ncc-$ncc.out" 2>"$LOG/ncc-$ncc.err"
  echo "ncc on the $ncc: $(cat "$LOG/ncc-$ncc.out" | head -n1) | $(grep '^time' "$LOG/ncc-$ncc.err")"
done
cmp -s "$LOG/ncc-device.out" "$LOG/ncc-host.out" && echo "ncc device = host: same stdout" || echo "FAIL ncc device and host stdout differ"
echo "total: $((SECONDS - start)) s"
