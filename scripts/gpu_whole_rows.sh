#!/usr/bin/env bash
# Whole rows (row_whole: a work-group per output of a few tiles, segments_whole.rs) against row
# tiles and the tree, on one CUDA GPU: tools/axis_compare.py (per call, and in a CUDA
# graph of 50 calls, torch and CuPy beside) for each NAME=COMMAND, alternating each
# round; then compute-sanitizer over whole rows of f32 argmax and f32 sum.
# COMMAND is one program, which tools/axis_compare.py runs: for another REDLAB_WHOLE_ROWS,
# a two-line wrapper (`exec env REDLAB_WHOLE_ROWS=512,8 ./redlab "$@"`).
# OPS and SHAPES (axis_compare's --add) choose the cells.
# Usage: scripts/gpu_whole_rows.sh OUT_DIR ROUNDS NAME=COMMAND...
set -uo pipefail
out=${1:?output folder}; rounds=${2:?rounds}; shift 2
mkdir -p "$out"
for round in $(seq "$rounds"); do
  for pair in "$@"; do
    name=${pair%%=*}; cmd=${pair#*=}
    echo "== round $round, $name ($cmd)"
    # shellcheck disable=SC2086 # a command with its words
    python3 tools/axis_compare.py $cmd --ops "${OPS:-argmax,max}" --shapes 0 \
      --add "${SHAPES:-8192x8193:1,4096x16385:1,2048x32768:1,1024x8193:1}" --graph 50 \
      --json "$out/compare-$name-$round.jsonl" 2>&1 | grep -E "^\| [0-9]|rror|not verified|failed"
  done
done | tee "$out/compare.md"
first=${1#*=}
for check in "--op argmax --dtype f32 --shape 1024x8195" "--op sum --dtype f32 --shape 1024x24581"; do
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer --tool $tool: $check"
    # shellcheck disable=SC2086
    compute-sanitizer --tool "$tool" $first run --device cuda:0 $check --axis 1 --explain 2>&1 | tail -4
  done
done | tee "$out/sanitizer.txt"
