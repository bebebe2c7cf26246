#!/usr/bin/env bash
# Checks axis and segment results decoded straight into the typed array on one CUDA GPU,
# runs the Python package's CUDA tests, and times whole Python axis calls beside torch.
# Usage, on the GPU machine: scripts/gpu_packed_axis.sh REDLAB_BINARY WHEEL OUT
#   REDLAB_BINARY  a release build of the commit under test
#   WHEEL          the Python package's wheel built from it (maturin build --release)
#   OUT            folder for the logs and records
set -uo pipefail
bin="$1" wheel="$2" out="$3"
mkdir -p "$out"
rm -f "$out/failed"
# Every `redlab run` verifies each output against the CPU backend (floats bit for bit).
{
  for spec in 4194304x4:1:sum:f32 1048576x32:1:max:f32 8192x8192:0:sum:f64 \
    1031x33:0:min:i32 1031x33:1:xor:i32 5x20011:1:sum:i8 7x3:0:prod:u8 \
    4096x1025:1:sum:f16 4096x1025:1:max:bf16 65536x1024:1:argmax:f32 4x0:1:sum:f32; do
    IFS=: read -r shape axis op dtype <<<"$spec"
    echo "== $shape axis $axis $op $dtype"
    "$bin" run --device cuda:0 --shape "$shape" --axis "$axis" --op "$op" --dtype "$dtype" \
      --out "$out/result-$op-$dtype-$shape-$axis.npy" || echo "$spec" >>"$out/failed"
  done
  echo "== segments of 100, i32 sum"
  "$bin" run --device cuda:0 --n 1000003 --segment-size 100 --op sum --dtype i32 || echo segments >>"$out/failed"
} 2>&1 | tee "$out/runs.log"
rm -f "$out"/result-*.npy
python3 -m pip install -q --no-deps --force-reinstall "$wheel" 2>&1 | tail -n 3
python3 -m pytest -q python/tests/test_cuda.py 2>&1 | tee "$out/pytest-cuda.txt" | tail -n 15
[ "${PIPESTATUS[0]}" -eq 0 ] || echo pytest >>"$out/failed"
python3 tools/python_axis_calls.py --out "$out/axis-calls.jsonl" 2>&1 | tee "$out/axis-calls.md"
if [ -s "$out/failed" ]; then
  echo "FAILED: $(tr '\n' ' ' <"$out/failed")"
  exit 1
fi
