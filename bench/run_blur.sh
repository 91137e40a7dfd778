#!/usr/bin/env bash
# bench/run_blur.sh [bench blur options...]
#
# Runs `./main bench blur` on every built version (seq simd omp, and blur-v1 … blur-v5,
# cuda-naive, cuda-opt where they are built and a GPU answers), prints one table per workload
# — compute ms, Mpixel/s, Gmul-add/s, % of the GPU's IMAD peak, speedup over seq and over the
# ladder's previous step — checks that every exact version wrote the same outputs (checksum;
# blur-v1/v2 may differ by their +-1), and appends the rows to bench/results/times.csv
# (date,machine,version,workload,method,threads,ms). Options go to every version's bench:
#
#   bench/run_blur.sh                                    all workloads, default launches
#   bench/run_blur.sh --workload 3840x2160x8-s4-radial
#   VERSIONS="blur-v1 blur-v2 blur-v3 blur-v4 blur-v5" bench/run_blur.sh --tpb 32,64,128,256,512,1024
#   VERSIONS="simd omp" BIN=/tmp/bin bench/run_blur.sh
# seq takes about a minute per 4K workload: leave it out of VERSIONS for quick runs.
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
BIN=${BIN:-bin}
VERSIONS=${VERSIONS:-"seq simd omp blur-v1 blur-v2 blur-v3 blur-v4 blur-v5 cuda-naive cuda-opt"}
. bench/lib.sh  # CSV, $tmp (removed on exit), date_now, machine

ran=0 peak_done=0
for v in $VERSIONS; do
  [ -x "$BIN/$v" ] || continue
  extra=()
  case "$v" in cuda-*|blur-v*)
    if ! "$BIN/$v" device >/dev/null 2>&1; then echo "note: $v skipped (no usable GPU)" >&2; continue; fi
    [ $peak_done = 0 ] && extra=(--peak) && peak_done=1 ;;
  esac
  echo "running $v ..." >&2
  "$BIN/$v" bench blur "$@" "${extra[@]}" >>"$tmp/lines" || echo "note: $v bench exited $?" >&2
  ran=$((ran + 1))
done
[ $ran -gt 0 ] || { echo "run_blur: no version built under $BIN/ (make first)" >&2; exit 1; }

# lines: version workload method threads ms reps mpix gmac pct checksum
mkdir -p "$(dirname "$CSV")"
[ -s "$CSV" ] || echo "date,machine,version,workload,method,threads,ms" >"$CSV"
awk -v d="$date_now" -v m="$machine" '$1 != "peak" { printf "%s,%s,%s,%s,%s,%s,%s\n", d, m, $1, $2, $3, $4, $5 }' \
  "$tmp/lines" >>"$CSV"

echo
echo "parvis bench blur — $machine — $date_now"
awk '
  $1 == "peak" { printf "GPU: %d SMs at %.2f GHz; IMAD peak (64/SM/clock) %.1f T/s; measured IMAD %.1f T/s, dp2a %.1f T instr/s (%.1f T mul-add/s)\n", $3, $4, $5 / 1e12, $6 / 1e12, $7 / 1e12, 2 * $7 / 1e12; next }
  { key = $2 " " $3
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    if (!($1 in vseen)) { vseen[$1] = 1; vorder[++nv] = $1 }
    ms[key, $1] = $5; mpix[key, $1] = $7; gmac[key, $1] = $8; pct[key, $1] = $9; sum[key, $1] = $10 }
  END {
    prev["blur-v2"] = "blur-v1"; prev["blur-v3"] = "blur-v2"; prev["blur-v4"] = "blur-v3"; prev["blur-v5"] = "blur-v4"
    prev["cuda-opt"] = "blur-v5"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, f, " ")
      if (f[2] !~ /^compute/) continue
      printf "\n%s  %s\n", f[1], f[2]
      printf "  %-11s %12s %10s %10s %7s %9s %9s  %s\n", "version", "ms", "Mpixel/s", "Gmul-add/s", "%imad", "vs seq", "vs step", "outputs"
      ref = ""
      for (j = 1; j <= nv; j++) { v = vorder[j]; if ((k, v) in sum && v != "blur-v1" && v != "blur-v2") { ref = sum[k, v]; break } }
      for (j = 1; j <= nv; j++) {
        v = vorder[j]
        if (!((k, v) in ms)) continue
        s = ((k, "seq") in ms && v != "seq") ? sprintf("%8.1fx", ms[k, "seq"] / ms[k, v]) : "        -"
        p = (v in prev && (k, prev[v]) in ms) ? sprintf("%8.1fx", ms[k, prev[v]] / ms[k, v]) : "        -"
        same = sum[k, v] == ref ? "same" : (v == "blur-v1" || v == "blur-v2") ? "+-1 (allowed)" : "DIFFER"
        printf "  %-11s %12.3f %10.1f %10.2f %7s %s %s  %s\n", v, ms[k, v], mpix[k, v], gmac[k, v], pct[k, v], s, p, same
      }
    }
    print "\nms = median compute time (CPU: the whole call; CUDA: kernels, CUDA events); vs step = over"
    print "the previous step of the ladder (cuda-opt: over blur-v5); %imad = multiply-adds (one per tap of"
    print "a full window) per second against the IMAD peak; outputs = checksum against the first exact version."
  }' "$tmp/lines"
echo "appended to $CSV"
