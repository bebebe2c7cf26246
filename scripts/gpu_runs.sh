#!/usr/bin/env bash
# Sourced by the GPU scripts, which set $out (the output folder) and $new (the binary
# under test), and runs=0 fails=0 before a round of verify:
#   verify FILE ARGS...  one `$new run --explain` on cuda:0, counted in runs and fails; a
#                        failure's first 600 characters go to $out/FILE and the terminal,
#                        a success's arguments and kernel to $out/FILE;
#   sanitize TOOL ARGS...  compute-sanitizer TOOL over `$new run` on cuda:0: its summary
#                        line to $out/summary.txt, the whole report to $out/sanitizers.txt;
#   speed NAME BINARY ARGS...  `BINARY run` on cuda:0 with 20 timed calls and a CUDA
#                        graph of 50: the JSON to $out/speed.jsonl.txt, a summary line
#                        (scripts/run_speed_line.py) to $out/summary.txt;
#   alternate ROWS NAME=BINARY...  two passes, each calling `ROWS NAME BINARY` (a function
#                        of speed lines) for every binary in turn, so drift between
#                        binaries shows as a difference between passes.
verify() {
  local file=$1 r
  shift
  runs=$((runs + 1))
  r=$("$new" run --device cuda:0 --json --explain "$@" 2>&1)
  if ! grep -q '"verified":true' <<<"$r"; then
    fails=$((fails + 1))
    echo "FAIL $*: $(head -c 600 <<<"$r")" | tee -a "$out/$file"
  else
    echo "ok $* $(grep -o 'column_words\|column_tiles\|short_rows_wide\|word_rows\|row_tiles' <<<"$r" | head -1)" >> "$out/$file"
  fi
}

speed() {
  local name=$1 bin=$2
  shift 2
  local r
  r=$("$bin" run --device cuda:0 --json --repeat 20 --graph-calls 50 "$@" 2>&1)
  echo "$name $* $r" >> "$out/speed.jsonl.txt"
  # This file's folder; `scripts` from the repository root where the function runs
  # without it (copied into `bash -c "$(declare -f speed)"`, where its source is
  # "environment").
  local here
  here=$(dirname "${BASH_SOURCE[0]}")
  [ -f "$here/run_speed_line.py" ] || here=scripts
  python3 "$here/run_speed_line.py" "$name" "$*" "$r" |
    tee -a "$out/summary.txt"
}

sanitize() {
  local tool=$1 part
  shift
  part=$(compute-sanitizer --tool "$tool" "$new" run --device cuda:0 "$@" 2>&1)
  local rc=$?
  echo "$tool $*: exit $rc $(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards[a-z ]*' <<<"$part" | head -1)" |
    tee -a "$out/summary.txt"
  echo "$part" >> "$out/sanitizers.txt"
}

alternate() {
  local rows=$1 pass entry
  shift
  for pass in 1 2; do
    for entry in "$@"; do
      "$rows" "${entry%%=*}" "${entry#*=}"
    done
  done
}
