#!/usr/bin/env bash
# `auto` beside CUB with the shipped database and with a re-tuned one, alternating, in one
# sitting on one GPU: what a new database would change, cell by cell. The same binary
# runs as two "binaries" of scripts/gpu_binary_ab.sh, each with its own tuning folder.
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
mkdir -p /tmp/empty-tuning
exec "$(dirname "$0")/gpu_binary_ab.sh" "$cub" "$out" \
  "shipped=env REDLAB_TUNING_DIR=/tmp/empty-tuning $bin" "tuned=env REDLAB_TUNING_DIR=$tuned $bin"
