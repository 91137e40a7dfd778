#!/usr/bin/env bash
# tests/gpu/video.sh LOGDIR — the video pipeline on the CUDA versions (called by
# tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive cuda-opt on the video cases: every case against seq bit for bit,
#      and per version the video contract (tests/video_contract.sh: each frame = ./main match on
#      the saved frame, ground truth, truncation; ffmpeg cases where ffmpeg is installed)
#   2. compute-sanitizer memcheck (leak check) on short clips (the production line with the
#      colour check, the capsule grid, the odd-sized clip), both versions side by side
#   3. ./main bench video on both versions (1920x1080 4:2:0, templates 16, 64, 128; end to end
#      and its bounds), rows appended to bench/results/times.csv
# About 3 minutes on an H100.
set -u
LOG=$1
. tests/gpu/lib.sh
gpu_test test-video -- seq cuda-naive cuda-opt --only video
for v in cuda-naive cuda-opt; do
  [ -f "build/test-test-video/tmp/contract-$v.log" ] &&
    cp "build/test-test-video/tmp/contract-$v.log" "$LOG/video-contract-$v.txt"
done
pids=()
for v in cuda-naive cuda-opt; do
  gpu_sanitize memcheck $v video_line_blue & pids+=($!)
  gpu_sanitize memcheck $v video_capsules_grid & pids+=($!)
  gpu_sanitize memcheck $v video_out_odd & pids+=($!)
done
wait "${pids[@]}"

VERSIONS="cuda-naive cuda-opt" timeout 300 bench/run_video.sh --seconds 1 >"$LOG/bench-video.txt" 2>"$LOG/bench-video.err"
echo "bench video: exit $?"
tail -n 12 "$LOG/bench-video.txt"
