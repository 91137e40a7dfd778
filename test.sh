#!/usr/bin/env bash
# ./test.sh <version>... | all  [--update-ref] [--no-build] [--only PATTERN]
#
# Builds, runs `selftest` of each version, then every case of tests/cases/*.cases on it,
# comparing with the seq reference bit for bit (and seq with the hashes pinned in
# tests/ref/seq.sha256). One line per case with its time; the last line is
# "N passed, N failed, N skipped"; exit status 1 if anything failed.
# CUDA versions are skipped (not failed) where no GPU is usable, and where nvcc is missing.
# Make variables come from the environment: SANITIZE=1 ./test seq, NO_STB=1 ./test all, ...
# CUDA_RUNNER prefixes every case run of a CUDA version, e.g. under compute-sanitizer:
#   CUDA_RUNNER="compute-sanitizer --tool memcheck --log-file build/cs/%p.log --error-exitcode 86"
# WORK=dir keeps a run's outputs apart (default build/test), for runs side by side.
# CASE_TIMEOUT=seconds stops a case that runs longer (default 900; it then fails, exit 124).
set -u
cd "$(dirname "$(readlink -f "$0")")" || exit 1

BIN=${BIN:-bin}
export BIN
WORK=${WORK:-build/test}
REF=tests/ref/seq.sha256
update_ref=0 build=1 only=""
versions=()
while [ $# -gt 0 ]; do
  case "$1" in
    --update-ref) update_ref=1 ;;
    --no-build) build=0 ;;
    --only) only="$2"; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "test: unknown option $1" >&2; exit 1 ;;
    *) versions+=("$1") ;;
  esac
  shift
done
[ ${#versions[@]} -gt 0 ] || { echo "usage: ./test <version>|all (see ./test --help)" >&2; exit 1; }

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
export IMG=images DATA=build/testdata OUT=$WORK/out TMP=$WORK/tmp GEN=$BIN/parvis-gen
if [ -x "$GEN" ] && { [ ! -f "$DATA/.stamp" ] || [ "$GEN" -nt "$DATA/.stamp" ]; }; then
  rm -rf "$DATA" && mkdir -p "$DATA" && "$GEN" testdata "$DATA" >/dev/null && touch "$DATA/.stamp" ||
    { echo "test: generating test data failed"; }
fi
rm -rf "$TMP" && mkdir -p "$TMP"
# FFTW's wisdom cache (src/match/cpu_fftw.cpp) in this run's scratch, not the user's: the first
# FFT case of each size writes it, the later ones (and the other versions) plan from it, and
# their outputs must still equal seq's.
export PARVIS_FFTW_WISDOM=$TMP/fftw-wisdom

# Outputs of a case: stdout, then every file under $OUT (sorted), into one hash. Only what
# the case promises to reproduce bit for bit is hashed: stdout alone for same-stdout, and
# no .npy map for map-close (FFT maps carry rounding that depends on the FFT plan).
digest() {  # dir expect -> sha256
  local skip_files='^$'
  case "$2" in same-stdout) skip_files='.' ;; map-close=*) skip_files='\.npy$' ;; esac
  (cd "$1" && { cat stdout; find out -type f | LC_ALL=C sort | grep -vE "$skip_files" | while read -r f; do printf '%s\n' "$f"; cat "$f"; done; } | sha256sum | cut -d' ' -f1)
}
not_built_in() {  # stderr file: the version or this build lacks the feature -> skip
  grep -qE 'is not implemented in|not available in this build|install libstb-dev|install libfftw3-dev' "$1"
}

# Runs one case on one version into $WORK/<version>/<name>/{stdout,stderr,rc,out/}.
# mem: the case's memory bound in MiB ("exit=2 mem=MB"), empty for none: virtual memory
# (ulimit -v), or under the sanitizers, which reserve terabytes of it, their resident-memory
# limit; none on the CUDA versions, whose driver maps far more than it uses.
run_case() {  # version name args [mem]
  local v=$1 name=$2 args=$3 mem=${4:-} dir=$WORK/$1/$2
  rm -rf "$dir" "$OUT" && mkdir -p "$dir" "$OUT"
  local t0=$(date +%s%N)
  local runner=""
  is_cuda "$v" && { runner=${CUDA_RUNNER:-}; mem=""; }
  (if [ -z "$mem" ]; then :
   elif [ -n "${SANITIZE:-}" ]; then export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=$mem"
   else ulimit -v $((mem * 1024)); fi
   eval "timeout ${CASE_TIMEOUT:-900} $runner \"$BIN/$v\" $args") >"$dir/stdout" 2>"$dir/stderr" </dev/null
  echo $? >"$dir/rc"
  echo $(( ($(date +%s%N) - t0) / 1000000 )) >"$dir/ms"
  mv "$OUT" "$dir/out"
}

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

# Compares version v's outputs of a case with seq's (seq: with the pinned hash).
check_case() {  # version name expect
  local v=$1 name=$2 expect=$3 dir=$WORK/$1/$2 sdir=$WORK/seq/$2
  local rc ms; rc=$(cat "$dir/rc"); ms=$(cat "$dir/ms")
  local label="$v $name (${ms} ms)"
  if [ "$rc" != 0 ] && not_built_in "$dir/stderr"; then skip "$label: $(head -n1 "$dir/stderr")" 1; return; fi
  case "$expect" in
    exit=*)
      local want=${expect#exit=} lines; lines=$(wc -l <"$dir/stderr")
      if [ "$rc" != "$want" ]; then fail "$label: exit $rc, expected $want: $(head -n2 "$dir/stderr")"
      elif [ "$lines" != 1 ]; then fail "$label: $lines lines on stderr, expected one error line"
      elif [ -n "$(ls -A "$dir/out")" ]; then fail "$label: left output behind: $(ls -A "$dir/out")"
      else pass "$label"; fi
      return ;;
  esac
  if [ "$rc" != 0 ]; then fail "$label: exit $rc: $(head -n3 "$dir/stderr")"; return; fi
  if [ "$v" = seq ]; then
    local h; h=$(digest "$dir" "$expect")
    new_ref+=("$name $h")
    if [ $update_ref = 1 ]; then pass "$label (reference updated)"
    elif [ -z "${ref_hash[$name]:-}" ]; then fail "$label: no pinned hash in $REF (./test seq --update-ref)"
    elif [ "${ref_hash[$name]}" != "$h" ]; then fail "$label: output differs from the pinned reference"
    else pass "$label"; fi
    return
  fi
  local sdir_rc; sdir_rc=$(cat "$sdir/rc" 2>/dev/null || echo none)
  if [ "$sdir_rc" != 0 ]; then fail "$label: seq did not produce a reference (exit $sdir_rc)"; return; fi
  if ! cmp -s "$dir/stdout" "$sdir/stdout"; then
    fail "$label: stdout differs from seq: $(diff "$sdir/stdout" "$dir/stdout" | head -n 4 | tr '\n' ' ')"; return
  fi
  local f files note=""; files=$( { (cd "$sdir/out" && find . -type f); (cd "$dir/out" && find . -type f); } | LC_ALL=C sort -u)
  for f in $files; do
    [ -f "$dir/out/$f" ] || { fail "$label: missing output $f"; return; }
    [ -f "$sdir/out/$f" ] || { fail "$label: extra output $f"; return; }
    case "$expect" in
      same-stdout) ;;
      map-close=*)
        if [[ "$f" == *.npy ]]; then
          "$BIN/parvis-compare" npy-close "$sdir/out/$f" "$dir/out/$f" "${expect#map-close=}" >"$dir/compare" 2>&1 ||
            { fail "$label: $f: $(head -n1 "$dir/compare")"; return; }
        elif ! cmp -s "$sdir/out/$f" "$dir/out/$f"; then fail "$label: $f differs from seq"; return; fi ;;
      near=*)
        if [[ "$APPROX_VERSIONS" == *" $v "* ]]; then
          local bound=${expect#near=}
          "$BIN/parvis-compare" image-close "$sdir/out/$f" "$dir/out/$f" "${bound%/*}" "${bound#*/}" >"$dir/compare" 2>&1 ||
            { fail "$label: $f: $(head -n1 "$dir/compare")"; return; }
          note="$note; $f $(head -n1 "$dir/compare")"
        elif ! cmp -s "$sdir/out/$f" "$dir/out/$f"; then fail "$label: $f differs from seq"; return; fi ;;
      *) cmp -s "$sdir/out/$f" "$dir/out/$f" || { fail "$label: $f differs from seq"; return; } ;;
    esac
  done
  pass "$label$note"
}

# ---------------------------------------------------------------------------- the runs
# The image layer's own tests (codec round trips, bad input) are version independent.
if [ -x "$BIN/parvis-imgtest" ] && [ -z "$only" ]; then
  t0=$(date +%s%N)
  "$BIN/parvis-imgtest" >"$WORK/imgtest.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  np=$(grep -c '^PASS' "$WORK/imgtest.log"); nf=$(grep -c '^FAIL' "$WORK/imgtest.log"); ns=$(grep -c '^SKIP' "$WORK/imgtest.log")
  passed=$((passed + np)); failed=$((failed + nf)); skipped=$((skipped + ns))
  grep -E '^(FAIL|SKIP)' "$WORK/imgtest.log"
  echo "image layer: $np passed, $nf failed, $ns skipped (${ms} ms)"
  if [ $rc != 0 ] && [ "$nf" = 0 ]; then fail "image layer test exited $rc: $(tail -n1 "$WORK/imgtest.log")"; fi
fi

case_files=$(ls tests/cases/*.cases 2>/dev/null)
seq_ran=0
run_version() {  # version [quiet]
  local v=$1 quiet=${2:-}
  for cf in $case_files; do
    # Setup lines, once per version run (they write only under $TMP).
    while IFS= read -r line; do
      (eval "${line#!}") >/dev/null 2>"$WORK/setup.err" </dev/null ||
        { [ -n "$quiet" ] || fail "setup of $cf: ${line#!}: $(head -n1 "$WORK/setup.err")"; }
    done < <(grep -E '^!' "$cf")
    while IFS='|' read -r name expect args; do
      name=$(echo "$name" | xargs); expect=$(echo "$expect" | xargs)
      [ -n "$only" ] && [[ "$name" != *$only* ]] && continue
      local mem=""
      if [[ "$expect" == *" mem="* ]]; then mem=${expect##* mem=}; expect=${expect%% mem=*}; fi
      run_case "$v" "$name" "$args" "$mem"
      [ -n "$quiet" ] || check_case "$v" "$name" "$expect"
    done < <(grep -vE '^[[:space:]]*(#|!|$)' "$cf")
  done
}

for v in "${versions[@]}"; do
  echo "== $v"
  case " $buildable " in *" $v "*) ;; *)
    skip "$v: cannot be built on this machine (see make's ✗ lines)" 1; continue ;; esac
  if is_cuda "$v" && ! "$BIN/$v" device >"$WORK/device.log" 2>&1; then
    n=$(cat $case_files 2>/dev/null | grep -cvE '^[[:space:]]*(#|!|$)')
    skip "$v: $(cat "$WORK/device.log") — $n cases and the selftest skipped" $((n + 1))
    continue
  fi
  "$BIN/$v" device | sed 's/^/device: /'
  # Selftest: its own checks count one by one.
  "$BIN/$v" selftest >"$WORK/selftest-$v.log" 2>&1
  rc=$?
  last=$(tail -n1 "$WORK/selftest-$v.log")
  if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2])); skipped=$((skipped + BASH_REMATCH[3]))
    grep -E '^FAIL' "$WORK/selftest-$v.log"
    echo "selftest $v: $last"
  else
    fail "$v selftest: exit $rc: $(tail -n3 "$WORK/selftest-$v.log" | tr '\n' ' ')"
  fi
  if [ "$v" != seq ] && [ $seq_ran = 0 ]; then
    run_version seq quiet   # the reference outputs to compare with
    seq_ran=1
  fi
  run_version "$v"
  [ "$v" = seq ] && seq_ran=1
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

echo "$passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ]
