#!/usr/bin/env bash
# Launch-specialized modules of the one-launch kernel, on one GPU in one sitting:
#   1. `auto` of OLD and NEW with the shipped database, alternating, f32/f64 and
#      f16/bf16 sums at 2^10-2^30 beside CUB (scripts/gpu_binary_ab.sh; OUT/ab). It
#      measured a build that left the warp-tile path out of every launch that does not
#      take it, f32/f64 included (results/h100-launch-params); only halves kept that;
#   2. compute-sanitizer memcheck, racecheck and synccheck on NEW's halves warp tiles
#      (HALF_WARP_TILES_UPTO=8) and on a work-group path built without the warp path;
#   3. NEW's production kernel with HALF_WARP_TILES_UPTO at 0, 2 and 8, halves at
#      2^10-2^16 beside CUB (OUT/sweep-N.jsonl);
#   4. a second round of 1.
# Every bench row is verified bit for bit against the canonical order before timing.
# Usage: scripts/gpu_launch_params.sh OLD_BINARY NEW_BINARY OUT_DIR
set -uo pipefail
source "$(dirname "$0")/gpu_sweep.sh"
old=${1:?binary before}
after=${2:?binary after}
out=${3:?output folder}
mkdir -p "$out"
nvidia-smi --query-gpu=name --format=csv,noheader >"$out/gpu.txt"
[ -x /tmp/redlab-cub ] || nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/redlab-cub tools/cub/cub_reduce.cu
sizes=2^10,2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28,2^30
ab() {
  SETS="sum f32,f64 $sizes; sum f16,bf16 $sizes" ROUNDS=1 FIRST_ROUND=$1 \
    "$(dirname "$0")/gpu_binary_ab.sh" /tmp/redlab-cub "$out/ab" "old=$old" "new=$after" \
    >>"$out/ab.log" 2>&1
}
ab 1
sanitize_runs "$out/sanitizers.txt" "$after" "sum f16 1000 HALF_WARP_TILES_UPTO=8" \
  "sum bf16 24577 HALF_WARP_TILES_UPTO=8" "sum f16 65536 HALF_WARP_TILES_UPTO=8" \
  "sum f32 1000003 WARP_TILES_UPTO=8" "sum f64 300007 WARP_TILES_UPTO=8"
common=(--device cuda:0 --min-reps 20 --quiet --compare cub --cub-bin /tmp/redlab-cub)
CONFIGS="HALF_WARP_TILES_UPTO=0 HALF_WARP_TILES_UPTO=2 HALF_WARP_TILES_UPTO=8" \
  sweep_configs sum f16,bf16 2^10,2^12,2^13,2^14,2^15,2^16 100 >>"$out/sweep.log"
ab 2
