# Shared by tests/gpu/<op>.sh (sourced, not run). Each op script is called by
# tests/gpu_check.sh as `tests/gpu/<op>.sh LOGDIR` from the repository root, after the build,
# and must leave in LOGDIR:
#   <name>.log ending in "N passed, N failed, N skipped"   for every test or sanitizer run
#   <name>.reports holding a count                          for every sanitizer run
# (gpu_check.sh sums them). It may print a few summary lines; benchmarks write their own files.

# The op scripts start up to ~20 test runs side by side, each of which would otherwise run one
# case per core (test.sh -j) and take the card's free memory at its start as its own: two jobs
# each keeps them near the load they had when every run was serial. JOBS=N overrides.
export JOBS=${JOBS:-2}

# gpu_test NAME [env...] -- ./test args: a test run whose closing line counts.
gpu_test() {
  local name=$1; shift
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" WORK="build/test-$name" ./test --no-build "$@" >"$LOG/$name.log" 2>&1
  echo "$name: $(tail -n1 "$LOG/$name.log")"
  grep -E '^FAIL' "$LOG/$name.log" | head -n 20
}

# gpu_sanitize TOOL VERSION PATTERN [TAG]: the cases matching PATTERN on VERSION under
# compute-sanitizer TOOL (tests/sanitize.sh: memcheck with the leak check, racecheck, ...).
# TAG (e.g. the variant set in the environment) keeps the logs of runs of the same cases apart.
gpu_sanitize() {
  local tool=$1 v=$2 pattern=$3
  local name=$tool-$v-$pattern${4:+-$4} dir=$LOG/cs-$tool-$v-$pattern${4:+-$4}
  rm -rf "$dir" && mkdir -p "$dir"
  WORK=build/test-$name CUDA_RUNNER="tests/sanitize.sh $tool $dir" ./test "$v" --no-build --only "$pattern" >"$LOG/$name.log" 2>&1
  local reports; reports=$(cat "$dir"/*.log 2>/dev/null | grep -cE 'ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]|SYNCCHECK SUMMARY: [1-9]|INITCHECK SUMMARY: [1-9]')
  local runs; runs=$(ls "$dir" | wc -l)
  echo "$name: $(tail -n1 "$LOG/$name.log"); $runs sanitized processes, $reports with reports"
  echo "$reports" >"$LOG/$name.reports"
}
