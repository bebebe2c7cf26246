#!/usr/bin/env bash
# One round of the README's tables against CUB: `auto` for sum/min/max of i32, f32 and
# f64, then the f16/bf16 sums, at every even power of two from 2^10 to 2^30.
# Records: OUT/table-ROUND.jsonl and OUT/halves-ROUND.jsonl (tables: scripts/cub_range_table.py).
# Usage: scripts/gpu_cub_table.sh BINARY CUB_BINARY OUT_DIR ROUND
set -uo pipefail
bin=${1:?redlab binary}
cub=${2:?CUB comparator binary}
out=${3:?output folder}
round=${4:?round}
mkdir -p "$out"
sizes=2^10,2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28,2^30
common=(--device cuda:0 --variants auto --sizes "$sizes" --compare cub --cub-bin "$cub"
  --min-reps 20 --quiet)
"$bin" bench "${common[@]}" --ops sum,min,max --dtypes i32,f32,f64 \
  --json "$out/table-$round.jsonl" 2>&1 | tee -a "$out/table.log" | grep -E "rror" || true
"$bin" bench "${common[@]}" --ops sum --dtypes f16,bf16 \
  --json "$out/halves-$round.jsonl" 2>&1 | tee -a "$out/table.log" | grep -E "rror" || true
