#!/usr/bin/env bash
# tests/gpu/video.sh LOGDIR — the video pipeline on the CUDA versions (called by
# tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive cuda-opt on the video cases: every case against seq bit for bit,
#      and per version the video contract (tests/video_contract.sh: each frame = ./main match on
#      the saved frame, ground truth, truncation; ffmpeg cases where ffmpeg is installed).
#      cuda-opt runs its device pipeline (planes converted, matched and counted on the GPU);
#      then again with PARVIS_TUNING=video.host_convert=1 (the host pipeline), so both paths are
#      held to seq. The device conversion's per-pixel function and kernel body are also run on the
#      host against the host conversion (tests/cuda/video_convert_emulate.cu, every layout).
#   2. compute-sanitizer memcheck (leak check) on short clips (the production line with the
#      colour check, the capsule grid, the odd-sized clip with --out), both versions and
#      cuda-opt's host path side by side, every match of the capsule grid (--all); racecheck on
#      cuda-opt's device pipeline (count_rect reduces in shared memory), with --all too
#   3. ./main bench video on both versions (1920x1080 4:2:0, 96 frames, templates 16, 64, 128;
#      end to end and its bounds; cuda-opt also link, gpu, bound:read|link, e2e:host-convert),
#      rows appended to bench/results/times.csv
# About 3-4 minutes on an H100.
set -u
LOG=$1
. tests/gpu/lib.sh
gpu_test test-video -- seq cuda-naive cuda-opt --only video
# cuda-opt's host path, beside the emulation and the sanitizer runs below (all small on an H100).
gpu_test test-video-host-convert PARVIS_TUNING=video.host_convert=1 -- seq cuda-opt --only video & host_pid=$!
for v in cuda-naive cuda-opt; do
  [ -f "build/test-test-video/tmp/$v/video_contract/contract-$v.log" ] &&
    cp "build/test-test-video/tmp/$v/video_contract/contract-$v.log" "$LOG/video-contract-$v.txt"
done

emu=$LOG/test-video-emulate.log
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if "$NVCC" -std=c++17 -O2 -Iinclude -Isrc -Ibmp -Icuda tests/cuda/video_convert_emulate.cu src/video/convert.cpp \
     src/common/image.cpp src/cli/cli.cpp src/common/parse.cpp src/common/timing.cpp src/common/config.cpp \
     -o build/video_convert_emulate >"$emu" 2>&1 &&
   build/video_convert_emulate >>"$emu" 2>&1; then
  echo "1 passed, 0 failed, 0 skipped" >>"$emu"
else
  echo "0 passed, 1 failed, 0 skipped" >>"$emu"
fi
echo "test-video-emulate: $(tail -n1 "$emu")"

pids=()
for v in cuda-naive cuda-opt; do
  gpu_sanitize memcheck $v video_line_blue & pids+=($!)
  gpu_sanitize memcheck $v video_capsules_grid & pids+=($!)
  gpu_sanitize memcheck $v video_out_odd & pids+=($!)
done
gpu_sanitize memcheck cuda-opt video_capsules_all & pids+=($!)
gpu_sanitize racecheck cuda-opt video_line_blue & pids+=($!)
gpu_sanitize racecheck cuda-opt video_capsules_all_csv_fft & pids+=($!)
# cuda-opt's host path under memcheck (a case of its own: gpu_sanitize names logs by pattern).
(export PARVIS_TUNING=video.host_convert=1; gpu_sanitize memcheck cuda-opt video_line_422_blue) & pids+=($!)
wait "${pids[@]}" "$host_pid"

VERSIONS="cuda-naive cuda-opt" timeout 300 bench/run_video.sh --seconds 1 --frames 96 \
  >"$LOG/bench-video.txt" 2>"$LOG/bench-video.err"
echo "bench video: exit $?"
tail -n 20 "$LOG/bench-video.txt"
