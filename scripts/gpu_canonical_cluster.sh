#!/usr/bin/env bash
# Canonical float sums of up to eight tiles folded by one thread-block cluster, before
# and after, beside CUB, in one sitting on one GPU:
#   1. the production kernel at chosen parameters (CONFIGS, as in gpu_order_free_ab.sh)
#      for f32 and f64 sums around one to nine tiles;
#   2. `tune --merge-from` the shipped database over those sums at TUNE_SIZES (graph
#      objective), which tries the entry's one-parameter neighbours first;
#   3. `auto` with BEFORE's binary and shipped database, then AFTER's binary with the
#      re-tuned one, sums and min/max of f32 and f64 (the reproducibility cost);
#   4. compute-sanitizer (memcheck, racecheck, synccheck) over canonical cluster grids.
# Every bench row is verified against the host reference (floats bit for bit).
# Usage: scripts/gpu_canonical_cluster.sh BEFORE_BINARY AFTER_BINARY CUB_BINARY OUT_DIR
set -uo pipefail
source "$(dirname "$0")/gpu_sweep.sh"
before=${1:?binary before the change}
after=${2:?binary after the change}
cub=${3:?CUB comparator binary}
out=${4:?output folder}
mkdir -p "$out" /tmp/empty-tuning
family=nvidia-h100
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && family=nvidia-h200
echo "family $family"
common=(--device cuda:0 --min-reps 20 --quiet --compare cub --cub-bin "$cub")
export REDLAB_TUNING_DIR=/tmp/empty-tuning
sweep_sizes=${SWEEP_SIZES:-4096,8193,2^14,24571,2^15,2^16,65537,2^18}
sweep_configs sum f32,f64 "$sweep_sizes" "${SWEEP_LIMIT:-60}"
tuned=/tmp/empty-tuning
if [ -n "${TUNE_SIZES:-}" ]; then
  timeout 400 "$after" tune --device cuda:0 --variants production --objective graph --ops sum \
    --dtypes f32,f64 --sizes "$TUNE_SIZES" --budget "${TUNE_BUDGET:-120}" \
    --merge-from "tuning/cuda/$family.json" --out-dir "$out/tuned" 2>&1 | tail -8
  tuned=$out/tuned
fi
if [ -z "${SKIP_AB:-}" ]; then
  for who in before after; do
    bin=$before
    tuning=/tmp/empty-tuning
    if [ "$who" = after ]; then
      bin=$after
      tuning=$tuned
    fi
    echo "== $who: auto, database of $tuning (empty: the shipped one)"
    REDLAB_TUNING_DIR=$tuning timeout "${AB_LIMIT:-150}" "$bin" bench "${common[@]}" --variants auto \
      --ops sum,min --dtypes f32,f64 --sizes "${AB_SIZES:-2^10,2^12,2^14,2^16,2^18}" \
      --json "$out/$who.jsonl" 2>&1 | grep -E "vs cub|rror"
  done
fi
if [ -n "${SANITIZE:-}" ]; then
  for tool in memcheck racecheck synccheck; do
    for spec in "f64 24571 8" "f32 4096 4" "f16 20000 4" "f64 65537 8"; do
      read -r dtype size cluster <<<"$spec"
      echo "== $tool sum $dtype $size CLUSTER_FINISH=$cluster" >>"$out/sanitizers.txt"
      compute-sanitizer --tool "$tool" "$after" run --device cuda:0 --variant production \
        --param CLUSTER_FINISH="$cluster" --param WARP_TILES_UPTO=0 --op sum --dtype "$dtype" \
        --n "$size" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|verified|rror" \
        >>"$out/sanitizers.txt"
    done
  done
  cat "$out/sanitizers.txt"
fi
