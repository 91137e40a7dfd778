#!/usr/bin/env bash
# tests/gpu/matchbatch.sh LOGDIR — cuda-opt's batch source and RGB grey (DESIGN.md "Template
# matching: batches" and "an RGB source made grey on the GPU"); alone in ~2-3 minutes:
#   tests/gpu_check.sh build/gpu-matchbatch matchbatch
# (tests/gpu/match.sh runs every match case, these included, with the defaults.) Here:
#   1. the batch and upload cases (matchbatch-*, matchupload-*) and the batch contract
#      (tests/match_batch.sh: every batch item equals its single call, --explain says the
#      source's upload was made once, then reused) on seq and cuda-opt with PARVIS_GRAY=device
#      (the default) and host; the batch cases on cuFFT (PARVIS_NO_NTT=1) and with the driver's
#      pageable upload (PARVIS_UPLOAD=pageable);
#   2. compute-sanitizer memcheck (leak check) on the batch cases under both PARVIS_GRAY values
#      and on the upload cases (single RGB calls) under host;
#   3. three batch contracts at once on the GPU (the concurrent load under which batch items
#      once came out wrong: docs/DESIGN.md "Known problem");
#   4. the timing lines of one RGB call both ways and of a batch (upload, device copies).
set -u
LOG=$1
. tests/gpu/lib.sh
gpu_test test-matchbatch-gray-device PARVIS_GRAY=device -- seq cuda-opt --only 'match[bu]'
gpu_test test-matchbatch-gray-host PARVIS_GRAY=host -- seq cuda-opt --only 'match[bu]'
gpu_test test-matchbatch-no-ntt PARVIS_NO_NTT=1 -- cuda-opt --only matchbatch
gpu_test test-matchbatch-pageable PARVIS_UPLOAD=pageable -- cuda-opt --only 'match[bu]'
pids=()
gpu_sanitize memcheck cuda-opt matchbatch gray-device & pids+=($!)
PARVIS_GRAY=host gpu_sanitize memcheck cuda-opt matchbatch gray-host & pids+=($!)
PARVIS_GRAY=host gpu_sanitize memcheck cuda-opt matchupload gray-host & pids+=($!)
wait "${pids[@]}"
pids=()
for k in 1 2 3; do
  GEN=bin/parvis-gen tests/match_batch.sh bin/cuda-opt build/testdata "build/test-batch-concurrent-$k" \
    >"$LOG/test-batch-concurrent-$k.log" 2>&1 & pids+=($!)
done
wait "${pids[@]}"
for k in 1 2 3; do
  echo "test-batch-concurrent-$k: $(tail -n1 "$LOG/test-batch-concurrent-$k.log")"
  grep -E '^FAIL' "$LOG/test-batch-concurrent-$k.log" | head -n 5
done
# The timing lines of one RGB call both ways (the upload with the GPU's conversion, or the host's
# grey then the grey upload) and of a batch (the first upload, then the device copies).
for g in device host; do
  PARVIS_GRAY=$g bin/cuda-opt match build/testdata/capsules_720p.bmp build/testdata/capsules_720p_template.bmp --explain 2>&1 >/dev/null |
    sed "s/^/gray=$g: /"
done
bin/cuda-opt match build/testdata/capsules_720p.bmp build/testdata/capsules_720p_template.bmp images/capsule_template.bmp \
  build/testdata/capsules_720p_template.bmp --method fft --explain 2>&1 | grep -E '^method|^time match:' | sed 's/^/batch: /'
