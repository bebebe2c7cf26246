#!/usr/bin/env bash
# f16/bf16 sums of a few tiles as warp tiles, on one GPU in one sitting:
#   1. the production kernel of NEW at each of CONFIGS (default: WARP_TILES_UPTO=0, a
#      work-group per tile as before; =8, warp tiles; =8 with WARP_ROWS=2; =8 with
#      CLUSTER_FINISH=2) beside CUB, at 1000 to 2^16 elements (OUT/sweep-N.jsonl);
#   2. `redlab tune --objective graph` of the halves at 2^10-2^16 with NEW, merged into
#      TUNED/cuda/FAMILY.json if that folder holds this GPU's family, else into the
#      shipped database; written to OUT/t;
#   3. `auto` of OLD with the shipped database against NEW with that database,
#      alternating (scripts/gpu_binary_ab.sh), halves at 2^10-2^30;
#   4. compute-sanitizer memcheck, racecheck and synccheck on NEW's warp-tile paths.
# Every bench row is verified bit for bit against the canonical order before timing.
# It measured a build that let halves take warp tiles up to WARP_TILES_UPTO
# (results/h200-half-warp-tiles). Today halves have their own bound,
# HALF_WARP_TILES_UPTO (WARP_TILES_UPTO does not change them): pass CONFIGS with it, as
# scripts/gpu_launch_params.sh does.
# Usage: scripts/gpu_half_warp_tiles.sh OLD_BINARY NEW_BINARY TUNED_DIR OUT_DIR
set -uo pipefail
source "$(dirname "$0")/gpu_sweep.sh"
old=${1:?binary before}
after=${2:?binary after}
tuned=${3:?tuning folder holding cuda/FAMILY.json}
out=${4:?output folder}
family=$(gpu_family)
from=$tuned/cuda/$family.json
[ -f "$from" ] || from=tuning/cuda/$family.json
[ -x /tmp/redlab-cub ] || nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/redlab-cub tools/cub/cub_reduce.cu
mkdir -p /tmp/empty-tuning "$out/t" /tmp/half-tuned
common=(--device cuda:0 --min-reps 20 --quiet --compare cub --cub-bin /tmp/redlab-cub)
export REDLAB_TUNING_DIR=/tmp/empty-tuning
CONFIGS=${CONFIGS:-"WARP_TILES_UPTO=0 WARP_TILES_UPTO=8 WARP_TILES_UPTO=8,WARP_ROWS=2 WARP_TILES_UPTO=8,CLUSTER_FINISH=2"} \
  sweep_configs sum f16,bf16 1000,2^12,2^13,2^14,24577,2^16 100 >>"$out/sweep.log"
echo "== tune halves at 2^10-2^16, merged into $from" >>"$out/sweep.log"
timeout 150 "$after" tune --device cuda:0 --variants production --ops sum --dtypes f16,bf16 \
  --sizes 2^10,2^12,2^14,2^16 --budget "${BUDGET:-80}" --objective graph \
  --merge-from "$from" --out-dir /tmp/half-tuned 2>&1 | tail -12 >>"$out/sweep.log"
cp "/tmp/half-tuned/cuda/$family.json" "$out/t/$family.json"
SETS="sum f16,bf16 2^10,2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28,2^30" ROUNDS=${ROUNDS:-2} \
  "$(dirname "$0")/gpu_binary_ab.sh" /tmp/redlab-cub "$out/ab" \
  "shipped=env REDLAB_TUNING_DIR=/tmp/empty-tuning $old" \
  "new=env REDLAB_TUNING_DIR=/tmp/half-tuned $after" >"$out/ab.log" 2>&1
REDLAB_TUNING_DIR=/tmp/half-tuned sanitize_runs "$out/sanitizers.txt" "$after" \
  "sum f16 1000" "sum bf16 24577" "sum f16 65536" "prod bf16 5000"
