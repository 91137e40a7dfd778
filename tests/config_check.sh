#!/usr/bin/env bash
# tests/config_check.sh EXE — the environment as one version reads it (src/common/config.cpp,
# docs/CONFIG.md):
#   - an unknown PARVIS_TUNING key, a key without a value and a bad value of every key in the
#     table are usage errors (exit 1) with one stderr line that names the key, before any work;
#   - a bad value of a user variable with a fixed set of values (PARVIS_SIMD, ...) is exit 1;
#   - a good value of every key is accepted (the run goes on);
#   - docs/CONFIG.md lists exactly the variables and keys `EXE --config` prints;
#   - the product reads the environment in config.cpp only (getenv in no other file of src,
#     cuda, bmp) and names at most 10 PARVIS_ variables.
# Prints ok / FAIL lines and "N passed, N failed, N skipped"; exit 1 on any failure, the first
# also on stderr (tests/cases/config.cases runs it per version as a setup line).
set -u
EXE=$1
passed=0 failed=0 first_failure=""
pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; [ -n "$first_failure" ] || first_failure="$*"; }

# usage_error WHAT NEEDLE ENV...: `EXE --version` under ENV exits 1 with one stderr line naming NEEDLE.
usage_error() {
  local what=$1 needle=$2; shift 2
  local err rc
  err=$(env "$@" "$EXE" --version 2>&1 >/dev/null); rc=$?
  if [ "$rc" = 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [[ "$err" == *"$needle"* ]]; then
    pass "$what"
  else
    fail "$what (exit $rc: $err)"
  fi
}
accepted() {
  local what=$1; shift
  local out rc
  out=$(env "$@" "$EXE" --version 2>&1); rc=$?
  if [ "$rc" = 0 ]; then pass "$what"; else fail "$what (exit $rc: $out)"; fi
}

config=$("$EXE" --config) || { echo "FAIL $EXE --config"; exit 1; }
keys=$(printf '%s\n' "$config" | sed -n '/^PARVIS_TUNING keys:/,$p' | sed -n 's/^  \([a-z0-9_.]*\)  .*/\1/p')
vars=$(printf '%s\n' "$config" | sed -n '/^variables:/,/^PARVIS_TUNING keys:/p' | sed -n 's/^  \(PARVIS_[A-Z0-9_]*\)  .*/\1/p')
[ -n "$keys" ] && [ -n "$vars" ] || fail "--config lists variables and keys"

usage_error "unknown key" no.such_key PARVIS_TUNING=no.such_key=1
usage_error "key without a value" match.ntt PARVIS_TUNING=match.ntt
usage_error "unknown key after a good one" zz.top "PARVIS_TUNING=match.ntt=1,zz.top=2"
usage_error "PARVIS_SIMD=avx512" PARVIS_SIMD PARVIS_SIMD=avx512
usage_error "PARVIS_GRAY=gpu" PARVIS_GRAY PARVIS_GRAY=gpu
accepted "empty PARVIS_TUNING" PARVIS_TUNING=
for k in $keys; do
  usage_error "$k=bogus" "$k" "PARVIS_TUNING=$k=bogus%"
  # A good value: the lower end of the key's range, or its first word.
  line=$(printf '%s\n' "$config" | grep -m1 "^  $k  ")
  if [[ "$line" == *"0 or 1"* ]]; then good=1
  elif [[ "$line" =~ one\ of\ ([a-z0-9_-]+) ]]; then good=${BASH_REMATCH[1]}
  elif [[ "$line" =~ in\ ([0-9.e+]+)\.\. ]]; then good=${BASH_REMATCH[1]}
  else good=""; fi
  if [ -n "$good" ]; then accepted "$k=$good" "PARVIS_TUNING=$k=$good"; else fail "$k: no good value found in '$line'"; fi
done

# docs/CONFIG.md against --config, both ways.
doc=$(dirname "$0")/../docs/CONFIG.md
if [ -f "$doc" ]; then
  doc_names=$(grep -oE '^\| `[A-Za-z0-9_.]+`' "$doc" | sed 's/^| `//; s/`$//' | sort -u)
  want=$(printf '%s\n' $keys $vars | sort -u)
  if [ "$doc_names" = "$want" ]; then pass "docs/CONFIG.md lists exactly --config's names"
  else fail "docs/CONFIG.md differs from --config: $(diff <(echo "$want") <(echo "$doc_names") | grep '^[<>]' | tr '\n' ' ')"; fi
else
  fail "docs/CONFIG.md is missing"
fi

# The source reads the environment in one module.
root=$(dirname "$0")/..
readers=$(grep -rlE '\bgetenv\b' "$root/src" "$root/cuda" "$root/bmp" | sed "s|^$root/||" | sort)
if [ "$readers" = "src/common/config.cpp" ]; then pass "getenv only in src/common/config.cpp"
else fail "getenv outside config.cpp: $(echo $readers)"; fi
n=$(grep -rhoE '"PARVIS_[A-Z0-9_]+"' "$root/src" "$root/cuda" "$root/bmp" | sort -u | wc -l)
if [ "$n" -le 10 ]; then pass "$n PARVIS_ variables named (at most 10)"; else fail "$n PARVIS_ variables named (more than 10)"; fi

echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" = 0 ] || { echo "$first_failure" >&2; exit 1; }
