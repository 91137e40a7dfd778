#!/usr/bin/env bash
# bench/filter_sep_experiments.sh — cuda-opt's separable filter kernel (cuda/filter/opt_sep.cuh)
# under each experiment switch of issue 10, beside auto, on the issue's workloads (7680x4320 and
# 3840x2160 RGB, zero border, gaussian, box and unsharp at 3x3 and 5x5; compute only, median us).
# One table row per configuration (a set of PARVIS_FILTER_SEP_* values, "-" = sep's defaults),
# one column per workload, and whether every byte equals auto's (FNV checksums of
# `./main bench filter`). Called by bench/filter_variants.sh when sep is among its variants
# (SEP_EXPERIMENTS=none skips it); ~5 s a configuration on an H100.
#   bench/filter_sep_experiments.sh                       the default configurations below
#   SEP_EXPERIMENTS="- L2PF=4 LANE=8+L2PF=4" bench/filter_sep_experiments.sh
# A configuration is NAME=VALUE[+NAME=VALUE...], each NAME meaning PARVIS_FILTER_SEP_NAME:
#   L2PF=D / L1PF=D  each lane prefetches its bytes of the row D rows past its loads into L2 / L1
#   BULKPF=D         the same into L2 by lane 0, one cp.async.bulk.prefetch of the warp's bytes (sm_90)
#   MINB=0|1         one more block a SM (launch bounds: 5x5 80 registers, 3x3 64; the default 1)
#   LANE=8           8 bytes a lane instead of 16 (PF 2 or 4)
#   STCS=1           the output stored evict-first (st.global.cs)
#   PF=1|2|4 ROWS=N  rows loaded ahead into registers (default 1), rows a strip
# REF=FILE: auto's bench output to compare with (else auto runs here first).
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
BIN=${BIN:-bin}
SECONDS_PER=${SECONDS_PER:-0.3}
# The defaults are MINB=1 PF=1 (measured best, 2026-11-24); MINB=0+PF=2 is sep as first written.
CONFIGS=${SEP_EXPERIMENTS:-"- PF=2 L2PF=4 L1PF=4 STCS=1 MINB=0+PF=2 MINB=0+PF=2+L2PF=4 MINB=0+PF=2+BULKPF=4 MINB=0+PF=2+L1PF=4 MINB=0+PF=2+LANE=8+L2PF=4"}
[ -x "$BIN/cuda-opt" ] || { echo "filter_sep_experiments: $BIN/cuda-opt not built" >&2; exit 1; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
common=(--res 7680x4320,3840x2160 --border zero --seconds "$SECONDS_PER" --max-reps 200 --kernel gaussian,box,unsharp
        --size 3,5 --sweep none)
rc=0
ref=${REF:-}
if [ -z "$ref" ]; then
  ref=$tmp/auto.txt
  "$BIN/cuda-opt" bench filter "${common[@]}" --variant auto >"$ref" 2>"$tmp/auto.err" || { echo "auto: exited $?: $(head -n2 "$tmp/auto.err")"; exit 1; }
fi
i=0
for c in $CONFIGS; do
  i=$((i + 1))
  envs=()
  if [ "$c" != - ]; then
    IFS=+ read -ra kv <<<"$c"
    for a in "${kv[@]}"; do envs+=("PARVIS_FILTER_SEP_$a"); done
  fi
  env "${envs[@]}" "$BIN/cuda-opt" bench filter "${common[@]}" --variant sep >"$tmp/c$i.txt" 2>"$tmp/c$i.err" ||
    { echo "sep $c: exited $?: $(head -n2 "$tmp/c$i.err")"; rc=1; }
done
echo "sep experiments, median compute in us (PARVIS_FILTER_SEP_<config>; '-' = sep as it is; bytes against auto):"
awk -v configs="$CONFIGS" '
  function label(w, m,   r, k) {
    r = w ~ /7680x4320/ ? "8K" : w ~ /3840x2160/ ? "4K" : w; sub(/^filter:/, "", r); sub(/-rgb$/, "", r)
    k = m; sub(/-zero$/, "", k); sub(/^gaussian/, "g", k); sub(/^box/, "b", k); sub(/^unsharp/, "u", k)
    return r "-" k
  }
  BEGIN { n = split(configs, cs, " ") }
  FNR == 1 { f++ }
  $3 ~ /\// || $3 == "copy" { next }
  f == 1 { if (!($2 " " $3 in want)) order[++k] = $2 " " $3; want[$2 " " $3] = $7; ms[0, $2 " " $3] = $5; next }
  { ms[f - 1, $2 " " $3] = $5; sum[f - 1, $2 " " $3] = $7; path[f - 1] = ""; for (i = 8; i <= NF; i++) path[f - 1] = path[f - 1] " " $i }
  END {
    printf "%-24s", "config"
    for (j = 1; j <= k; j++) { split(order[j], kw, " "); printf " %7s", label(kw[1], kw[2]) }
    printf "  bytes\n%-24s", "auto"
    for (j = 1; j <= k; j++) printf " %7.1f", ms[0, order[j]] * 1000
    printf "\n"
    for (c = 1; c <= n; c++) {
      printf "%-24s", cs[c]; same = "same"
      for (j = 1; j <= k; j++) {
        key = order[j]
        if ((c, key) in ms && ms[c, key] != "n/a") printf " %7.1f", ms[c, key] * 1000; else { printf " %7s", "-"; same = "FAILED" }
        if ((c, key) in sum && sum[c, key] != want[key]) same = "DIFFER"
      }
      if (same != "same") bad = 1
      printf "  %s\n", same
    }
    print "paths (last workload):"
    for (c = 1; c <= n; c++) printf "  %-22s%s\n", cs[c], path[c]
    exit bad
  }' "$ref" $(j=0; for c in $CONFIGS; do j=$((j + 1)); echo "$tmp/c$j.txt"; done) || { echo "sep experiments: a configuration failed or differs from auto"; rc=1; }
exit $rc
