#!/usr/bin/env bash
# tests/video_contract.sh EXE DATA WORKDIR — the video contract on one version's executable:
#   1. every checked frame's result (x, y, score, colour count, verdict) equals `EXE match` on
#      that frame saved as an image by `EXE video --save-frame` (Y4M 4:2:0 / 4:2:2 / mono / odd
#      sizes, raw frames, the capsule grid; ffmpeg input where ffmpeg is on PATH);
#   2. on the production line, the matched capsule is the one the generator put in view (within
#      2 px of line_truth.csv) and the verdict is its truth (full / empty);
#   3. a truncated stream reports the frames before the cut, exactly as the whole stream does,
#      then one error line and exit 2;
#   4. with ffmpeg: a lossless re-encode read through ffmpeg finds the same capsules, --out .mp4
#      writes every frame; PARVIS_REAL_VIDEO=FILE adds a real clip (a template cut from its
#      frame 0 must match there with score 0);
#   5. nothing per frame allocates (heap allocations counted by tests/alloc_count.c);
#   6. with --all / --min-distance, every frame's matches (position, score, verdict, in order)
#      equal `EXE match` with the same choice on that frame saved as an image.
# Prints ok / FAIL / skip lines and "N passed, N failed, N skipped"; exit 1 on any failure, with
# the first failure also on stderr (tests/cases/video_contract.cases runs it per version).
set -u
EXE=$1 DATA=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
passed=0 failed=0 skipped=0 first_failure=""
pass() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; [ -n "$first_failure" ] || first_failure="$*"; }
skip() { skipped=$((skipped + 1)); echo "skip  $*"; }
field() {  # JSON-ish line, key -> the first value of that key
  sed -n "s/.*\"$2\": *\(\"[a-z]*\"\|[0-9.e-]*\).*/\1/p" <<<"$1" | tr -d '"'
}
# Versions without template matching (blur-v1 ...) have no video either.
if ! "$EXE" video "$DATA/line.y4m" "$DATA/line_template.bmp" --frames 0 --no-time >/dev/null 2>"$WORK/match.err" &&
   grep -q "is not implemented in" "$WORK/match.err"; then
  echo "skip  video contract: $(head -n1 "$WORK/match.err")"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
# The colour filter exists on this version?
COLOR=--color
"$EXE" video "$DATA/line.y4m" "$DATA/line_template.bmp" --frames 0 --color blue --no-time >/dev/null 2>"$WORK/color.err" ||
  { grep -q "is not implemented in" "$WORK/color.err" && COLOR=""; }
[ -n "$COLOR" ] || skip "colour checks: the colour filter is not in this version"

# match_saved DIR TEMPLATE FRAMES [match options...]: `EXE match --json` on each saved frame
# DIR/fN.ppm, its output in DIR/mN/stdout; all in one `./main run-cases` process (each line runs
# as its own process would; a CUDA version pays for one context, not one a frame).
match_saved() {
  local dir=$1 tpl=$2 frames=$3 f; shift 3
  : >"$dir/match.list"
  for f in $frames; do
    mkdir -p "$dir/m$f"
    (IFS=$'\t'; printf '%s\n' "$dir/m$f${IFS}match${IFS}$dir/f$f.ppm${IFS}$tpl${IFS}--json${*:+$IFS}$*") >>"$dir/match.list"
  done
  "$EXE" run-cases "$dir/match.list" >"$dir/match.log" 2>&1
}

# contract NAME IN TEMPLATE FRAMES [video options...]: video with --save-frame for each frame
# listed, then match on each saved frame, field by field.
contract() {
  local name=$1 in=$2 tpl=$3 frames=$4; shift 4
  local dir=$WORK/$name opts=() match_opts=() f
  mkdir -p "$dir"
  for f in $frames; do opts+=(--save-frame "$f:$dir/f$f.ppm"); done
  [ -n "$COLOR" ] && { opts+=(--color blue); match_opts+=(--color blue); }
  local a; for a in "$@"; do case "$a" in --metric|sad|ssd) match_opts+=("$a") ;; esac; done
  # The results from a plain run (no frame kept whole on the host: the colour check converts
  # only the matched rectangle), the frames from a second run that saves them.
  local color_opts=(); [ -n "$COLOR" ] && color_opts=(--color blue)
  if ! "$EXE" video "$in" "$tpl" --json --no-time "$@" "${color_opts[@]}" >"$dir/video.jsonl" 2>"$dir/video.err" ||
     ! "$EXE" video "$in" "$tpl" --json --no-time "$@" "${opts[@]}" >"$dir/saved.jsonl" 2>"$dir/video.err"; then
    fail "$name: video exited $?: $(head -n1 "$dir/video.err")"; return
  fi
  cmp -s "$dir/video.jsonl" "$dir/saved.jsonl" || { fail "$name: the results change with --save-frame"; return; }
  local bad=0 n=0 line m
  match_saved "$dir" "$tpl" "$frames" "${match_opts[@]}" || { fail "$name: run-cases exited $?: $(head -n1 "$dir/match.log")"; return; }
  for f in $frames; do
    line=$(grep -m1 "^{\"frame\": $f," "$dir/video.jsonl")
    m=$(cat "$dir/m$f/stdout")
    n=$((n + 1))
    local k
    for k in x y score matching total verdict; do
      if [ "$(field "$line" $k)" != "$(field "$m" $k)" ]; then
        [ $bad = 0 ] && fail "$name frame $f: video $k=$(field "$line" $k), match $k=$(field "$m" $k)"
        bad=$((bad + 1)); break
      fi
    done
  done
  [ $bad = 0 ] && pass "$name: $n frames, video = match on the saved frame"
}

# truth NAME JSONL: every frame with a capsule in view (line_truth.csv) found within 2 px, and
# its verdict right where the colour filter ran.
truth() {
  local name=$1 jsonl=$2 bad=0 n=0 frame x y full line
  while IFS=, read -r frame x y full; do
    [ "$frame" = frame ] && continue
    line=$(grep -m1 "^{\"frame\": $frame," "$jsonl") || continue
    n=$((n + 1))
    local vx vy verdict want
    vx=$(field "$line" x); vy=$(field "$line" y); verdict=$(field "$line" verdict)
    want=$([ "$full" = 1 ] && echo full || echo empty)
    if [ $((vx - x)) -gt 2 ] || [ $((x - vx)) -gt 2 ] || [ $((vy - y)) -gt 2 ] || [ $((y - vy)) -gt 2 ] ||
       { [ -n "$COLOR" ] && [ "$verdict" != "$want" ]; }; then
      [ $bad = 0 ] && fail "$name frame $frame: found x=$vx y=$vy ${verdict:-}, truth x=$x y=$y $want"
      bad=$((bad + 1))
    fi
  done <"$DATA/line_truth.csv"
  [ $n -gt 0 ] || { fail "$name: no frame of line_truth.csv in the output"; return; }
  [ $bad = 0 ] && pass "$name: $n frames agree with the ground truth${COLOR:+ (position and verdict)}"
}

# contract_all NAME IN TEMPLATE FRAMES CHOICE...: video with the choice (--all --max-score S,
# --min-distance D, ...) and --save-frame, then match with the same choice on each saved frame:
# the same matches, in order, with the same verdicts.
contract_all() {
  local name=$1 in=$2 tpl=$3 frames=$4; shift 4
  local dir=$WORK/$name opts=() color_opts=() f
  mkdir -p "$dir"
  for f in $frames; do opts+=(--save-frame "$f:$dir/f$f.ppm"); done
  [ -n "$COLOR" ] && color_opts=(--color blue)
  "$EXE" video "$in" "$tpl" --json --no-time "$@" "${color_opts[@]}" "${opts[@]}" >"$dir/video.jsonl" 2>"$dir/video.err"
  local rc=$?
  if [ $rc != 0 ]; then
    # A setting this build lacks (--method fft without FFTW) says so: skipped.
    if grep -q "needs FFTW" "$dir/video.err"; then skip "$name: $(head -n1 "$dir/video.err")"
    else fail "$name: video exited $rc: $(head -n1 "$dir/video.err")"
    fi
    return
  fi
  match_saved "$dir" "$tpl" "$frames" "$@" "${color_opts[@]}" || { fail "$name: run-cases exited $?: $(head -n1 "$dir/match.log")"; return; }
  local pattern='"x": [0-9]*, "y": [0-9]*, "score": [0-9]*\|"verdict": "[a-z]*"' bad=0 total=0 v m
  for f in $frames; do
    v=$(grep -m1 "^{\"frame\": $f," "$dir/video.jsonl" | sed -n 's/.*"matches": \[\(.*\)\].*/\1/p' | grep -o "$pattern" | tr '\n' ' ')
    m=$(sed -n 's/.*"top": \[\([^]]*\)\].*/\1/p' "$dir/m$f/stdout" | grep -o "$pattern" | tr '\n' ' ')
    total=$((total + $(grep -o '"x"' <<<"$v" | wc -l)))
    if [ "$v" != "$m" ]; then
      [ $bad = 0 ] && fail "$name frame $f: video [$v], match [$m]"
      bad=$((bad + 1))
    fi
  done
  [ $total -gt 0 ] || { fail "$name: no frame has a match (the check compares nothing)"; return; }
  [ $bad = 0 ] && pass "$name: $(wc -w <<<"$frames") frames, $total matches, video = match on the saved frame"
}

T=$DATA/line_template.bmp
all=$(seq 0 59)
every6=$(seq 0 6 59)
contract line "$DATA/line.y4m" "$T" "$all"
truth line-truth "$WORK/line/video.jsonl"
contract line_422_sad "$DATA/line_422.y4m" "$T" "$every6" --metric sad
contract line_limited "$DATA/line_limited.y4m" "$T" "$every6"
contract line_mono "$DATA/line_mono.y4m" "$T" "$every6"
contract line_odd "$DATA/line_odd.y4m" "$T" "0 1 2 3 4 5"
contract raw_bgr24 "$DATA/line.rgb" "$T" "$every6" --raw 160x88 --pix-fmt bgr24
contract raw_yuv420p "$DATA/line.yuv" "$T" "$every6" --raw 160x88 --pix-fmt yuv420p
contract capsules_grid "$DATA/capsules.y4m" "$DATA/capsules_small_template.bmp" "$(seq 0 11)"
contract_all all_capsules "$DATA/capsules.y4m" "$DATA/capsules_small_template.bmp" "$(seq 0 11)" --all --max-score 1500000 --min-distance 10
contract_all all_capsules_fft "$DATA/capsules.y4m" "$DATA/capsules_small_template.bmp" "0 5 11" --all --max-score 1500000 --min-distance 10 --method fft
contract_all all_capsules_unsuppressed "$DATA/capsules.y4m" "$DATA/capsules_small_template.bmp" "0 1 7" --all --max-score 400000
contract_all all_line_sad "$DATA/line.y4m" "$T" "$every6" --metric sad --all --max-score 60000 --min-distance 5
contract_all top3_line "$DATA/line.y4m" "$T" "$every6" --top 3 --min-distance 8

# A truncated stream: the frames before the cut, as the whole stream gives them, then exit 2.
head -c 100000 "$DATA/line.y4m" >"$WORK/truncated.y4m"
"$EXE" video "$WORK/truncated.y4m" "$T" --json --no-time >"$WORK/truncated.jsonl" 2>"$WORK/truncated.err"
rc=$?
if [ $rc = 2 ] && [ "$(wc -l <"$WORK/truncated.err")" = 1 ] && grep -q "frame 4 is truncated" "$WORK/truncated.err" &&
   cmp -s "$WORK/truncated.jsonl" <(head -n 4 "$WORK/line/video.jsonl" | sed 's/, "matching".*}$/}/'); then
  pass "truncated: frames 0-3 reported as in the whole stream, then one error line, exit 2"
else
  fail "truncated: exit $rc, $(wc -l <"$WORK/truncated.jsonl") lines: $(head -n1 "$WORK/truncated.err")"
fi

# ffmpeg: input and output.
if command -v ffmpeg >/dev/null; then
  if ffmpeg -nostdin -loglevel error -y -i "$DATA/line.y4m" -c:v ffv1 "$WORK/line.mkv"; then
    contract ffmpeg_ffv1 "$WORK/line.mkv" "$T" "$every6"
    "$EXE" video "$WORK/line.mkv" "$T" --json --no-time ${COLOR:+--color blue} >"$WORK/mkv.jsonl" 2>/dev/null
    truth ffmpeg-truth "$WORK/mkv.jsonl"
  else
    fail "ffmpeg could not encode line.y4m to FFV1"
  fi
  if "$EXE" video "$DATA/line.y4m" "$T" --no-time --out "$WORK/annotated.mp4" >/dev/null 2>"$WORK/mp4.err" &&
     [ "$("$EXE" video "$WORK/annotated.mp4" "$T" --no-time 2>/dev/null | grep -c '^frame')" = 60 ]; then
    pass "--out annotated.mp4 through ffmpeg: 60 frames"
  else
    fail "--out annotated.mp4: $(head -n1 "$WORK/mp4.err")"
  fi
  real=${PARVIS_REAL_VIDEO:-}
  if [ -n "$real" ] && [ -f "$real" ]; then
    gen=$(dirname "$EXE")/parvis-gen
    if "$EXE" video "$real" "$T" --frames 0 --save-frame "0:$WORK/real0.ppm" --no-time >/dev/null 2>&1 &&
       "$gen" crop "$WORK/real0.ppm" 200 150 64 64 "$WORK/real_tpl.bmp" 2>/dev/null; then
      contract "real:$(basename "$real")" "$real" "$WORK/real_tpl.bmp" "0 10 20 30 40" --frames 0:50
      s0=$(field "$(head -n1 "$WORK/real:$(basename "$real")/video.jsonl")" score)
      [ "$s0" = 0 ] && pass "real clip: frame 0 matches its own crop with score 0" || fail "real clip: frame 0 score $s0, expected 0"
    else
      fail "real clip $real could not be read"
    fi
  else
    skip "real clip: set PARVIS_REAL_VIDEO=FILE (e.g. OpenCV's vtest.avi)"
  fi
else
  skip "ffmpeg input and output: ffmpeg is not on PATH"
fi

# 5. Nothing per frame allocates: the process's heap allocations (tests/alloc_count.c, preloaded)
#    are the same for 20 frames as for 60, i.e. once the pipeline and the matcher are warm a frame
#    costs no malloc at all (reader, conversion, match, colour count, output line). FFTW's
#    buffered passes malloc their own scratch inside fftw_execute; match.fftw_buffering=0
#    plans without them here, and the wisdom cache is off (its first write allocates).
if [ "$(basename "$EXE")" = cuda-naive ]; then
  skip "allocations per frame: cuda-naive is seed 000's matcher, which allocates its buffers per call"
elif ! command -v cc >/dev/null 2>&1; then
  skip "allocations per frame: no C compiler for the counter"
elif ldd "$EXE" 2>/dev/null | grep -q 'libasan\|libtsan'; then
  skip "allocations per frame: a sanitizer build has its own allocator"
elif ! cc -O2 -shared -fPIC "$(dirname "$0")/alloc_count.c" -o "$WORK/alloc_count.so" 2>"$WORK/alloc_cc.err"; then
  skip "allocations per frame: the counter does not build here: $(head -n1 "$WORK/alloc_cc.err")"
else
  allocs() {  # allocs FRAMES ARGS... -> the allocation count of `video ... --frames 0:FRAMES`
    local frames=$1; shift
    rm -f "$WORK/allocs"
    PARVIS_ALLOC_COUNT_FILE="$WORK/allocs" LD_PRELOAD="$WORK/alloc_count.so" PARVIS_FFTW_WISDOM=off \
      PARVIS_TUNING=${PARVIS_TUNING:+$PARVIS_TUNING,}match.fftw_buffering=0 "$EXE" video "$@" --no-time --frames "0:$frames" >/dev/null 2>&1 && cat "$WORK/allocs" 2>/dev/null
  }
  # The CUDA driver's own threads allocate a few times at moments that vary from run to run
  # (seen: 19149 for 20 frames, 19147 for 60): a slack of 8 there; one allocation per frame
  # would add 40. The CPU versions must match exactly.
  slack=0; case "$("$EXE" --version 2>/dev/null)" in *cuda*) slack=8 ;; esac
  for args in "line.y4m line_template.bmp" "line.y4m line_template.bmp --metric sad" \
              "line.y4m line_template.bmp --method direct" "line_422.y4m line_template.bmp --jobs 2" \
              "line_mono.y4m line_template.bmp --method fft"; do
    set -- $args
    in=$DATA/$1 tpl=$DATA/$2; shift 2
    # A setting this build lacks (--method fft without FFTW) says so, exit 2: skipped.
    if ! "$EXE" video "$in" "$tpl" "$@" --no-time --frames 0:1 >/dev/null 2>"$WORK/alloc_try.err"; then
      skip "allocations per frame ($args): $(head -n1 "$WORK/alloc_try.err")"
      continue
    fi
    a=$(allocs 20 "$in" "$tpl" ${COLOR:+--color blue} "$@") b=$(allocs 60 "$in" "$tpl" ${COLOR:+--color blue} "$@")
    if [ -z "$a" ] || [ -z "$b" ]; then fail "allocations per frame ($args): the counted run failed"
    elif [ "$b" -le $((a + slack)) ]; then pass "allocations per frame ($args${COLOR:+ --color blue}): none ($a in all for 20 frames, $b for 60)"
    else fail "allocations per frame ($args): $a for 20 frames, $b for 60"
    fi
  done
fi

echo "$passed passed, $failed failed, $skipped skipped"
if [ $failed -gt 0 ]; then
  echo "video contract on $(basename "$EXE"): $failed failed: $first_failure" >&2
  exit 1
fi
