#!/usr/bin/env bash
# tests/gpu/match.sh LOGDIR — template matching and the colour filter on the CUDA versions
# (called by tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive cuda-opt on the match, colour and grey cases, then cuda-opt's match
#      cases again with PARVIS_TUNING=match.ntt=0,match.mapped_result=0 (its FFT method takes the
#      exact NTT for most templates; this keeps its cuFFT path and the copied result record
#      checked), and with match.graph=0,match.fft_tune=0,match.direct_rows=4 (uncaptured runs,
#      the untimed cuFFT size, the other direct kernel), and with match.prune_from=0 (the
#      --min-distance prune on every list; with ntt=0);
#      tests/ncc_check.py on both (NCC maps against numpy's definition and OpenCV),
#      tests/mask_check.py (masked maps likewise) and the masked kernel's host emulation; cuda-opt's
#      normed kernels emulated on the host, and its matchncc cases with match.ncc_host=1
#   2. compute-sanitizer memcheck (leak check) on the match and colour cases, racecheck on the
#      matchcuda cases, of both versions, side by side; cuda-opt's masked FFT / NTT cases
#      (matchmask-fft*) also under memcheck with match.ntt=0 (cuFFT) and racecheck
#   3. ./main bench match on both versions, and the GPU-side event timings; the masked rows
#      (bench-mask.txt: the masked direct kernel, and cuda-opt's masked FFT / NTT against it)
#   (1 and 2 include the batches, matchbatch-* of match_batch.cases, and 1 their contract,
#   tests/match_batch.sh per version: every batch equals its single calls; memcheck on them in 2)
#   4. cuda-opt's upload (PARVIS_UPLOAD=auto|pageable|staged and the upload.* keys, cuda/upload/):
#      the piece plan's and the tuning's host test, the matchupload and matchcuda cases under each
#      mode and tuning, memcheck under staged with odd pieces and under pageable, and
#      ./main bench upload (bench-upload.txt)
#   5. bench/run_match_batch.sh: 8 templates / 8 sources in one call against 8 calls
#   (cuda-opt's shared batch source and its RGB source made grey on the GPU: tests/gpu/matchbatch.sh)
set -u
LOG=$1
. tests/gpu/lib.sh
gpu_test test-match -- seq cuda-naive cuda-opt --only match
gpu_test test-color -- seq cuda-naive cuda-opt --only color
gpu_test test-grey -- seq cuda-naive cuda-opt --only grey
gpu_test test-match-no-ntt PARVIS_TUNING=match.ntt=0,match.mapped_result=0 -- cuda-opt --only match
gpu_test test-match-untuned PARVIS_TUNING=match.graph=0,match.fft_tune=0,match.direct_rows=4 -- cuda-opt --only matchcuda
# --all --min-distance's device prune on every list (it starts past 1024 listed positions): on
# the exact maps and keys, and on cuFFT's map (on the normed ends widened by the test hook:
# tests/normed_fft_check.sh).
gpu_test test-match-prune PARVIS_TUNING=match.prune_from=0 -- cuda-opt --only match
gpu_test test-match-prune-cufft PARVIS_TUNING=match.prune_from=0,match.ntt=0 -- cuda-opt --only match
# cuda-opt's normed kernels on the host (tests/cuda/normed_emulate.cu: W1's thread body and W3's
# score against seq's conversion, bit for bit), and the matchncc cases with match.ncc_host=1
# (the former host conversion), for comparison with the device path run above.
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# emulate NAME FILES...: builds FILES with nvcc (host code, no GPU needed) into build/NAME and
# runs it; LOG/test-NAME.log ends with the pass / fail count line, echoed as test-NAME.
emulate() {
  local name=$1 log=$LOG/test-$1.log
  shift
  if "$NVCC" -std=c++17 -O2 -Iinclude -Isrc -Ibmp -Icuda "$@" -o "build/$name" >"$log" 2>&1 &&
     "build/$name" >>"$log" 2>&1; then
    echo "1 passed, 0 failed, 0 skipped" >>"$log"
  else
    echo "0 passed, 1 failed, 0 skipped" >>"$log"
  fi
  echo "test-$name: $(tail -n1 "$log")"
}
# (Every emulation of match code links tests/cuda/emulate_link.cpp: match.cpp's weak
# matcher_run_rgb calls matcher_run, which only the versions define; and mask.cpp.)
EMU_LINK="src/match/mask.cpp src/match/match.cpp src/common/image.cpp src/cli/cli.cpp src/common/parse.cpp src/common/timing.cpp tests/cuda/emulate_link.cpp"
emulate normed-emulate tests/cuda/normed_emulate.cu $EMU_LINK
gpu_test test-match-ncc-host PARVIS_TUNING=match.ncc_host=1 -- cuda-opt --only matchncc
# NCC / ccorr-normed (match_ncc.cases run above, as matchncc-*): the maps against their
# definitions (numpy, exact sums) and OpenCV on both CUDA versions.
python3 tests/ncc_check.py bin/cuda-naive bin/cuda-opt >"$LOG/ncc-check.log" 2>&1
echo "ncc-check: $(tail -n1 "$LOG/ncc-check.log")"
grep -E '^FAIL' "$LOG/ncc-check.log" | head -n 20
# The normed metrics by cuFFT where its rounding matters (the bound widened and every value moved
# within it, match.fft_bound_scale): equal to direct, or the re-scoring missed a position.
tests/normed_fft_check.sh bin/cuda-opt build/testdata build/normed-fft-check >"$LOG/test-normed-fft-wobble.log" 2>&1
echo "test-normed-fft-wobble: $(tail -n1 "$LOG/test-normed-fft-wobble.log")"
grep -E '^FAIL' "$LOG/test-normed-fft-wobble.log" | head -n 20
# --mask (match_mask.cases run above, as matchmask-*, and under memcheck below): the masked maps
# against numpy's definition and OpenCV on both CUDA versions, and the shared masked kernel's
# body on the host against seq's definition (tests/cuda/mask_emulate.cu; nvcc, no GPU).
python3 tests/mask_check.py bin/cuda-naive bin/cuda-opt >"$LOG/mask-check.log" 2>&1
echo "mask-check: $(tail -n1 "$LOG/mask-check.log")"
grep -E '^FAIL' "$LOG/mask-check.log" | head -n 20
emulate mask-emulate tests/cuda/mask_emulate.cu $EMU_LINK
# cuda-opt's masked FFT / NTT (cuda/match/opt_mask_fft.cu): its per-position arithmetic on the
# host (tests/cuda/mask_fft_emulate.cu: run sums, the exact word, cuFFT's rank bounds, the
# re-scoring) against seq's definition; its cases (matchmask-fft*, run above on both paths:
# NTT by default, cuFFT under test-match-no-ntt) under memcheck with match.ntt=0 and under
# racecheck (block scans and sums in shared memory) below.
emulate mask-fft-emulate tests/cuda/mask_fft_emulate.cu $EMU_LINK
pids=()
for v in cuda-naive cuda-opt; do
  gpu_sanitize memcheck $v match & pids+=($!)
  gpu_sanitize memcheck $v color & pids+=($!)
  gpu_sanitize racecheck $v matchcuda & pids+=($!)
done
PARVIS_TUNING=match.ntt=0 gpu_sanitize memcheck cuda-opt matchmask-fft nontt & pids+=($!)
gpu_sanitize racecheck cuda-opt matchmask-fft & pids+=($!)
wait "${pids[@]}"

VERSIONS="cuda-naive cuda-opt" bench/run_match.sh --seconds 0.5 >"$LOG/bench-match.txt" 2>"$LOG/bench-match.err"
echo "bench match: exit $?"
bench/run_cuda_match_timing.sh cuda-naive 10 time >"$LOG/timing-cuda-naive.txt" 2>&1
bench/run_cuda_match_timing.sh cuda-opt 30 time >"$LOG/timing-cuda-opt.txt" 2>&1
echo "timing: exit $?"
timeout 120 bench/run_cuda_match_timing.sh cuda-opt 1 error >"$LOG/fft-error.txt" 2>&1
echo "fft error: exit $?"
for wl in 640x480/64x64 1920x1080/16x16; do  # --mask: the shared direct kernel (bench-mask.txt)
  for v in cuda-naive cuda-opt; do
    bin/$v bench match --workload "$wl" --method ssd-masked,sad-masked,ncc-masked --seconds 0.5 \
      2>>"$LOG/bench-mask.err" | grep -E 'masked ' >>"$LOG/bench-mask.txt"
  done
done
# cuda-opt's masked FFT / NTT against its masked direct kernel (the same ring mask; the
# seed's capsule size: cuFFT, ~10^11 pixel operations direct), and match.ntt=0 on 640x480.
for wl in 640x480/64x64 1920x1080/16x16 1326x1025/479x432; do
  bin/cuda-opt bench match --workload "$wl" --method ssd-maskfft,ncc-maskfft,ssd-maskdirect,ssd-masked \
    --seconds 0.5 2>>"$LOG/bench-mask.err" | grep -E 'mask' >>"$LOG/bench-mask.txt"
done
PARVIS_TUNING=match.ntt=0 bin/cuda-opt bench match --workload 640x480/64x64 --method ssd-maskfft,ncc-maskfft \
  --seconds 0.5 2>>"$LOG/bench-mask.err" | grep -E 'mask' | sed 's/$/ (match.ntt=0)/' >>"$LOG/bench-mask.txt"
echo "mask bench: exit $? (see $LOG/bench-mask.txt)"

# cuda-opt's upload of the user's pageable image (cuda/upload/): the host test of the piece plan
# and of the tuning's reading; the matchupload (1x1, 7x3, 1327x1025 RGB, 3840x2161) and matchcuda
# cases under each mode (the default, auto, runs them in test-match and memcheck-cuda-opt-match
# above; staged also with 5000-byte pieces and 3 threads: pieces that divide no row count) and
# tuning; memcheck on the matchupload cases; then ./main bench upload
# (bench-upload.txt: GB/s of every way at 0.26-100 MB, the numbers that choose auto's threshold,
# the pieces and the threads; docs/decisions/006, 010).
emulate upload-pieces tests/cuda/upload_pieces.cu cuda/upload/plan.cu cuda/upload/tuning.cu src/common/config.cpp
emulate upload-pool tests/cuda/upload_pool_stress.cpp -lpthread
for mode in pageable staged; do
  gpu_test "test-upload-$mode" PARVIS_UPLOAD=$mode -- cuda-opt --only upload
  gpu_test "test-upload-$mode-cuda" PARVIS_UPLOAD=$mode -- cuda-opt --only matchcuda
done
gpu_test test-upload-odd PARVIS_UPLOAD=staged PARVIS_TUNING=upload.chunk=5000,upload.threads=3 -- cuda-opt --only upload
# The pinned cap: 3 threads x 2 slots in 60000 bytes, pieces of 10000 bytes that divide no row
# (every size past 60000 bytes through the slots); 12 threads in 1 MiB (the slots with padded
# rows and the RGB pieces' conversion on every worker, as one pass did not fit).
gpu_test test-upload-cap PARVIS_TUNING=upload.pinned=60000,upload.threads=3,upload.min=0 -- cuda-opt --only upload
gpu_test test-upload-slots PARVIS_TUNING=upload.pinned=1M -- cuda-opt --only upload
# The pool asleep at the copy (no hot window after prepare); staged on 1 and 2 threads (the
# one-pass caller copies pieces too); memcpy into the pinned memory (a host without SSE2).
gpu_test test-upload-cold PARVIS_TUNING=upload.hot=0 -- cuda-opt --only upload
gpu_test test-upload-1thr PARVIS_UPLOAD=staged PARVIS_TUNING=upload.threads=1 -- cuda-opt --only upload
gpu_test test-upload-2thr PARVIS_UPLOAD=staged PARVIS_TUNING=upload.threads=2,upload.min=0 -- cuda-opt --only upload
gpu_test test-upload-memcpy PARVIS_TUNING=upload.nt=0 -- cuda-opt --only upload
# 8 threads (what an 8-thread host gets); the trace's run (its events and the pull's clock on the
# stream must leave the bits as they are).
gpu_test test-upload-8thr PARVIS_TUNING=upload.threads=8 -- cuda-opt --only upload
gpu_test test-upload-trace PARVIS_TUNING=upload.trace=1 -- cuda-opt --only matchupload
# The source read ahead by the copy's threads (the default reads sources of up to 3/4 of the L2
# whole): off; in slices of at most 512 KiB a thread (1.36 and 4.08 MB sliced, 8.3 MB not read);
# every size whole.
gpu_test test-upload-noreadahead PARVIS_TUNING=upload.readahead=0 -- cuda-opt --only upload
gpu_test test-upload-readslices PARVIS_TUNING=upload.readahead=512K -- cuda-opt --only upload
gpu_test test-upload-readall PARVIS_TUNING=upload.readahead=64M -- cuda-opt --only upload
PARVIS_TUNING=upload.readahead=512K gpu_sanitize memcheck cuda-opt matchupload readslices
# One pass with odd pieces and claims: 5000-byte pieces (up to 52 a claim) on 3 threads; 4 KiB
# pieces (more pieces than the pull has blocks).
gpu_test test-upload-claims PARVIS_UPLOAD=staged PARVIS_TUNING=upload.piece=5000,upload.threads=3,upload.min=0 -- cuda-opt --only upload
gpu_test test-upload-small-pieces PARVIS_TUNING=upload.piece=4K,upload.min=0 -- cuda-opt --only upload
# The pageable copy with the grey made on the host (odd grey widths, 2-D copies) and its memcheck.
gpu_test test-upload-pageable-hostgrey PARVIS_UPLOAD=pageable PARVIS_GRAY=host -- cuda-opt --only matchupload
PARVIS_UPLOAD=staged PARVIS_TUNING=upload.chunk=5000,upload.threads=3 gpu_sanitize memcheck cuda-opt matchupload odd
PARVIS_UPLOAD=pageable gpu_sanitize memcheck cuda-opt matchupload pageable
bin/cuda-opt bench upload --seconds ${UPLOAD_BENCH_SECONDS:-0.1} >"$LOG/bench-upload.txt" 2>"$LOG/bench-upload.err"
echo "bench upload: exit $? (see $LOG/bench-upload.txt)"

# Batches (issue 14): one process, one context, against the same work as separate calls.
VERSIONS="cuda-naive cuda-opt" bench/run_match_batch.sh 3 >"$LOG/bench-match-batch.txt" 2>&1
echo "bench match batch: exit $? (see $LOG/bench-match-batch.txt)"
grep -E 'calls/batch' "$LOG/bench-match-batch.txt"

