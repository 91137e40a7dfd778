#!/usr/bin/env bash
# ./test.sh <version>... | all  [-j N] [--update-ref] [--no-build] [--only PATTERN]
#
# Builds, runs `selftest` of each version, then every case of tests/cases/*.cases on it,
# comparing with the seq reference bit for bit (and seq with the hashes pinned in
# tests/ref/seq.sha256). One line per case with its time, in file order whatever -j; a failed
# case also prints its command, what differed and the first lines of its stderr. The last line
# is "N passed, N failed, N skipped"; exit status 1 if anything failed.
# -j N runs N cases at once (default: JOBS=N from the environment, else one per core); -j 1 runs
# them one after another. seq's cases run with the others' (the reference), seq first.
# With -j above 1 each case gets OMP_NUM_THREADS = max(2, cores / jobs) (unless it is set).
# CUDA versions are skipped (not failed) where no GPU is usable, and where nvcc is missing. Their
# cases share the card: at most (free MiB of the card) / 1024 run at once (2048 under a
# CUDA_RUNNER); GPU_FREE_MIB=n stands in for nvidia-smi's free memory, to try the cap.
# Make variables come from the environment: SANITIZE=1 ./test seq, NO_STB=1 ./test all, ...
# CUDA_RUNNER prefixes every case run of a CUDA version, e.g. under compute-sanitizer:
#   CUDA_RUNNER="compute-sanitizer --tool memcheck --log-file build/cs/%p.log --error-exitcode 86"
# WORK=dir keeps a run's outputs apart (default build/test), for runs side by side.
# CASE_TIMEOUT=seconds stops a case that runs longer (default 900; it then fails, exit 124).
# The CUDA versions' cases run in batches: a few `./main run-cases` processes serve them all
# (one CUDA context each, not one per case); BATCH=1 batches every version's, BATCH=0 none.
set -u
cd "$(dirname "$(readlink -f "$0")")" || exit 1

BIN=${BIN:-bin}
export BIN
WORK=${WORK:-build/test}
REF=tests/ref/seq.sha256
update_ref=0 build=1 only="" jobs=${JOBS:-}
versions=()
while [ $# -gt 0 ]; do
  case "$1" in
    --update-ref) update_ref=1 ;;
    --no-build) build=0 ;;
    --only) only="$2"; shift ;;
    -j|--jobs) jobs=${2:-}; shift ;;
    -j*) jobs=${1#-j} ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "test: unknown option $1" >&2; exit 1 ;;
    *) versions+=("$1") ;;
  esac
  shift
done
[ ${#versions[@]} -gt 0 ] || { echo "usage: ./test <version>|all (see ./test --help)" >&2; exit 1; }
[ -n "$jobs" ] || jobs=$(nproc)
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "test: -j wants a number of jobs (1 or more), not '$jobs'" >&2; exit 1; }
# `wait -n -p` (which job ended) came with bash 5.1.
(( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 501 )) || { echo "test: needs bash 5.1 or newer" >&2; exit 1; }
# Cases run side by side share the cores: each multithreaded case (omp, the host pipelines) gets
# its share of them, at least 2 threads so that the threaded paths still split their work, and
# waits passively, instead of every case starting one spinning thread per core.
if [ "$jobs" -gt 1 ] && [ -z "${OMP_NUM_THREADS:-}" ]; then
  cores=$(nproc)
  export OMP_NUM_THREADS=$(( (cores + jobs - 1) / jobs < 2 ? 2 : (cores + jobs - 1) / jobs ))
  export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
fi

all_known=$(sed -n 's/^VERSIONS_\(CPU\|CUDA\) := //p' Makefile | tr '\n' ' ')
buildable=$(make -s list 2>/dev/null | tr '\n' ' ')
passed=0 failed=0 skipped=0
pass() { passed=$((passed + 1)); printf 'ok    %s\n' "$*"; }
fail() { failed=$((failed + 1)); printf 'FAIL  %s\n' "$*"; }
skip() { skipped=$((skipped + $2)); printf 'skip  %s\n' "$1"; }

if [ "${versions[0]}" = all ]; then
  read -r -a versions <<<"$buildable"
  for v in $all_known; do
    case " $buildable " in *" $v "*) ;; *) echo "note: $v cannot be built here (see the ✗ lines of make)";; esac
  done
fi
for v in "${versions[@]}"; do
  case " $all_known " in *" $v "*) ;; *) echo "test: unknown version '$v' (known: $all_known)" >&2; exit 1 ;; esac
done

# ---------------------------------------------------------------------------- build
is_cuda() { case "$1" in cuda-*|blur-v*) return 0 ;; *) return 1 ;; esac; }
targets="$BIN/seq"
for v in "${versions[@]}"; do
  case " $buildable " in *" $v "*) targets="$targets $BIN/$v" ;; esac
done
if [ $build = 1 ]; then
  make -j"$(nproc)" $targets tools >"$WORK.make.log" 2>&1 || { mkdir -p build; make -j"$(nproc)" $targets tools >"$WORK.make.log" 2>&1; } || {
    tail -n 30 "$WORK.make.log"; echo "test: build failed (log: $WORK.make.log)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
  grep -E '✓|✗' "$WORK.make.log"
fi

# ---------------------------------------------------------------------------- test data
mkdir -p "$WORK"
export IMG=images DATA=build/testdata GEN=$BIN/parvis-gen
if [ -x "$GEN" ] && { [ ! -f "$DATA/.stamp" ] || [ "$GEN" -nt "$DATA/.stamp" ]; }; then
  rm -rf "$DATA" && mkdir -p "$DATA" && "$GEN" testdata "$DATA" >/dev/null && touch "$DATA/.stamp" ||
    { echo "test: generating test data failed"; }
fi
# Scratch: $TMP is $TMP_ROOT/<version>/<case file>, so that the setup of one file (or version)
# never rewrites a file that a case of another still reads; $OUT is the case's own folder.
TMP_ROOT=$WORK/tmp
rm -rf "$TMP_ROOT" "$WORK/setup" "$WORK/batch" && mkdir -p "$TMP_ROOT" "$WORK/setup"
# FFTW's wisdom cache (src/match/cpu_fftw.cpp) in this run's scratch, not the user's: the first
# FFT case of each size writes it (atomically: temp file + rename, merged with what others
# wrote), the later ones (and the other versions) plan from it, and their outputs must still
# equal seq's.
export PARVIS_FFTW_WISDOM=$TMP_ROOT/fftw-wisdom

# Outputs of a case: stdout, then every file under $OUT (sorted), into one hash. Only what
# the case promises to reproduce bit for bit is hashed: stdout alone for same-stdout, and
# no .npy map for map-close (FFT maps carry rounding that depends on the FFT plan).
digest() {  # dir expect -> sha256
  local skip_files='^$'
  case "$2" in same-stdout) skip_files='.' ;; map-close=*) skip_files='\.npy$' ;; esac
  (cd "$1" && { cat stdout; find out -type f | LC_ALL=C sort | grep -vE "$skip_files" | while read -r f; do printf '%s\n' "$f"; cat "$f"; done; } | sha256sum | cut -d' ' -f1)
}
# The version or this build lacks the feature (stderr says so) -> skip.
NOT_BUILT_IN='is not implemented in|not available in this build|install libstb-dev|install libfftw3-dev'

# ---------------------------------------------------------------------------- the case files
# Parsed once: per file its setup lines and cases; with --only, the cases that match.
trim() { REPLY=${1#"${1%%[![:space:]]*}"}; REPLY=${REPLY%"${REPLY##*[![:space:]]}"}; }
case_files=(tests/cases/*.cases)
cf_stem=() cf_setup=() cf_bg=() c_file=() c_name=() c_expect=() c_args=() c_mem=()
for k in "${!case_files[@]}"; do
  stem=${case_files[k]##*/}; cf_stem[k]=${stem%.cases}; cf_setup[k]="" cf_bg[k]=""
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      '!&'*) cf_bg[k]+="${line#!&}"$'\n'; continue ;;
      '!'*) cf_setup[k]+="${line#!}"$'\n'; continue ;;
    esac
    trim "$line"
    case "$REPLY" in ''|'#'*|'!'*) continue ;; esac
    # <name> | <expect> | <arguments>; the arguments keep any further '|'.
    trim "${line%%|*}"; name=$REPLY
    rest=""; [[ "$line" == *'|'* ]] && rest=${line#*|}
    trim "${rest%%|*}"; expect=$REPLY
    args=""; [[ "$rest" == *'|'* ]] && args=${rest#*|}
    [ -n "$only" ] && [[ "$name" != *$only* ]] && continue
    # "exit=2 mem=MB": the case runs under a memory bound of MB MiB (see the case run below).
    mem=""; if [[ "$expect" == *" mem="* ]]; then mem=${expect##* mem=}; expect=${expect%% mem=*}; fi
    c_file+=("$k") c_name+=("$name") c_expect+=("$expect") c_args+=("$args") c_mem+=("$mem")
  done <"${case_files[k]}"
done

# ---------------------------------------------------------------------------- the plan
# Every piece of work is an item, in the order it is reported: per version its selftest, then
# per case file its setup, then its cases. Items start in that order, as many at once as -j
# allows, a case only after its file's setup; they are reported in that order as they end.
# Kinds: img (the image layer's tests), note (text known now), self (selftest), setup (a file's
# `!` lines, one after another), bg (its `!&` lines: alongside the cases, which do not read what
# they write), case (its own process), bcase (a case run by its group), group (a batch: one
# `./main run-cases` process for some of a version's cases, once their files' setups ended).
n_items=0
it_kind=() it_v=() it_quiet=() it_k=() it_c=() it_gpu=() it_dep=() it_text=()
add_item() {  # kind version quiet file case gpu dep [text]
  it_kind[n_items]=$1 it_v[n_items]=$2 it_quiet[n_items]=$3 it_k[n_items]=$4 it_c[n_items]=$5
  it_gpu[n_items]=$6 it_dep[n_items]=$7 it_text[n_items]=${8:-}
  n_items=$((n_items + 1))
}
declare -A done_item=()

[ -x "$BIN/parvis-imgtest" ] && [ -z "$only" ] && add_item img - 0 - - 0 -1

# seq runs first: it is the reference the others are compared with. Without seq among the
# versions, it runs quietly (checked by nobody, reported by nobody).
ref_needed=0 want_seq=0 any_cuda=0
for v in "${versions[@]}"; do [ "$v" = seq ] && want_seq=1; done
ordered=(); [ $want_seq = 1 ] && ordered=(seq)
for v in "${versions[@]}"; do [ "$v" = seq ] || [[ " ${ordered[*]} " == *" $v "* ]] || ordered+=("$v"); done
# Batches (tests/README.md): by default the CUDA versions' cases, whose processes each pay for a
# CUDA context (the driver makes them one at a time); BATCH=1: every version's; BATCH=0: none.
# A case runs alone where a batch cannot run it as its own process would: arguments with shell
# syntax beyond words (a redirection), a mem= bound on a CPU version (ulimit is per process).
batched() { case "${BATCH:-}" in 0) return 1 ;; '') is_cuda "$1" ;; *) return 0 ;; esac; }
batchable() {  # version case
  [[ "${c_args[$2]}" == *[\<\>\|\;\&\`]* || "${c_args[$2]}" == *'$('* ]] && return 1
  [ -z "${c_mem[$2]}" ] || is_cuda "$1"
}
add_version() {  # version quiet
  local v=$1 quiet=$2 gpu=0 k c=0 s tmps=() dirs=() batch=() g m groups deps members
  is_cuda "$v" && gpu=1
  [ "$quiet" = 1 ] || add_item self "$v" 0 - - "$gpu" -1
  # One rm and one mkdir for all of the version's folders (a fork per case adds up).
  for k in "${!case_files[@]}"; do tmps+=("$TMP_ROOT/$v/${cf_stem[k]}"); done
  for c in "${!c_name[@]}"; do dirs+=("$WORK/$v/${c_name[c]}"); done
  [ ${#dirs[@]} -gt 0 ] && rm -rf "${dirs[@]}"
  mkdir -p "$WORK/setup/$v" "${tmps[@]}" "${dirs[@]/%//out}"
  c=0
  for k in "${!case_files[@]}"; do
    s=$n_items
    add_item setup "$v" "$quiet" "$k" - "$gpu" -1
    [ -n "${cf_bg[k]}" ] && add_item bg "$v" "$quiet" "$k" - "$gpu" -1
    while [ $c -lt ${#c_name[@]} ] && [ "${c_file[c]}" = "$k" ]; do
      if batched "$v" && batchable "$v" "$c"; then batch+=("$n_items"); add_item bcase "$v" "$quiet" "$k" "$c" "$gpu" "$s"
      else add_item case "$v" "$quiet" "$k" "$c" "$gpu" "$s"; fi
      c=$((c + 1))
    done
  done
  # The batched cases dealt round-robin (the long ones spread) into as many groups as may run at
  # once; a group waits for the setups of its cases' files only.
  groups=$jobs; [ $gpu = 1 ] && groups=$gpu_jobs
  ((groups > ${#batch[@]})) && groups=${#batch[@]}
  for ((g = 0; g < groups; g++)); do
    members="" deps=" "
    for ((m = g; m < ${#batch[@]}; m += groups)); do
      members+=" ${batch[m]}"
      [[ "$deps" == *" ${it_dep[batch[m]]} "* ]] || deps+="${it_dep[batch[m]]} "
    done
    add_item group "$v" "$quiet" - - "$gpu" "$deps" "$members"
  done
}
declare -A skip_text=()
for v in "${ordered[@]}"; do
  case " $buildable " in *" $v "*) ;; *)
    skip_text[$v]="1 $v: cannot be built on this machine (see make's ✗ lines)"; continue ;; esac
  if ! "$BIN/$v" device >"$WORK/device-$v.log" 2>&1 && is_cuda "$v"; then
    n=$(cat "${case_files[@]}" 2>/dev/null | grep -cvE '^[[:space:]]*(#|!|$)')
    skip_text[$v]="$((n + 1)) $v: $(<"$WORK/device-$v.log") — $n cases and the selftest skipped"
    continue
  fi
  is_cuda "$v" && any_cuda=1
  [ "$v" = seq ] || ref_needed=1
done
# ---------------------------------------------------------------------------- the GPU's share
# CUDA cases (or their batches: one case at a time each) run at most gpu_jobs at once, so that
# together they never ask for more than the card has free. The budget of one case: its CUDA context with cuFFT loaded (~0.5 GiB) plus the
# largest case's buffers (integral 4097x4112 to u64/f64: a 135 MB table and the 17 MB source;
# the all-colours 4096x4096 RGB source, 48 MiB, with its grey; 3840x2161 matched by FFT: a few
# complex 4096x2304 planes of 75 MB and cuFFT's work area) = 1024 MiB with a margin; twice that
# under a CUDA_RUNNER (compute-sanitizer's shadow memory and padded allocations).
gpu_jobs=$jobs
if [ $any_cuda = 1 ]; then
  gpu_case_mib=1024; [ -n "${CUDA_RUNNER:-}" ] && gpu_case_mib=2048
  gpu_free=${GPU_FREE_MIB:-$(nvidia-smi ${CUDA_VISIBLE_DEVICES:+-i "${CUDA_VISIBLE_DEVICES%%,*}"} \
    --query-gpu=memory.free --format=csv,noheader,nounits 2>/dev/null | head -n1)}
  if [[ "$gpu_free" =~ ^[0-9]+$ ]]; then gpu_jobs=$((gpu_free / gpu_case_mib)); else gpu_jobs=1; fi
  ((gpu_jobs < 1)) && gpu_jobs=1
  ((gpu_jobs > jobs)) && gpu_jobs=$jobs
  echo "gpu: ${gpu_free:-unknown} MiB free, $gpu_case_mib MiB per case: $gpu_jobs CUDA jobs at once"
fi

[ $want_seq = 0 ] && [ $ref_needed = 1 ] && add_version seq 1
for v in "${ordered[@]}"; do
  if [ -n "${skip_text[$v]:-}" ]; then add_item note "$v" 0 - - 0 -1 "${skip_text[$v]}"
  else add_version "$v" 0; fi
done

# The library and its Python module on the versions under test (tests/library.sh), last.
[ -z "$only" ] && add_item lib - 0 - - 0 -1

# ---------------------------------------------------------------------------- the jobs
# Each runs in a background subshell; what the report needs lands in files.
ms_since() {  # t0 (EPOCHREALTIME) -> REPLY ms
  local t1=$EPOCHREALTIME
  REPLY=$(( (10#${t1//[.,]/} - 10#${1//[.,]/}) / 1000 ))
}
job() {  # item
  # $quiet as setup lines know it: empty, or "quiet" for seq's unreported reference run.
  local i=$1 v=${it_v[$1]} quiet="" k=${it_k[$1]} t0=$EPOCHREALTIME
  [ "${it_quiet[i]}" = 1 ] && quiet=quiet
  [ "$k" = - ] || export TMP=$TMP_ROOT/$v/${cf_stem[k]}
  case ${it_kind[i]} in
    img) "$BIN/parvis-imgtest" >"$WORK/img.log" 2>&1; local rc=$?; ms_since "$t0"; echo "$rc $REPLY" >"$WORK/img.rc" ;;
    lib) BIN=$BIN tests/library.sh "${versions[@]}" >"$WORK/lib.log" 2>&1; local rc=$?; ms_since "$t0"; echo "$rc $REPLY" >"$WORK/lib.rc" ;;
    self) "$BIN/$v" selftest >"$WORK/selftest-$v.log" 2>&1; echo $? >"$WORK/selftest-$v.rc" ;;
    setup|bg)
      # Each line as before, in a subshell of its own; a failure leaves "line: first stderr line".
      local lines=${cf_setup[k]} line first err=$WORK/setup/$v/$i.err
      [ "${it_kind[i]}" = bg ] && lines=${cf_bg[k]}
      while IFS= read -r line; do
        (eval "$line") >/dev/null 2>"$err" </dev/null && continue
        first=""; IFS= read -r first <"$err"
        printf '%s: %s\n' "$line" "$first" >>"$WORK/setup/$v/$i.fail"
      done <<<"${lines%$'\n'}" ;;
    case) run_alone "$v" "${it_c[i]}" "$quiet" ;;
    group) run_group "$i" "$v" "$quiet" ;;
  esac
}
# Case c of version v as its own process; its folder gets stdout, stderr, rc ("status ms"), and
# for seq its hash.
run_alone() {  # version case quiet
  local v=$1 c=$2 quiet=$3 runner="" t0=$EPOCHREALTIME
  local dir=$WORK/$v/${c_name[$2]} mem=${c_mem[$2]}
  export OUT=$dir/out TMP=$TMP_ROOT/$v/${cf_stem[${c_file[c]}]}
  is_cuda "$v" && { runner=${CUDA_RUNNER:-}; mem=""; }
  # A memory bound (mem=MB): virtual memory (ulimit -v), or under the sanitizers, which
  # reserve terabytes of it, their resident-memory limit; none on the CUDA versions, whose
  # driver maps far more than it uses.
  (if [ -z "$mem" ]; then :
   elif [ -n "${SANITIZE:-}" ]; then export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=$mem"
   else ulimit -v $((mem * 1024)); fi
   eval "timeout ${CASE_TIMEOUT:-900} $runner \"$BIN/$v\" ${c_args[c]}") >"$dir/stdout" 2>"$dir/stderr" </dev/null
  local rc=$?
  ms_since "$t0"
  seq_hash "$v" "$c" "$quiet" "$rc"
  echo "$rc $REPLY" >"$dir/rc"
}
seq_hash() {  # version case quiet rc: seq's hash is made by the job, in parallel, not by the report
  if [ "$1" = seq ] && [ -z "$3" ] && [ "$4" = 0 ] && [[ "${c_expect[$2]}" != exit=* ]]; then
    digest "$WORK/seq/${c_name[$2]}" "${c_expect[$2]}" >"$WORK/seq/${c_name[$2]}/hash"
  fi
}
# A batch: its cases' command lines (expanded as for a case of their own) into a list served by
# `./main run-cases` (under CUDA_RUNNER). Where the process ended during a case (a crash, a
# signal), that case runs alone and a new process takes the rest; a case stopped by CASE_TIMEOUT
# is exit 124. A case whose exit status is not the one expected runs again alone, and so does
# every case of a process whose own status was not 0 (a sanitizer's report: whose, it does not
# say); that result is reported, with a note (DIR/note) where the batch's differed.
run_group() {  # item version quiet
  local i=$1 v=$2 quiet=$3 runner="" list=$WORK/batch/$2/$1 j k c dir w words left=() solo=() rc n=0 crc _
  local -A line=()
  is_cuda "$v" && runner=${CUDA_RUNNER:-}
  mkdir -p "$WORK/batch/$v"
  for j in ${it_text[i]}; do
    c=${it_c[j]} dir=$WORK/$v/${c_name[c]}
    OUT=$dir/out TMP=$TMP_ROOT/$v/${cf_stem[${c_file[c]}]}
    eval "words=(${c_args[c]})"
    # A word with a TAB or a newline cannot be a field of the list: that case runs alone.
    for w in "${words[@]}"; do [[ "$w" == *[$'\t\n']* ]] && { run_alone "$v" "$c" "$quiet"; continue 2; }; done
    printf -v w '\t%s' "${words[@]}"
    line[$c]=$dir$w left+=("$c")
  done
  while [ ${#left[@]} -gt 0 ]; do
    n=$((n + 1))
    for c in "${left[@]}"; do printf '%s\n' "${line[$c]}"; done >"$list.$n.list"
    eval "$runner \"\$BIN/\$v\" run-cases \"\$list.\$n.list\" --timeout ${CASE_TIMEOUT:-900}" >"$list.$n.log" 2>&1 </dev/null
    rc=$?
    # The first case without its rc is the one the process ended in (a crash, a signal).
    k=${#left[@]}
    for j in "${!left[@]}"; do [ -f "$WORK/$v/${c_name[${left[j]}]}/rc" ] || { k=$j; break; }; done
    for ((j = 0; j < k; j++)); do
      c=${left[j]} dir=$WORK/$v/${c_name[${left[j]}]}
      if [ $k = ${#left[@]} ] && [ $rc != 0 ]; then
        solo+=("$c"); echo "its batch process exited $rc ($list.$n.list); it ran again alone" >"$dir/note"; continue
      fi
      read -r crc _ <"$dir/rc"
      if unexpected_rc "$c" "$dir" "$crc"; then solo+=("$c"); else seq_hash "$v" "$c" "$quiet" "$crc"; fi
    done
    [ $k = ${#left[@]} ] && break
    c=${left[k]} dir=$WORK/$v/${c_name[${left[k]}]}
    if [ $rc = 142 ]; then  # SIGALRM: run-cases --timeout
      echo "124 $((${CASE_TIMEOUT:-900} * 1000))" >"$dir/rc"
      echo "stopped after CASE_TIMEOUT=${CASE_TIMEOUT:-900} s in a batch ($list.$n.list)" >"$dir/note"
    else
      echo "the batch process ended (status $rc) during this case ($list.$n.list); it ran again alone" >"$dir/note"
      echo "$rc 0" >"$dir/rc"
      rerun_alone "$v" "$c" "$quiet" silent
    fi
    left=("${left[@]:k+1}")
  done
  for c in "${solo[@]}"; do rerun_alone "$v" "$c" "$quiet"; done
}
# The exit status the case does not expect (a case skipped for a missing feature aside).
unexpected_rc() {  # case dir rc
  case "${c_expect[$1]}" in exit=*) [ "$3" = "${c_expect[$1]#exit=}" ] && return 1 ;; *) [ "$3" = 0 ] && return 1 ;; esac
  local err; mapfile err <"$2/stderr"
  ! [[ "${err[*]}" =~ $NOT_BUILT_IN ]]
}
# The case again as its own process, the batch's results kept in DIR/batch/; a note (DIR/note)
# where the two differ in exit status or stdout (unless told to be silent).
rerun_alone() {  # version case quiet [silent]
  local dir=$WORK/$1/${c_name[$2]} a="" ra rb _
  rm -rf "$dir/batch" && mkdir "$dir/batch" && mv "$dir/stdout" "$dir/stderr" "$dir/rc" "$dir/out" "$dir/batch/"
  mkdir "$dir/out"
  run_alone "$1" "$2" "$3"
  read -r ra _ <"$dir/batch/rc"; read -r rb _ <"$dir/rc"
  [ -n "${4:-}" ] && return
  local how="exit $ra"; cmp -s "$dir/batch/stdout" "$dir/stdout" || how+=" and another stdout"
  [ "$how" = "exit $rb" ] && return
  IFS= read -r a <"$dir/batch/stderr"
  echo "in a batch it gave $how${a:+ (stderr: $a)}; that run is kept in $dir/batch/" >>"$dir/note"
}

# ---------------------------------------------------------------------------- the reports
# Versions whose numerical contract allows rounding: DESIGN.md "Blur map" (blur-v1 and blur-v2
# recompute the Gaussian in floating point). Cases that expect `near=D/F` compare their image
# outputs with parvis-compare image-close (each sample within D of seq's, at most a fraction F
# differing); every other version must match seq bit for bit there too.
APPROX_VERSIONS=" blur-v1 blur-v2 "

declare -A ref_hash
if [ -f "$REF" ]; then
  while read -r n h; do ref_hash[$n]=$h; done <"$REF"
fi
new_ref=()

# A failed case, whole: the FAIL line, the command as run (variables expanded), what differed
# (given as lines), the first lines of its stderr.
fail_case() {  # label reason [detail lines...]
  fail "$1: $2"; shift 2
  local cmd=${c_args[c]} line n=0
  cmd=${cmd//\$IMG/$IMG}; cmd=${cmd//\$DATA/$DATA}; cmd=${cmd//\$OUT/$dir/out}; cmd=${cmd//\$TMP/$TMP_ROOT/$v/${cf_stem[${c_file[c]}]}}
  trim "$cmd"
  printf '      command: %s%s %s\n' "${runner:+$runner }" "$BIN/$v" "$REPLY"
  for line in "$@"; do printf '      %s\n' "$line"; done
  for line in "${err_lines[@]}"; do
    ((n++ == 0)) && printf '      stderr:\n'
    ((n > 6)) && { printf '        ... (%s lines in %s)\n' "${#err_lines[@]}" "$dir/stderr"; break; }
    printf '        %s\n' "${line%$'\n'}"
  done
}

# Version v's outputs of case c against seq's (seq's against the pinned hash).
check_case() {  # version case
  local v=$1 c=$2 name=${c_name[$2]} expect=${c_expect[$2]}
  local dir=$WORK/$1/${c_name[$2]} sdir=$WORK/seq/${c_name[$2]}
  local rc ms runner="" err_lines=()
  is_cuda "$v" && runner=${CUDA_RUNNER:-}
  read -r rc ms <"$dir/rc"
  mapfile err_lines <"$dir/stderr"
  local label="$v $name (${ms} ms)" e0=${err_lines[0]:-}
  e0=${e0%$'\n'}
  if [ "$rc" != 0 ] && [[ "${err_lines[*]}" =~ $NOT_BUILT_IN ]]; then skip "$label: $e0" 1; return; fi
  case "$expect" in
    exit=*)
      # One error line: one line ending in a newline, as `wc -l` counted it.
      local want=${expect#exit=} lines=${#err_lines[@]} left=()
      [ "$lines" -gt 0 ] && [[ "${err_lines[lines - 1]}" != *$'\n' ]] && lines=$((lines - 1))
      shopt -s nullglob dotglob; left=("$dir"/out/*); shopt -u nullglob dotglob
      if [ "$rc" != "$want" ]; then fail_case "$label" "exit $rc, expected $want: $e0"
      elif [ "$lines" != 1 ]; then fail_case "$label" "$lines lines on stderr, expected one error line"
      elif [ ${#left[@]} -gt 0 ]; then fail_case "$label" "left output behind: ${left[*]##*/}"
      else pass "$label"; fi
      return ;;
  esac
  if [ "$rc" != 0 ]; then fail_case "$label" "exit $rc: $e0"; return; fi
  if [ "$v" = seq ]; then
    local h=""; [ -f "$dir/hash" ] && read -r h <"$dir/hash"
    new_ref+=("$name $h")
    if [ $update_ref = 1 ]; then pass "$label (reference updated)"
    elif [ -z "${ref_hash[$name]:-}" ]; then fail_case "$label" "no pinned hash in $REF (./test seq --update-ref)"
    elif [ "${ref_hash[$name]}" != "$h" ]; then
      fail_case "$label" "output differs from the pinned reference" "pinned $REF: ${ref_hash[$name]}" \
        "this run:  $h (of stdout and the files under $dir/out)"
    else pass "$label"; fi
    return
  fi
  local srcrc=none; [ -f "$sdir/rc" ] && read -r srcrc _ <"$sdir/rc"
  if [ "$srcrc" != 0 ]; then fail_case "$label" "seq did not produce a reference (exit $srcrc)"; return; fi
  if ! cmp -s "$dir/stdout" "$sdir/stdout"; then
    local d; mapfile -t d <<<"$(diff "$sdir/stdout" "$dir/stdout" | head -n 20)"
    fail_case "$label" "stdout differs from seq" "diff $sdir/stdout $dir/stdout:" "${d[@]/#/  }"; return
  fi
  # The output files of both, by name relative to out/.
  local f files=() note="" a; declare -A seen=()
  shopt -s nullglob dotglob globstar
  for a in "$sdir"/out/** "$dir"/out/**; do
    [ -f "$a" ] || continue
    f=${a#"$sdir"/out/}; f=${f#"$dir"/out/}
    [ -n "${seen[$f]:-}" ] || { seen[$f]=1; files+=("$f"); }
  done
  shopt -u nullglob dotglob globstar
  for f in "${files[@]}"; do
    [ -f "$dir/out/$f" ] || { fail_case "$label" "missing output $f" "seq wrote $sdir/out/$f"; return; }
    [ -f "$sdir/out/$f" ] || { fail_case "$label" "extra output $f" "seq wrote no $f"; return; }
    case "$expect" in
      same-stdout) ;;
      map-close=*)
        if [[ "$f" == *.npy ]]; then
          "$BIN/parvis-compare" npy-close "$sdir/out/$f" "$dir/out/$f" "${expect#map-close=}" >"$dir/compare" 2>&1 ||
            { fail_case "$label" "$f: $(head -n1 "$dir/compare")" "compared with $sdir/out/$f"; return; }
        elif ! cmp -s "$sdir/out/$f" "$dir/out/$f"; then fail_differs; return; fi ;;
      near=*)
        if [[ "$APPROX_VERSIONS" == *" $v "* ]]; then
          local bound=${expect#near=}
          "$BIN/parvis-compare" image-close "$sdir/out/$f" "$dir/out/$f" "${bound%/*}" "${bound#*/}" >"$dir/compare" 2>&1 ||
            { fail_case "$label" "$f: $(head -n1 "$dir/compare")" "compared with $sdir/out/$f"; return; }
          note="$note; $f $(head -n1 "$dir/compare")"
        elif ! cmp -s "$sdir/out/$f" "$dir/out/$f"; then fail_differs; return; fi ;;
      *) cmp -s "$sdir/out/$f" "$dir/out/$f" || { fail_differs; return; } ;;
    esac
  done
  pass "$label$note"
}
fail_differs() {  # (check_case's f, sdir, dir, label) an output file differs from seq's
  fail_case "$label" "$f differs from seq" "$(cmp "$sdir/out/$f" "$dir/out/$f" 2>&1 | head -n1)"
}

report() {  # item
  local i=$1 v=${it_v[$1]} line
  case ${it_kind[i]} in
    img|lib)
      local rc ms np=0 nf=0 ns=0 last="" what="image layer"
      [ "${it_kind[i]}" = lib ] && what="library"
      read -r rc ms <"$WORK/${it_kind[i]}.rc"
      while IFS= read -r line; do
        case "$line" in PASS*) np=$((np + 1)) ;; FAIL*) nf=$((nf + 1)); echo "$line" ;; SKIP*) ns=$((ns + 1)); echo "$line" ;; esac
        last=$line
      done <"$WORK/${it_kind[i]}.log"
      passed=$((passed + np)); failed=$((failed + nf)); skipped=$((skipped + ns))
      echo "$what: $np passed, $nf failed, $ns skipped (${ms} ms)"
      if [ "$rc" != 0 ] && [ "$nf" = 0 ]; then fail "$what test exited $rc: $last"; fi ;;
    note)
      echo "== $v"
      skip "${it_text[i]#* }" "${it_text[i]%% *}" ;;
    self)
      echo "== $v"
      while IFS= read -r line; do echo "device: $line"; done <"$WORK/device-$v.log"
      # Selftest: its own checks count one by one.
      local rc log; read -r rc <"$WORK/selftest-$v.rc"; mapfile -t log <"$WORK/selftest-$v.log"
      local last=""; [ ${#log[@]} -gt 0 ] && last=${log[-1]}
      if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
        passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2])); skipped=$((skipped + BASH_REMATCH[3]))
        for line in "${log[@]}"; do [[ "$line" == FAIL* ]] && echo "$line"; done
        echo "selftest $v: $last"
      else
        fail "$v selftest: exit $rc: ${log[*]: -3}"
      fi ;;
    setup|bg)
      # A quiet run's setup failures show as its cases' failures, or as nobody's (as before).
      [ "${it_quiet[i]}" = 1 ] || [ ! -f "$WORK/setup/$v/$i.fail" ] && return
      while IFS= read -r line; do fail "setup of ${case_files[${it_k[i]}]}: $line"; done <"$WORK/setup/$v/$i.fail" ;;
    case|bcase)
      [ "${it_quiet[i]}" = 1 ] && return
      local c=${it_c[i]} dir=$WORK/$v/${c_name[${it_c[i]}]}
      if [ "${it_kind[i]}" = case ] || [ -e "$dir/batch" ] || [ -e "$dir/note" ] || [ $reruns_left = 0 ]; then check_case "$v" "$c"
      else check_rerun "$v" "$c" "$dir"; fi
      [ -f "$dir/note" ] || return
      batch_notes=$((batch_notes + 1))
      while IFS= read -r line; do printf '      note: %s\n' "$line"; done <"$dir/note" ;;
  esac
}
# A batched case whose outputs fail the check runs again alone (in the foreground: rare), and that
# result is reported; after 10 such reruns the failures are reported as the batch left them.
reruns_left=10 batch_notes=0
check_rerun() {  # version case dir
  local f0=$failed n0=${#new_ref[@]} out=$WORK/check.out first lines
  check_case "$1" "$2" >"$out"
  if [ "$failed" = "$f0" ]; then mapfile -t lines <"$out"; printf '%s\n' "${lines[@]}"; return; fi
  failed=$f0 new_ref=("${new_ref[@]:0:n0}") reruns_left=$((reruns_left - 1))
  (rerun_alone "$1" "$2" "" quiet >/dev/null 2>&1)
  IFS= read -r first <"$out"
  check_case "$1" "$2" >"$out"
  mapfile -t lines <"$out"; printf '%s\n' "${lines[@]}"
  # The verdicts without their times: a note where they differ.
  [ "${first/(*ms)/}" = "${lines[0]/(*ms)/}" ] || echo "in a batch ($3/batch/): ${first#FAIL  }" >>"$3/note"
  [ $reruns_left = 0 ] && echo "note: 10 batched cases failed and ran again alone; the next failures are the batch's"
}

# ---------------------------------------------------------------------------- the runs
# Start items in order while a job is free (and, for a CUDA version, the GPU's share allows,
# and the file's setup has ended); report the finished ones in order; wait for the next end.
# A batch whose setups have not ended waits aside and starts first once they have; its cases
# (bcase) end with it.
declare -A pid_item=()
running=0 gpu_running=0 next=0 reported=0 waiting=()
can_start() {  # item
  local d
  for d in ${it_dep[$1]}; do [ "$d" -lt 0 ] || [ -n "${done_item[$d]:-}" ] || return 1; done
  [ "${it_gpu[$1]}" = 1 ] && [ $gpu_running -ge "$gpu_jobs" ] && return 1
  return 0
}
start() {  # item
  job "$1" &
  pid_item[$!]=$1; running=$((running + 1))
  [ "${it_gpu[$1]}" = 1 ] && gpu_running=$((gpu_running + 1))
}
while [ $reported -lt $n_items ]; do
  for w in "${!waiting[@]}"; do
    [ $running -lt "$jobs" ] || break
    can_start "${waiting[w]}" && { start "${waiting[w]}"; unset "waiting[w]"; }
  done
  while [ $next -lt $n_items ] && [ $running -lt "$jobs" ]; do
    case ${it_kind[next]} in
      note) done_item[$next]=1 ;;
      bcase) ;;
      group) if can_start "$next"; then start "$next"; else waiting+=("$next"); fi ;;
      *) can_start "$next" || break; start "$next" ;;
    esac
    next=$((next + 1))
  done
  while [ $reported -lt $n_items ] && [ -n "${done_item[$reported]:-}" ]; do
    report "$reported"; reported=$((reported + 1))
  done
  [ $reported -lt $n_items ] || break
  # wait -n names the job that ended; it may name none (it unsets fin: a job bash had already
  # reaped, a signal), and then the ended jobs are the ones no longer alive.
  wait -n -p fin || true
  ended=("${fin:-}")
  if [ -z "${fin:-}" ]; then
    ended=()
    for pid in "${!pid_item[@]}"; do kill -0 "$pid" 2>/dev/null || ended+=("$pid"); done
    [ ${#pid_item[@]} -gt 0 ] || { echo "test: lost track of the jobs" >&2; break; }
    [ ${#ended[@]} -gt 0 ] || { sleep 0.05; continue; }
  fi
  for fin in "${ended[@]}"; do
    i=${pid_item[$fin]}; unset "pid_item[$fin]"
    done_item[$i]=1; running=$((running - 1))
    if [ "${it_kind[i]}" = group ]; then for j in ${it_text[i]}; do done_item[$j]=1; done; fi
    [ "${it_gpu[i]}" = 1 ] && gpu_running=$((gpu_running - 1))
  done
done

if [ $update_ref = 1 ] && [ ${#new_ref[@]} -gt 0 ]; then
  mkdir -p "$(dirname "$REF")"
  # With --only, the cases that did not run keep their pinned hashes (the file is merged); a full
  # run rewrites it, which also drops the hashes of cases that no longer exist.
  if [ -n "$only" ]; then
    for e in "${new_ref[@]}"; do ref_hash[${e%% *}]=${e#* }; done
    for n in "${!ref_hash[@]}"; do echo "$n ${ref_hash[$n]}"; done | LC_ALL=C sort >"$REF"
  else
    printf '%s\n' "${new_ref[@]}" | LC_ALL=C sort >"$REF"
  fi
  echo "wrote $REF (${#new_ref[@]} cases updated, $(wc -l <"$REF") pinned)"
fi

[ $batch_notes = 0 ] || echo "note: $batch_notes batched case(s) with a note above (how their batch process ended, or that it gave them another result than their own process)"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
