#!/usr/bin/env bash
# tests/gpu/filter.sh LOGDIR — the convolution filter on the CUDA versions (called by
# tests/gpu_check.sh after the build; see tests/gpu/lib.sh for the contract):
#   1. ./test seq cuda-naive and ./test seq cuda-opt on every filter case (filter.cases,
#      filter_exact.cases: each output equals seq's bit for bit; the selftest also checks that
#      every variant equals the default), every filter case again on cuda-opt with each of
#      OPT_VARIANTS (default "smem prefetch sep": PARVIS_FILTER_VARIANT=smem, the shared-memory
#      cp.async pipeline of cuda/filter/opt_smem.cuh, =prefetch, the persistent warps of
#      cuda/filter/opt_prefetch.cuh, and =sep, the separable two-pass kernel on
#      gaussian/box/identity/unsharp/edge3, auto's path on the rest: from compute capability 8.0
#      its cp.async form, cuda/filter/opt_sep_async.cuh, also with 3 and 6 slots a warp
#      (PARVIS_FILTER_SEP_STAGES), and its register form, cuda/filter/opt_sep.cuh
#      (PARVIS_FILTER_SEP_ASYNC=0)),
#      and the filter-cs and filter-custom cases with the other variants: cuda-naive's vectorized
#      kernel (=vec) and cuda-opt's CUDA-core kernel (=direct);
#   2. compute-sanitizer memcheck (leak check) and racecheck on the filter-cs cases (tiny and odd
#      sizes, custom kernels reaching every path) of both versions and of each of OPT_VARIANTS,
#      memcheck on the 131x67 gaussian5, box3 and unsharp5 cases with sep; every filter case and
#      memcheck on the 131x67 gaussian5 and unsharp5 cases with sep's experiment switches
#      (PARVIS_FILTER_SEP_MINB=0 + _PF=2 + _LANE=8 + _L2PF=4 + _STCS=1, _BULKPF=3; _L1PF=2 on filter-c);
#      the runs of 1 and 2 go side by side (separate WORK folders), after the test data is made;
#   3. the host emulations of the smem kernel's data movement (tests/cuda/filter_smem_emulate.cu)
#      and of the sep kernel's lanes (tests/cuda/filter_sep_emulate.cu, ~30 s);
#   4. bench/filter_variants.sh: cuda-opt's variants on the issue's workloads (8K and 4K RGB,
#      gaussian and unsharp, 3x3 and 5x5; compute only) and their block-size sweep, into
#      LOGDIR/bench-filter-variants.txt (printed). With FILTER_FULL_BENCH=1 also the full
#      bench/run_filter.sh (every resolution and kernel, the peers; several minutes) into
#      LOGDIR/bench-filter.txt.
# About 2-3 minutes on an H100 without the full bench (the longest run, ~245 cuda-opt processes,
# sets the pace; it takes 37 s here without a GPU, every CUDA case skipped).
set -u
LOG=$1
. tests/gpu/lib.sh
OPT_VARIANTS=${OPT_VARIANTS:-"smem prefetch sep"}

# The test data, once, before the runs side by side (each would otherwise make it).
WORK=build/test-filter-data ./test --no-build seq --only no-such-case >/dev/null 2>&1

pids=()
gpu_test test-filter-naive -- seq cuda-naive --only filter & pids+=($!)
gpu_test test-filter -- seq cuda-opt --only filter & pids+=($!)
gpu_test test-filter-naive-vec PARVIS_FILTER_VARIANT=vec -- cuda-naive --only filter-c & pids+=($!)
gpu_test test-filter-opt-direct PARVIS_FILTER_VARIANT=direct -- cuda-opt --only filter-c & pids+=($!)
for v in $OPT_VARIANTS; do
  gpu_test "test-filter-opt-$v" PARVIS_FILTER_VARIANT="$v" -- seq cuda-opt --only filter & pids+=($!)
done
for v in cuda-naive cuda-opt; do
  gpu_sanitize memcheck $v filter-cs & pids+=($!)
  gpu_sanitize racecheck $v filter-cs & pids+=($!)
done
for v in $OPT_VARIANTS; do
  PARVIS_FILTER_VARIANT=$v gpu_sanitize memcheck cuda-opt filter-cs "$v" & pids+=($!)
  PARVIS_FILTER_VARIANT=$v gpu_sanitize racecheck cuda-opt filter-cs "$v" & pids+=($!)
done
# sep on several warps and both row ends (131x67, every border, grey and RGB; filter-cs has
# gaussian only on images narrower than one lane's 16 bytes).
if [[ " $OPT_VARIANTS " == *" sep "* ]]; then
  PARVIS_FILTER_VARIANT=sep gpu_sanitize memcheck cuda-opt filter-all-gaussian5 sep & pids+=($!)
  PARVIS_FILTER_VARIANT=sep gpu_sanitize memcheck cuda-opt filter-all-box3 sep & pids+=($!)
  PARVIS_FILTER_VARIANT=sep gpu_sanitize memcheck cuda-opt filter-all-unsharp5 sep & pids+=($!)
  # The cp.async form's slots (shared memory, __syncwarp) on several warps: racecheck; its other
  # slot counts and the register form against seq on every filter case, memcheck on the latter.
  PARVIS_FILTER_VARIANT=sep gpu_sanitize racecheck cuda-opt filter-all-gaussian5 sep & pids+=($!)
  for st in 3 6; do
    gpu_test "test-filter-opt-sep-slots$st" PARVIS_FILTER_VARIANT=sep PARVIS_FILTER_SEP_STAGES=$st -- seq cuda-opt --only filter & pids+=($!)
  done
  gpu_test test-filter-opt-sep-registers PARVIS_FILTER_VARIANT=sep PARVIS_FILTER_SEP_ASYNC=0 -- seq cuda-opt --only filter & pids+=($!)
  PARVIS_FILTER_VARIANT=sep PARVIS_FILTER_SEP_ASYNC=0 gpu_sanitize memcheck cuda-opt filter-all-gaussian5 sep-registers & pids+=($!)
  # sep's experiment switches (opt_sep.cuh sep_experiments; bench/filter_sep_experiments.sh times
  # them): every filter case against seq, and memcheck on the 131x67 cases, with 8 bytes a lane
  # and the L2 prefetch, and with the tighter launch bounds and the L1 prefetch.
  for x in MINB=0+PF=2+LANE=8+L2PF=4+STCS=1 BULKPF=3; do
    IFS=+ read -ra kv <<<"$x"; xe=(); for a in "${kv[@]}"; do xe+=("PARVIS_FILTER_SEP_$a"); done
    tag=sep-$(echo "${x//[=+]/}" | tr 'A-Z' 'a-z')
    gpu_test "test-filter-opt-$tag" PARVIS_FILTER_VARIANT=sep "${xe[@]}" -- seq cuda-opt --only filter & pids+=($!)
    (export PARVIS_FILTER_VARIANT=sep "${xe[@]}"
     gpu_sanitize memcheck cuda-opt filter-all-gaussian5 "$tag"
     gpu_sanitize memcheck cuda-opt filter-all-unsharp5 "$tag") & pids+=($!)
  done
  gpu_test test-filter-opt-sep-l1pf2 PARVIS_FILTER_VARIANT=sep PARVIS_FILTER_SEP_L1PF=2 -- seq cuda-opt --only filter-c & pids+=($!)
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
# sep links filter.cpp's separate() and make_divider; the linker drops what else filter.cpp calls.
for e in smem sep; do
  emu=$LOG/test-filter-$e-emulate.log
  extra=(); [ $e = sep ] && extra=(src/filter/filter.cpp -Xcompiler -ffunction-sections -Xlinker --gc-sections)
  if "$NVCC" -std=c++17 -O2 -Isrc -Ibmp -Icuda tests/cuda/filter_${e}_emulate.cu "${extra[@]}" \
       -o build/filter_${e}_emulate >"$emu" 2>&1 && build/filter_${e}_emulate >>"$emu" 2>&1; then
    echo "1 passed, 0 failed, 0 skipped" >>"$emu"
  else
    echo "0 passed, 1 failed, 0 skipped" >>"$emu"
  fi
  echo "test-filter-$e-emulate: $(tail -n1 "$emu")"
done

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
echo "test-filter-auto-paths: $pass passed, $fail failed, 0 skipped" | tee "$LOG/test-filter-auto-paths.log"

bench/filter_variants.sh auto $OPT_VARIANTS >"$LOG/bench-filter-variants.txt" 2>&1
echo "bench filter variants: exit $?"
cat "$LOG/bench-filter-variants.txt"

if [ -n "${FILTER_FULL_BENCH:-}" ]; then
  VERSIONS="cuda-naive cuda-opt" bench/run_filter.sh --seconds 0.2 >"$LOG/bench-filter.txt" 2>"$LOG/bench-filter.err"
  echo "bench filter: exit $?"
  sed -n '/^targets/,$p' "$LOG/bench-filter.txt"
fi
