#!/usr/bin/env bash
# Halves of one or two tiles in one cluster, whose tile may end early (vec_tile_lanes
# in canonical_one.cl: whole rows, one partial row, empty rows skipped):
# compute-sanitizer on that path at sizes ending in each kind of row, then `auto` of
# the build before against this one beside CUB, two rounds.
# Usage: scripts/gpu_half_partial.sh OLD_BINARY NEW_BINARY OUT_DIR
set -uo pipefail
old=${1:?old binary}
new=${2:?new binary}
out=${3:?output folder}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/gpu_sweep.sh
. "$here/gpu_sweep.sh"
packed_work "$out"
SETS="sum f16,bf16 ${SIZES:-2^10,2^11,2^12,4097,5003,2^13,12345,2^14,2^16}" \
  ROUNDS=${ROUNDS:-2} BENCH_LIMIT=100 bash "$here/gpu_binary_ab.sh" /tmp/redlab-cub \
  "$work/ab" old="$old" new="$new" > "$work/ab.log" 2>&1
pack
# 4096: four whole rows, the rest empty; 4099 and 1: a word that holds the end;
# 7000: a partial row ending inside a warp; 12345: a whole tile and a partial one.
sanitize_runs "$work/sanitizers.txt" "$new" "sum f16 4096 CLUSTER_FINISH=2" \
  "sum bf16 4099 CLUSTER_FINISH=2" "sum f16 1 CLUSTER_FINISH=2" \
  "prod f16 7000 CLUSTER_FINISH=2" "sum bf16 12345 CLUSTER_FINISH=2"
pack
