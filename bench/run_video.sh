#!/usr/bin/env bash
# bench/run_video.sh [bench video options...]
#
# Runs `./main bench video` on every built version (seq simd omp, and the CUDA versions where
# bin/cuda-* exists and a GPU answers): seed 000's production line at 1920x1080, end to end
# (Y4M 4:2:0 file in the page cache -> per-frame results), templates 16, 64, 128. Prints one
# table — ms per frame and frames/s per version, with the reader's and the compute's bounds —
# and appends the rows to bench/results/times.csv (date,machine,version,workload,method,
# threads,ms; workload "video:1920x1080-420/<w>x<h>", ms per frame).
#
#   bench/run_video.sh                          all versions, default templates
#   bench/run_video.sh --templates 64 --seconds 4
#   VERSIONS="omp" OMP_NUM_THREADS=2 bench/run_video.sh
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
BIN=${BIN:-bin}
VERSIONS=${VERSIONS:-"seq simd omp cuda-naive cuda-opt"}
. bench/lib.sh  # CSV, $tmp (removed on exit), date_now, machine

ran=0
for v in $VERSIONS; do
  [ -x "$BIN/$v" ] || continue
  case "$v" in cuda-*)
    if ! "$BIN/$v" device >/dev/null 2>&1; then echo "note: $v skipped (no usable GPU)" >&2; continue; fi ;;
  esac
  echo "running $v ..." >&2
  "$BIN/$v" bench video "$@" >>"$tmp/lines" || echo "note: $v bench exited $?" >&2
  # omp also frame-parallel: one OpenMP thread per matcher, one matcher per core.
  if [ "$v" = omp ] && [ "$(nproc)" -gt 1 ]; then
    echo "running omp, --jobs $(nproc) ..." >&2
    OMP_NUM_THREADS=1 "$BIN/$v" bench video --jobs "$(nproc)" "$@" >>"$tmp/lines" || echo "note: omp --jobs bench exited $?" >&2
  fi
  ran=1
done
[ $ran = 1 ] || { echo "run_video: no version built under $BIN/ (make first)" >&2; exit 1; }

# lines: version workload method threads ms_per_frame frames fps
mkdir -p "$(dirname "$CSV")"
[ -s "$CSV" ] || echo "date,machine,version,workload,method,threads,ms" >"$CSV"
awk -v d="$date_now" -v m="$machine" '{ printf "%s,%s,%s,%s,%s,%s,%s\n", d, m, $1, $2, $3, $4, $5 }' "$tmp/lines" >>"$CSV"

echo
echo "parvis bench video — $machine — $date_now"
awk '
  { key = $2 " " ($3 == "e2e:match-only" ? "e2e" : $3 == "match" ? "match+color" : $3)
    col = $1 "(" $4 ")"   # version and threads (omp runs twice: T threads, and 1*N jobs)
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    if (!(col in vseen)) { vseen[col] = 1; vorder[++nv] = col }
    ms[key, col] = $5 }
  END {
    printf "%-30s %-16s", "workload", "method"
    for (j = 1; j <= nv; j++) printf " %20s", vorder[j]
    printf "\n"
    for (i = 1; i <= n; i++) {
      split(order[i], f, " ")
      printf "%-30s %-16s", f[1], f[2]
      for (j = 1; j <= nv; j++) {
        t = ms[order[i], vorder[j]]
        if (t == "") printf " %20s", "-"; else printf " %9.3f (%6.1f/s)", t, 1000 / t
      }
      printf "\n"
    }
    print "ms per frame (median over passes of the clip) and frames/s; (threads), 1*N = --jobs N."
    print "e2e: file -> per-frame results; read, read+convert: the reader thread alone; match+color:"
    print "the compute alone on a frame in memory, one frame at a time. e2e cannot beat the slower of"
    print "the two bounds, except with --jobs N (frames side by side). Versions without the colour"
    print "filter time the match alone (e2e:match-only, match: shown in the e2e and match+color rows)."
  }' "$tmp/lines"
echo "appended to $CSV"
