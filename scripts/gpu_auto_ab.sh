#!/usr/bin/env bash
# `auto` beside CUB with the shipped database and with a re-tuned one, alternating, in one
# sitting on one GPU: what a new database would change, cell by cell.
#   SETS:   problem sets separated by ';', each "OPS DTYPES SIZES"
#   ROUNDS: shipped, tuned, shipped, tuned, ... (default 2 of each)
# Records: OUT/shipped-R.jsonl and OUT/tuned-R.jsonl (`speedup_graph`, `speedup_per_call`
# are CUB's time over ours); summarize with scripts/cub_summary.py.
# Usage: scripts/gpu_auto_ab.sh REDLAB_BINARY CUB_BINARY OUT_DIR TUNED_DIR
set -uo pipefail
bin=${1:?redlab binary}
cub=${2:?CUB comparator binary}
out=${3:?output folder}
tuned=${4:?tuning folder holding cuda/FAMILY.json}
mkdir -p "$out" /tmp/empty-tuning
common=(--device cuda:0 --variants auto --min-reps "${MIN_REPS:-20}" --quiet --compare cub --cub-bin "$cub")
IFS=';' read -ra sets <<<"${SETS:?problem sets}"
for round in $(seq "${ROUNDS:-2}"); do
  for who in shipped tuned; do
    dir=/tmp/empty-tuning
    [ "$who" = tuned ] && dir=$tuned
    for spec in "${sets[@]}"; do
      read -r ops dtypes sizes <<<"$spec"
      echo "== round $round, $who database: $ops $dtypes at $sizes"
      REDLAB_TUNING_DIR=$dir timeout "${BENCH_LIMIT:-150}" "$bin" bench "${common[@]}" --ops "$ops" \
        --dtypes "$dtypes" --sizes "$sizes" --json "$out/$who-$round.jsonl" 2>&1 | grep -E "vs cub|rror"
    done
  done
done
