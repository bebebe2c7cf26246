#!/usr/bin/env bash
# nanmean along axis 0 of f32 matrices on one CUDA GPU, with and without NaN, OLD and NEW
# builds alternating and torch.nanmean / cupy.nanmean timed on the same data in the same
# job (CUDA events, median per call; GB/s of input read):
# (1) tools/axis_compare.py on the default columns shapes (clean data, graph too);
# (2) each .npy case (clean, 10% NaN, NaN in three columns) through `redlab run --input`
#     per call and in a CUDA graph of 50, then torch and CuPy on the same file.
# Usage: scripts/gpu_nanmean_nan_speed.sh OUT OLD NEW
set -u
out=$1 old=$2 new=$3
mkdir -p "$out/npy"
here=$(dirname "$0")
python3 "$here/../tools/axis_compare.py" "$new" --ops nanmean,var --shapes 1,5 \
  --add 1000x65536:0,2000x32768:0 --graph 50 --reps 30 --json "$out/compare.jsonl" \
  > "$out/compare.txt" 2>&1
for kind in clean dense few; do
  f="$out/npy/$kind.npy"
  python3 - "$f" "$kind" <<'PY'
import sys
import numpy as np
path, kind = sys.argv[1], sys.argv[2]
r = np.random.default_rng(11)
a = r.standard_normal((8192, 8192)).astype(np.float32)
if kind == "dense":
    a[r.random(a.shape) < 0.1] = np.nan
elif kind == "few":
    a[100, 3] = a[5000, 3000] = a[8000, 8000] = np.nan
np.save(path, a)
PY
  for pass in 1 2; do
    for b in old new; do
      bin=$old
      [ "$b" = new ] && bin=$new
      r=$("$bin" run --device cuda:0 --stat nanmean --input "$f" --axis 0 --json --repeat 20 \
        --graph-calls 50 2>&1)
      echo "$kind $pass $b $r" >> "$out/runs.txt"
      python3 -c 'import json,sys; d=json.loads(sys.argv[3]); print(sys.argv[1], sys.argv[2], "per call %.0f GB/s, graph %.0f GB/s, verified %s" % (d["gbps"], d["graph_gbps"], d["verified"]))' "$kind $pass" "$b" "$r" 2>/dev/null | tee -a "$out/summary.txt" || echo "$kind $pass $b FAILED: $(head -c 300 <<<"$r")" | tee -a "$out/summary.txt"
    done
  done
  python3 "$here/../tools/nanmean_reference.py" "$kind" "$f" 2>&1 | tee -a "$out/summary.txt"
done
rm -rf "$out/npy"
