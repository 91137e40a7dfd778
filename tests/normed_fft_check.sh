#!/usr/bin/env bash
# tests/normed_fft_check.sh EXE DATA WORKDIR — the FFT method in double where its rounding
# matters (issue 34), on one executable: every command's text by `--method fft` under
# PARVIS_TUNING=match.fft_bound_scale=1e6 (the bound widened and every value moved within it:
# src/match/fft_wobble.hpp; with match.ntt=0 on cuda-opt, whose FFT would otherwise be the exact
# NTT; match.prune_from=0: cuda-opt's --min-distance prune on every list) must equal
# `--method direct`'s: the best, the K best, every match and the suppression of
# NCC and ccorr-normed (on the CPU the hook moves SSD's values too), on noise and on the capsule scene. Skipping the re-scoring of the
# positions the answer could hold fails it. Prints ok / FAIL lines and "N passed, N failed,
# N skipped"; exit 1 on any failure. Run by tests/gpu/match.sh (cuda-opt) and by hand on the CPU
# versions (./test covers those through the selftest's "match fft every choice").
set -u
EXE=$1 DATA=$2 WORK=$3
IMG=$(dirname "$(readlink -f "$0")")/../images
GEN=${GEN:-$(dirname "$EXE")/parvis-gen}
rm -rf "$WORK" && mkdir -p "$WORK"
passed=0 failed=0
"$GEN" crop "$DATA/noise_640x480.bmp" 301 133 37 23 "$WORK/t37x23.bmp" >/dev/null
"$GEN" crop "$DATA/noise_1027x769.bmp" 700 400 31 17 "$WORK/t31x17.bmp" >/dev/null
check() {  # NAME ARGS...
  local name=$1; shift
  "$EXE" match "$@" --method direct >"$WORK/$name.direct" 2>"$WORK/$name.direct.err"
  local rd=$?
  PARVIS_TUNING=match.ntt=0,match.fft_bound_scale=1e6,match.prune_from=0 "$EXE" match "$@" --method fft --explain \
    >"$WORK/$name.fft" 2>"$WORK/$name.fft.err"
  local rf=$?
  grep -v '^method:' "$WORK/$name.fft" >"$WORK/$name.fft.text"
  if [ $rd != 0 ] || [ $rf != 0 ]; then
    failed=$((failed + 1)); echo "FAIL  $name: exit $rd (direct) / $rf (fft): $(head -n1 "$WORK/$name.fft.err")"
  elif ! cmp -s "$WORK/$name.direct" "$WORK/$name.fft.text"; then
    failed=$((failed + 1)); echo "FAIL  $name: fft differs from direct"; diff "$WORK/$name.direct" "$WORK/$name.fft.text" | head -n 6
  elif ! grep -q 're-scored' "$WORK/$name.fft"; then
    failed=$((failed + 1)); echo "FAIL  $name: the re-scoring path did not run: $(grep '^method:' "$WORK/$name.fft" | cut -c1-300)"
  else
    passed=$((passed + 1)); echo "ok    $name"
  fi
}
check noise-ncc-top1 "$DATA/noise_640x480.bmp" "$WORK/t37x23.bmp" --metric ncc
check noise-ncc-top5 "$DATA/noise_640x480.bmp" "$WORK/t37x23.bmp" --metric ncc --top 5
check noise-ccorr-top3 "$DATA/noise_1027x769.bmp" "$WORK/t31x17.bmp" --metric ccorr-normed --top 3
check noise-ncc-all "$DATA/noise_1027x769.bmp" "$WORK/t31x17.bmp" --metric ncc --all --min-score 0.16 --min-distance 7
check noise-ncc-top-apart "$DATA/noise_640x480.bmp" "$WORK/t37x23.bmp" --metric ncc --top 9 --min-distance 11
check line-ncc-top1 "$IMG/capsules.bmp" "$IMG/capsule_empty_template.bmp" --metric ncc
check line-ncc-all "$IMG/capsules.bmp" "$IMG/capsule_empty_template.bmp" --metric ncc --all --min-score 0.5 --min-distance 50 --color blue
check line-ccorr-top "$IMG/capsules.bmp" "$IMG/capsule_template.bmp" --metric ccorr-normed --top 5 --min-distance 50
echo "$passed passed, $failed failed, 0 skipped"
[ $failed = 0 ]
