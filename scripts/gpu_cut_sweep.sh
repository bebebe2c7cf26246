#!/usr/bin/env bash
# The one-launch kernel's cut (MAX_PARTIALS) on the GPU: `auto` for f32/f64 sums beside
# CUB with the shipped database and with the same database plus MAX_PARTIALS at each cut
# (results/h200-cuda-cut/dbs), the shipped one again last to see the drift; then
# compute-sanitizer over the finest cut.
# Usage: scripts/gpu_cut_sweep.sh REDLAB_BINARY CUB_BINARY OUT_DIR [DB_NAME ...]
set -uo pipefail
bin=${1:?redlab binary}
cub=${2:?CUB comparator binary}
out=${3:?output folder}
shift 3
mkdir -p "$out" /tmp/empty-tuning
sizes=${SIZES:-2^22,2^24,2^26,2^28,2^30}
common=(bench --device cuda:0 --variants auto --ops sum --dtypes f32,f64 --sizes "$sizes"
        --min-reps 20 --quiet --compare cub --cub-bin "$cub")
for db in shipped "$@" shipped-again; do
  case $db in
    shipped*) dir=/tmp/empty-tuning ;;
    *) dir=results/h200-cuda-cut/dbs/$db ;;
  esac
  echo "== $db"
  REDLAB_TUNING_DIR=$dir timeout 200 "$bin" "${common[@]}" --json "$out/cut-$db.jsonl" 2>&1 | tail -22
done
# Sanitizers on the finest cut: 8193 roots (a partial last tile) make every work-item of
# the finish fold 64; both tile paths (a group per tile, a warp per tile).
{
  for spec in "memcheck f32 67108869 0" "memcheck f64 67108869 0" "memcheck f32 134217728 128" \
              "memcheck f32 67108869 128" "racecheck f32 67108869 0" "synccheck f32 67108869 0"; do
    set -- $spec
    echo "== $1 $2 n=$3 MAX_PARTIALS=16384 WARP_TILES_FROM=$4"
    timeout 120 compute-sanitizer --tool "$1" "$bin" run --device cuda:0 --op sum --dtype "$2" \
      --n "$3" --variant production --param MAX_PARTIALS=16384 --param WARP_TILES_FROM="$4" 2>&1 | tail -3
  done
} > "$out/sanitizers.txt" 2>&1
