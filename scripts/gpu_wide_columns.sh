#!/usr/bin/env bash
# column_words for 8-byte elements of order-free operators (SEG_WIDE_WORDS: two 16-byte
# loads per word of 4 outputs) on a CUDA GPU, against the binary before (column_tiles):
#   [STAGES="check sanitize speed"] scripts/gpu_wide_columns.sh OUT BASE NEW
# 1. NEW verified bit for bit on column shapes (whole, partial and short tiles, narrow
#    blocks, the tree) × f64 max/min/argmax, i64 sum/min, u64 xor;
# 2. compute-sanitizer memcheck, racecheck and synccheck of the wide path;
# 3. per-call and graph GB/s, BASE and NEW alternated twice.
set -u
stages=" ${STAGES:-check sanitize speed} "
want() { [[ "$stages" == *" $1 "* ]]; }
out=$1 base=$2 new=$3
mkdir -p "$out"
log() { echo "$*" | tee -a "$out/summary.txt"; }
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"

if want check; then
  fails=0 runs=0
  for shape in 8192x1024 9000x132 300x132 1024x256 20011x8 17000x16 3000x40 1000x4096; do
    for op in max min; do verify check.txt --shape "$shape" --axis 0 --op "$op" --dtype f64; done
    verify check.txt --shape "$shape" --axis 0 --op argmax --dtype f64 --dist ints
    verify check.txt --shape "$shape" --axis 0 --op sum --dtype i64
    verify check.txt --shape "$shape" --axis 0 --op min --dtype i64
    verify check.txt --shape "$shape" --axis 0 --op xor --dtype u64
  done
  log "verification: $fails failures over $runs runs"
fi

if want sanitize; then
  for tool in memcheck racecheck synccheck; do
    sanitize "$tool" --shape 9000x132 --axis 0 --op max --dtype f64
  done
  sanitize memcheck --shape 20011x8 --axis 0 --op argmax --dtype f64
fi

want speed && for pass in 1 2; do
  for entry in "base=$base" "new=$new"; do
    name=${entry%%=*} bin=${entry#*=}
    speed "$name" "$bin" --shape 8192x4096 --axis 0 --op max --dtype f64
    speed "$name" "$bin" --shape 8192x4096 --axis 0 --op argmax --dtype f64
    speed "$name" "$bin" --shape 8192x4096 --axis 0 --op sum --dtype i64
    speed "$name" "$bin" --shape 8192x4096 --axis 0 --op sum --dtype f64
    speed "$name" "$bin" --shape 32768x1024 --axis 0 --op min --dtype f64
    speed "$name" "$bin" --shape 1024x32768 --axis 0 --op max --dtype f64
    speed "$name" "$bin" --shape 2097152x16 --axis 0 --op max --dtype f64
    speed "$name" "$bin" --shape 4194304x8 --axis 0 --op max --dtype f64
    speed "$name" "$bin" --shape 1000x32768 --axis 0 --op max --dtype f64
  done
done
