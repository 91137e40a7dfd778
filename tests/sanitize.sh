#!/usr/bin/env bash
# tests/sanitize.sh TOOL LOGDIR COMMAND...  — COMMAND under `compute-sanitizer --tool TOOL`
# (memcheck with the leak check), the tool's report in LOGDIR/<random>.log. Exit status: the
# program's, or 86 when the tool reported anything. A program that ends before its first CUDA
# call (a usage error, a missing file) has nothing to check, and the tool then hides its exit
# status: it is run again without the tool, and its empty report removed.
# Used by tests/gpu_check.sh as test.sh's CUDA_RUNNER.
set -u
tool=$1 dir=$2
shift 2
mkdir -p "$dir"
log=$(mktemp "$dir/XXXXXXXX.log") out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
extra=()
[ "$tool" = memcheck ] && extra=(--leak-check full)
compute-sanitizer --tool "$tool" "${extra[@]}" --log-file "$log" --error-exitcode 86 "$@" >"$out" 2>"$err"
rc=$?
if grep -q 'terminated before first instrumented API call' "$log"; then
  rm -f "$log"
  "$@"
  exit $?
fi
cat "$out"
cat "$err" >&2
exit $rc
