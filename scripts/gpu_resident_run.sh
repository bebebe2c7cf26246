#!/usr/bin/env bash
# `redlab run` per call over one upload (NEW) against per call after an upload each
# (BASE), on one CUDA GPU: checks of NEW, both binaries alternated twice on column and
# row sums and maxima, then NEW beside torch (tools/axis_compare.py, per call and graph).
# Usage: scripts/gpu_resident_run.sh OUT BASE NEW
set -u
out=$1 base=$2 new=$3
mkdir -p "$out"
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"
fails=0 runs=0
for shape in 8192x8192:0 8192x8192:1 20011x8:0 1000x4097:1 7x3:0; do
  for op in sum max argmax; do
    verify check.txt --shape "${shape%%:*}" --axis "${shape##*:}" --op "$op" --dtype f32 --dist ints --repeat 5
  done
  verify check.txt --shape "${shape%%:*}" --axis "${shape##*:}" --op min --dtype f16 --repeat 5
  verify check.txt --shape "${shape%%:*}" --axis "${shape##*:}" --op sum --dtype i32 --repeat 5
done
echo "verification: $fails failures over $runs runs" | tee -a "$out/summary.txt"
rows() {
  local name=$1 bin=$2 shape op
  for shape in 8192x8192:0 8192x8192:1 16777216x8:0 4194304x32:0 1024x65536:0 4096x16384:0 65536x1024:1; do
    for op in sum max; do
      speed "$name" "$bin" --op "$op" --dtype f32 --shape "${shape%%:*}" --axis "${shape##*:}"
    done
  done
}
alternate rows upload="$base" resident="$new"
python3 tools/axis_compare.py "$new" --ops sum,max,argmax --graph 50 --reps 20 \
  --add 2097152x64:0,8388608x16:0,16777216x8:0,1024x65536:0,4096x16384:0 \
  --json "$out/compare.jsonl" 2>&1 | tee "$out/compare.md"
