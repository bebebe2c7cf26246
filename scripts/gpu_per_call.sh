#!/usr/bin/env bash
# Per-call time of the waiting segment path (`redlab run` along an axis) on a CUDA GPU,
# against the binary before, beside the same calls in a CUDA graph:
#   scripts/gpu_per_call.sh OUT BASE NEW
# BASE and NEW alternate twice over shapes from 64×8 to 2^24×8 (columns and rows); the
# graph share of each call is the steady state, so per call minus graph is the time a
# waited-for call spends outside its kernels (results/h200-narrow-columns/per-call:
# about 28 µs, most of it the chain's first cuLaunchKernel).
set -u
out=$1 base=$2 new=$3
mkdir -p "$out"
log() { echo "$*" | tee -a "$out/summary.txt"; }
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"
for pass in 1 2; do
  for entry in "base=$base" "new=$new"; do
    name=${entry%%=*} bin=${entry#*=}
    for shape_axis in 64x8:0 1024x64:1 1024x64:0 1048576x32:1 8192x8192:1 8192x8192:0 16777216x8:0; do
      shape=${shape_axis%%:*} axis=${shape_axis#*:}
      speed "$name" "$bin" --shape "$shape" --axis "$axis" --op sum --dtype f32
    done
    speed "$name" "$bin" --shape 8192x8192 --axis 0 --op max --dtype f32
  done
done
log "done"
