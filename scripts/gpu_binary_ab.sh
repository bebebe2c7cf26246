#!/usr/bin/env bash
# `auto` of two or more redlab binaries beside CUB, alternating, in one sitting on one
# GPU: what a kernel change does, cell by cell, with the shipped database.
#   SETS:   problem sets separated by ';', each "OPS DTYPES SIZES"
#   ROUNDS: rounds over the binaries (default 2); FIRST_ROUND numbers the first (1)
# Records: OUT/NAME-R.jsonl (`speedup_graph`, `speedup_per_call` are CUB's time over
# ours); summarize with scripts/cub_summary.py.
# Usage: scripts/gpu_binary_ab.sh CUB_BINARY OUT_DIR NAME=BINARY [NAME=BINARY ...]
# (BINARY is split at spaces, so it may be a command such as `env VAR=… ./redlab`.)
set -uo pipefail
cub=${1:?CUB comparator binary}
out=${2:?output folder}
shift 2
mkdir -p "$out"
common=(--device cuda:0 --variants auto --min-reps "${MIN_REPS:-20}" --quiet --compare cub --cub-bin "$cub")
IFS=';' read -ra sets <<<"${SETS:?problem sets}"
first=${FIRST_ROUND:-1}
for round in $(seq "$first" $((first + ${ROUNDS:-2} - 1))); do
  for pair in "$@"; do
    name=${pair%%=*}
    bin=${pair#*=}
    for spec in "${sets[@]}"; do
      read -r ops dtypes sizes <<<"$spec"
      echo "== round $round, $name: $ops $dtypes at $sizes"
      # shellcheck disable=SC2086 # a command with its words
      timeout "${BENCH_LIMIT:-150}" $bin bench "${common[@]}" --ops "$ops" --dtypes "$dtypes" \
        --sizes "$sizes" --json "$out/$name-$round.jsonl" 2>&1 | grep -E "vs cub|rror"
    done
  done
done
