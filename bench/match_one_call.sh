#!/usr/bin/env bash
# bench/match_one_call.sh [ROUNDS] — one call of `match --method fft` against OpenCV, same run.
#
# The cost a user pays who runs the command once per image: the in-process time of one
# `bin/<v> match SRC TPL --method fft` (its "time match: total": template preparation, FFT
# planning, buffers and their first-touch page faults, the template's transform, the run) on
# 1326x1025 / 479x432 (seed 000's capsules, written by `bench match --save-inputs`), against
# cv2.matchTemplate(TM_SQDIFF) on the same files (per call, after one warm-up call, in one
# python process). ROUNDS rounds alternate the two; the medians and their ratio are printed and
# appended to bench/results/times.csv (workload 1326x1025/479x432, method fft-one-call /
# opencv-one-call). PARVIS_TUNING=match.fft_profile=1 (or =cpu) adds the phases on stderr.
# FFTW's wisdom cache (src/match/cpu_fftw.cpp) lives in the run's temporary directory: each
# version's first call plans from nothing and writes it (printed as "<v>-cold", method
# fft-one-call-cold), the rounds then plan from it, as a user's later calls do.
# PARVIS_FFTW_PLANNING=measure makes that first call measure the plans (seconds) instead.
#   VERSIONS="simd omp" (default), BIN=bin, ROUNDS=7.
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
BIN=${BIN:-bin}
VERSIONS=${VERSIONS:-"simd omp"}
ROUNDS=${1:-7}
PY=/usr/bin/python3
command -v "$PY" >/dev/null && "$PY" -c 'import cv2' 2>/dev/null || PY=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
first=${VERSIONS%% *}
"$BIN/$first" bench match --workload 1326x1025/479x432 --save-inputs "$tmp" --method ssd-fft \
  --max-reps 1 --seconds 0 >/dev/null 2>&1 || { echo "match_one_call: $BIN/$first failed" >&2; exit 1; }
S=$tmp/1326x1025_479x432_source.pgm T=$tmp/1326x1025_479x432_template.pgm
cat >"$tmp/cv.py" <<PYEOF
import cv2, time, sys
s = cv2.imread("$S", cv2.IMREAD_GRAYSCALE); t = cv2.imread("$T", cv2.IMREAD_GRAYSCALE)
cv2.matchTemplate(s, t, cv2.TM_SQDIFF)
best = []
for _ in range(3):
    a = time.perf_counter(); cv2.matchTemplate(s, t, cv2.TM_SQDIFF); best.append((time.perf_counter() - a) * 1e3)
print(sorted(best)[1])
PYEOF
export PARVIS_FFTW_WISDOM=$tmp/fftw-wisdom
for v in $VERSIONS; do
  "$BIN/$v" match "$S" "$T" --method fft 2>&1 >/dev/null | sed -n "s/^time match: total \([0-9.]*\) ms.*/$v-cold \1/p" >>"$tmp/runs"
done
for r in $(seq "$ROUNDS"); do
  for v in $VERSIONS; do
    "$BIN/$v" match "$S" "$T" --method fft 2>&1 >/dev/null | sed -n "s/^time match: total \([0-9.]*\) ms.*/$v \1/p" >>"$tmp/runs"
  done
  [ -n "$PY" ] && "$PY" "$tmp/cv.py" 2>/dev/null | sed 's/^/opencv /' >>"$tmp/runs"
done
date_now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
machine="$(hostname -s 2>/dev/null || echo host) ${cpu:-cpu} $(nproc)c"; machine=${machine//,/ }
awk -v d="$date_now" -v m="$machine" -v csv=bench/results/times.csv '
  { t[$1] = t[$1] " " $2 }
  function median(s,   a, n, i, j, x) { n = split(s, a, " "); for (i = 2; i <= n; ++i) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; --j) a[j+1] = a[j]; a[j+1] = x }
                                         return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
  END { cv = ("opencv" in t) ? median(t["opencv"]) : 0
        for (v in t) { md = median(t[v]); cold = v ~ /-cold$/; name = v; sub(/-cold$/, "", name)
          printf "%-9s median %8.2f ms  (runs:%s)%s\n", v, md, t[v], (v != "opencv" && cv > 0) ? sprintf("  = %.2fx OpenCV", md / cv) : ""
          printf "%s,%s,%s,1326x1025/479x432,%s,%s,%.3f\n", d, m, name, name == "opencv" ? "opencv-one-call" : cold ? "fft-one-call-cold" : "fft-one-call", name == "omp" ? "2" : "1", md >> csv } }' "$tmp/runs" | sort
