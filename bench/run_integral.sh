#!/usr/bin/env bash
# bench/run_integral.sh [bench integral options...]
#
# Runs `./main bench integral` on every built version — seq, simd, omp at 1..N threads, and the
# CUDA versions where bin/cuda-* exists and a GPU answers — then the peers (bench/integral_peers.py:
# OpenCV's cv2.integral f64 on the CPU sizes, PyTorch's cumsum twice on a GPU), in one run, so the
# ratios are of the same moment. Appends every row to bench/results/times.csv and prints the table:
# time, GB/s (u8 read + the output written once), the floor at 3.0 TB/s (H100 HBM3) for the GPU
# rows, whether every version's checksum agrees, and the issue's targets.
#
#   bench/run_integral.sh                               seed 004's sizes (CPU versions skip what
#                                                       does not fit; seq takes seconds a size)
#   VERSIONS="simd omp" bench/run_integral.sh --size 10000     the CPU target (omp vs OpenCV)
#   VERSIONS="cuda-naive cuda-opt" bench/run_integral.sh       the GPU table
#   PEERS="opencv" OMP_THREADS="2" BIN=/tmp/bin ...
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
BIN=${BIN:-bin}
VERSIONS=${VERSIONS:-"seq simd omp cuda-naive cuda-opt"}
OMP_THREADS=${OMP_THREADS:-$(seq -s ' ' 1 "$(nproc)")}
PEERS=${PEERS:-"opencv torch"}
. bench/lib.sh  # CSV, $tmp (removed on exit), date_now, machine

size="10000 20000 30000 40000 50000 60000"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [ "${args[i]}" = --size ] && size=${args[i + 1]:-$size}
done

for v in $VERSIONS; do
  [ -x "$BIN/$v" ] || continue
  case "$v" in cuda-*)
    if ! "$BIN/$v" device >/dev/null 2>&1; then echo "note: $v skipped (no usable GPU)" >&2; continue; fi ;;
  esac
  if [ "$v" = omp ]; then
    for n in $OMP_THREADS; do
      OMP_NUM_THREADS=$n "$BIN/omp" bench integral "$@" >>"$tmp/lines" || echo "note: omp bench exited $?" >&2
    done
  else
    "$BIN/$v" bench integral "$@" >>"$tmp/lines" || echo "note: $v bench exited $?" >&2
  fi
done
PY=""
for p in python3 /usr/bin/python3; do
  command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null && { PY=$p; break; }
done
if [ -n "$PY" ] && [ -n "$PEERS" ]; then
  "$PY" bench/integral_peers.py --size "$size" --peers "${PEERS// /,}" >>"$tmp/lines" || echo "note: peers failed" >&2
fi
[ -s "$tmp/lines" ] || { echo "run_integral: nothing ran (make first)" >&2; exit 1; }

mkdir -p "$(dirname "$CSV")"
[ -s "$CSV" ] || echo "date,machine,version,workload,method,threads,ms" >"$CSV"
awk -v d="$date_now" -v m="$machine" '{ printf "%s,%s,%s,%s,%s,%s,%s\n", d, m, $1, $2, $3, $4, $5 }' "$tmp/lines" >>"$CSV"

echo
echo "parvis bench integral — $machine — $date_now"
# version workload method threads ms reps checksum path
awk '
  { split($2, d, ":"); split(d[2], wh, "x"); px = wh[1] * wh[2]
    t = $3; if (t == "fill") t = "u8-u64"; sub(/-squared/, "", t); sub(/\/(alloc|loop)/, "", t); ob = (t ~ /u32$/) ? 4 : 8
    gbs = px * (1 + ob) / ($5 / 1000) / 1e9
    floor = ($4 == "gpu") ? sprintf("%.2f", px * (1 + ob) / 3.0e12 * 1e3) : "-"
    key = d[2] " " $3
    if ($7 != "-") { if (key in sum && sum[key] != $7) bad[key] = 1; sum[key] = $7 }
    printf "%-10s %-12s %-14s %-4s %10.3f ms %7.1f GB/s  floor %s ms  %s\n", $1, d[2], $3, $4, $5, gbs, floor, $8
    ms[$1 "/" $4 " " key] = $5 }
  END {
    print ""
    for (k in sum) print "checksums " k ": " ((k in bad) ? "DIFFER" : "agree")
    print ""
    print "targets (issue 11):"
    split("|/loop", kind, "|")  # one run on fresh buffers; the prepared loop
    for (i = 1; i <= 2; ++i) {
      a = ms["cuda-opt/gpu 10000x10000 u8-u64" kind[i]]; if (a) printf "  cuda-opt 10000^2 u8->u64%s <= 0.45 ms (floor 0.30): %.3f ms %s\n", kind[i], a, (a <= 0.45 ? "MET" : "not met")
      a = ms["cuda-opt/gpu 40000x40000 u8-u64" kind[i]]; if (a) printf "  cuda-opt 40000^2 u8->u64%s <= 6.5 ms (floor 4.8): %.3f ms %s\n", kind[i], a, (a <= 6.5 ? "MET" : "not met")
    }
    a = ms["cuda-opt/gpu 60000x60000 u8-u64"]; if (a) printf "  cuda-opt 60000^2 u8->u64 runs: %.3f ms, %.0f GB/s (floor 10.8 ms)\n", a, 3.6e9 * 9 / (a / 1000) / 1e9
    for (k in ms) if (k ~ /^omp\/2 10000x10000 u8-u64$/) o = ms[k]
    for (k in ms) if (k ~ /^opencv\/.* 10000x10000 u8-f64$/) c = ms[k]
    for (k in ms) if (k ~ /^omp\/2 10000x10000 u8-u64\/alloc$/) oa = ms[k]
    for (k in ms) if (k ~ /^opencv\/.* 10000x10000 u8-f64\/alloc$/) ca = ms[k]
    if (o && c) printf "  omp (2 threads) 10000^2 <= 0.5x cv2.integral f64, output reused: %.1f ms / %.1f ms = %.2fx %s\n", o, c, o / c, (o / c <= 0.5 ? "MET" : "not met")
    if (oa && ca) printf "  the same, a fresh output each call (OS page zeroing included): %.1f ms / %.1f ms = %.2fx %s\n", oa, ca, oa / ca, (oa / ca <= 0.5 ? "MET" : "not met")
  }' "$tmp/lines"
echo "appended to $CSV"
