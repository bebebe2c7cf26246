#!/usr/bin/env bash
# Asynchronous warp tiles (WARP_ASYNC, warp_tiles.h) against the register-loaded ones:
# f32 and f64 sums of the production kernel at 2^20–2^30, one bench run per parameter
# set, records per set; then compute-sanitizer over the asynchronous path (a partial
# last tile, several tiles per warp, a ticket).
# Usage: scripts/warp_async_sweep.sh REDLAB_BINARY OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
mkdir -p "$out"
sizes=${SIZES:-2^20,2^22,2^24,2^26,2^28}
common=(bench --device cuda:0 --variants production --ops sum --dtypes f32,f64 --sizes "$sizes"
        --min-reps 20 --quiet)
# name: parameters (WARP_TILES_FROM=64 lets 2^20 (128 tiles) take warp tiles too).
sets=(
  "base:"
  "a3w2:WARP_ASYNC=3 WARP_ASYNC_WORDS=2 WARP_TILES_FROM=64"
  "a4w2:WARP_ASYNC=4 WARP_ASYNC_WORDS=2 WARP_TILES_FROM=64"
  "a4w2m2:WARP_ASYNC=4 WARP_ASYNC_WORDS=2 WARP_MIN_GROUPS=2 WARP_TILES_FROM=64"
  "a4w2m3:WARP_ASYNC=4 WARP_ASYNC_WORDS=2 WARP_MIN_GROUPS=3 WARP_TILES_FROM=64"
  "a5w2m3:WARP_ASYNC=5 WARP_ASYNC_WORDS=2 WARP_MIN_GROUPS=3 WARP_TILES_FROM=64"
  "a8w1m3:WARP_ASYNC=8 WARP_ASYNC_WORDS=1 WARP_MIN_GROUPS=3 WARP_TILES_FROM=64"
  "a6w1m4:WARP_ASYNC=6 WARP_ASYNC_WORDS=1 WARP_MIN_GROUPS=4 WARP_TILES_FROM=64"
  "a10w1m4:WARP_ASYNC=10 WARP_ASYNC_WORDS=1 WARP_MIN_GROUPS=4 WARP_TILES_FROM=64"
  "a4w2m3g3:WARP_ASYNC=4 WARP_ASYNC_WORDS=2 WARP_MIN_GROUPS=3 GROUPS_PER_CU=3 WARP_TILES_FROM=64"
  "a5w2m2g2:WARP_ASYNC=5 WARP_ASYNC_WORDS=2 WARP_MIN_GROUPS=2 GROUPS_PER_CU=2 WARP_TILES_FROM=64"
)
for set in "${sets[@]}"; do
  name=${set%%:*}
  params=()
  for p in ${set#*:}; do params+=(--param "$p"); done
  echo "== $name: ${set#*:}"
  timeout 100 "$bin" "${common[@]}" "${params[@]}" --json "$out/sweep-$name.jsonl" 2>&1 | tail -14
done
# Sanitizers on the asynchronous path, a few sizes: a partial last tile (4194309), whole
# tiles with a ticket (2^22), several tiles per warp (2^25).
san=(--variant production --param WARP_ASYNC=4 --param WARP_ASYNC_WORDS=2 --param WARP_MIN_GROUPS=3 --param WARP_TILES_FROM=64)
for tool in ${TOOLS:-memcheck}; do
  for dtype in f32 f64; do
    for n in 1048577 4194309 2^25; do
      echo "== $tool $dtype $n"
      timeout 60 compute-sanitizer --tool "$tool" "$bin" run --device cuda:0 --op sum --dtype "$dtype" --n "$n" "${san[@]}" 2>&1 | tail -4
    done
  done
done > "$out/sanitizers.txt" 2>&1
