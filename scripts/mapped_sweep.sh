#!/bin/bash
# Sweeps launch parameters of mapped float sums (dot `x*y`, squared norm `x*x`) on one
# CUDA GPU beside torch in the same job.
# usage: scripts/mapped_sweep.sh BIN OUT "name:--param P=V --param Q=W" ...
set -o pipefail
bin=$1; out=$2; shift 2
sizes=${SIZES:-2^24,2^28}
mkdir -p "$out"
python3 tools/expr_compare.py --n $((1 << 28)) --json "$out/torch-before.jsonl" > "$out/torch-before.txt" 2>&1
for spec in "$@"; do
  name=${spec%%:*}; params=${spec#*:}
  for map in 'x*y' 'x*x'; do
    echo "== $name $map $params" | tee -a "$out/sweep.txt"
    # shellcheck disable=SC2086
    "$bin" bench --device cuda:0 --map "$map" --dtypes f32 --sizes "$sizes" --min-reps 30 \
      $params --json "$out/sweep.jsonl" --quiet 2>&1 | tee -a "$out/sweep.txt"
  done
done
python3 tools/expr_compare.py --n $((1 << 28)) --json "$out/torch-after.jsonl" > "$out/torch-after.txt" 2>&1
