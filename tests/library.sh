#!/usr/bin/env bash
# The library (docs/API.md), run by ./test after the versions' cases: `make lib examples`, the
# example program against `./main match` (seq), and the Python module's tests (pytest, on the
# versions under test) where pybind11, NumPy and pytest are here. One line per check: PASS / FAIL
# / SKIP, as the image layer's tests print them.
# usage: tests/library.sh VERSION...   (BIN, BUILD: as ./test's make)
set -u
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-bin}
log=${BUILD:-build}/library.log
mkdir -p "$(dirname "$log")"

lib_versions="seq $*"  # seq: the example's
if make -s -j"$(nproc)" lib examples LIB_VERSIONS="$lib_versions" >"$log" 2>&1; then
  echo "PASS make lib examples"
else
  echo "FAIL make lib examples: $(grep -m1 -iE 'error' "$log")"
  exit 0
fi
args=(images/capsules.bmp images/capsule_empty_template.bmp)
got=$("$BIN/example-find_capsules" "${args[@]}" 18000000 50 2>&1)
want=$("$BIN/seq" match "${args[@]}" --all --max-score 18000000 --min-distance 50 --color blue --json 2>/dev/null |
  grep -oE '\{"x": [0-9]+, "y": [0-9]+, "score": [0-9]+, "verdict": "[a-z]+"\}')
if [ -n "$want" ] && [ "$got" = "$want" ]; then echo "PASS example find_capsules equals ./main match ($(wc -l <<<"$got") matches)"
else echo "FAIL example find_capsules differs from ./main match"; fi

# The Python module lives in parvis/: only the main build makes it (not SANITIZE=1, whose
# modules would need the sanitizer runtime preloaded, nor a moved BUILD).
if [ -n "${SANITIZE:-}" ] || [ -n "${BUILD:-}" ]; then
  echo "SKIP python: not with SANITIZE=1 or a moved BUILD"
  exit 0
fi
py=${PYTHON:-}  # the Makefile's choice: the first python3 that has pybind11
if [ -z "$py" ]; then
  for p in python3 /usr/bin/python3; do "$p" -c 'import pybind11' >/dev/null 2>&1 && { py=$p; break; }; done
fi
if ! make -s -j"$(nproc)" python LIB_VERSIONS="$lib_versions" >>"$log" 2>&1; then
  if grep -q "needs pybind11" "$log"; then echo "SKIP python: pybind11 not found (apt-get install pybind11-dev python3-pybind11)"
  else echo "FAIL make python: $(grep -m1 -iE 'error' "$log")"; fi
  exit 0
fi
if ! "${py:-python3}" -c 'import numpy, pytest' 2>/dev/null; then
  echo "SKIP python: ${py:-python3} lacks numpy or pytest (apt-get install python3-numpy python3-pytest)"
  exit 0
fi
PYTHONPATH=. PARVIS_BIN="$BIN" PARVIS_TEST_VERSIONS="$*" \
  "$py" -m pytest -q -rA -p no:cacheprovider tests/python >"$log.pytest" 2>&1
rc=$?
sed -nE 's/^(PASSED|FAILED|SKIPPED|ERROR) /\1 /p' "$log.pytest" | while read -r kind rest; do
  case "$kind" in PASSED) echo "PASS python $rest" ;; SKIPPED) echo "SKIP python $rest" ;; *) echo "FAIL python $rest" ;; esac
done
case $rc in 0|5) ;; *) grep -q -E '^(FAILED|ERROR) ' "$log.pytest" || echo "FAIL python: pytest exited $rc: $(tail -n1 "$log.pytest")" ;; esac
