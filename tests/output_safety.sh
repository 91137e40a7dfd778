#!/usr/bin/env bash
# tests/output_safety.sh EXE WORKDIR — what a run does to the files it writes (issue 31; the
# commit mechanism of src/common/output.hpp, docs/DESIGN.md "Output files"), on one version's
# executable, with real files:
#   - a failed run never changes or removes a file that existed before it: the source as --out,
#     an unrelated file, a batch's map, video's --out beside a failing --save-frame, a symlink's
#     target; multi-output commands are all or nothing (blur pairs, the seed form's layers);
#   - a symlink stays a link (its target replaced), a 0600 file stays 0600, a character device
#     (mknod in WORKDIR) and a FIFO stay what they are (written in place), also as the FFTW
#     wisdom cache; a directory as output is refused (exit 2); names of 250 characters work;
#   - a full stdout (/dev/full) is exit 3 with one line on stderr, and no file is committed;
#   - SIGINT, SIGTERM, SIGHUP during `video --out` leave no temporary (and exit by the signal);
#   - output paths and extensions are checked before any input is read (an input FIFO that
#     never delivers a byte: the run must still end at once, exit 2);
#   - selftest, device and --version take no arguments (exit 1).
# Prints ok / FAIL lines and "N passed, N failed, N skipped"; exit 1 on any failure, the first
# also on stderr (tests/cases/output_safety.cases runs it per version as a setup line).
set -u
EXE=$1 W=$2
GEN=${GEN:-$(dirname "$EXE")/parvis-gen}
rm -rf "$W" && mkdir -p "$W"
umask 022
passed=0 failed=0 skipped=0 first_failure=""
pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; [ -n "$first_failure" ] || first_failure="$*"; }
skip() { skipped=$((skipped + 1)); echo "skip  $*"; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
# No temporary of any kind left in a directory: nothing but the names given.
only_files() {
  local dir=$1; shift
  local got want
  got=$(cd "$dir" && ls -A | sort | tr '\n' ' ')
  want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
  [ "$got" = "$want" ] || { echo "      $dir holds: $got (expected: $want)"; return 1; }
}
mode_of() { stat -c %a "$1"; }
# run RC CMD...: the exit status must be RC.
run() {
  local want=$1; shift
  "$@" >"$W/last.out" 2>"$W/last.err"
  local rc=$?
  [ "$rc" = "$want" ] || { echo "      exit $rc, expected $want: $* ($(head -c 300 "$W/last.err"))"; return 1; }
}

"$GEN" noise 96x64 "$W/src.bmp" --seed 3 >/dev/null || { echo "cannot make inputs" >&2; exit 1; }
"$GEN" crop "$W/src.bmp" 20 10 16 12 "$W/tpl.bmp" >/dev/null || exit 1
S=$W/src.bmp T=$W/tpl.bmp
if "$EXE" match "$S" "$T" >/dev/null 2>"$W/probe.err"; then :; else
  grep -q "is not implemented in" "$W/probe.err" && { skip "output safety: $(head -n1 "$W/probe.err")"; echo "0 passed, 0 failed, 1 skipped"; exit 0; }
fi
printf 'old contents\n' >"$W/old.txt"

# --- 1: a failed run removes no earlier file ---
D=$W/r1 && mkdir -p "$D"
cp "$S" "$D/v.bmp"
check "match: the source as --out with a failing --map: exit 2" run 2 "$EXE" match "$D/v.bmp" "$T" --out "$D/v.bmp" --map /nonexistent/x.npy
check "match: the source as --out is unchanged" cmp -s "$D/v.bmp" "$S"
cp "$W/old.txt" "$D/unrelated.bmp"
check "match: an unrelated --out with a failing --map: exit 2" run 2 "$EXE" match "$S" "$T" --out "$D/unrelated.bmp" --map /nonexistent/x.npy
check "match: the unrelated file is unchanged" cmp -s "$D/unrelated.bmp" "$W/old.txt"
cp "$W/old.txt" "$D/m-1.npy"
check "match batch: existing map, failing --out: exit 2" run 2 "$EXE" match "$S" "$T" "$T" --map "$D/m.npy" --out /nonexistent/o.bmp
check "match batch: the existing map is unchanged" cmp -s "$D/m-1.npy" "$W/old.txt"
check "no temporary left (match)" only_files "$D" v.bmp unrelated.bmp m-1.npy
"$GEN" line 64x48 "$W/clip.y4m" --frames 3 --template "$W/ctpl.bmp" >/dev/null 2>&1 || fail "parvis-gen line"
V=$W/r1v && mkdir -p "$V"
cp "$W/old.txt" "$V/o.y4m"
check "video: existing --out, failing --save-frame: exit 2" run 2 "$EXE" video "$W/clip.y4m" "$W/ctpl.bmp" --out "$V/o.y4m" --save-frame 1:/nonexistent/f.bmp
check "video: the existing --out is unchanged" cmp -s "$V/o.y4m" "$W/old.txt"
cp "$W/old.txt" "$V/f.bmp"
check "video: --save-frame of a missing frame: exit 2" run 2 "$EXE" video "$W/clip.y4m" "$W/ctpl.bmp" --out "$V/o.y4m" --save-frame 9:"$V/f.bmp"
check "video: --out and --save-frame unchanged" eval 'cmp -s "$V/o.y4m" "$W/old.txt" && cmp -s "$V/f.bmp" "$W/old.txt"'
check "video: --out and --save-frame together: exit 0" run 0 "$EXE" video "$W/clip.y4m" "$W/ctpl.bmp" --out "$V/o.y4m" --save-frame 1:"$V/f.bmp"
check "video: both replaced" eval 'head -c 9 "$V/o.y4m" | grep -q YUV4MPEG2 && head -c 2 "$V/f.bmp" | grep -q BM'
check "no temporary left (video)" only_files "$V" o.y4m f.bmp

# --- 7: all or nothing ---
B=$W/r7 && mkdir -p "$B"
check "blur: second output unwritable: exit 2" run 2 "$EXE" blur "$S" "$B/o1.bmp" "$S" /nonexistent/o2.bmp
check "blur: the first output does not appear" only_files "$B"
cp "$W/old.txt" "$B/o1.bmp"
check "blur: second output a bad extension: exit 2" run 2 "$EXE" blur "$S" "$B/o1.bmp" "$S" "$B/o2.xyz"
check "blur: an existing first output is unchanged" cmp -s "$B/o1.bmp" "$W/old.txt"
mkdir -p "$B/seed/blurred_001.pgm"
check "seed form: one layer's path a directory: exit 2" run 2 "$EXE" 1 2 1 --size 32x24 --out-dir "$B/seed"
check "seed form: no layer written" only_files "$B/seed" blurred_001.pgm
check "seed form: a missing --out-dir parent is exit 2" run 2 "$EXE" 1 1 1 --size 32x24 --out-dir /nonexistent/dir
check "seed form: saves into a new --out-dir: exit 0" run 0 "$EXE" 1 2 1 --size 32x24 --out-dir "$B/new"
check "seed form: both layers" only_files "$B/new" blurred_000.pgm blurred_001.pgm

# --- 2: symlinks and device nodes ---
L=$W/r2 && mkdir -p "$L"
"$EXE" filter "$S" "$L/want.bmp" --kernel box >/dev/null 2>&1
cp "$W/old.txt" "$L/real.bmp"
ln -s real.bmp "$L/link.bmp"
check "symlink: a failed run (blur, second unwritable): exit 2" run 2 "$EXE" blur "$S" "$L/link.bmp" "$S" /nonexistent/o.bmp
check "symlink: its target untouched after the failure" eval '[ -L "$L/link.bmp" ] && cmp -s "$L/real.bmp" "$W/old.txt"'
check "symlink: filter through it: exit 0" run 0 "$EXE" filter "$S" "$L/link.bmp" --kernel box
check "symlink: still a link" test -L "$L/link.bmp"
check "symlink: its target replaced" cmp -s "$L/real.bmp" "$L/want.bmp"
ln -s nowhere.bmp "$L/dangling.bmp"
check "dangling symlink: filter creates its target" eval 'run 0 "$EXE" filter "$S" "$L/dangling.bmp" --kernel box && [ -L "$L/dangling.bmp" ] && cmp -s "$L/nowhere.bmp" "$L/want.bmp"'
check "no temporary left (symlinks)" only_files "$L" want.bmp real.bmp link.bmp dangling.bmp nowhere.bmp
if mknod "$L/null.bmp" c 1 3 2>/dev/null && mknod "$L/wisdom" c 1 3 2>/dev/null; then
  check "char device as output: exit 0" run 0 "$EXE" filter "$S" "$L/null.bmp" --kernel box
  check "char device: still a character device" test -c "$L/null.bmp"
  check "char device as the FFTW wisdom: match --method fft runs" eval 'PARVIS_FFTW_WISDOM="$L/wisdom" "$EXE" match "$S" "$T" --method fft >/dev/null 2>&1 || grep -q "needs FFTW\|not implemented" <("$EXE" match "$S" "$T" --method fft 2>&1)'
  check "char device as the FFTW wisdom: still a character device" test -c "$L/wisdom"
else
  skip "mknod not permitted here: character device checks"
fi
mkfifo "$L/f.npy"
(timeout 10 cat "$L/f.npy" >"$L/fifo.got") &
reader=$!
check "FIFO as output: integral --out: exit 0" run 0 timeout 10 "$EXE" integral --random 8x8 --out "$L/f.npy"
wait $reader
check "FIFO: still a FIFO, the .npy went through it" eval '[ -p "$L/f.npy" ] && head -c 6 "$L/fifo.got" | grep -q NUMPY'
mkdir "$L/dir.bmp"
check "a directory as output: exit 2" run 2 "$EXE" filter "$S" "$L/dir.bmp" --kernel box
check "a directory as output: one line on stderr" test "$(wc -l <"$W/last.err")" = 1

# --- 10: modes ---
M=$W/r10 && mkdir -p "$M"
cp "$W/old.txt" "$M/p.bmp" && chmod 600 "$M/p.bmp"
check "0600 file: filter over it: exit 0" run 0 "$EXE" filter "$S" "$M/p.bmp" --kernel box
check "0600 file: still 0600" test "$(mode_of "$M/p.bmp")" = 600
cp "$W/old.txt" "$M/q.npy" && chmod 640 "$M/q.npy"
check "0640 file: integral --out over it: exit 0" run 0 "$EXE" integral --random 8x8 --out "$M/q.npy"
check "0640 file: still 0640" test "$(mode_of "$M/q.npy")" = 640
check "new file: 0666 less the umask (644)" eval 'run 0 "$EXE" filter "$S" "$M/new.bmp" --kernel box && [ "$(mode_of "$M/new.bmp")" = 644 ]'

# --- 9: long names ---
N=$W/r9 && mkdir -p "$N"
long=$(printf 'b%.0s' $(seq 1 250)).bmp
check "a 254-character name: filter: exit 0" run 0 "$EXE" filter "$S" "$N/$long" --kernel box
check "a 254-character name: written" test -s "$N/$long"
check "a 254-character name as video --out (.y4m)" run 0 "$EXE" video "$W/clip.y4m" "$W/ctpl.bmp" --out "$N/${long%.bmp}.y4m"
check "no temporary left (long names)" only_files "$N" "$long" "${long%.bmp}.y4m"

# --- 8: stdout ---
F=$W/r8 && mkdir -p "$F"
full() {  # full WHAT CMD...: exit 3 and exactly one line on stderr with stdout on /dev/full
  local what=$1; shift
  "$@" >/dev/full 2>"$W/full.err"
  local rc=$?
  if [ "$rc" = 3 ] && [ "$(wc -l <"$W/full.err")" = 1 ]; then pass "$what > /dev/full: exit 3, one line"
  else fail "$what > /dev/full: exit $rc, stderr: $(head -c 300 "$W/full.err")"; fi
}
full "match --json" "$EXE" match "$S" "$T" --json
full "match --out" "$EXE" match "$S" "$T" --out "$F/m.bmp"
check "match --out > /dev/full: nothing committed" only_files "$F"
full "integral" "$EXE" integral --random 16x16
full "filter --json" "$EXE" filter "$S" "$F/f.bmp" --kernel box --json
check "filter > /dev/full: nothing committed" only_files "$F"
full "the seed form" "$EXE" 1 1 0 --size 32x24
full "video" "$EXE" video "$W/clip.y4m" "$W/ctpl.bmp" --out "$F/o.y4m"
check "video > /dev/full: nothing committed" only_files "$F"

# --- 6: signals during video --out ---
G=$W/r6 && mkdir -p "$G"
mkfifo "$G/in.y4m"
# interrupted SIG LABEL ARGS...: video on the FIFO, stopped by SIG after 2 s; it must exit by
# the signal and leave neither a temporary nor an output beside the FIFO.
interrupted() {
  local sig=$1 label=$2; shift 2
  # The clip's frames into the FIFO, kept open: the run waits for more, its --out half written.
  exec 3<>"$G/in.y4m"
  cat "$W/clip.y4m" >&3
  timeout --preserve-status -s "$sig" 2 "$EXE" video "$G/in.y4m" "$W/ctpl.bmp" "$@" >/dev/null 2>&1
  local rc=$?
  exec 3>&-
  local want=$((128 + $(kill -l "$sig")))
  check "$label, SIG$sig: exit $want (by the signal)" test "$rc" = "$want"
  check "$label, SIG$sig: no temporary, no output" only_files "$G" in.y4m
}
for sig in INT TERM HUP; do interrupted "$sig" "video --out" --out "$G/o.y4m"; done

# The same with ffmpeg writing --out (a stand-in that copies its stdin to the file it is given
# last, a named temporary): the child is stopped and the temporary removed.
printf '#!/bin/sh\nfor a; do last=$a; done\nexec cat > "$last"\n' >"$W/fake-ffmpeg"
chmod +x "$W/fake-ffmpeg"
check "video --out o.mp4 through a stand-in ffmpeg: exit 0" run 0 "$EXE" video "$W/clip.y4m" "$W/ctpl.bmp" --out "$G/o.mp4" --ffmpeg "$W/fake-ffmpeg"
check "video --out o.mp4: written, no temporary" eval '[ -s "$G/o.mp4" ] && only_files "$G" in.y4m o.mp4 && rm "$G/o.mp4"'
for sig in INT TERM; do
  interrupted "$sig" "video --out o.mp4 (ffmpeg)" --out "$G/o.mp4" --ffmpeg "$W/fake-ffmpeg"
done

# --- 11: outputs checked before any input is read ---
# An input FIFO that never delivers a byte: reading it would block (timeout: 124).
E=$W/r11 && mkdir -p "$E"
mkfifo "$E/in.bmp"
exec 4<>"$E/in.bmp"
early() {
  local what=$1; shift
  timeout 5 "$@" >/dev/null 2>"$W/early.err"
  local rc=$?
  if [ "$rc" = 2 ]; then pass "$what: exit 2 before reading the input"
  else fail "$what: exit $rc (124: it read the input first), stderr: $(head -c 200 "$W/early.err")"; fi
}
early "filter, bad output extension" "$EXE" filter "$E/in.bmp" "$E/o.xyz" --kernel box
early "filter, missing directory" "$EXE" filter "$E/in.bmp" /nonexistent/o.bmp --kernel box
early "match --out, missing directory" "$EXE" match "$E/in.bmp" "$T" --out /nonexistent/o.bmp
early "match --map, missing directory" "$EXE" match "$E/in.bmp" "$T" --map /nonexistent/m.npy
early "match batch --out, bad extension" "$EXE" match "$E/in.bmp" "$T" "$T" --out "$E/o.xyz"
early "blur, bad extension" "$EXE" blur "$E/in.bmp" "$E/o.xyz"
early "integral --out, missing directory" "$EXE" integral "$E/in.bmp" --out /nonexistent/o.npy
early "video --save-frame, missing directory" "$EXE" video "$W/clip.y4m" "$E/in.bmp" --save-frame 0:/nonexistent/f.bmp
early "video --out, missing directory" "$EXE" video "$W/clip.y4m" "$E/in.bmp" --out /nonexistent/o.y4m
early "match --out .pgm (an annotation is colour)" "$EXE" match "$E/in.bmp" "$T" --out "$E/a.pgm"
exec 4>&-
check "no output appeared (early checks)" only_files "$E" in.bmp

# --- 11: commands without options ---
check "selftest --frob: exit 1" run 1 "$EXE" selftest --frob
check "device --frob: exit 1" run 1 "$EXE" device --frob
check "--version --frob: exit 1" run 1 "$EXE" --version --frob

echo "$passed passed, $failed failed, $skipped skipped"
[ -z "$first_failure" ] || { echo "output safety: $first_failure" >&2; exit 1; }
exit 0
