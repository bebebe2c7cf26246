#!/usr/bin/env bash
# User-defined reductions along axes on one CUDA GPU: maps of one and several inputs run in
# the segment kernels, each output checked against the CPU, the kernels under
# compute-sanitizer, their speed beside torch and CuPy (per call and in a CUDA graph), and
# the Python package's CUDA tests.
# Usage, on the GPU machine: scripts/gpu_user_maps.sh REDLAB_BINARY WHEEL OUT
#   REDLAB_BINARY  a release build of the commit under test
#   WHEEL          the Python package's wheel built from it (maturin build --release)
#   OUT            folder for the logs and records
set -uo pipefail
bin="$1" wheel="$2" out="$3"
mkdir -p "$out"
rm -f "$out/failed"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
# STEPS picks what runs (default all): runs, pytest, compare, sanitizers.
steps="${STEPS:-runs pytest compare sanitizers}"
want() { [[ " $steps " == *" $1 "* ]]; }
# Every `redlab run` verifies each output against the CPU backend (floats bit for bit).
want runs && {
  for spec in '8192x8192|1|x * y|sum|f32' '8192x8192|0|x * y|sum|f32' \
    '1048576x32|1|x * y|sum|f32' '4194304x32|0|x * y|sum|f32' '32x4194304|1|x * y|sum|f32' \
    '4099x1031|1|abs(x - y)|max|f64' '4099x1031|0|x > y ? 1 : 0|sum|i32' \
    '65536x1024|1|x * y + z|argmin|f32' '1031x4099|0|x * y|sum|f16' '777x33|1|x * y|prod|f64' \
    '5x0|1|x * y|sum|f32'; do
    IFS='|' read -r shape axis map combine dtype <<<"$spec"
    echo "== $shape axis $axis map '$map' $combine $dtype"
    "$bin" run --device cuda:0 --shape "$shape" --axis "$axis" --map "$map" --combine "$combine" \
      --dtype "$dtype" --explain || echo "$spec" >>"$out/failed"
  done
  echo "== segments of 100, x * y f32 sum, graph of 20"
  "$bin" run --device cuda:0 --n 1000003 --segment-size 100 --map 'x * y' --dtype f32 \
    --graph-calls 20 || echo segments >>"$out/failed"
  echo "== mixed types from files: abs(x - y) over f64 x f16, max along axis 0, and x * y f32 x f64 along axis 1"
  python3 - "$out" <<'EOF'
import sys, numpy as np
rng = np.random.default_rng(7)
np.save(f"{sys.argv[1]}/a64.npy", rng.standard_normal((3001, 257)))
np.save(f"{sys.argv[1]}/b16.npy", rng.standard_normal((3001, 257)).astype(np.float16))
np.save(f"{sys.argv[1]}/c32.npy", rng.standard_normal((3001, 257)).astype(np.float32))
EOF
  "$bin" run --device cuda:0 --map 'abs(x - y)' --combine max --input "$out/a64.npy" \
    --input "$out/b16.npy" --axis 0 --explain || echo mixed-max >>"$out/failed"
  "$bin" run --device cuda:0 --map 'x * y' --input "$out/c32.npy" --input "$out/a64.npy" \
    --axis 1 --explain || echo mixed-sum >>"$out/failed"
} 2>&1 | tee "$out/runs.log"
rm -f "$out"/*.npy
if want pytest; then
  python3 -m pip install -q --no-deps --force-reinstall "$wheel" 2>&1 | tail -n 3
  python3 -m pytest -q --durations=8 python/tests/test_cuda.py 2>&1 | tee "$out/pytest-cuda.txt" | tail -n 15
  [ "${PIPESTATUS[0]}" -eq 0 ] || echo pytest >>"$out/failed"
fi
# Speed beside torch (linalg.vecdot) and a CuPy ReductionKernel, per call and in a graph.
want compare && python3 tools/axis_compare.py "$bin" --ops dot,sum --reps 20 --graph 20 \
  --json "$out/axis-dot.jsonl" 2>&1 | tee "$out/axis-dot.md"
# The mapped segment kernels under the sanitizers: several inputs packed, gathered axes,
# and the column, row and short-row kernels.
want sanitizers || tool_list=""
# Each tool over every spec: memcheck; racecheck and synccheck over the first two.
for tool in ${tool_list-memcheck racecheck synccheck}; do
  specs=('1031x257|1|x * y + z|sum' '257x1031|0|x * y|max' '4099x33|1|abs(x - y)|argmax'
    '33x4099|0|x * y|sum')
  [ "$tool" = memcheck ] || specs=("${specs[@]:0:2}")
  for spec in "${specs[@]}"; do
    IFS='|' read -r shape axis map combine <<<"$spec"
    echo "== $tool $shape axis $axis '$map' $combine"
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin" run --device cuda:0 \
      --shape "$shape" --axis "$axis" --map "$map" --combine "$combine" --dtype f32 \
      | tail -n 3 || echo "$tool $spec" >>"$out/failed"
  done
done 2>&1 | tee "$out/sanitizers.txt" | grep -E "ERROR SUMMARY|verified|error" | sort | uniq -c
if [ -s "$out/failed" ]; then
  echo "FAILED: $(tr '\n' ' ' <"$out/failed")"
  exit 1
fi
