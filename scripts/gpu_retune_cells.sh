#!/usr/bin/env bash
# Re-tunes chosen cells of GPU 0's shipped CUDA database for the time inside a CUDA
# graph, then runs `auto` with the shipped and with the re-tuned database beside CUB,
# alternating (gpu_binary_ab.sh), so each cell's change is measured in one sitting.
#   TUNE_SETS: problem sets separated by ';', each "OPS DTYPES SIZES"; each set is tuned
#              with BUDGET seconds per cell (operator × type × size), merged into the
#              database the previous set left
#   ROUNDS:    rounds of the A/B (default 2)
# Output: OUT/all.tgz with tune.log, the re-tuned database (tuned/cuda/FAMILY.json)
# and the A/B records (ab/NAME-R.jsonl; scripts/cub_summary.py makes the tables).
# Usage: scripts/gpu_retune_cells.sh BINARY OUT [BUDGET]
set -uo pipefail
here=$(dirname "$0")
# shellcheck source=scripts/gpu_sweep.sh
. "$here/gpu_sweep.sh"
bin=${1:?redlab binary}
out=${2:?output folder}
budget=${3:-35}
packed_work "$out"
family=$(gpu_family)
mkdir -p "$work/tuned/cuda"
cp "tuning/cuda/$family.json" "$work/tuned/cuda/$family.json"
IFS=';' read -ra sets <<<"${TUNE_SETS:?problem sets}"
for spec in "${sets[@]}"; do
  read -r ops dtypes sizes <<<"$spec"
  cells=$(($(tr ',' '\n' <<<"$ops" | wc -l) * $(tr ',' '\n' <<<"$dtypes" | wc -l) * $(tr ',' '\n' <<<"$sizes" | wc -l)))
  # The tuner writes the merged database where it read the old one from; merge from a copy.
  cp "$work/tuned/cuda/$family.json" "$work/merge.json"
  echo "== tune $spec ($cells cells, $((budget * cells)) s)" >>"$work/tune.log"
  timeout $((budget * cells + 60)) "$bin" tune --device cuda:0 --variants production \
    --ops "$ops" --dtypes "$dtypes" --sizes "$sizes" --budget $((budget * cells)) \
    --objective graph --merge-from "$work/merge.json" --out-dir "$work/tuned" \
    >>"$work/tune.log" 2>&1
  echo "tune exit $?" >>"$work/tune.log"
  pack
done
SETS="$TUNE_SETS" ROUNDS=${ROUNDS:-2} BENCH_LIMIT=100 \
  bash "$here/gpu_binary_ab.sh" /tmp/redlab-cub "$work/ab" shipped="$bin" \
  tuned="env REDLAB_TUNING_DIR=$work/tuned $bin" >"$work/ab.log" 2>&1
pack
