#!/usr/bin/env bash
# Statistics in the steady state on one CUDA GPU: var, std and logsumexp (and nanmax,
# nanmean) of f32 on the axis issue's six shapes, per call and in a CUDA graph of 50
# calls (`redlab run --stat S --graph-calls 50`, the graph's results checked against the
# timed calls'), then beside torch in a graph (tools/axis_compare.py --graph 50).
# Usage: scripts/gpu_stat_graph.sh OUT BINARY
set -u
out=$1 new=$2
mkdir -p "$out"
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"
log() { echo "$*" | tee -a "$out/summary.txt"; }
for shape in 8192x8192:1 8192x8192:0 1048576x32:1 65536x1024:1 32x4194304:1 4194304x32:0; do
  for stat in var std logsumexp nanmax nanmean; do
    speed graph "$new" --stat "$stat" --dtype f32 --shape "${shape%%:*}" --axis "${shape##*:}"
  done
done
python3 tools/axis_compare.py "$new" --ops var,std,logsumexp --graph 50 --reps 20 \
  --json "$out/compare.jsonl" 2>&1 | tee "$out/compare.md"
log "done"
