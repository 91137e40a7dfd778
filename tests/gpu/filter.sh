#!/usr/bin/env bash
# tests/gpu/filter.sh LOGDIR — the convolution filter on the CUDA versions (called by
# tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive and ./test seq cuda-opt on every filter case (filter.cases,
#      filter_exact.cases: each output equals seq's bit for bit; the selftest also checks that
#      every variant and every kept tuning field equals the default), every filter case again on
#      cuda-opt with each of OPT_VARIANTS (default "sep mma": PARVIS_TUNING=filter.variant=sep,
#      the separable kernel on gaussian/box/identity/unsharp/edge3 and auto's path on the rest,
#      from compute capability 8.0 its cp.async form, cuda/filter/opt_sep_async.cuh; =mma, the
#      tensor-core kernels on every kernel they take), sep's strips of 7 and 13 rows
#      (filter.sep_rows), its register form (cuda/filter/opt_sep.cuh, filter.sep_async=0: the
#      form below 8.0) with its own strips and with 13 rows, and the filter-cs and filter-custom
#      cases with the other variants: cuda-naive's vectorized kernel (=vec) and cuda-opt's
#      CUDA-core kernel (=direct);
#   2. compute-sanitizer memcheck (leak check) and racecheck on the filter-cs cases (tiny and odd
#      sizes, custom kernels reaching every path) of both versions and of each of OPT_VARIANTS,
#      memcheck on the 131x67 gaussian5, box3 and unsharp5 cases with sep and on gaussian5 and
#      unsharp5 with its register form; the runs of 1 and 2 go side by side (separate WORK
#      folders), after the test data is made;
#   3. the host emulation of the sep kernels' lanes (tests/cuda/filter_sep_emulate.cu, ~30 s);
#   4. auto's path for a few kernels and borders, and what --explain prints;
#   5. bench/filter_variants.sh: cuda-opt's variants on the issue's workloads (8K and 4K RGB,
#      gaussian, box and unsharp, 3x3 and 5x5; compute only) and their block-size sweep, into
#      LOGDIR/bench-filter-variants.txt (printed). With FILTER_FULL_BENCH=1 also the full
#      bench/run_filter.sh (every resolution and kernel, the peers; several minutes) into
#      LOGDIR/bench-filter.txt.
# A few minutes on an H100 without the full bench.
set -u
LOG=$1
. tests/gpu/lib.sh
OPT_VARIANTS=${OPT_VARIANTS:-"sep mma"}

# The test data, once, before the runs side by side (each would otherwise make it).
WORK=build/test-filter-data ./test --no-build seq --only no-such-case >/dev/null 2>&1

pids=()
gpu_test test-filter-naive -- seq cuda-naive --only filter & pids+=($!)
gpu_test test-filter -- seq cuda-opt --only filter & pids+=($!)
gpu_test test-filter-naive-vec PARVIS_TUNING=filter.variant=vec -- cuda-naive --only filter-c & pids+=($!)
gpu_test test-filter-opt-direct PARVIS_TUNING=filter.variant=direct -- cuda-opt --only filter-c & pids+=($!)
for v in $OPT_VARIANTS; do
  gpu_test "test-filter-opt-$v" PARVIS_TUNING=filter.variant=$v -- seq cuda-opt --only filter & pids+=($!)
done
for v in cuda-naive cuda-opt; do
  gpu_sanitize memcheck $v filter-cs & pids+=($!)
  gpu_sanitize racecheck $v filter-cs & pids+=($!)
done
for v in $OPT_VARIANTS; do
  PARVIS_TUNING=filter.variant=$v gpu_sanitize memcheck cuda-opt filter-cs "$v" & pids+=($!)
  PARVIS_TUNING=filter.variant=$v gpu_sanitize racecheck cuda-opt filter-cs "$v" & pids+=($!)
done
# sep on several warps and both row ends (131x67, every border, grey and RGB; filter-cs has
# gaussian only on images narrower than one lane's 16 bytes).
if [[ " $OPT_VARIANTS " == *" sep "* ]]; then
  PARVIS_TUNING=filter.variant=sep gpu_sanitize memcheck cuda-opt filter-all-gaussian5 sep & pids+=($!)
  PARVIS_TUNING=filter.variant=sep gpu_sanitize memcheck cuda-opt filter-all-box3 sep & pids+=($!)
  PARVIS_TUNING=filter.variant=sep gpu_sanitize memcheck cuda-opt filter-all-unsharp5 sep & pids+=($!)
  # The cp.async form's slots (shared memory, __syncwarp) on several warps: racecheck.
  PARVIS_TUNING=filter.variant=sep gpu_sanitize racecheck cuda-opt filter-all-gaussian5 sep & pids+=($!)
  # sep's kept tuning fields (src/filter/tuning.hpp) against seq on every filter case: strips that
  # are not a multiple of K, the register form (the one below compute capability 8.0) with its
  # own strips and with 13 rows; memcheck on the 131x67 cases with the register form.
  for x in rows7:filter.sep_rows=7 rows13:filter.sep_rows=13 registers:filter.sep_async=0 \
           registers-rows13:filter.sep_async=0,filter.sep_rows=13; do
    gpu_test "test-filter-opt-sep-${x%%:*}" PARVIS_TUNING=filter.variant=sep,${x#*:} -- seq cuda-opt --only filter & pids+=($!)
  done
  for x in registers:filter.sep_async=0 registers-rows13:filter.sep_async=0,filter.sep_rows=13; do
    (export PARVIS_TUNING=filter.variant=sep,${x#*:}
     gpu_sanitize memcheck cuda-opt filter-all-gaussian5 "sep-${x%%:*}"
     gpu_sanitize memcheck cuda-opt filter-all-unsharp5 "sep-${x%%:*}") & pids+=($!)
  done
fi
wait "${pids[@]}"

# The copies to the GPU and back (cuda/upload/): the filterupload cases (1x1, 7x3 RGB, 1327x1025
# RGB, 3840x2161) under each PARVIS_UPLOAD mode, staged with 5000-byte pieces on 3 threads (pieces
# that divide no row count) and with the pinned bytes capped, and memcheck under the odd pieces
# and under pageable.
for mode in pageable staged; do
  gpu_test "test-filter-upload-$mode" PARVIS_UPLOAD=$mode -- cuda-opt --only filterupload
done
gpu_test test-filter-upload-odd PARVIS_UPLOAD=staged PARVIS_TUNING=upload.chunk=5000,upload.threads=3 -- cuda-opt --only filterupload
PARVIS_UPLOAD=staged PARVIS_TUNING=upload.chunk=5000,upload.threads=3 gpu_sanitize memcheck cuda-opt filterupload odd
gpu_test test-filter-upload-cap PARVIS_TUNING=upload.pinned=60000,upload.threads=3,upload.min=0 -- cuda-opt --only filterupload
PARVIS_UPLOAD=pageable gpu_sanitize memcheck cuda-opt filterupload pageable

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
# The emulation links filter.cpp's bank and border names; the linker drops what else filter.cpp calls.
emu=$LOG/test-filter-sep-emulate.log
if "$NVCC" -std=c++17 -O2 -Iinclude -Isrc -Ibmp -Icuda tests/cuda/filter_sep_emulate.cu src/filter/filter.cpp \
     -Xcompiler -ffunction-sections -Xlinker --gc-sections -o build/filter_sep_emulate >"$emu" 2>&1 &&
   build/filter_sep_emulate >>"$emu" 2>&1; then
  echo "1 passed, 0 failed, 0 skipped" >>"$emu"
else
  echo "0 passed, 1 failed, 0 skipped" >>"$emu"
fi
echo "test-filter-sep-emulate: $(tail -n1 "$emu")"

# auto's choice of kernel (the path column of `bench filter`): the separable kernel for gaussian,
# box and unsharp under the zero border (its cp.async form from compute capability 8.0), the MMA
# kernel for sharpen and under the replicate border. (A dangling reference to the variant's name
# once made auto's choice depend on freed memory.)
auto_paths() {
  "$BIN/cuda-opt" bench filter --res 131x67 --kernel "$1" --size 5 --border "$2" --sweep none --max-reps 1 \
    --seconds 0.001 2>/dev/null | awk '$3 !~ /\// { for (i = 8; i <= NF; i++) printf "%s ", $i; exit }'
}
BIN=${BIN:-bin}
pass=0 fail=0
for want in "gaussian zero sep" "box zero sep" "unsharp zero sep" "sharpen zero mma" "gaussian replicate mma"; do
  read -r k b p <<<"$want"
  got=$(auto_paths "$k" "$b")
  if [[ "$got" == "$p "* ]]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL auto path of ${k}5 $b: got '$got', want $p..."; fi
done
# --explain prints the tuning that ran, with cuda-opt's defaults for this device filled in
# (src/filter/tuning.hpp opt_tuning_defaults; compute capability 8.0 and above), and the path.
explain() {
  env ${2:+PARVIS_TUNING=$2} "$BIN/cuda-opt" filter images/capsules_small.bmp "$LOG/explain.bmp" $1 --explain 2>/dev/null |
    sed -n 's/^tuning: //p'
}
for want in "--kernel=gaussian||variant=auto threads=256 sep_async=1 sep_rows=8" \
            "--kernel=gaussian --size=5||variant=auto threads=256 sep_async=1" \
            "--kernel=gaussian|filter.variant=sep,filter.sep_async=0|variant=sep threads=256 sep_async=0" \
            "--kernel=sharpen|filter.variant=mma,filter.sep_rows=5|variant=mma threads=256 sep_async=1 sep_rows=5"; do
  IFS='|' read -r args tuning line <<<"$want"
  got=$(explain "${args//=/ }" "$tuning")
  if [ "$got" = "$line" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL --explain of $args ($tuning): got '$got', want '$line'"; fi
done
echo "test-filter-auto-paths: $pass passed, $fail failed, 0 skipped" | tee "$LOG/test-filter-auto-paths.log"

bench/filter_variants.sh auto $OPT_VARIANTS direct >"$LOG/bench-filter-variants.txt" 2>&1
echo "bench filter variants: exit $?"
cat "$LOG/bench-filter-variants.txt"

if [ -n "${FILTER_FULL_BENCH:-}" ]; then
  VERSIONS="cuda-naive cuda-opt" bench/run_filter.sh --seconds 0.2 >"$LOG/bench-filter.txt" 2>"$LOG/bench-filter.err"
  echo "bench filter: exit $?"
  sed -n '/^targets/,$p' "$LOG/bench-filter.txt"
fi
