#!/usr/bin/env bash
# The halves' word loads as shipped (one cluster's tiles, and a work-group's last tile):
# compute-sanitizer on both paths, then `auto` of the build before against this one
# beside CUB, halves at powers of two and at sizes that end in a partial tile.
# Usage: scripts/gpu_half_words_final.sh OLD_BINARY NEW_BINARY OUT_DIR
set -uo pipefail
old=${1:?old binary}
new=${2:?new binary}
out=${3:?output folder}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/gpu_sweep.sh
. "$here/gpu_sweep.sh"
packed_work "$out"
sanitize_runs "$work/sanitizers.txt" "$new" "sum f16 12345 CLUSTER_FINISH=0 VEC_LOADS=1" \
  "sum bf16 300007 CLUSTER_FINISH=0 VEC_LOADS=1" "sum f16 65535 CLUSTER_FINISH=8 VEC_LOADS=1" \
  "prod bf16 5003 CLUSTER_FINISH=4 VEC_LOADS=1"
pack
SETS="sum f16,bf16 ${SIZES:-2^10,2^12,2^13,2^14,2^15,2^16,2^18,12345,300007,1048579,2^24,2^28}" \
  ROUNDS=${ROUNDS:-1} BENCH_LIMIT=150 bash "$here/gpu_binary_ab.sh" /tmp/redlab-cub "$work/ab" \
  old="$old" new="$new" > "$work/ab.log" 2>&1
pack
