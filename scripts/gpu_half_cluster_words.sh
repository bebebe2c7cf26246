#!/usr/bin/env bash
# Halves' one-cluster tiles loading 8-byte words (cluster_tiles.h), against the build
# before: the forced path beside CUB for both binaries, compute-sanitizer on the new
# path, a graph-time re-tune of the halves' entries up to 2^16 merged into the shipped
# database, and `auto` of both (old with the shipped database, new with the re-tuned one)
# beside CUB. Each phase refreshes OUT/all.tgz, so a run cut short keeps what it did.
# Usage: scripts/gpu_half_cluster_words.sh OLD_BINARY NEW_BINARY OUT_DIR
set -uo pipefail
old=${1:?old binary}
new=${2:?new binary}
out=${3:?output folder}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/gpu_sweep.sh
. "$here/gpu_sweep.sh"
family=$(gpu_family)
packed_work "$out"
common=(--device cuda:0 --compare cub --cub-bin /tmp/redlab-cub --min-reps 20 --quiet --ops sum
  --dtypes f16,bf16 --variants production --param HALF_WARP_TILES_UPTO=0 --param VEC_LOADS=1)
for pair in old="$old" new="$new"; do
  name=${pair%%=*} bin=${pair#*=}
  for spec in "2 2^11,2^12,2^13,2^14" "8 2^14,2^15,2^16"; do
    read -r cluster sizes <<<"$spec"
    echo "== $name production CLUSTER_FINISH=$cluster" | tee -a "$work/forced.log"
    timeout 120 "$bin" bench "${common[@]}" --param CLUSTER_FINISH="$cluster" --sizes "$sizes" \
      --json "$work/forced-$name-$cluster.jsonl" 2>&1 | grep -E "vs cub|rror" | tee -a "$work/forced.log"
  done
done
pack
sanitize_runs "$work/sanitizers.txt" "$new" "sum f16 4096 CLUSTER_FINISH=2 VEC_LOADS=1" \
  "sum bf16 12345 CLUSTER_FINISH=2 VEC_LOADS=1" "sum f16 65535 CLUSTER_FINISH=8 VEC_LOADS=1" \
  "prod bf16 5003 CLUSTER_FINISH=4 VEC_LOADS=1"
pack
retune_then_ab "$old" "$new" 240 "tuning/cuda/$family.json" \
  2^10,2^12,2^13,2^14,2^15,2^16 --sizes 2^10,2^12,2^14,2^16 --budget 150
