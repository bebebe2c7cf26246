#!/usr/bin/env bash
# One sitting's survey of the axis kernels beside torch and CuPy on one CUDA GPU
# (tools/axis_compare.py, f32, per call and in a CUDA graph of 50 calls): the six default
# shapes for sum, argmax, var, log-sum-exp and nanmean, then var and log-sum-exp along
# rows of 300–5000 elements and columns of 300–3000 rows (2^25–2^28 elements each).
# Records: OUT/default.jsonl, OUT/rows.jsonl, OUT/columns.jsonl; tables in OUT/*.md.
# Usage: scripts/gpu_stat_survey.sh BINARY OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
mkdir -p "$out"
rows=131072x300:1,32768x700:1,65536x1000:1,65536x1500:1,131072x2000:1,104858x2500:1,87381x3000:1,87381x3072:1,32768x5000:1
columns=300x65536:0,1000x65536:0,2000x32768:0,3000x16384:0
python3 tools/axis_compare.py "$bin" --ops sum,argmax,var,logsumexp,nanmean --graph 50 \
  --json "$out/default.jsonl" > "$out/default.md" 2>&1
python3 tools/axis_compare.py "$bin" --ops var,logsumexp --shapes 0 --add "$rows" --graph 50 \
  --json "$out/rows.jsonl" > "$out/rows.md" 2>&1
python3 tools/axis_compare.py "$bin" --ops var,logsumexp --shapes 1 --add "$columns" --graph 50 \
  --json "$out/columns.jsonl" > "$out/columns.md" 2>&1
