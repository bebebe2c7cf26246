#!/usr/bin/env bash
# Tuning entries between the shipped ones, on the GPU: `auto` beside CUB at the sizes
# between tuned entries (the shipped database), then `redlab tune --merge-from` the
# shipped database for OPS × DTYPES at TUNE_SIZES, then `auto` beside CUB again with the
# merged database over CHECK_SIZES (TUNE_LIMIT and BENCH_LIMIT: seconds each step may take).
# Usage: scripts/gpu_retune.sh REDLAB_BINARY CUB_BINARY OUT_DIR FAMILY
# (FAMILY: nvidia-h200 or nvidia-h100; the shipped database is tuning/cuda/FAMILY.json).
set -uo pipefail
bin=${1:?redlab binary}
cub=${2:?CUB comparator binary}
out=${3:?output folder}
family=${4:?device family}
mkdir -p "$out" /tmp/empty-tuning
ops=${OPS:-sum}
dtypes=${DTYPES:-f32,f64}
compare=(--device cuda:0 --variants auto --min-reps 20 --quiet --compare cub --cub-bin "$cub")
if [ -n "${BEFORE_SIZES:-}" ]; then
  echo "== before: shipped database"
  REDLAB_TUNING_DIR=/tmp/empty-tuning timeout 200 "$bin" bench "${compare[@]}" \
    --ops "${BEFORE_OPS:-sum,min,max}" --dtypes "${BEFORE_DTYPES:-i32,f32,f64}" \
    --sizes "$BEFORE_SIZES" --json "$out/before.jsonl" 2>&1 | grep -E "vs cub"
fi
echo "== tune $ops $dtypes at ${TUNE_SIZES:?sizes to tune}"
timeout "${TUNE_LIMIT:-330}" "$bin" tune --device cuda:0 --variants production --ops "$ops" \
  --dtypes "$dtypes" --sizes "$TUNE_SIZES" --budget "${BUDGET:-240}" --objective graph \
  --merge-from "tuning/cuda/$family.json" --out-dir "$out/tuned" 2>&1 | tail -12
echo "== after: merged database"
REDLAB_TUNING_DIR=$out/tuned timeout "${BENCH_LIMIT:-200}" "$bin" bench "${compare[@]}" --ops "$ops" \
  --dtypes "$dtypes" --sizes "${CHECK_SIZES:?sizes to check}" --json "$out/after.jsonl" 2>&1 |
  grep -E "vs cub"
