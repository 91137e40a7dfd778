#!/usr/bin/env bash
# bench/run_match_batch.sh [ROUNDS] — batches of `match` (issue 14) against the same work done as
# separate calls, on each version, same run:
#   templates: `match SRC T1 ... T8` (one process: the source read, made grey and, with the FFT,
#              transformed once) against 8 calls `match SRC Ti`; SRC is seed 000's 1326x1025
#              scene (bench match --save-inputs), T1..T8 cut from it (479x432, 150x150, 64x64,
#              16x16 and 4 more of odd sizes), --method fft;
#   rgb:       as templates, on an RGB source (1920x1080 noise, 8 RGB templates cut from it, 16x16
#              to 479x432), --method fft; on cuda-opt twice: its RGB bytes made grey on the GPU
#              (PARVIS_GRAY=device, method label fft_gpugrey) and on the host (fft_hostgrey);
#              in the batch cuda-opt uploads the source once and copies it on the device per
#              template, the calls upload it each;
#   sources:   `match --template T --sources DIR` with 8 sources (640x480, cut from the 1326x1025
#              and 1200x1983 scenes; one size, so one plan) against 8 calls `match Si T`, T 64x64,
#              --method fft and auto (not on seq: its auto is the direct sums, seconds each).
# Two numbers per form, medians of ROUNDS (default 5) rounds: "wall" (the processes' wall-clock
# time: start-up, reading, CUDA context; what a script calling ./main pays) and "inproc" (the
# sum of the in-process "time match: total" of the 8 calls, against the batch's "time match
# batch: total"). Lines "version workload method threads ms" on stdout, appended to
# bench/results/times.csv (workload 1326x1025/8-templates or 640x480x8/64x64; method
# <how>-<form>-<measure>: fft-calls-wall, fft-batch-wall, fft-calls-inproc, fft-batch-inproc, ...),
# then the ratios calls / batch. VERSIONS (default "seq simd omp"; on the GPU machine
# VERSIONS="cuda-naive cuda-opt"), BIN=bin. Every batch's output is checked against the calls'.
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
. bench/lib.sh  # CSV, $tmp (removed on exit), date_now, machine
BIN=${BIN:-bin}
VERSIONS=${VERSIONS:-"seq simd omp"}
ROUNDS=${1:-5}
GEN=$BIN/parvis-gen
first=${VERSIONS%% *}
for wl in 1326x1025/479x432 1200x1983/150x150; do
  "$BIN/$first" bench match --workload "$wl" --save-inputs "$tmp" --method ssd-fft --max-reps 1 --seconds 0 \
    >/dev/null 2>&1 || { echo "run_match_batch: $BIN/$first bench match failed" >&2; exit 1; }
done
S=$tmp/1326x1025_479x432_source.pgm
TPLS=("$tmp/1326x1025_479x432_template.pgm")
i=0
for c in "700 300 150 150" "100 100 64 64" "900 800 16 16" "33 501 37 23" "1000 20 101 77" "400 900 31 17" "5 5 257 129"; do
  i=$((i + 1)); "$GEN" crop "$S" $c "$tmp/t$i.pgm" || exit 1; TPLS+=("$tmp/t$i.pgm")
done
mkdir -p "$tmp/sources"
i=0
for c in "0 0" "686 0" "0 545" "686 545" "300 200"; do
  i=$((i + 1)); "$GEN" crop "$S" $c 640 480 "$tmp/sources/s$i.pgm" || exit 1
done
for c in "0 0" "560 1503" "300 700"; do
  i=$((i + 1)); "$GEN" crop "$tmp/1200x1983_150x150_source.pgm" $c 640 480 "$tmp/sources/s$i.pgm" || exit 1
done
"$GEN" crop "$tmp/sources/s3.pgm" 301 133 64 64 "$tmp/t64.pgm" || exit 1
SRCS=("$tmp"/sources/s*.pgm)
R=$tmp/rgb_1920x1080.bmp
"$GEN" noise 1920x1080 "$R" --seed 7 || exit 1
RTPLS=()
i=0
for c in "100 100 479 432" "700 300 150 150" "1200 800 64 64" "900 800 16 16" "33 501 37 23" "1000 20 101 77" "400 900 31 17" "5 5 257 129"; do
  i=$((i + 1)); "$GEN" crop "$R" $c "$tmp/r$i.bmp" || exit 1; RTPLS+=("$tmp/r$i.bmp")
done
export PARVIS_FFTW_WISDOM=$tmp/fftw-wisdom  # planned once by the warm-up below, as a user's later calls

now() { date +%s%N; }
inproc() { sed -n 's/^time match\( batch\)\{0,1\}: total \([0-9.]*\) ms.*/\2/p' "$1" | awk '{ s += $1 } END { printf "%.3f", s }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# measure V FORM HOW [LABEL]: one round of the batch and of the separate calls; appends
# "<how>-<form>-<measure> ms" lines to $tmp/$V.$FORM.$LABEL (LABEL: HOW unless given; the
# environment, e.g. PARVIS_GRAY, is the caller's).
measure() {
  local v=$1 form=$2 how=$3 t0 t1 out=$tmp/$1.$2.${4:-$3} src=$S tpls=("${TPLS[@]}")
  [ "$form" = rgb ] && src=$R tpls=("${RTPLS[@]}")
  : >"$tmp/calls.out"; : >"$tmp/calls.err"
  t0=$(now)
  if [ "$form" != sources ]; then
    "$BIN/$v" match "$src" "${tpls[@]}" --method "$how" >"$tmp/batch.out" 2>"$tmp/batch.err"
  else
    "$BIN/$v" match --template "$tmp/t64.pgm" --sources "$tmp/sources" --method "$how" >"$tmp/batch.out" 2>"$tmp/batch.err"
  fi || { echo "run_match_batch: $v $form $how: batch failed: $(head -n1 "$tmp/batch.err")" >&2; return 1; }
  t1=$(now)
  echo "batch-wall $(( (t1 - t0) / 1000 ))e-3" >>"$out"
  echo "batch-inproc $(sed -n 's/^time match batch: total \([0-9.]*\) ms.*/\1/p' "$tmp/batch.err")" >>"$out"
  local n i=0 x
  t0=$(now)
  if [ "$form" != sources ]; then
    n=${#tpls[@]}
    for x in "${tpls[@]}"; do
      i=$((i + 1)); echo "item $i/$n: source $src template $x" >>"$tmp/calls.out"
      "$BIN/$v" match "$src" "$x" --method "$how" >>"$tmp/calls.out" 2>>"$tmp/calls.err" || return 1
    done
  else
    n=${#SRCS[@]}
    for x in "${SRCS[@]}"; do
      i=$((i + 1)); echo "item $i/$n: source $x template $tmp/t64.pgm" >>"$tmp/calls.out"
      "$BIN/$v" match "$x" "$tmp/t64.pgm" --method "$how" >>"$tmp/calls.out" 2>>"$tmp/calls.err" || return 1
    done
  fi
  t1=$(now)
  echo "calls-wall $(( (t1 - t0) / 1000 ))e-3" >>"$out"
  echo "calls-inproc $(inproc "$tmp/calls.err")" >>"$out"
  # The batch must print what the calls print (tests/match_batch.sh checks it in depth).
  cmp -s "$tmp/batch.out" "$tmp/calls.out" || { echo "run_match_batch: $v $form $how: the batch differs from the calls" >&2; return 1; }
}

: >"$tmp/lines"
for v in $VERSIONS; do
  [ -x "$BIN/$v" ] || { echo "run_match_batch: no $BIN/$v" >&2; continue; }
  threads=1
  case $v in cuda-*) threads=gpu ;; omp) threads=${OMP_NUM_THREADS:-$(nproc)} ;; esac
  jobs=("templates fft" "rgb fft" "sources fft" "sources auto")
  [ "$v" = cuda-opt ] && jobs=("templates fft" "rgb fft fft_gpugrey device" "rgb fft fft_hostgrey host" "sources fft" "sources auto")
  for job in "${jobs[@]}"; do
    read -r form how label gray <<<"$job"
    label=${label:-$how}
    [ "$v/$how" = seq/auto ] && continue  # seq's auto is its direct sums: seconds per source
    export PARVIS_GRAY=${gray:-device}  # cuda-opt's grey of an RGB source (the others ignore it)
    measure "$v" "$form" "$how" "$label" >/dev/null 2>&1  # warm-up: page cache, FFTW wisdom
    for r in $(seq "$ROUNDS"); do measure "$v" "$form" "$how" "$label" || exit 1; done
    wl=1326x1025/8-templates
    [ "$form" = sources ] && wl=640x480x8/64x64
    [ "$form" = rgb ] && wl=1920x1080rgb/8-templates
    for m in calls-wall batch-wall calls-inproc batch-inproc; do
      ms=$(grep "^$m " "$tmp/$v.$form.$label" | awk '{ printf "%.3f\n", $2 }' | median)
      echo "$v $wl $label-$m $threads $ms" | tee -a "$tmp/lines"
    done
  done
  unset PARVIS_GRAY
done
awk '{ k = $1 " " $2 " " substr($3, 1, index($3, "-") - 1); split($3, p, "-"); v[k, p[2] "-" p[3]] = $5; keys[k] = 1 }
     END { for (k in keys) printf "%s: calls/batch wall %.2fx, in-process %.2fx\n", k,
           v[k, "calls-wall"] / v[k, "batch-wall"], v[k, "calls-inproc"] / v[k, "batch-inproc"] }' "$tmp/lines" | sort
mkdir -p "$(dirname "$CSV")"
[ -s "$CSV" ] || echo "date,machine,version,workload,method,threads,ms" >"$CSV"
awk -v d="$date_now" -v m="$machine" '{ printf "%s,%s,%s,%s,%s,%s,%s\n", d, m, $1, $2, $3, $4, $5 }' "$tmp/lines" >>"$CSV"
echo "appended to $CSV"
