#!/usr/bin/env bash
# The Python package over several CUDA tensors read in place (a table of their
# addresses): its CUDA tests, the new ones under compute-sanitizer, and the per-call
# time of a two-tensor dot beside torch.dot (and redlab.sum beside torch.sum).
# Usage, on the GPU machine: scripts/gpu_python_tensors.sh WHEEL OUT
#   PYTEST_K  (optional) runs only the CUDA tests it selects (pytest -k)
#   REDLAB_BIN  (optional) a redlab binary: also times the same dot over packed inputs
#               (`redlab bench --map 'x * y'`), the kernel's reference in the same call
set -uo pipefail
wheel="$1" out="$2"
mkdir -p "$out"
rm -f "$out/failed"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
python3 -m pip install -q --no-deps --force-reinstall "$wheel" 2>&1 | tail -n 3
python3 -m pytest -q --durations=8 python/tests/test_cuda.py ${PYTEST_K:+-k "$PYTEST_K"} 2>&1 | tee "$out/pytest-cuda.txt" | tail -n 15
[ "${PIPESTATUS[0]}" -eq 0 ] || echo pytest >>"$out/failed"
for tool in memcheck racecheck; do
  echo "== $tool"
  compute-sanitizer --tool "$tool" --error-exitcode 9 python3 -m pytest -q -x \
    python/tests/test_cuda.py -k "several_tensors or dot_of_two" 2>&1 | tail -n 4 \
    || echo "$tool" >>"$out/failed"
done 2>&1 | tee "$out/sanitizers.txt"
python3 tools/python_overhead.py --no-cpu --ops dot:f32,sum:f32 --sizes 10,14,16,20,24,28 \
  --out "$out/overhead.jsonl" >/dev/null 2>"$out/overhead.err" || echo overhead >>"$out/failed"
python3 - "$out/overhead.jsonl" <<'PY' | tee "$out/overhead.md"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"call"' in l]
by = {}
for r in rows:
    by.setdefault(r["what"], {})[r["call"]] = r
print("| case | torch pipelined µs | redlab pipelined µs | torch/redlab | torch latency µs | redlab latency µs | redlab GB/s |")
print("|---|---|---|---|---|---|---|")
for what, calls in by.items():
    t = next(v for k, v in calls.items() if k.startswith("torch"))
    r = next(v for k, v in calls.items() if k.startswith("redlab"))
    print(f"| {what} | {t['pipelined_s']*1e6:.1f} | {r['pipelined_s']*1e6:.1f} | "
          f"{t['pipelined_s']/r['pipelined_s']:.2f} | {t['latency_s']*1e6:.1f} | "
          f"{r['latency_s']*1e6:.1f} | {r['gbps_pipelined']:.0f} |")
PY
if [ -n "${REDLAB_BIN:-}" ]; then
  "$REDLAB_BIN" bench --device cuda:0 --map 'x * y' --dtypes f32 --sizes 2^10,2^20,2^24,2^28 \
    --json "$out/bench-dot.jsonl" 2>&1 | tail -n 6 | tee "$out/bench-dot.txt"
fi
if [ -s "$out/failed" ]; then
  echo "FAILED: $(tr '\n' ' ' <"$out/failed")"
  exit 1
fi
