#!/usr/bin/env bash
# bench/filter_variants.sh [VARIANT...] — the quick GPU comparison of cuda-opt's filter variants
# (--variant; default: every variant but direct) on the issue's target workloads: 7680x4320 and
# 3840x2160 RGB, zero border, gaussian, box and unsharp at 3x3 and 5x5, image already on the GPU
# (compute only, median of the repetitions). Then the block-size sweep of every variant on
# gaussian5 at both resolutions (SWEEP=none skips it), and, when sep is among the variants, sep's
# forms (the cp.async kernel and the register kernel, PARVIS_TUNING filter.sep_async; SEP_ASYNC,
# default "1 0") x rows per strip (filter.sep_rows; SEP_ROWS, default 0 = the default strips). Prints
# one table row per workload: the median microseconds of each variant and whether every variant
# produced the same bytes (FNV checksums of `./main bench filter`), then the sweep. Takes ~30 s on
# an H100. Appends nothing to bench/results/times.csv (bench/run_filter.sh does, with --variant).
#   bench/filter_variants.sh                    auto, mma and sep
#   SWEEP=none SEP_ROWS="0 8 16" bench/filter_variants.sh auto sep    sep's forms and strips
#   bench/filter_variants.sh auto direct        these variants
#   SECONDS_PER=0.5 SWEEP="128 256 512" bench/filter_variants.sh
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
BIN=${BIN:-bin}
SECONDS_PER=${SECONDS_PER:-0.3}
SWEEP=${SWEEP:-"128 256 512"}
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(auto mma sep)
[ -x "$BIN/cuda-opt" ] || { echo "filter_variants: $BIN/cuda-opt not built" >&2; exit 1; }
"$BIN/cuda-opt" device >/dev/null 2>&1 || { echo "filter_variants: no usable GPU" >&2; exit 1; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
common=(--res 7680x4320,3840x2160 --border zero --seconds "$SECONDS_PER" --max-reps 200)
rc=0
for v in "${variants[@]}"; do
  "$BIN/cuda-opt" bench filter "${common[@]}" --kernel gaussian,box,unsharp --size 3,5 --variant "$v" \
    --sweep none >"$tmp/$v.txt" 2>"$tmp/$v.err" || { echo "variant $v: bench exited $?: $(head -n2 "$tmp/$v.err")"; rc=1; }
done
# lines: version workload method threads ms reps checksum path...
echo "cuda-opt filter variants, median compute in us (image on the GPU, result left there):"
printf '%-22s %-18s' workload method
for v in "${variants[@]}"; do printf ' %10s' "$v"; done
printf '  same bytes\n'
awk -v list="${variants[*]}" '
  BEGIN { n = split(list, vs, " ") }
  FNR == 1 { v = FILENAME; sub(/.*\//, "", v); sub(/\.txt$/, "", v) }
  $3 !~ /\// { key = $2 " " $3; if (!(key in seen)) { seen[key] = 1; order[++k] = key }
               ms[key, v] = $5; sum[key, v] = $7; p = ""; for (i = 8; i <= NF; i++) p = p " " $i; path[key, v] = substr(p, 2) }
  END {
    for (i = 1; i <= k; i++) {
      split(order[i], kw, " ")
      printf "%-22s %-18s", kw[1], kw[2]
      same = "yes"; first = ""
      for (j = 1; j <= n; j++) {
        key = order[i]
        if ((key, vs[j]) in ms && ms[key, vs[j]] != "n/a") printf " %10.1f", ms[key, vs[j]] * 1000; else { printf " %10s", "-"; same = "no" }
        s = sum[key, vs[j]]; if (first == "") first = s; else if (s != first) { same = "NO (differ)"; bad = 1 }
      }
      printf "  %s\n", same
    }
    print "paths:"
    for (i = 1; i <= k; i++) for (j = 1; j <= n; j++) if ((order[i], vs[j]) in path) printf "  %-6s %s: %s\n", vs[j], order[i], path[order[i], vs[j]]
    exit bad
  }' $(for v in "${variants[@]}"; do echo "$tmp/$v.txt"; done) || { echo "variants differ in their bytes"; rc=1; }

if [[ " ${variants[*]} " == *" sep "* ]]; then
  echo
  ref=$tmp/auto.txt; [ -f "$ref" ] || ref=$tmp/sep.txt  # the bytes to agree with
  echo "sep: form (async 1: cp.async, 0: registers) x rows per strip (0 = the default), us; bytes against auto:"
  for async in ${SEP_ASYNC:-1 0}; do
    for rows in ${SEP_ROWS:-0}; do
      PARVIS_TUNING=filter.sep_async=$async$([ "$rows" = 0 ] || echo ",filter.sep_rows=$rows") \
        "$BIN/cuda-opt" bench filter "${common[@]}" --kernel gaussian,box,unsharp --size 3,5 --variant sep --sweep none \
        >"$tmp/sep-$async-$rows.txt" 2>"$tmp/sep.err" || { echo "sep async $async rows $rows: exited $?: $(head -n2 "$tmp/sep.err")"; rc=1; }
      awk -v async="$async" -v rows="$rows" 'FNR == NR { if ($3 !~ /\//) want[$2 " " $3] = $7; next }
           $3 !~ /\// { same = $5 == "n/a" ? "FAILED" : $7 == want[$2 " " $3] ? "same bytes" : "BYTES DIFFER"; if (same != "same bytes") bad = 1
                        path = ""; for (i = 8; i <= NF; i++) path = path " " $i
                        printf "  async %s rows %-4s %-22s %-18s %9.1f us  %s  (%s)\n", async, rows, $2, $3, $5 * 1000, same, substr(path, 2) }
           END { exit bad }' "$ref" "$tmp/sep-$async-$rows.txt" || rc=1
    done
  done
fi

[ "$SWEEP" = none ] && exit $rc
echo
echo "block-size sweep on gaussian5 (us):"
"$BIN/cuda-opt" bench filter "${common[@]}" --kernel gaussian --size 5 --sweep "$SWEEP" --sweep-kernels gaussian5 \
  >"$tmp/sweep.txt" 2>"$tmp/sweep.err" || { echo "sweep: bench exited $?: $(head -n2 "$tmp/sweep.err")"; rc=1; }
awk '$3 !~ /\// && $5 != "n/a" { want[$2] = $7 }
     $3 ~ /\// && $3 !~ /\/(upload|download)$/ { same = $5 == "n/a" ? "FAILED" : $7 == want[$2] ? "same bytes" : "BYTES DIFFER"; if (same != "same bytes") bad = 1
                 path = ""; for (i = 8; i <= NF; i++) path = path " " $i
                 printf "  %-22s %-22s %5s threads %9.1f us  %s  (%s)\n", $2, $3, $4, $5 * 1000, same, substr(path, 2) }
     END { exit bad }' "$tmp/sweep.txt" || { echo "sweep: a variant failed or differs"; rc=1; }
exit $rc
