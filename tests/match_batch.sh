#!/usr/bin/env bash
# tests/match_batch.sh EXE DATA WORKDIR — the batch contract of `match` on one version's
# executable (issue 14): a batch prints exactly what the separate single calls print, item by
# item, and writes the files they write:
#   text:  "item I/N: source S template T" then the single call's lines, for each item;
#   JSON:  {"operation": "match", "batch": MODE, "count": N, "items": [...]}, each item the
#          single call's object with "source_file" and "template_file" appended;
#   --map: NAME-I.npy = the single call's map (one item: NAME.npy); with --sources, --out:
#          NAME-I.EXT = the single call's picture.
# On noise of odd sizes, templates of different sizes in one batch (each method: the CPU FFT
# reuses the source's transform across them; cuda-opt per FFT kind: exact NTT, cuFFT with 32-
# and 64-bit integral words, in one batch, whose text is also compared with seq's, bin/seq
# beside EXE), the capsule scenes, and a directory of sources of
# different sizes (two of one size: the template's plan reused). Prints ok / FAIL lines and
# "N passed, N failed, N skipped"; exit 1 on any failure, with the first also on stderr
# (tests/cases/match_batch.cases runs it per version as a setup line).
set -u
EXE=$1 DATA=$2 WORK=$3
GEN=${GEN:-$(dirname "$EXE")/parvis-gen}
rm -rf "$WORK" && mkdir -p "$WORK"
passed=0 failed=0 skipped=0 first_failure=""
pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; [ -n "$first_failure" ] || first_failure="$*"; }
finish() {
  echo "$passed passed, $failed failed, $skipped skipped"
  [ -z "$first_failure" ] || { echo "match batch: $first_failure" >&2; exit 1; }
  exit 0
}
if ! "$EXE" match "$DATA/flat_64x48.bmp" "$DATA/flat_64x48.bmp" >/dev/null 2>"$WORK/probe.err" &&
   grep -q "is not implemented in" "$WORK/probe.err"; then
  echo "skip  match batch: $(head -n1 "$WORK/probe.err")"
  skipped=1
  finish
fi
# A build without FFTW refuses --method fft (exit 2, "needs FFTW"): those checks skip there.
FFT=1
"$EXE" match "$DATA/flat_64x48.bmp" "$DATA/flat_64x48.bmp" --method fft >/dev/null 2>"$WORK/fft.err" ||
  { grep -q "needs FFTW" "$WORK/fft.err" && FFT=""; }
COLOR=(--color blue)
"$EXE" match "$DATA/capsules.bmp" "$DATA/capsule_template.bmp" --color blue >/dev/null 2>"$WORK/color.err" ||
  { grep -q "is not implemented in" "$WORK/color.err" && COLOR=(); }

T=$WORK/in
N=$T/noise_401x299.bmp
mkdir -p "$T"
"$GEN" crop "$DATA/noise_1027x769.bmp" 300 200 401 299 "$N" &&
  "$GEN" crop "$N" 101 57 37 23 "$T/t37x23.bmp" &&
  "$GEN" crop "$N" 300 200 31 17 "$T/t31x17.bmp" &&
  "$GEN" crop "$N" 5 200 64 64 "$T/t64x64.bmp" &&
  "$GEN" crop "$N" 400 3 1 1 "$T/t1x1.bmp" &&
  "$GEN" crop "$DATA/noise_640x480.bmp" 2 400 1 41 "$T/t1x41.bmp" &&
  "$GEN" crop "$DATA/gradient_257x129.bmp" 200 100 57 29 "$T/grad57x29.bmp" &&
  "$GEN" crop "$DATA/noise_640x480.bmp" 301 133 16 16 "$T/t16.bmp" &&
  "$GEN" crop "$N" 250 30 37 23 "$T/u37x23.bmp" &&
  "$GEN" crop "$DATA/noise_640x480.bmp" 7 9 37 23 "$T/v37x23.bmp" &&
  "$GEN" mask 37x23 ring "$T/ring37x23.pgm" &&
  "$GEN" mask 37x23 holes "$T/holes37x23.pgm" --seed 11 &&
  "$GEN" mask 16x16 holes "$T/holes16.pgm" --seed 12 &&
  "$GEN" crop "$DATA/noise_1027x769_gray.pgm" 211 97 389 277 "$T/grey389x277.pgm" &&
  "$GEN" crop "$T/grey389x277.pgm" 40 200 37 23 "$T/g37x23.pgm" &&
  "$GEN" crop "$T/grey389x277.pgm" 300 11 45 61 "$T/g45x61.pgm" &&
  "$GEN" crop "$N" 17 21 257 256 "$T/k257x256.bmp" &&
  "$GEN" crop "$N" 130 40 259 257 "$T/k259x257.bmp" || { fail "setup: parvis-gen crop, mask"; finish; }
# A directory of sources of different sizes (two of 333x251), in name order, and a file that is
# not an image (skipped with a note).
S=$WORK/sources
mkdir -p "$S"
"$GEN" crop "$DATA/noise_1027x769.bmp" 0 0 333 251 "$S/a_noise333.bmp" &&
  "$GEN" crop "$DATA/noise_640x480.bmp" 250 100 333 251 "$S/b_noise333.bmp" &&
  cp "$DATA/noise_640x480.bmp" "$S/c_noise640.bmp" &&
  cp "$DATA/gradient_257x129.bmp" "$S/d_gradient.bmp" &&
  "$GEN" crop "$DATA/noise_1027x769.bmp" 17 9 401 177 "$S/e_noise401.ppm" || { fail "setup: sources"; finish; }
echo "not an image" >"$S/notes.txt"

# single ARGS...: one call's stdout into $1 (the file), failing the check when it fails.
run() {  # out-file args...
  local out=$1; shift
  "$EXE" match "$@" >"$out" 2>"$out.err"
}
# queue LIST OUT args...: a `match` call for one `./main run-cases LIST` (src/main.cpp: each line
# runs exactly as its own process would), which run_queued LIST then runs and whose stdout and
# stderr it leaves in OUT and OUT.err, its exit status in OUT.rc. One process for a batch's calls
# instead of one each: a CUDA version's process pays for a CUDA context.
queue() {
  local list=$1 out=$2; shift 2
  mkdir -p "$out.d"
  (IFS=$'\t'; printf '%s\n' "$out.d${IFS}match${IFS}$*") >>"$list"
}
run_queued() {
  local list=$1 d rc
  "$EXE" run-cases "$list" >"$list.log" 2>&1 || { fail "run-cases $list exited $?: $(head -n1 "$list.log")"; return 1; }
  while IFS=$'\t' read -r d _; do
    mv "$d/stdout" "${d%.d}" && mv "$d/stderr" "${d%.d}.err" && read -r rc _ <"$d/rc" && echo "$rc" >"${d%.d}.rc" && rm -r "$d"
  done <"$list"
}
ok_rc() { [ "$(cat "$1.rc" 2>/dev/null)" = 0 ]; }

# batch MODE NAME FIXED "ARGS" "ITEMS" [options...]: one batch against each single call.
#   templates: `match FIXED ARGS...` (FIXED the source, ITEMS = ARGS the templates);
#   sources:   `match --template FIXED --sources ARGS...` (ITEMS: the sources it must visit, in
#              order; the JSON run puts the options first, then the positional arguments).
batch() {
  local mode=$1 name=$2 fixed=$3 args=$4 expanded=$5; shift 5
  if [ -z "$FFT" ] && [[ " $* " == *" --method fft "* ]]; then
    skipped=$((skipped + 1)); echo "skip  $name: --method fft needs FFTW (not in this build)"; return
  fi
  local dir=$WORK/$name i=0 n x src tpl items="" cmd
  mkdir -p "$dir"
  read -r -a as <<<"$args"; read -r -a xs <<<"$expanded"; n=${#xs[@]}
  local list=$dir/calls.list
  : >"$list"
  if [ "$mode" = templates ]; then
    queue "$list" "$dir/batch.txt" "$fixed" "${as[@]}" "$@" && queue "$list" "$dir/batch.json" "$fixed" "${as[@]}" "$@" --json
  else
    queue "$list" "$dir/batch.txt" --template "$fixed" --sources "${as[@]}" "$@" &&
      queue "$list" "$dir/batch.json" "${as[@]}" "$@" --json --sources --template "$fixed"
  fi
  for x in "${xs[@]}"; do
    i=$((i + 1))
    if [ "$mode" = templates ]; then src=$fixed tpl=$x; else src=$x tpl=$fixed; fi
    queue "$list" "$dir/one$i.txt" "$src" "$tpl" "$@" && queue "$list" "$dir/one$i.json" "$src" "$tpl" "$@" --json
  done
  run_queued "$list" || return
  ok_rc "$dir/batch.txt" && ok_rc "$dir/batch.json" ||
    { fail "$name: batch exited $(cat "$dir/batch.txt.rc"): $(cat "$dir"/batch.*.err | head -n1)"; return; }
  : >"$dir/want.txt"
  i=0
  for x in "${xs[@]}"; do
    i=$((i + 1))
    if [ "$mode" = templates ]; then src=$fixed tpl=$x; else src=$x tpl=$fixed; fi
    ok_rc "$dir/one$i.txt" && ok_rc "$dir/one$i.json" ||
      { fail "$name: single $x exited $(cat "$dir/one$i.txt.rc"): $(cat "$dir/one$i".*.err | head -n1)"; return; }
    { echo "item $i/$n: source $src template $tpl"; cat "$dir/one$i.txt"; } >>"$dir/want.txt"
    items+="${items:+, }$(head -c -2 "$dir/one$i.json"), \"source_file\": \"$src\", \"template_file\": \"$tpl\"}"
  done
  echo "{\"operation\": \"match\", \"batch\": \"$mode\", \"count\": $n, \"items\": [$items]}" >"$dir/want.json"
  cmp -s "$dir/batch.txt" "$dir/want.txt" || { fail "$name: text differs from the single calls: $(diff "$dir/want.txt" "$dir/batch.txt" | head -n 4 | tr '\n' ' ')"; return; }
  cmp -s "$dir/batch.json" "$dir/want.json" || { fail "$name: JSON differs from the single calls: $(diff "$dir/want.json" "$dir/batch.json" | head -c 300)"; return; }
  pass "$name ($n $mode)"
}
templates() { batch templates "$1" "$2" "$3" "$3" "${@:4}"; }
# like_seq NAME: the batch's text equals seq's for the same batch (the scores are exact on every
# version; seq itself, or no seq beside EXE: nothing to compare).
SEQ=$(dirname "$EXE")/seq
like_seq() {
  local name=$1 dir=$WORK/$1; shift
  [ -x "$SEQ" ] && [ "$(basename "$EXE")" != seq ] || return 0
  [ -s "$dir/batch.txt" ] || return 0  # the batch check failed or skipped: said there
  "$SEQ" match "$@" >"$dir/seq.txt" 2>"$dir/seq.err" || { fail "$name: seq exited $?"; return; }
  cmp -s "$dir/seq.txt" "$dir/batch.txt" && pass "$name: the same text as seq" ||
    fail "$name: text differs from seq's: $(diff "$dir/seq.txt" "$dir/batch.txt" | head -n 4 | tr '\n' ' ')"
}
sources() { batch sources "$1" "$2" "$3" "${@:4}"; }

NT="$T/t37x23.bmp $T/t31x17.bmp $T/t64x64.bmp $T/t1x1.bmp $T/t1x41.bmp"
templates tpl-auto "$N" "$NT" --top 3
templates tpl-direct "$N" "$NT" --method direct --top 2
templates tpl-fft "$N" "$NT" --method fft --top 4
templates tpl-sad "$N" "$NT" --metric sad --top 2
templates tpl-ncc "$N" "$NT" --metric ncc --top 3 --subpixel
templates tpl-ncc-fft "$N" "$NT" --metric ncc --method fft --top 2
templates tpl-ccorr "$N" "$T/t37x23.bmp $T/t64x64.bmp" --metric ccorr-normed
templates tpl-all "$N" "$T/t37x23.bmp $T/t31x17.bmp" --all --max-score 3600000 --min-distance 7
templates tpl-odd "$DATA/gradient_257x129.bmp" "$T/grad57x29.bmp $T/t1x1.bmp $T/t16.bmp $T/t1x41.bmp" --method fft --top 3
templates tpl-repeat "$N" "$T/t37x23.bmp $T/t37x23.bmp $T/t31x17.bmp" --method fft
# Templates of each FFT kind in one batch, each kind's transform made, then reused after other
# kinds' (cuda-opt, opt_source.cuh: the exact NTT for 37x23 and 31x17; cuFFT with 32-bit integral
# words for the bright 257x256, 255 sum(T) >= p; 64-bit words for 259x257, w h 255^2 >= 2^32;
# match.ntt=0: cuFFT 32-bit for the small ones too). The CPU FFT makes one transform for all.
KT="$T/t37x23.bmp $T/k257x256.bmp $T/t37x23.bmp $T/k259x257.bmp $T/k257x256.bmp $T/k259x257.bmp $T/t31x17.bmp"
templates kinds-fft "$N" "$KT" --method fft
like_seq kinds-fft "$N" $KT --method fft
templates kinds-fft-top "$N" "$KT" --method fft --top 3
like_seq kinds-fft-top "$N" $KT --method fft --top 3
templates tpl-capsules "$DATA/capsules.bmp" "$DATA/capsule_template.bmp $DATA/capsule_empty_template.bmp" \
  --all --max-score 18000000 --min-distance 50 "${COLOR[@]}"
templates tpl-capsules-top "$DATA/capsules.bmp" "$DATA/capsule_template.bmp $DATA/capsule_empty_template.bmp" \
  --top 16 --min-distance 50 --subpixel "${COLOR[@]}"
templates tpl-capsules720 "$DATA/capsules_720p.bmp" "$DATA/capsules_720p_template.bmp $DATA/capsule_template.bmp" \
  --method fft "${COLOR[@]}"
# --mask: one mask for every item (templates of the mask's size), each item the single masked
# call (the CPU FFT shares the source's transform across masked templates too).
M37="$T/t37x23.bmp $T/u37x23.bmp $T/v37x23.bmp $T/t37x23.bmp"
templates tpl-mask-auto "$N" "$M37" --mask "$T/ring37x23.pgm" --top 3
templates tpl-mask-fft "$N" "$M37" --mask "$T/holes37x23.pgm" --method fft --top 2
templates tpl-mask-sad "$N" "$M37" --mask "$T/ring37x23.pgm" --metric sad --top 2 --subpixel
templates tpl-mask-ncc-fft "$N" "$M37" --mask "$T/holes37x23.pgm" --metric ncc --method fft --top 3 --subpixel
templates tpl-mask-ccorr-all "$N" "$T/t37x23.bmp $T/u37x23.bmp" --mask "$T/ring37x23.pgm" --metric ccorr-normed \
  --all --min-score 0.9 --min-distance 5
# A grey source (cuda-opt uploads it once for the batch and copies it on the device for each
# template; an RGB source above goes as RGB bytes, made grey on the GPU): templates grey and
# RGB, of different sizes, each method and metric, and with a mask.
G=$T/grey389x277.pgm
GT="$T/g37x23.pgm $T/t31x17.bmp $T/g45x61.pgm $T/t1x1.bmp $T/u37x23.bmp"
templates grey-auto "$G" "$GT" --top 3
templates grey-direct "$G" "$GT" --method direct --top 2
templates grey-fft "$G" "$GT" --method fft --top 2
templates grey-ncc "$G" "$GT" --metric ncc --top 2
templates grey-ncc-fft "$G" "$GT" --metric ncc --method fft
templates grey-mask "$G" "$T/g37x23.pgm $T/u37x23.bmp $T/g37x23.pgm" --mask "$T/holes37x23.pgm" --top 2

DIRSRC="$S/a_noise333.bmp $S/b_noise333.bmp $S/c_noise640.bmp $S/d_gradient.bmp $S/e_noise401.ppm"
sources src-dir-auto "$T/t16.bmp" "$S" "$DIRSRC" --top 3
sources src-dir-fft "$T/t16.bmp" "$S/" "$DIRSRC" --method fft --top 2
sources src-dir-sad "$T/t1x41.bmp" "$S" "$DIRSRC" --metric sad
sources src-dir-ncc "$T/t16.bmp" "$S" "$DIRSRC" --metric ncc --method fft --subpixel
sources src-mixed "$DATA/capsule_template.bmp" "$DATA/capsules.bmp $S $DATA/capsules_720p.bmp" \
  "$DATA/capsules.bmp $DIRSRC $DATA/capsules_720p.bmp" --top 2 "${COLOR[@]}"
sources src-files "$T/t37x23.bmp" "$N $DATA/noise_1027x769_gray.pgm $N" "$N $DATA/noise_1027x769_gray.pgm $N" --method fft --top 2
sources src-mask-dir "$T/t16.bmp" "$S" "$DIRSRC" --mask "$T/holes16.pgm" --top 2
sources src-mask-ncc-fft "$T/t16.bmp" "$S" "$DIRSRC" --mask "$T/holes16.pgm" --metric ncc --method fft --subpixel
# A template of another size than the mask stops the batch (exit 2, nothing on stdout), as the
# single call with that template does.
"$EXE" match "$N" "$T/t37x23.bmp" "$T/t16.bmp" --mask "$T/ring37x23.pgm" >"$WORK/mask-size.out" 2>"$WORK/mask-size.err"
rc=$? single_rc=0
"$EXE" match "$N" "$T/t16.bmp" --mask "$T/ring37x23.pgm" >/dev/null 2>&1 || single_rc=$?
if [ $rc = 2 ] && [ $single_rc = 2 ] && [ ! -s "$WORK/mask-size.out" ] && grep -q "t16.bmp: the mask (37x23)" "$WORK/mask-size.err"; then
  pass "mask-size (exit 2, naming the template)"
else
  fail "mask-size: batch exit $rc, single $single_rc, stdout $(wc -c <"$WORK/mask-size.out") bytes: $(head -n1 "$WORK/mask-size.err")"
fi

# Files: per item, the single call's map and picture. files NAME MODE "TEMPLATES" [options...]:
# with MODE templates, TEMPLATES (names in $T) against $N; with sources, $T/t16.bmp on $S.
files() {
  local name=$1 mode=$2 tpls=$3 dir=$WORK/$1; shift 3
  if [ -z "$FFT" ] && [[ " $* " == *" --method fft "* ]]; then
    skipped=$((skipped + 1)); echo "skip  $name: --method fft needs FFTW (not in this build)"; return
  fi
  mkdir -p "$dir/b" "$dir/s"
  local i=0 f bad="" paths=()
  if [ "$mode" = templates ]; then
    for f in $tpls; do paths+=("$T/$f.bmp"); done
    run "$dir/b/stdout" "$N" "${paths[@]}" --map "$dir/b/m.npy" "$@" || { fail "$name: batch exited $?"; return; }
    for f in "${paths[@]}"; do
      i=$((i + 1))
      run "$dir/s/stdout" "$N" "$f" --map "$dir/s/m$i.npy" "$@" || { fail "$name: single exited $?"; return; }
      cmp -s "$dir/b/m-$i.npy" "$dir/s/m$i.npy" || bad+=" m-$i.npy"
    done
  else
    run "$dir/b/stdout" --sources "$S" --template "$T/t16.bmp" --map "$dir/b/m.npy" --out "$dir/b/o.bmp" --top 2 "$@" ||
      { fail "$name: batch exited $?: $(head -n1 "$dir/b/stdout.err")"; return; }
    for f in $DIRSRC; do
      i=$((i + 1))
      run "$dir/s/stdout" "$f" "$T/t16.bmp" --map "$dir/s/m$i.npy" --out "$dir/s/o$i.bmp" --top 2 "$@" || { fail "$name: single exited $?"; return; }
      cmp -s "$dir/b/m-$i.npy" "$dir/s/m$i.npy" || bad+=" m-$i.npy"
      cmp -s "$dir/b/o-$i.bmp" "$dir/s/o$i.bmp" || bad+=" o-$i.bmp"
    done
  fi
  [ -z "$bad" ] || { fail "$name: differs from the single calls:$bad"; return; }
  pass "$name ($i items)"
}
files files-templates templates "t37x23 t64x64"
# cuda-opt times its cuFFT size once per process and source size (opt_fft_size.cu), so separate
# processes may pad to different sizes and round the maps differently: the sizes are fixed
# (match.fft_tune=0, added to the caller's PARVIS_TUNING) for the batch and the single calls
# alike wherever cuFFT may run (with match.ntt=0 the small templates take it too).
tuning_before=${PARVIS_TUNING-}
export PARVIS_TUNING=${PARVIS_TUNING:+$PARVIS_TUNING,}match.fft_tune=0
files files-templates-rgb-fft templates "t37x23 t31x17 t64x64 t37x23" --method fft --top 3
# The FFT maps (approximate away from the re-scored positions) bit for bit: each kind's shared
# spectrum and integral image give exactly the single call's values.
files files-kinds-fft templates "t37x23 k257x256 k259x257 k257x256 t37x23 k259x257" --method fft --top 2
export PARVIS_TUNING=$tuning_before
files files-sources sources ""
files files-templates-mask templates "t37x23 u37x23 v37x23" --mask "$T/ring37x23.pgm" --metric ncc
files files-sources-mask sources "" --mask "$T/holes16.pgm" --metric sad
# --explain: where a version keeps something of the source for the batch (the CPU FFT its
# transform, cuda-opt its upload), the first item that needs it says "made" and every later one
# of the same padded size "reused" (the same size here: one template three times).
explain() {
  local name=$1 src=$2; shift 2
  local out=$WORK/$name.txt
  run "$out" "$src" "$T/t37x23.bmp" "$T/t37x23.bmp" "$T/t37x23.bmp" --explain "$@" ||
    { fail "$name: exited $?: $(head -n1 "$out.err")"; return; }
  local said what
  said=$(grep '^method:' "$out" | sed -n 's/.*; batch: .* \(made\|reused\)\( (kept for the next templates)\)*)$/\1/p' | tr '\n' ' ')
  what=$(grep -m1 '^method:' "$out" | sed -n 's/.*; batch: \(.*\) made (kept.*/\1/p')
  if [ -z "$said" ]; then
    skipped=$((skipped + 1)); echo "skip  $name: this version keeps nothing of the source"
  elif [ "$said" = "made reused reused " ]; then
    pass "$name ($what: made, reused, reused)"
  else
    fail "$name: want made, reused, reused; got: $said"
  fi
}
if [ -n "$FFT" ]; then explain explain-rgb "$N" --method fft; explain explain-grey "$G" --method fft; fi
finish
