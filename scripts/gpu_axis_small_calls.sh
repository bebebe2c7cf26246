#!/usr/bin/env bash
# Host time of small axis calls of torch CUDA tensors, two wheels in one run: the CUDA
# tests and memcheck of the axis stream tests with the second wheel, then
# tools/python_axis_calls.py and tools/python_axis_breakdown.py with each wheel.
# Usage, on the GPU machine, from the repository root:
#   scripts/gpu_axis_small_calls.sh BEFORE.whl AFTER.whl OUT
set -uo pipefail
before="$1" after="$2" out="$3"
mkdir -p "$out/raw"
rm -f "$out/failed"
nvidia-smi --query-gpu=name,driver_version --format=csv >"$out/gpu.txt" 2>&1
shapes="1024x64:1,4096x256:1,256x4096:0,65536x32:1,8192x8192:1"
tools="$(pwd)/tools"
tests="$(pwd)/python/tests"
# Run from elsewhere, so that `import redlab` finds the installed wheel.
cd /tmp
for which in before after; do
  wheel="$before"
  [ "$which" = after ] && wheel="$after"
  python3 -m pip install -q --no-deps --force-reinstall "$wheel" 2>&1 | tail -n 2
  if [ "$which" = after ]; then
    python3 -m pytest -q "$tests/test_cuda.py" 2>&1 | tail -n 3 | tee "$out/pytest-cuda.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || echo pytest >>"$out/failed"
    compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -x \
      "$tests/test_cuda.py" -k "callers_stream or several_tensors or axis_operators" 2>&1 \
      | tail -n 3 | tee "$out/memcheck.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || echo memcheck >>"$out/failed"
  fi
  python3 "$tools/python_axis_calls.py" --ops sum:f32,max:f32 --shapes "$shapes" \
    --out "$out/raw/axis-calls-$which.jsonl" >"$out/axis-calls-$which.md" 2>&1 || echo "calls-$which" >>"$out/failed"
  python3 "$tools/python_axis_breakdown.py" --out "$out/raw/breakdown-$which.jsonl" \
    >"$out/breakdown-$which.md" 2>&1 || echo "breakdown-$which" >>"$out/failed"
done
# Few files come back from the GPU machine: the JSON lines travel as one archive.
tar -C "$out" -czf "$out/raw.tar.gz" raw && rm -rf "$out/raw"
if [ -s "$out/failed" ]; then
  echo "FAILED: $(tr '\n' ' ' <"$out/failed")"
  exit 1
fi
