#!/usr/bin/env bash
# tests/gpu_check.sh [LOGDIR] [OP...] — everything the CUDA versions must show on a GPU machine,
# in one go: build (CUDA_ARCH from the environment, default native), the selftest of every CUDA
# version, then tests/gpu/<op>.sh for each OP (default: every script there), each of which runs
# its operation's cases on the CUDA versions against seq, the same under compute-sanitizer, and
# its benchmarks. Logs go to LOGDIR (default build/gpu-check). The last line sums every test and
# sanitizer run ("N passed, N failed, N skipped"; a sanitizer report counts as a failure);
# exit 1 if anything failed. Make overrides (STB_INCLUDE, FFTW_INCLUDE, FFTW_LIBDIR) come from
# the environment. GPU_CHECK_NO_BUILD=1 uses the binaries already under bin/.
set -u
cd "$(dirname "$(readlink -f "$0")")/.." || exit 1
LOG=${1:-build/gpu-check}
shift || true
ops=("$@")
if [ ${#ops[@]} = 0 ]; then
  for f in tests/gpu/*.sh; do ops+=("$(basename "$f" .sh)"); done
fi
mkdir -p "$LOG"
export CUDA_ARCH=${CUDA_ARCH:-native}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$LOG/gpu.txt" 2>&1
if [ -z "${GPU_CHECK_NO_BUILD:-}" ]; then
  make -j"$(nproc)" all >"$LOG/build.log" 2>&1 || { tail -n 30 "$LOG/build.log"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
fi
for v in $(make -s list | grep -E '^(cuda-|blur-v)'); do
  bin/$v selftest >"$LOG/selftest-$v.log" 2>&1
  echo "selftest $v: $(tail -n1 "$LOG/selftest-$v.log")"; grep -E '^FAIL' "$LOG/selftest-$v.log" | head -n 10
done
for op in "${ops[@]}"; do
  [ -f "tests/gpu/$op.sh" ] || { echo "gpu_check: no tests/gpu/$op.sh"; continue; }
  [ "$op" = lib ] && continue
  echo "== $op"
  bash "tests/gpu/$op.sh" "$LOG"
done

total_p=0 total_f=0 total_s=0
for f in "$LOG"/selftest-*.log "$LOG"/test-*.log "$LOG"/memcheck-*.log "$LOG"/racecheck-*.log "$LOG"/synccheck-*.log "$LOG"/initcheck-*.log; do
  [ -f "$f" ] || continue
  if [[ "$(tail -n1 "$f")" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    total_p=$((total_p + BASH_REMATCH[1])); total_f=$((total_f + BASH_REMATCH[2])); total_s=$((total_s + BASH_REMATCH[3]))
  else
    total_f=$((total_f + 1)); echo "no closing line in $f"
  fi
done
for f in "$LOG"/*.reports; do [ -f "$f" ] && total_f=$((total_f + $(cat "$f"))); done
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" = 0 ]
