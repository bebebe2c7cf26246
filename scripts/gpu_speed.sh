#!/usr/bin/env bash
# Sourced by the GPU scripts: speed NAME BINARY ARGS... runs `BINARY run` on cuda:0 with
# 20 timed calls and a CUDA graph of 50, appends the JSON to $out/speed.jsonl.txt and a
# summary line (scripts/run_speed_line.py) to $out/summary.txt.
speed() {
  local name=$1 bin=$2
  shift 2
  local r
  r=$("$bin" run --device cuda:0 --json --repeat 20 --graph-calls 50 "$@" 2>&1)
  echo "$name $* $r" >> "$out/speed.jsonl.txt"
  python3 "$(dirname "${BASH_SOURCE[0]}")/run_speed_line.py" "$name" "$*" "$r" |
    tee -a "$out/summary.txt"
}
