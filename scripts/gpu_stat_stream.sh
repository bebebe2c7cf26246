#!/usr/bin/env bash
# Statistics of CUDA tensors enqueued on the caller's stream (the segment kernels map,
# reduce and finish in place): the Python package's CUDA tests, compute-sanitizer over
# the new builds, and whole Python calls beside torch.
# Usage, on the GPU machine: scripts/gpu_stat_stream.sh WHEEL OUT [check|speed|all]
#   WHEEL  the Python package's wheel built from the commit under test, or a folder
#          holding the package (redlab/ with its _native module)
#   OUT    folder for the logs and records
#   speed: OPS (tools/python_axis_calls.py cases) over SHAPES (its --shapes)
set -uo pipefail
wheel="$1" out="$2" phase="${3:-all}"
mkdir -p "$out"
rm -f "$out/failed"
if [ -d "$wheel" ]; then
  # A package folder (redlab/ with its _native module) in place of a wheel.
  export PYTHONPATH="$(cd "$wheel" && pwd)${PYTHONPATH:+:$PYTHONPATH}"
else
  python3 -m pip install -q --no-deps --force-reinstall "$wheel" 2>&1 | tail -n 3
fi
if [ "$phase" != speed ]; then
  python3 -m pytest -q python/tests 2>&1 | tee "$out/pytest.txt" | tail -n 15
  [ "${PIPESTATUS[0]}" -eq 0 ] || echo pytest >>"$out/failed"
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 python3 tools/python_sanitize_stats.py \
      >"$out/sanitizer-$tool.txt" 2>&1
    rc=$?
    echo "compute-sanitizer $tool: exit $rc"
    grep -E "ERROR SUMMARY|agree|Error" "$out/sanitizer-$tool.txt" | tail -n 3
    [ "$rc" -eq 0 ] || echo "sanitizer-$tool" >>"$out/failed"
  done
fi
if [ "$phase" != check ]; then
  python3 tools/python_axis_calls.py --out "$out/stat-calls.jsonl" \
    --ops "${OPS:-mean:f32,norm2:f32,count_nonzero:f32,mean:f16}" \
    ${SHAPES:+--shapes "$SHAPES"} 2>&1 | tee "$out/stat-calls.md"
fi
if [ -s "$out/failed" ]; then
  echo "FAILED: $(tr '\n' ' ' <"$out/failed")"
  exit 1
fi
