#!/usr/bin/env bash
# Custom combines over several inputs on one CUDA GPU, where an f32 map into an f32
# accumulator loads a whole word of every input (SEG_MAPPED_WORDS): every output verified
# against the element-by-element reference on shapes that reach column_words, short rows
# of words, word_rows, row tiles and segments; in a CUDA graph and per call, `a + b` from
# -0.0 beside the built-in sum of the same map, for each NAME=BINARY given (old and new
# builds alternating); then compute-sanitizer over the kernels the word path takes.
# Usage, on the GPU machine: scripts/gpu_custom_inputs.sh OUT NEW [NAME=BINARY...]
set -uo pipefail
out=${1:?output folder}; new=${2:?redlab binary under test}; shift 2
mkdir -p "$out"
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=scripts/gpu_runs.sh
. "$here/gpu_runs.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
runs=0 fails=0
shapes=("--shape 8192x8192 --axis 0" "--shape 1000x4100 --axis 0" "--shape 70x4000 --axis 0"
  "--shape 300x1024 --axis 1" "--shape 128x512 --axis 1" "--shape 4096x32 --axis 1"
  "--shape 8192x8193 --axis 1" "--shape 300x1000 --axis 1" "--shape 3x20011 --axis 1"
  "--n 10000019 --segment-size 777")
combines=("a + b * 1.5|-0.0" "a + b|-0.0" "max(a, b)|-inf")
for c in "${combines[@]}"; do
  IFS='|' read -r combine identity <<<"$c"
  for s in "${shapes[@]}"; do
    # shellcheck disable=SC2086 # the shape's words
    verify verify.txt --map 'x * y' --combine "$combine" --identity="$identity" --dtype f32 $s
  done
done
# Three inputs, and a map reading the index (no word path), as controls.
verify verify.txt --map 'x * y + z' --combine 'a + b * 1.5' --identity=-0.0 --dtype f32 --shape 8192x8192 --axis 0
verify verify.txt --map 'x * y + z' --combine 'a + b * 1.5' --identity=-0.0 --dtype f32 --shape 300x1024 --axis 1
verify verify.txt --map 'x * y + i' --combine 'a + b' --identity=-0.0 --dtype f32 --shape 300x1024 --axis 1
echo "verify: $runs runs, $fails failed" | tee -a "$out/summary.txt"
rows() {
  local name=$1 bin=$2 s
  for s in "--shape 8192x8192 --axis 0" "--shape 65536x1024 --axis 1" "--shape 8192x8192 --axis 1" \
    "--shape 1048576x128 --axis 1"; do
    # shellcheck disable=SC2086
    speed "$name-sum" "$bin" --map 'x * y' --combine sum --dtype f32 $s
    # shellcheck disable=SC2086
    speed "$name-a+b" "$bin" --map 'x * y' --combine 'a + b' --identity=-0.0 --dtype f32 $s
  done
}
alternate rows "new=$new" "$@"
for s in "--shape 300x1024 --axis 1" "--shape 70x4000 --axis 0" "--shape 4096x32 --axis 1"; do
  for tool in memcheck racecheck synccheck; do
    # shellcheck disable=SC2086
    sanitize "$tool" --map 'x * y' --combine 'a + b * 1.5' --identity=-0.0 --dtype f32 $s
  done
done
