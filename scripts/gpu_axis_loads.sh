#!/usr/bin/env bash
# Axis reductions whose lanes load everything before the first compare (argmin/argmax by
# order key; whole column lanes) on a CUDA GPU: argmin/argmax and sum/max on rows and
# columns that reach each kernel path, verified bit for bit against the host by
# `redlab run`, with tied values (--dist ints) and with NaNs of both signs from .npy
# inputs; compute-sanitizer over a few; then the common shapes beside torch and CuPy for
# the new binary and the one before the change, in the same session.
#   scripts/gpu_axis_loads.sh NEW_BINARY OLD_BINARY OUT_DIR
set -u
new=$1 old=$2 out=$3
mkdir -p "$out"
fails=0 runs=0
check() {
  runs=$((runs + 1))
  local r
  r=$("$new" run --device cuda:0 --json "$@" 2>&1)
  if ! grep -q '"verified":true' <<<"$r"; then
    fails=$((fails + 1))
    echo "FAIL $*: $(head -c 600 <<<"$r")" | tee -a "$out/check.txt"
  fi
}
for spec in 100x8192:1 20x30011:1 3001x1000:1 999x513:1 8193x100:0 1000x777:0 20011x33:0; do
  shape=${spec%:*} axis=${spec#*:}
  for op in argmin argmax; do
    for dt in f32 f64 i32; do
      for dist in normal ints; do
        check --shape "$shape" --axis "$axis" --op "$op" --dtype "$dt" --dist "$dist"
      done
    done
  done
  for op in sum max; do
    for dt in f32 f64; do
      check --shape "$shape" --axis "$axis" --op "$op" --dtype "$dt"
    done
  done
  check --shape "$shape" --axis "$axis" --op argmax --dtype f16 --dist ints
done
# Ties and NaNs of both signs: rows of whole tiles, wide short rows, columns.
python3 - "$out" <<'EOF'
import sys
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(11)
for name, shape, dtype in [("rows", (16, 100000), np.float32), ("short", (64, 1000), np.float64),
                           ("cols", (9000, 40), np.float32)]:
    a = rng.integers(-50, 51, size=shape).astype(dtype)
    flat = a.reshape(-1)
    idx = rng.choice(flat.size, size=max(4, flat.size // 20000), replace=False)
    flat[idx[: len(idx) // 2]] = np.nan
    flat[idx[len(idx) // 2:]] = -np.nan
    np.save(f"/tmp/nan-{name}.npy", a)
EOF
for name in rows short cols; do
  for axis in 0 1; do
    for op in argmin argmax max; do
      check --input "/tmp/nan-$name.npy" --axis "$axis" --op "$op"
    done
  done
done
echo "verification: $fails failures over $runs runs" | tee -a "$out/check.txt"
bash scripts/axis_sanitizers.sh "$new" "$out" "argmax f32 5x100000 1" "argmin f64 200x513 1" "sum f32 9000x777 0" "argmax f32 9000x777 0"
python3 tools/axis_compare.py "$old" --ops sum,max,argmax --json "$out/before.jsonl" > "$out/before.md" 2> "$out/before.log"
python3 tools/axis_compare.py "$new" --ops sum,max,argmax --json "$out/after.jsonl" > "$out/after.md" 2> "$out/after.log"
cat "$out/before.md" "$out/after.md"
