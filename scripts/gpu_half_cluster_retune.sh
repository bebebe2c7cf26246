#!/usr/bin/env bash
# Second pass for the halves' one-cluster word tiles: re-tunes f16/bf16 sums at 2^13 and
# 2^15 (sizes between the first pass's entries) for the graph time, merged into the
# first pass's database, then `auto` of the old binary with the shipped database against
# the new one with the re-tuned database beside CUB, and the SASS of the new path at
# 2^12. Usage: scripts/gpu_half_cluster_retune.sh OLD NEW FIRST_PASS_DB OUT_DIR
set -uo pipefail
old=${1:?old binary}
new=${2:?new binary}
first=${3:?first pass database}
out=${4:?output folder}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/gpu_sweep.sh
. "$here/gpu_sweep.sh"
packed_work "$out"
retune_then_ab "$old" "$new" 200 "$first" 2^10,2^11,2^12,2^13,2^14,2^15,2^16,2^18 \
  --sizes 2^13,2^15 --budget 70
timeout 60 ncu --clock-control none -k regex:'^reduce$' --launch-count 1 --export "$work/f16" \
  "$new" run --device cuda:0 --variant production --param CLUSTER_FINISH=2 --param VEC_LOADS=1 \
  --param HALF_WARP_TILES_UPTO=0 --op sum --dtype f16 --n 4096 > "$work/ncu-f16.txt" 2>&1
ncu --import "$work/f16.ncu-rep" --page source --print-source sass > "$work/sass-f16.txt" 2>&1
rm -f "$work/f16.ncu-rep"
pack
