#!/usr/bin/env bash
# bench/run_filter.sh [bench filter options...]
#
# Runs `./main bench filter` on every built version — seq, simd, omp at 1..N threads, and the CUDA
# versions where bin/cuda-* exists and a GPU answers — then the peers on the very same inputs
# (bench/filter_peers.py: OpenCV's cv2.filter2D, and on a GPU machine CuPy's ndimage.correlate
# and PyTorch's conv2d; each guarded by its import). Appends every row to bench/results/times.csv
# (date,machine,version,workload,method,threads,ms) and prints the tables of
# bench/filter_report.py: time and speedup over seq per version, whether every version produced
# the same bytes (checksums), the GPU's upload / compute / download, the threads-per-block sweep,
# and the issue's targets against their floors.
#
#   bench/run_filter.sh                                   everything (seq takes minutes on 8K)
#   bench/run_filter.sh --res 7680x4320 --size 5          one resolution, 5x5 kernels
#   VERSIONS="simd omp" OMP_THREADS="2" bench/run_filter.sh --res 7680x4320
#   PEERS="opencv" bench/run_filter.sh ...                which peers (default: opencv cupy torch)
#   BIN=/tmp/bin bench/run_filter.sh                      binaries built elsewhere
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
BIN=${BIN:-bin}
VERSIONS=${VERSIONS:-"seq simd omp cuda-naive cuda-opt"}
OMP_THREADS=${OMP_THREADS:-$(seq -s ' ' 1 "$(nproc)")}
PEERS=${PEERS:-"opencv cupy torch"}
. bench/lib.sh  # CSV, $tmp (removed on exit), date_now, machine

# The kernel, size and border options, for the peers.
peer_args=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --kernel|--size|--border|--seconds|--max-reps) peer_args+=("${args[i]}" "${args[i + 1]:-}") ;;
  esac
done

ran=()
for v in $VERSIONS; do
  [ -x "$BIN/$v" ] || continue
  case "$v" in cuda-*)
    if ! "$BIN/$v" device >/dev/null 2>&1; then echo "note: $v skipped (no usable GPU)" >&2; continue; fi ;;
  esac
  if [ "$v" = omp ]; then
    for n in $OMP_THREADS; do
      echo "running omp on $n threads ..." >&2
      OMP_NUM_THREADS=$n "$BIN/omp" bench filter "$@" >>"$tmp/lines" || echo "note: omp bench exited $?" >&2
    done
  else
    echo "running $v ..." >&2
    "$BIN/$v" bench filter "$@" >>"$tmp/lines" || echo "note: $v bench exited $?" >&2
  fi
  ran+=("$v")
done
[ ${#ran[@]} -gt 0 ] || { echo "run_filter: no version built under $BIN/ (make first)" >&2; exit 1; }

PY=""  # a python3 with numpy (the peers and the report need it)
for p in python3 /usr/bin/python3; do
  command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null && { PY=$p; break; }
done
if [ -n "$PY" ] && [ -n "$PEERS" ]; then
  mkdir -p "$tmp/inputs"
  # The inputs, written by a version (one quick run of one kernel; the options' --res apply).
  "$BIN/${ran[0]}" bench filter "$@" --kernel identity --size 3 --sweep none --max-reps 1 --seconds 0 \
    --save-inputs "$tmp/inputs" >/dev/null 2>&1
  echo "running peers ($PEERS) ..." >&2
  "$PY" bench/filter_peers.py "$tmp/inputs" --peers "${PEERS// /,}" "${peer_args[@]}" >>"$tmp/lines" ||
    echo "note: filter_peers.py failed" >&2
else
  echo "note: no python3 with numpy: peers not measured" >&2
fi

# lines: version workload method threads ms reps checksum path...
mkdir -p "$(dirname "$CSV")"
[ -s "$CSV" ] || echo "date,machine,version,workload,method,threads,ms" >"$CSV"
awk -v d="$date_now" -v m="$machine" '$5 != "n/a" { printf "%s,%s,%s,%s,%s,%s,%s\n", d, m, $1, $2, $3, $4, $5 }' \
  "$tmp/lines" >>"$CSV"

echo
echo "parvis bench filter — $machine — $date_now"
if [ -n "$PY" ]; then
  "$PY" bench/filter_report.py "$tmp/lines"
else
  cat "$tmp/lines"
fi
echo "appended to $CSV"
