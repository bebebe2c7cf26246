#!/usr/bin/env bash
# Why small canonical half sums trail f32 sums of the same size: the production kernel
# with one path forced for every type (one cluster of two groups over the tile, or one
# work-group with scalar loads), f16/bf16/f32 at 2^11–2^13 beside CUB, the tuned `auto`
# rows, and ncu counters and SASS of the 2^12 launches. Everything lands in OUT/all.tgz.
# Usage: scripts/gpu_half_small.sh REDLAB_BINARY OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$work/gpu.txt"
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/redlab-cub tools/cub/cub_reduce.cu > "$work/nvcc.log" 2>&1
common=(--device cuda:0 --compare cub --cub-bin /tmp/redlab-cub --min-reps 20 --quiet --ops sum)
n=0
for config in CLUSTER_FINISH=2,WARP_TILES_UPTO=0,HALF_WARP_TILES_UPTO=0 \
  CLUSTER_FINISH=0,WARP_TILES_UPTO=0,HALF_WARP_TILES_UPTO=0,VEC_LOADS=0,GROUPS_PER_CU=1 \
  CLUSTER_FINISH=2,WARP_TILES_UPTO=0,WARP_TILES_FROM=0,HALF_WARP_TILES_UPTO=0; do
  n=$((n + 1))
  params=()
  IFS=, read -ra pairs <<<"$config"
  for p in "${pairs[@]}"; do params+=(--param "$p"); done
  echo "== production $config" | tee -a "$work/sweep.log"
  timeout 150 "$bin" bench "${common[@]}" --variants production "${params[@]}" \
    --dtypes f16,bf16,f32 --sizes 2^11,2^12,2^13 --json "$work/sweep-$n.jsonl" 2>&1 \
    | grep -E "vs cub|rror" | tee -a "$work/sweep.log"
done
echo "== auto" | tee -a "$work/sweep.log"
timeout 150 "$bin" bench "${common[@]}" --variants auto --dtypes f16,bf16,f32 \
  --sizes 2^11,2^12,2^13 --json "$work/auto.jsonl" 2>&1 | grep -E "vs cub|rror" | tee -a "$work/sweep.log"
forced=(--variant production --param CLUSTER_FINISH=2 --param WARP_TILES_UPTO=0 \
  --param WARP_TILES_FROM=0 --param HALF_WARP_TILES_UPTO=0)
for dtype in f16 bf16 f32; do
  timeout 120 ncu --clock-control none --section SpeedOfLight --section LaunchStats \
    --section Occupancy --section WarpStateStats --section InstructionStats \
    --section SchedulerStats -k regex:'^reduce$' --launch-count 1 --export "$work/$dtype" \
    "$bin" run --device cuda:0 "${forced[@]}" --op sum --dtype "$dtype" --n 4096 \
    > "$work/ncu-$dtype.txt" 2>&1
  ncu --import "$work/$dtype.ncu-rep" > "$work/ncu-$dtype-details.txt" 2>&1
  ncu --import "$work/$dtype.ncu-rep" --page source --print-source sass \
    > "$work/sass-$dtype.txt" 2>&1
done
tar czf "$out/all.tgz" -C "$work" .
