#!/usr/bin/env bash
# Custom combines along axes and over segments on one CUDA GPU: every output verified
# against the element-by-element reference over shapes that reach each segment kernel;
# per call and in a CUDA graph, `a + b` from -0.0 (the canonical float sum written as an
# expression) beside the built-in sum, and `max(a, b)` beside the built-in max, in the
# same run; compute-sanitizer over the kernels a custom combine takes; then, given a
# wheel, the Python package's CUDA tests of reductions of several tensors.
# Usage, on the GPU machine: scripts/gpu_custom_axes.sh REDLAB OUT [WHEEL]
set -uo pipefail
bin=${1:?redlab binary}; out=${2:?output folder}; wheel=${3:-}
mkdir -p "$out"
rm -f "$out/failed"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1
# Rows of 1024 load as words where their elements are 2 or 4 bytes (short rows of words),
# as do rows of 32 (word_rows) and aligned columns of 4-byte accumulators (column_words).
shapes=("--shape 300x1000 --axis 1" "--shape 300x1024 --axis 1" "--shape 4096x32 --axis 1"
  "--shape 8192x8193 --axis 1" "--shape 2x1000003 --axis 1" "--shape 8192x8192 --axis 0"
  "--shape 1000x4100 --axis 0" "--n 10000019 --segment-size 777")
combines=("x|a ^ (b * 3)|0|i32" "x * 2|a + b * 1.5|-0.0|f32" "x|a + b * 1.5|-0.0|f16"
  "abs(x)|max(a, b)|-inf|f64")
for c in "${combines[@]}"; do
  IFS='|' read -r map combine identity dtype <<<"$c"
  for s in "${shapes[@]}"; do
    # shellcheck disable=SC2086 # the shape's words
    "$bin" run --device cuda:0 --map "$map" --combine "$combine" --identity="$identity" \
      --dtype "$dtype" $s --json >>"$out/verify.jsonl" 2>>"$out/verify.err" \
      || echo "verify $c $s" >>"$out/failed"
  done
done
python3 - "$out/verify.jsonl" <<'PY' | tee "$out/verify.md"
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["reduction"], r["shape"], r["outputs"], "verified" if r["verified"] else "NOT VERIFIED",
          r["strategy"].split(";")[1].split(":")[0].strip() if ";" in r["strategy"] else r["strategy"])
PY
# Per call and in a graph: the same shapes, custom against built-in, alternating.
for round in 1 2; do
  for s in "--shape 8192x8192 --axis 1" "--shape 8192x8192 --axis 0" "--shape 65536x1024 --axis 1" \
    "--shape 4096x16385 --axis 1" "--shape 1024x65536 --axis 1"; do
    for pair in "sum|" "a + b|-0.0" "max|" "max(a, b)|-inf"; do
      IFS='|' read -r combine identity <<<"$pair"
      extra=(); [ -n "$identity" ] && extra=(--identity="$identity")
      # shellcheck disable=SC2086
      "$bin" run --device cuda:0 --map x --combine "$combine" "${extra[@]}" --dtype f32 $s \
        --repeat 10 --graph-calls 50 --json >>"$out/timing.jsonl" 2>>"$out/timing.err" \
        || echo "timing $pair $s" >>"$out/failed"
    done
  done
done
python3 - "$out/timing.jsonl" <<'PY' | tee "$out/timing.md"
import json, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    # 8192x8192 runs along both axes; the records say so only by their strategy.
    rows[(tuple(r["shape"]), r["strategy"].split(";")[-1].split(":")[0], r["reduction"])].append(r)
print("| shape | reduction | verified | per call GB/s | graph GB/s |")
print("|---|---|---|---|---|")
for (shape, _, red), rs in rows.items():
    pc = "–".join(f"{r['gbps']:.0f}" for r in rs)
    gr = "–".join(f"{r.get('graph_gbps', 0):.0f}" for r in rs)
    print(f"| {'x'.join(map(str, shape))} {rs[0]['strategy'].split(';')[-1].split(':')[0].strip()} | {red} | {all(r['verified'] for r in rs)} | {pc} | {gr} |")
PY
# An i64 accumulator (element loads) and an f32 one (word loads where they apply).
for c in "x|a ^ (b * 3)|0|i32" "x * 2|a + b * 1.5|-0.0|f32"; do
  IFS='|' read -r map combine identity dtype <<<"$c"
  for s in "--shape 300x1000 --axis 1" "--shape 300x1024 --axis 1" "--shape 4096x32 --axis 1" \
    "--shape 1024x8195 --axis 1" "--shape 3x20011 --axis 1" "--shape 70x4000 --axis 0"; do
    for tool in memcheck racecheck synccheck; do
      echo "== compute-sanitizer --tool $tool: $combine $dtype $s"
      # shellcheck disable=SC2086
      compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin" run --device cuda:0 --map "$map" \
        --combine "$combine" --identity="$identity" --dtype "$dtype" $s 2>&1 | tail -3 \
        || echo "$tool $c $s" >>"$out/failed"
    done
  done
done 2>&1 | tee "$out/sanitizer.txt"
if [ -n "$wheel" ]; then
  python3 -m pip install -q --no-deps --force-reinstall "$wheel" 2>&1 | tail -n 3
  python3 -m pytest -q python/tests/test_cuda.py -k "several_tensors or expressions" 2>&1 \
    | tee "$out/pytest-cuda.txt" | tail -n 8
  [ "${PIPESTATUS[0]}" -eq 0 ] || echo pytest >>"$out/failed"
fi
