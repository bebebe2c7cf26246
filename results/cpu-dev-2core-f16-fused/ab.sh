#!/usr/bin/env bash
# Three rounds, base and new binaries alternating, on an idle machine:
#   bash ab.sh BASE_BINARY NEW_BINARY OUT_DIR
set -euo pipefail
base=$1 new=$2 out=$3
mkdir -p "$out"
for round in 1 2 3; do
  for which in base new; do
    bin=$base; [ "$which" = new ] && bin=$new
    "$bin" bench --ops sum --dtypes f16,bf16,f32 --sizes 2^20,2^27 \
      --min-reps 10 --min-time 0.2 --json "$out/$which-$round.jsonl" > "$out/$which-$round.txt"
  done
done
