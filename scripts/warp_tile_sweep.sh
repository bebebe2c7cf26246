#!/usr/bin/env bash
# Warp-tile parameter sets of the production kernel side by side: f32 and f64 sums at
# 2^20–2^28 (SIZES to change), one bench run per set with its own records, CUB in the
# same run when CUB_BIN names the comparator; then compute-sanitizer (TOOLS, default
# memcheck) over the last set at a partial last tile (1048577, 4194309) and several
# tiles per warp (2^25).
# Usage: scripts/warp_tile_sweep.sh REDLAB_BINARY OUT_DIR "name:NAME=V NAME=V" ...
# (results/h200-cuda-warp-experiments: the parameter sets it compared).
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
shift 2
mkdir -p "$out"
sizes=${SIZES:-2^20,2^22,2^24,2^26,2^28}
common=(bench --device cuda:0 --variants production --ops sum --dtypes f32,f64 --sizes "$sizes"
        --min-reps 20 --quiet)
if [ -n "${CUB_BIN:-}" ]; then common+=(--compare cub --cub-bin "$CUB_BIN"); fi
last=()
for set in "$@"; do
  name=${set%%:*}
  params=()
  for p in ${set#*:}; do params+=(--param "$p"); done
  last=("${params[@]}")
  echo "== $name: ${set#*:}"
  timeout 150 "$bin" "${common[@]}" "${params[@]}" --json "$out/sweep-$name.jsonl" 2>&1 | tail -24
done
for tool in ${TOOLS:-memcheck}; do
  for dtype in f32 f64; do
    for n in 1048577 4194309 2^25; do
      echo "== $tool $dtype $n ${last[*]}"
      timeout 60 compute-sanitizer --tool "$tool" "$bin" run --device cuda:0 --op sum \
        --dtype "$dtype" --n "$n" --variant production "${last[@]}" 2>&1 | tail -4
    done
  done
done > "$out/sanitizers.txt" 2>&1
