#!/usr/bin/env bash
# Two kernel changes measured in one sitting on one CUDA GPU, each against the build
# without it, alternating:
#   rows/    order-free operators along long rows, whole tiles read as 16-byte words
#            (row_words.h) or one element at a time (-DSEG_ROW_WORDS=0), beside torch
#            and CuPy (scripts/gpu_nvrtc_switches.sh);
#   rotate/  `auto` float sums beside CUB with the shipped database and with
#            SUBTREE_ROTATE=1 added to every float-sum entry (ROT_DIR/cuda/FAMILY.json;
#            scripts/gpu_auto_ab.sh);
#   dot/     the mapped `x*y` sum with SUBTREE_ROTATE 0 and 1, and torch.dot
#            (tools/expr_compare.py);
# then memcheck on both new paths.
# Usage: scripts/gpu_rotate_rows.sh REDLAB_BINARY CUB_BINARY ROT_DIR OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}; cub=${2:?CUB comparator}; rot=${3:?tuning folder}; out=${4:?output}
here=$(dirname "$0")
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > "$out/device.txt"
OPS=${ROW_OPS:-argmax,argmin,max} ADD=${ROW_SHAPES:-32x4194304:1,128x1048576:1,8192x8192:1} \
  "$here/gpu_nvrtc_switches.sh" "$bin" "$out/rows" "${ROW_ROUNDS:-2}" words= scalar=-DSEG_ROW_WORDS=0
SETS=${ROT_SETS:-"sum f32,f64 2^22,2^24,2^26,2^28,2^30"} ROUNDS=${ROT_ROUNDS:-2} \
  "$here/gpu_auto_ab.sh" "$bin" "$cub" "$out/rotate" "$rot"
mkdir -p "$out/dot"
for round in $(seq "${ROT_ROUNDS:-2}"); do
  for r in 0 1; do
    echo "== round $round, dot SUBTREE_ROTATE=$r"
    "$bin" bench --device cuda:0 --map 'x*y' --dtypes f32 --sizes 2^24,2^28 --min-reps 20 \
      --param SUBTREE_ROTATE=$r --json "$out/dot/rot$r-$round.jsonl" 2>&1 | grep -E "^[a-z0-9]|rror" | tail -2
  done
done | tee "$out/dot/bench.txt"
python3 "$here/../tools/expr_compare.py" --n 268435456 2>&1 | grep -E "library|torch.dot" | tee "$out/dot/torch.txt"
{
  echo "== memcheck: argmax and min along 4x65536 rows (row words)"
  compute-sanitizer --tool memcheck "$bin" run --device cuda:0 --op argmax --dtype f32 --shape 4x65536 --axis 1
  compute-sanitizer --tool memcheck "$bin" run --device cuda:0 --op min --dtype i32 --shape 4x65539 --axis 1
  echo "== memcheck: f32 and f64 sums of 2^25 + 3 with SUBTREE_ROTATE=1"
  for dt in f32 f64; do
    REDLAB_TUNING_DIR=$rot compute-sanitizer --tool memcheck "$bin" run --device cuda:0 --op sum --dtype $dt --n 33554435
  done
} > "$out/sanitizer.txt" 2>&1
grep -E "ERROR SUMMARY|verified" "$out/sanitizer.txt"
