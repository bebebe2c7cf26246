#!/usr/bin/env bash
# Several tuning passes in a row on one GPU, each merged into the last, starting from the
# shipped database of the GPU's family; the result is OUT/FAMILY.json.
#   PASSES: passes separated by ';', each "OPS DTYPES SIZES BUDGET_SECONDS",
#           e.g. "min,max i32 2^20,2^24 150; sum f32,f64 2^24 120"
#   FAMILY: nvidia-h100 or nvidia-h200 (default: from the GPU's name)
# Every pass tunes the production kernel for the time inside a CUDA graph
# (`--objective graph`); `--merge-from` also times the previous entry's configuration, so
# a cell never gets a slower entry than it had. Compare before and after with
# scripts/gpu_auto_ab.sh.
# Usage: scripts/gpu_retune_chain.sh REDLAB_BINARY OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
source "$(dirname "$0")/gpu_sweep.sh"
FAMILY=${FAMILY:-$(gpu_family)}
mkdir -p "$out"
from=tuning/cuda/$FAMILY.json
pass=0
IFS=';' read -ra passes <<<"${PASSES:?tuning passes}"
for spec in "${passes[@]}"; do
  read -r ops dtypes sizes budget <<<"$spec"
  pass=$((pass + 1))
  echo "== pass $pass: $ops $dtypes at $sizes, $budget s, merged into $from" | tee -a "$out/tune.log"
  timeout $((budget + 120)) "$bin" tune --device cuda:0 --variants production --ops "$ops" \
    --dtypes "$dtypes" --sizes "$sizes" --budget "$budget" --objective graph \
    --merge-from "$from" --out-dir "$out/pass$pass" 2>&1 | tail -20 >>"$out/tune.log"
  if [ -f "$out/pass$pass/cuda/$FAMILY.json" ]; then
    from=$out/pass$pass/cuda/$FAMILY.json
  else
    echo "pass $pass wrote no database; keeping $from" | tee -a "$out/tune.log"
  fi
done
# The result twice: as a tuning folder for REDLAB_TUNING_DIR (TUNED_DIR, default
# OUT/tuned), and flat as OUT/FAMILY.json.
tuned=${TUNED_DIR:-$out/tuned}
mkdir -p "$tuned/cuda"
cp "$from" "$tuned/cuda/$FAMILY.json"
cp "$from" "$out/$FAMILY.json"
echo "== $FAMILY database: $tuned/cuda/$FAMILY.json and $out/$FAMILY.json (from $from)" | tee -a "$out/tune.log"
tail -40 "$out/tune.log"
