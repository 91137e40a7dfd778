#!/usr/bin/env bash
# bench/run_match.sh [bench match options...]
#
# Runs `./main bench match` on every built version (seq simd omp, and the CUDA versions
# where bin/cuda-* exists and a GPU answers) in one go, plus OpenCV's matchTemplate
# (TM_SQDIFF) on the same inputs when python3 with cv2 is there. Prints one table —
# milliseconds per version and method, speedup over seq — checks that every version found
# the same best match, and appends the rows to bench/results/times.csv
# (date,machine,version,workload,method,threads,ms).
#
#   bench/run_match.sh                          all workloads, default methods
#   bench/run_match.sh --workload 640x480/64x64
#   BIN=/tmp/bin bench/run_match.sh             binaries built elsewhere (make BIN=...)
#   VERSIONS="simd omp" bench/run_match.sh      only these (seq is still the baseline if built)
# OMP_NUM_THREADS is passed through to omp (and OpenCV).
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
BIN=${BIN:-bin}
VERSIONS=${VERSIONS:-"seq simd omp cuda-naive cuda-opt"}
. bench/lib.sh  # CSV, $tmp (removed on exit), date_now, machine

ran=()
for v in $VERSIONS; do
  [ -x "$BIN/$v" ] || continue
  case "$v" in cuda-*)
    if ! "$BIN/$v" device >/dev/null 2>&1; then echo "note: $v skipped (no usable GPU)" >&2; continue; fi ;;
  esac
  echo "running $v ..." >&2
  "$BIN/$v" bench match "$@" >>"$tmp/lines" || echo "note: $v bench exited $?" >&2
  ran+=("$v")
done
[ ${#ran[@]} -gt 0 ] || { echo "run_match: no version built under $BIN/ (make first)" >&2; exit 1; }

# OpenCV on the very same inputs (written by the first version's bench).
PY=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import cv2' 2>/dev/null; then PY=$p; break; fi
done
if [ -n "$PY" ]; then
  mkdir -p "$tmp/inputs"
  "$BIN/${ran[0]}" bench match "$@" --save-inputs "$tmp/inputs" --method ssd-fft --max-reps 1 --seconds 0 >/dev/null 2>&1
  echo "running opencv ..." >&2
  "$PY" bench/opencv_compare.py "$tmp/inputs" >>"$tmp/lines" || echo "note: opencv_compare.py failed" >&2
else
  echo "note: no python3 with cv2: OpenCV not measured (apt-get install python3-opencv)" >&2
fi

# lines: version workload method threads ms reps x y score used
mkdir -p "$(dirname "$CSV")"
[ -s "$CSV" ] || echo "date,machine,version,workload,method,threads,ms" >"$CSV"
awk -v d="$date_now" -v m="$machine" '$5 != "n/a" { printf "%s,%s,%s,%s,%s,%s,%s\n", d, m, $1, $2, $3, $4, $5 }' \
  "$tmp/lines" >>"$CSV"

echo
echo "parvis bench match — $machine — $date_now"
awk '
  $3 ~ /\// {   # a part of a CUDA run (method/part): the GPU table below, in microseconds
    key = $2 " " $3
    if (!(key in pseen)) { pseen[key] = 1; porder[++np] = key }
    if (!($1 in pvseen)) { pvseen[$1] = 1; pvorder[++npv] = $1 }
    pms[key, $1] = $5; next }
  { method = $3 == "ssd-opencv" ? "ssd-fft" : $3 == "ncc-opencv" ? "ncc-direct" : $3   # OpenCV beside ours
    key = $2 " " method
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    if (!($1 in vseen)) { vseen[$1] = 1; vorder[++nv] = $1 }
    ms[key, $1] = $5; thr[$1] = $4
    if ($5 != "n/a") {
      where = $7 "," $8 "=" $9
      if ($1 ~ /^opencv/) { if (key in best && substr(best[key], 1, length($7 "," $8 "=")) != $7 "," $8 "=") bad[key] = bad[key] " " $1 ":" where; next }
      if ((key in best) && best[key] != where) bad[key] = bad[key] " " $1 ":" where
      else if (!(key in best)) best[key] = where
    } }
  END {
    printf "%-19s %-11s", "workload", "method"
    for (j = 1; j <= nv; j++) printf " %16s", vorder[j] "(" thr[vorder[j]] ")"
    printf "   best x,y=score\n"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, f, " ")
      printf "%-19s %-11s", f[1], f[2]
      base = ms[k, "seq"]
      for (j = 1; j <= nv; j++) {
        t = ms[k, vorder[j]]
        if (t == "" || t == "n/a") { printf " %16s", "-"; continue }
        if (base != "" && base != "n/a" && vorder[j] != "seq") printf " %8.2f (%5.1fx)", t, base / t
        else printf " %16.2f", t
      }
      printf "   %s%s\n", best[k], (k in bad) ? "  DIFFERS:" bad[k] : ""
    }
    print "ms = median per run (prepared matcher, after a warm-up); (Nx) = speedup over seq;"
    print "(threads) per version; opencv = cv2.matchTemplate TM_SQDIFF on the same inputs, shown in"
    print "the ssd-fft rows, and TM_CCOEFF_NORMED in the ncc-direct rows (float32; only its position"
    print "is compared)."
    if (np == 0) exit
    printf "\nGPU parts, median microseconds (CUDA events; stage rows: seed 000 stage table)\n"
    printf "%-19s %-42s", "workload", "method/part"
    for (j = 1; j <= npv; j++) printf " %12s", pvorder[j]
    printf "\n"
    for (i = 1; i <= np; i++) {
      k = porder[i]; split(k, f, " ")
      printf "%-19s %-42s", f[1], f[2]
      for (j = 1; j <= npv; j++) {
        t = pms[k, pvorder[j]]
        if (t == "") printf " %12s", "-"; else printf " %12.1f", 1000 * t
      }
      printf "\n"
    }
  }' "$tmp/lines"
echo "appended to $CSV"
