#!/usr/bin/env bash
# bench/run_upload.sh [bench upload options...]
#
# Runs `./main bench upload` (cuda/upload/bench.cu) on cuda-opt where a GPU answers, appends
# every line to bench/results/times.csv (workload "upload SIZE", method e.g. h2d-staged-2M,
# threads, median ms) and prints, per size and direction, the best way, its GB/s, the pinned
# floor and the pageable copy, and whether the issue's target (>= 25 GB/s host -> device from a
# pageable image) is met. Without a GPU it says so and appends nothing.
#
# Then, per size, what one plain call pays (the -fresh rows: a fresh copier each time, its init,
# pinned slots and copy; the -first rows: its copy alone) and whether the target holds there.
#
#   bench/run_upload.sh                      every size (0.26 to 100 MB), ~30-60 s on an H100
#   bench/run_upload.sh --quick --size 3840x2160
#   bench/run_upload.sh --first              only the first-call rows (~10-20 s)
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
BIN=${BIN:-bin}
. bench/lib.sh  # CSV, $tmp (removed on exit), date_now, machine
if ! "$BIN/cuda-opt" device >/dev/null 2>&1; then
  echo "bench upload: no usable GPU for $BIN/cuda-opt; nothing measured" >&2
  exit 0
fi
"$BIN/cuda-opt" bench upload "$@" | tee "$tmp/lines" || { echo "bench upload failed" >&2; exit 1; }
# upload SIZE METHOD THREADS MEDIAN_MS REPS GB/S PIECE_KIB
awk -v d="$date_now" -v m="$machine" '$1 == "upload" {
  printf "%s,%s,cuda-opt,upload %s,%s,%s,%s\n", d, m, $2, $3, $4, $5 }' "$tmp/lines" >>"$CSV"
echo
echo "best per size and direction (GB/s; target: h2d from pageable >= 25):"
awk '$1 == "upload" {
  split($3, p, "-"); dir = p[1]; key = $2 " " dir
  if ($3 ~ /-pinned$/) { floor[key] = $7; next }
  if ($3 ~ /-(fresh|first)$/) next
  if ($3 ~ /-pageable$/ && dir != "gray") pageable[key] = $7
  if (!(key in best) || $7 + 0 > best[key] + 0) { best[key] = $7; how[key] = $3 " x" $4 " threads" }
  order[key] = ++n
} END {
  for (k in order) printf "%s: best %s GB/s (%s), pinned floor %s, pageable %s%s\n", k, best[k],
    how[k], (k in floor ? floor[k] : "-"), (k in pageable ? pageable[k] : "-"),
    (k ~ / h2d$/ ? (best[k] + 0 >= 25 ? "  [target met]" : "  [below 25]") : "")
}' "$tmp/lines" | sort
echo
echo "one call per size (GB/s; -fresh: init + pinned slots + copy of a fresh copier, -first: its copy alone):"
awk '$1 == "upload" && $3 ~ /-(fresh|first)$/ {
  split($3, p, "-"); key = $2 " " p[1]; kind = ($3 ~ /-fresh$/) ? "fresh" : "first"
  if ($3 ~ /-auto-/) auto[key, kind] = $7
  if (!((key, kind) in best) || $7 + 0 > best[key, kind] + 0) { best[key, kind] = $7; how[key, kind] = $3 " x" $4 }
  keys[key] = 1
} END {
  for (k in keys) printf "%s: best fresh %s GB/s (%s), auto fresh %s, best first %s (%s), auto first %s%s\n", k,
    best[k, "fresh"], how[k, "fresh"], auto[k, "fresh"], best[k, "first"], how[k, "first"], auto[k, "first"],
    (k ~ / h2d$/ ? (best[k, "fresh"] + 0 >= 25 ? "  [target met in one call]" : "  [one call below 25]") : "")
}' "$tmp/lines" | sort
