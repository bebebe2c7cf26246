#!/usr/bin/env bash
# Min, max, argmin and argmax through the typed results on a GPU's CUDA and OpenCL devices
# (`redlab run` verifies every output against the host reference), over rows, columns and
# rows of one element, and the statistics of short columns on CUDA.
# Usage: [BINARY=path] scripts/gpu_select_typed_check.sh OUT_DIR
set -uo pipefail
b=${BINARY:-./target/release/redlab}
out=${1:?output folder}
for dev in cuda:0 opencl:0; do
  for op in min max argmin argmax; do
    for dt in f32 f16 i32 f64; do
      for case in 100000x4:1 4096x1000:1 1000x777:0 65536x1:1 3x5000:1 257x33:0; do
        r=$($b run --op $op --dtype $dt --shape ${case%:*} --axis ${case#*:} --device $dev 2>&1 | grep -E "verified|error|mismatch" | head -1)
        echo "$dev $op $dt $case: $r"
      done
    done
  done
done > $out/select.txt
echo "verified yes: $(grep -c "verified  yes" $out/select.txt) of $(wc -l < $out/select.txt)"; grep -v "verified  yes" $out/select.txt | head -20
for stat in var std logsumexp nanmean; do
  for case in 1000x65536:0 300x1000:0 3000x40:0 1025x17:0; do
    echo "$stat $case: $($b run --stat $stat --dtype f32 --shape ${case%:*} --axis ${case#*:} --device cuda:0 2>&1 | grep -E "verified|error|mismatch" | head -1)"
  done
done | tee $out/stats.txt
