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
# What --explain and the timing lines say (test-matchbatch-explain.log): where the grey was made
# and whether a batch's source was uploaded or copied on the device.
{
  p=0 f=0 D=build/testdata CUDA_OPT=${CUDA_OPT:-bin/cuda-opt}
  say() { if eval "$2"; then p=$((p + 1)); echo "ok    $1"; else f=$((f + 1)); echo "FAIL  $1"; fi; }
  o=build/test-matchbatch-explain; mkdir -p "$o"
  PARVIS_GRAY=device "$CUDA_OPT" match $D/noise_1027x769.bmp $D/noise_31x17.bmp --explain >"$o/dev.out" 2>"$o/dev.err"
  say "rgb device: explain and timing say grey made on the GPU" \
    'grep -q "grey made on the GPU" "$o/dev.out" && grep -q "RGB bytes, grey made on the GPU" "$o/dev.err" && ! grep -q "grey made on the host" "$o/dev.err"'
  PARVIS_GRAY=host "$CUDA_OPT" match $D/noise_1027x769.bmp $D/noise_31x17.bmp --explain >"$o/host.out" 2>"$o/host.err"
  say "rgb host: grey made on the host, grey bytes uploaded" \
    '! grep -q "grey made on the GPU" "$o/host.out" && grep -q "grey made on the host" "$o/host.err" && ! grep -q "RGB bytes" "$o/host.err"'
  same=0; cmp -s <(grep -v "^method" "$o/dev.out") <(grep -v "^method" "$o/host.out") || same=1
  say "rgb device and host: the same answer" '[ $same = 0 ] && [ -s "$o/dev.out" ]'
  "$CUDA_OPT" match $D/noise_1027x769.bmp $D/noise_31x17.bmp --subpixel >/dev/null 2>"$o/sub.err"
  say "rgb --subpixel: grey made on the host" 'grep -q "grey made on the host" "$o/sub.err"'
  "$CUDA_OPT" match $D/noise_1027x769_gray.pgm $D/noise_31x17.bmp >/dev/null 2>"$o/grey.err"
  say "grey source: no conversion anywhere" '! grep -q "grey made" "$o/grey.err" && ! grep -q "RGB bytes" "$o/grey.err"'
  rc=0; PARVIS_GRAY=bogus "$CUDA_OPT" match $D/noise_1027x769.bmp $D/noise_31x17.bmp >/dev/null 2>"$o/bogus.err" || rc=$?
  say "PARVIS_GRAY=bogus: exit 1 (usage, as every PARVIS_* value), one line" '[ $rc = 1 ] && [ "$(wc -l <"$o/bogus.err")" = 1 ] && grep -q "PARVIS_GRAY must be host or device" "$o/bogus.err"'
  "$CUDA_OPT" match $D/noise_1027x769.bmp $D/noise_31x17.bmp $D/noise_1027x769_tpl.bmp $D/noise_31x17.bmp --explain >"$o/batch.out" 2>"$o/batch.err"
  say "rgb batch: upload made once, then reused twice" \
    '[ "$(grep -c "the source'"'"'s upload made" "$o/batch.out")" = 1 ] && [ "$(grep -c "the source'"'"'s upload reused" "$o/batch.out")" = 2 ]'
  say "rgb batch timing: one RGB upload kept, two device copies" \
    '[ "$(grep -c "RGB bytes, grey made on the GPU, kept on the device for the batch" "$o/batch.err")" = 1 ] && [ "$(grep -c "copied on the device" "$o/batch.err")" = 2 ]'
  "$CUDA_OPT" match $D/noise_1027x769_gray.pgm $D/noise_31x17.bmp $D/noise_31x17.bmp --method direct --explain >"$o/gbatch.out" 2>"$o/gbatch.err"
  say "grey batch (direct): upload made, then reused" \
    '[ "$(grep -c "upload made" "$o/gbatch.out")" = 1 ] && [ "$(grep -c "upload reused" "$o/gbatch.out")" = 1 ]'
  echo "$p passed, $f failed, 0 skipped"
} >"$LOG/test-matchbatch-explain.log" 2>&1
echo "test-matchbatch-explain: $(tail -n1 "$LOG/test-matchbatch-explain.log")"
grep -E '^FAIL' "$LOG/test-matchbatch-explain.log"
# The timing lines of one RGB call both ways (the upload with the GPU's conversion, or the host's
# grey then the grey upload) and of a batch (the first upload, then the device copies).
for g in device host; do
  PARVIS_GRAY=$g bin/cuda-opt match build/testdata/capsules_720p.bmp build/testdata/capsules_720p_template.bmp --explain 2>&1 >/dev/null |
    sed "s/^/gray=$g: /"
done
bin/cuda-opt match build/testdata/capsules_720p.bmp build/testdata/capsules_720p_template.bmp images/capsule_template.bmp \
  build/testdata/capsules_720p_template.bmp --method fft --explain 2>&1 | grep -E '^method|^time match:' | sed 's/^/batch: /'
