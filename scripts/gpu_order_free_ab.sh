#!/usr/bin/env bash
# The one-launch kernel's order-free path (integer sums, min/max) before and after a
# change, beside CUB, in one sitting on one GPU:
#   1. `auto` at SIZES with BEFORE's binary and shipped database, then AFTER's binary
#      with the database in AFTER_TUNING (a tuning folder: cuda/FAMILY.json), if given;
#   2. AFTER's production kernel at chosen parameters (CONFIGS: space-separated lists of
#      NAME=VALUE joined by commas; "-" for the defaults), min over i32 and f64;
#   3. compute-sanitizer (memcheck, racecheck, synccheck) over AFTER's cluster kernels.
# Every bench row is verified against the host reference before it is timed.
# Usage: scripts/gpu_order_free_ab.sh BEFORE_BINARY AFTER_BINARY CUB_BINARY OUT_DIR
set -uo pipefail
source "$(dirname "$0")/gpu_sweep.sh"
before=${1:?binary before the change}
after=${2:?binary after the change}
cub=${3:?CUB comparator binary}
out=${4:?output folder}
mkdir -p "$out" /tmp/empty-tuning
sizes=${SIZES:-2^12,2^14,2^16,2^18,2^20,2^22,2^24}
common=(--device cuda:0 --min-reps 20 --quiet --compare cub --cub-bin "$cub")
export REDLAB_TUNING_DIR=/tmp/empty-tuning
if [ -z "${SKIP_AB:-}" ]; then
  for who in before after; do
    bin=$before
    tuning=/tmp/empty-tuning
    if [ "$who" = after ]; then
      bin=$after
      tuning=${AFTER_TUNING:-/tmp/empty-tuning}
    fi
    echo "== $who: auto, database of $tuning (empty: the shipped one)"
    for set in "sum i32" "min,max i32,f32,f64"; do
      read -r ops dtypes <<<"$set"
      REDLAB_TUNING_DIR=$tuning timeout "${AB_LIMIT:-150}" "$bin" bench "${common[@]}" --variants auto --ops "$ops" \
        --dtypes "$dtypes" --sizes "$sizes" --json "$out/$who.jsonl" 2>&1 | grep -E "vs cub|rror"
    done
  done
fi
sweep_configs min i32,f64 "${SWEEP_SIZES:-$sizes}" "${SWEEP_LIMIT:-90}"
if [ -n "${SANITIZE:-}" ]; then
  for tool in memcheck racecheck synccheck; do
    for spec in "min f64 2^16" "argmax i32 1000003" "sum i64 2^20"; do
      read -r op dtype size <<<"$spec"
      echo "== $tool $spec CLUSTER_FINISH=8" >>"$out/sanitizers.txt"
      compute-sanitizer --tool "$tool" "$after" run --device cuda:0 --variant production \
        --param CLUSTER_FINISH=8 --param UNROLL=8 --op "$op" --dtype "$dtype" --n "$size" 2>&1 |
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|verified|rror" >>"$out/sanitizers.txt"
    done
  done
  cat "$out/sanitizers.txt"
fi
