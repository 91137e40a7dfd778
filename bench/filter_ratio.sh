#!/usr/bin/env bash
# bench/filter_ratio.sh [ROUNDS] [KERNELS] — the CPU target of issue 10 on a shared machine: omp
# (OMP_NUM_THREADS, default 2) against OpenCV's cv2.filter2D (as many threads) on the same
# 7680x4320 RGB image, 5x5 kernels. Each round runs omp then OpenCV, one kernel at a time, so both
# see the same load; prints each round's ratio and the median over the rounds per kernel.
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
BIN=${BIN:-bin}
ROUNDS=${1:-5}
KERNELS=${2:-"identity sharpen edge gaussian box unsharp"}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
PY=""
for p in python3 /usr/bin/python3; do
  command -v "$p" >/dev/null && "$p" -c 'import cv2, numpy' 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "filter_ratio: needs python3 with cv2 and numpy" >&2; exit 1; }
[ -x "$BIN/omp" ] || { echo "filter_ratio: build $BIN/omp first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BIN/omp" bench filter --res 7680x4320 --kernel identity --size 3 --max-reps 1 --seconds 0 \
  --save-inputs "$tmp" >/dev/null
echo "omp ($OMP_NUM_THREADS threads) / cv2.filter2D on 7680x4320 RGB, zero border, $ROUNDS rounds"
for k in $KERNELS; do
  ratios=()
  for ((r = 0; r < ROUNDS; r++)); do
    ours=$("$BIN/omp" bench filter --res 7680x4320 --kernel "$k" --size 5 --seconds 1 | awk '$3 != "copy" {print $5}')
    cv=$("$PY" bench/filter_peers.py "$tmp" --kernel "$k" --size 5 --peers opencv --seconds 1 2>/dev/null | awk '{print $5}')
    ratios+=("$(awk -v a="$ours" -v b="$cv" 'BEGIN {printf "%.3f", a / b}')")
    echo "  $k round $((r + 1)): omp $ours ms, OpenCV $cv ms, ratio ${ratios[-1]}"
  done
  median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
  echo "${k}5: median ratio $median (target <= 0.25)"
done
