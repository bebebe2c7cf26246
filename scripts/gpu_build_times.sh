#!/usr/bin/env bash
# What a first call costs in kernel builds: the Python calls of the int32 user-reduction
# test one process each (scripts/gpu_python_hang.sh), with the kernel cache off, then
# with a fresh cache filled by the first pass and read by the second; column jobs read
# as words and rows checked on the CLI; then the whole CUDA Python test file, timed.
# Usage, on the GPU machine with the wheel installed: scripts/gpu_build_times.sh BIN OUT
set -uo pipefail
bin="$1" out="$2"
mkdir -p "$out"
cache=$(mktemp -d)
# A fresh driver JIT cache too: the first pass pays every build.
export CUDA_CACHE_PATH="$cache/jit"
for shape in "4096x1024 --axis 0" "513x1031 --axis 0" "513x1031 --axis 1" "64x9000 --axis 1"; do
  for map in "x * x" "abs(x)"; do
    echo "== $map i32 $shape"
    # shellcheck disable=SC2086
    REDLAB_KERNEL_CACHE=off timeout 120 "$bin" run --device cuda:0 --explain --map "$map" \
      --dtype i32 --shape $shape 2>&1 | grep -E "strategy|verified|error" | sed 's/^/   /'
  done
done
for pass in off fill hit; do
  if [[ $pass == off ]]; then export REDLAB_KERNEL_CACHE=off; else export REDLAB_KERNEL_CACHE="$cache/kernels"; fi
  echo "== pass $pass"
  start=$(date +%s%N)
  GUARDS=off LIMIT=60 bash scripts/gpu_python_hang.sh "$out/calls-$pass" |
    grep -E "^== |call returned|verified|STILL" > "$out/calls-$pass.log"
  echo "   $(( ($(date +%s%N) - start) / 1000000 )) ms for 16 processes"
  grep -c "verified yes" "$out/calls-$pass.log" | sed 's/^/   verified yes: /'
done
echo "== kernel cache: $(ls "$cache/kernels" | wc -l) files, $(du -sh "$cache/kernels" | cut -f1)"
export REDLAB_KERNEL_CACHE="$cache/kernels"
start=$(date +%s%N)
timeout "${PYTEST_LIMIT:-330}" python3 -m pytest -q python/tests/test_cuda.py --durations=12 2>&1 | tail -25
echo "== pytest exit ${PIPESTATUS[0]}, $(( ($(date +%s%N) - start) / 1000000 )) ms"
