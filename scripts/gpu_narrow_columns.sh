#!/usr/bin/env bash
# column_words for fewer than 128 columns (2 to 16 words side by side, 2 to 16 lane classes
# per warp) on a CUDA GPU, against the binary before (column_tiles, or fewer classes):
#   [STAGES="check sanitize speed torch"] scripts/gpu_narrow_columns.sh OUT BASE NEW
# 1. NEW verified bit for bit on narrow column shapes (8–124 columns; whole, partial
#    and 1024-row tiles; the tree) × float sums, order-free operators and argmax;
# 2. compute-sanitizer memcheck and racecheck of the narrow path;
# 3. per-call and graph GB/s, BASE and NEW alternated twice;
# 4. NEW beside torch and CuPy (tools/axis_compare.py --graph) on 2^22×32 and neighbours.
set -u
stages=" ${STAGES:-check sanitize speed torch} "
want() { [[ "$stages" == *" $1 "* ]]; }
out=$1 base=$2 new=$3
mkdir -p "$out"
log() { echo "$*" | tee -a "$out/summary.txt"; }
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"

if want check; then
  fails=0 runs=0
  for shape in 9000x32 1024x12 300x100 8192x64 20011x8 4096x124 70000x16 2048x40 300x8 40000x8 9000x16 1024x8; do
    for op in sum max; do verify check.txt --shape "$shape" --axis 0 --op "$op" --dtype f32; done
    verify check.txt --shape "$shape" --axis 0 --op argmax --dtype f32 --dist ints
    verify check.txt --shape "$shape" --axis 0 --op sum --dtype i32
    verify check.txt --shape "$shape" --axis 0 --op min --dtype f16
    verify check.txt --shape "$shape" --axis 0 --op sum --dtype bf16
    verify check.txt --shape "$shape" --axis 0 --map 'x*x' --combine sum --dtype f32
  done
  log "verification: $fails failures over $runs runs"
fi

if want sanitize; then
  for tool in memcheck racecheck; do
    sanitize "$tool" --shape 20011x8 --axis 0 --op sum --dtype f32
    sanitize "$tool" --shape 17000x16 --axis 0 --op max --dtype f32
  done
  sanitize synccheck --shape 20011x8 --axis 0 --op sum --dtype f32
fi

narrow_rows() {
  speed "$1" "$2" --shape 4194304x32 --axis 0 --op sum --dtype f32
  speed "$1" "$2" --shape 4194304x32 --axis 0 --op max --dtype f32
  speed "$1" "$2" --shape 4194304x32 --axis 0 --op sum --dtype i32
  speed "$1" "$2" --shape 4194304x32 --axis 0 --op argmax --dtype f32
  speed "$1" "$2" --shape 2097152x64 --axis 0 --op sum --dtype f32
  speed "$1" "$2" --shape 2097152x64 --axis 0 --op max --dtype f32
  speed "$1" "$2" --shape 8388608x16 --axis 0 --op sum --dtype f32
  speed "$1" "$2" --shape 8388608x16 --axis 0 --op max --dtype f32
  speed "$1" "$2" --shape 8388608x16 --axis 0 --op argmax --dtype f32
  speed "$1" "$2" --shape 16777216x8 --axis 0 --op sum --dtype f32
  speed "$1" "$2" --shape 16777216x8 --axis 0 --op max --dtype f32
  speed "$1" "$2" --shape 16777216x8 --axis 0 --op sum --dtype i32
  speed "$1" "$2" --shape 16777216x8 --axis 0 --op argmax --dtype f32
  speed "$1" "$2" --shape 11184810x12 --axis 0 --op sum --dtype f32
  speed "$1" "$2" --shape 1398101x96 --axis 0 --op sum --dtype f32
  speed "$1" "$2" --shape 4194304x32 --axis 0 --op max --dtype f16
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op sum --dtype f32
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op max --dtype f32
}
want speed && alternate narrow_rows "base=$base" "new=$new"

want torch || exit 0
python3 tools/axis_compare.py "$new" --ops sum,max,argmax --shapes 5 --graph 50 --reps 20 \
  --add 2097152x64:0,8388608x16:0,16777216x8:0 \
  --json "$out/torch.jsonl" > "$out/torch.md" 2> "$out/torch.log"
tail -n 30 "$out/torch.md"
