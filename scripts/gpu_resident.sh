#!/usr/bin/env bash
# Where a waited-for call's time goes outside the kernels, on one CUDA GPU: the
# resident_per_call example (stream path, input kept on the device, and the same call
# after a pageable upload of the input) beside `redlab run`'s per-call and graph times
# of the same f32 sums, then a few checks of the merged column kernels.
# Usage: scripts/gpu_resident.sh OUT REDLAB_BINARY EXAMPLE_BINARY
set -u
out=$1 new=$2 example=$3
mkdir -p "$out"
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"
shapes="8192x8192:0 16777216x8:0 8192x8192:1 1024x64:1 64x8:0"
# shellcheck disable=SC2086
"$example" $shapes 2>&1 | tee "$out/resident.md"
for shape in $shapes; do
  speed run "$new" --op sum --dtype f32 --shape "${shape%%:*}" --axis "${shape##*:}"
done
fails=0 runs=0
for shape in 8192x1024 9000x132 20011x8; do
  verify check.txt --shape "$shape" --axis 0 --op argmax --dtype f64 --dist ints
  verify check.txt --shape "$shape" --axis 0 --op argmin --dtype i64
  verify check.txt --shape "$shape" --axis 0 --op max --dtype f64
  verify check.txt --shape "$shape" --axis 0 --op sum --dtype u64
done
echo "verification: $fails failures over $runs runs" | tee -a "$out/summary.txt"
