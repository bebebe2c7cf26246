#!/usr/bin/env bash
# Axis reductions of CUDA tensors enqueued on the caller's stream (results written into
# the result tensor on the device): the Python package's CUDA tests, compute-sanitizer
# over the new path, and whole Python axis calls beside torch.
# Usage, on the GPU machine: scripts/gpu_axis_stream.sh WHEEL OUT [check|speed|all]
#   WHEEL  the Python package's wheel built from the commit under test
#   OUT    folder for the logs and records
#   check: the tests and compute-sanitizer; speed: the timings (OPS: the operator:type
#   cases of tools/python_axis_calls.py; WHOLE_OPS: whole-array cases of
#   tools/python_overhead.py, none by default)
set -uo pipefail
wheel="$1" out="$2" phase="${3:-all}"
mkdir -p "$out"
rm -f "$out/failed"
python3 -m pip install -q --no-deps --force-reinstall "$wheel" 2>&1 | tail -n 3
if [ "$phase" != check ]; then
  python3 tools/python_axis_calls.py --out "$out/axis-calls.jsonl" \
    --ops "${OPS:-sum:f32,max:f32,sum:i32,max:i32}" 2>&1 | tee "$out/axis-calls.md"
  if [ -n "${WHOLE_OPS:-}" ]; then
    python3 tools/python_overhead.py --no-cpu --ops "$WHOLE_OPS" --sizes 10,14,20,24,28 \
      --out "$out/whole-calls.jsonl" 2>&1 | tail -n 40
  fi
fi
[ "$phase" = speed ] && exit 0
python3 -m pytest -q python/tests/test_cuda.py 2>&1 | tee "$out/pytest-cuda.txt" | tail -n 15
[ "${PIPESTATUS[0]}" -eq 0 ] || echo pytest >>"$out/failed"
# Every kernel of the in-place build under compute-sanitizer, on small shapes: short
# rows, rows of 33-1024, long rows (tiles, then the tree), columns; sums and min/max.
cat >"$out/sanitize.py" <<'PY'
import numpy as np, torch, redlab
for shape, axis in [((300, 7), 1), ((300, 100), 1), ((3, 20000), 1), ((200, 64), 0)]:
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    t = torch.from_numpy(x).cuda()
    for op in ["sum", "min", "max"]:
        got = redlab.reduce(op, t, axis=axis)
        assert got.cpu().numpy().tobytes() == redlab.reduce(op, x, axis=axis).tobytes()
    i = torch.from_numpy((x * 100).astype(np.int16)).cuda()
    assert redlab.max(i, axis=axis).cpu().numpy().tobytes() == redlab.max((x * 100).astype(np.int16), axis=axis).tobytes()
    # Indices and narrowed halves stored by the kernels (and whole-array argmax).
    assert redlab.argmax(t, axis=axis).cpu().numpy().tobytes() == redlab.argmax(x, axis=axis).tobytes()
    assert int(redlab.argmin(t).cpu()) == int(redlab.argmin(x))
    h = x.astype(np.float16)
    assert redlab.max(torch.from_numpy(h).cuda(), axis=axis).cpu().numpy().tobytes() == redlab.max(h, axis=axis).tobytes()
torch.cuda.synchronize()
print("sanitize.py: all equal")
PY
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool "$tool" --error-exitcode 9 python3 "$out/sanitize.py" \
    >"$out/sanitizer-$tool.txt" 2>&1
  rc=$?
  echo "compute-sanitizer $tool: exit $rc"
  grep -E "ERROR SUMMARY|all equal|Error" "$out/sanitizer-$tool.txt" | tail -n 3
  [ "$rc" -eq 0 ] || echo "sanitizer-$tool" >>"$out/failed"
done
if [ -s "$out/failed" ]; then
  echo "FAILED: $(tr '\n' ' ' <"$out/failed")"
  exit 1
fi
