#!/usr/bin/env bash
# tests/gpu/matchbatch.sh LOGDIR — cuda-opt's batch source and RGB grey (DESIGN.md "Template
# matching: batches" and "an RGB source made grey on the GPU"); alone in ~2-3 minutes:
#   tests/gpu_check.sh build/gpu-matchbatch matchbatch
# (tests/gpu/match.sh runs every match case, these included, with the defaults.) Here:
#   1. the batch and upload cases (matchbatch-*, matchupload-*) and the batch contract
#      (tests/match_batch.sh: every batch item equals its single call, --explain says the
#      source's upload was made once, then reused) on seq and cuda-opt with PARVIS_GRAY=device
#      (the default) and host; the batch cases on cuFFT (PARVIS_TUNING=match.ntt=0) and with the driver's
#      pageable upload (PARVIS_UPLOAD=pageable);
#   2. compute-sanitizer memcheck (leak check) on the batch cases under both PARVIS_GRAY values
#      and on the upload cases (single RGB calls) under host;
#   3. three batch contracts at once on the GPU (the concurrent load under which batch items
#      once came out wrong: docs/DESIGN.md "Known problem");
#   4. --explain: the source's upload and transform made once, then reused (per FFT kind: a
#      batch of NTT, cuFFT 32-bit and 64-bit templates, also with match.ntt=0 and under
#      memcheck), and the timing lines of one RGB call both ways and of a batch.
# The batch contract (tests/match_batch.sh, the setup line of match_batch.cases) runs under every
# gpu_test below, so with match.ntt=0 too: there its batches of every FFT kind equal the
# single calls and seq on cuFFT alone.
set -u
LOG=$1
. tests/gpu/lib.sh
gpu_test test-matchbatch-gray-device PARVIS_GRAY=device -- seq cuda-opt --only 'match[bu]'
gpu_test test-matchbatch-gray-host PARVIS_GRAY=host -- seq cuda-opt --only 'match[bu]'
gpu_test test-matchbatch-no-ntt PARVIS_TUNING=match.ntt=0 -- cuda-opt --only matchbatch
gpu_test test-matchbatch-pageable PARVIS_UPLOAD=pageable -- cuda-opt --only 'match[bu]'
pids=()
gpu_sanitize memcheck cuda-opt matchbatch gray-device & pids+=($!)
PARVIS_GRAY=host gpu_sanitize memcheck cuda-opt matchbatch gray-host & pids+=($!)
PARVIS_GRAY=host gpu_sanitize memcheck cuda-opt matchupload gray-host & pids+=($!)
# The cuFFT slot of 32-bit words, made and read (by default those templates take the NTT).
PARVIS_TUNING=match.ntt=0 gpu_sanitize memcheck cuda-opt matchbatch-tpl-fft no-ntt & pids+=($!)
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
  say "PARVIS_GRAY=bogus: exit 1 (usage, as every PARVIS_* value), one line" '[ $rc = 1 ] && [ "$(wc -l <"$o/bogus.err")" = 1 ] && grep -q "PARVIS_GRAY must be one of host|device" "$o/bogus.err"'
  "$CUDA_OPT" match $D/noise_1027x769.bmp $D/noise_31x17.bmp $D/noise_1027x769_tpl.bmp $D/noise_31x17.bmp --explain >"$o/batch.out" 2>"$o/batch.err"
  say "rgb batch: upload made once, then reused twice" \
    '[ "$(grep -c "the source'"'"'s upload made" "$o/batch.out")" = 1 ] && [ "$(grep -c "the source'"'"'s upload reused" "$o/batch.out")" = 2 ]'
  say "rgb batch timing: one RGB upload kept, two device copies" \
    '[ "$(grep -c "RGB bytes, grey made on the GPU, kept on the device for the batch" "$o/batch.err")" = 1 ] && [ "$(grep -c "copied on the device" "$o/batch.err")" = 2 ]'
  "$CUDA_OPT" match $D/noise_1027x769_gray.pgm $D/noise_31x17.bmp $D/noise_31x17.bmp --method direct --explain >"$o/gbatch.out" 2>"$o/gbatch.err"
  say "grey batch (direct): upload made, then reused" \
    '[ "$(grep -c "upload made" "$o/gbatch.out")" = 1 ] && [ "$(grep -c "upload reused" "$o/gbatch.out")" = 1 ]'
  say "grey batch (direct): no source transform (none is made for the direct method)" \
    '! grep -q "transform" "$o/gbatch.out"'
  # The source's transform per FFT kind (cuda/match/opt_source.cuh): templates 37x23 and 31x17
  # take the exact NTT, the bright 257x256 cuFFT with 32-bit integral words (255 sum(T) >= p:
  # no NTT), 259x257 cuFFT with 64-bit words (w h 255^2 >= 2^32), each kind's transform made by its first
  # template and reused by the later ones, after the other kinds'. match.ntt=0: cuFFT only,
  # the small templates in the 32-bit kind.
  K=$o/kinds; mkdir -p "$K"
  GENX=${GEN:-bin/parvis-gen}
  "$GENX" crop $D/noise_1027x769.bmp 300 200 401 299 "$K/n.bmp" && "$GENX" crop "$K/n.bmp" 101 57 37 23 "$K/t37.bmp" &&
    "$GENX" crop "$K/n.bmp" 300 200 31 17 "$K/t31.bmp" && "$GENX" crop "$K/n.bmp" 17 21 257 256 "$K/k257.bmp" &&
    "$GENX" crop "$K/n.bmp" 130 40 259 257 "$K/k259.bmp" >/dev/null
  KB=("$K/n.bmp" "$K/t37.bmp" "$K/k257.bmp" "$K/t37.bmp" "$K/k259.bmp" "$K/k257.bmp" "$K/k259.bmp" "$K/t31.bmp")
  transform_said() { grep '^method:' "$1" | sed -n "s/.*; batch: the source's transform \(made\|reused\).*/\1/p" | tr '\n' ' '; }
  method_line() { grep '^method:' "$1" | sed -n "${2}p"; }
  kinds_are() {  # FILE NTT_ITEMS: those items the NTT, 2 and 5 cuFFT 32-bit, 4 and 6 64-bit
    local i; for i in $2; do method_line "$1" "$i" | grep -q "exact NTT" || return 1; done
    for i in 2 5; do method_line "$1" $i | grep -q "32-bit integral image words" || return 1; done
    for i in 4 6; do method_line "$1" $i | grep -q "64-bit integral image words" || return 1; done
  }
  for top in 1 3; do
    "$CUDA_OPT" match "${KB[@]}" --method fft --top $top --explain >"$o/kinds$top.out" 2>"$o/kinds$top.err"
    say "kinds batch --top $top: transform made, made, reused, made, reused, reused, reused ($(transform_said "$o/kinds$top.out"))" \
      '[ "$(transform_said "$o/kinds$top.out")" = "made made reused made reused reused reused " ]'
    say "kinds batch --top $top: items 1 3 7 NTT, 2 and 5 cuFFT 32-bit, 4 and 6 64-bit" 'kinds_are "$o/kinds$top.out" "1 3 7"'
    PARVIS_TUNING=match.ntt=0 "$CUDA_OPT" match "${KB[@]}" --method fft --top $top --explain >"$o/kinds-nontt$top.out" 2>"$o/kinds-nontt$top.err"
    say "kinds batch --top $top, match.ntt=0: made, reused, reused, made, reused, reused, reused ($(transform_said "$o/kinds-nontt$top.out"))" \
      '[ "$(transform_said "$o/kinds-nontt$top.out")" = "made reused reused made reused reused reused " ]'
    same=0; cmp -s <(grep -v "^method" "$o/kinds$top.out") <(grep -v "^method" "$o/kinds-nontt$top.out") || same=1
    say "kinds batch --top $top: the same answers with and without the NTT" '[ $same = 0 ] && [ -s "$o/kinds$top.out" ]'
  done
  "$CUDA_OPT" match "$K/n.bmp" "$K/k257.bmp" --method fft --explain >"$o/kinds-single.out" 2>&1
  say "a single call: no batch note" '[ -s "$o/kinds-single.out" ] && ! grep -q "batch:" "$o/kinds-single.out"'
  # The maker's and readers' graphs under memcheck (every kind, fused and map paths).
  for top in 1 3; do
    rc=0; tests/sanitize.sh memcheck "$o/cs-kinds" "$CUDA_OPT" match "${KB[@]}" --method fft --top $top >"$o/kinds-cs$top.out" 2>"$o/kinds-cs$top.err" || rc=$?
    same=0; cmp -s <(grep -v "^method" "$o/kinds$top.out") "$o/kinds-cs$top.out" || same=1
    say "kinds batch --top $top under memcheck: exit 0, no report, the same answers (rc $rc)" '[ $rc = 0 ] && [ $same = 0 ]'
  done
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
# The FFT kinds batch's timing lines (items 1-7: NTT made, cuFFT 32 made, NTT reused, cuFFT 64
# made, then readers): the compute of a reader against its kind's maker is what sharing saves.
grep -E '^time match:' build/test-matchbatch-explain/kinds1.err | sed 's/^/kinds batch: /'
