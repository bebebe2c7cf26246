#!/usr/bin/env bash
# Kernel switches compared in one build on one CUDA GPU: each NAME=OPTIONS runs the same
# redlab binary with REDLAB_NVRTC_OPTIONS=OPTIONS (e.g. "--maxrregcount=48", or a -D of
# a kernel's switch; "" for the build as shipped), through tools/axis_compare.py
# (per call and in a CUDA graph of 50 calls, torch and CuPy beside), switches alternating
# each round. OPS and ADD choose the statistics and the shapes.
# Usage: scripts/gpu_nvrtc_switches.sh REDLAB_BINARY OUT_DIR ROUNDS NAME=OPTIONS...
set -uo pipefail
bin=${1:?redlab binary}; out=${2:?output folder}; rounds=${3:?rounds}; shift 3
mkdir -p "$out"
for round in $(seq "$rounds"); do
  for switch in "$@"; do
    name=${switch%%=*}; options=${switch#*=}
    echo "== round $round, $name ($options)"
    REDLAB_NVRTC_OPTIONS="$options" python3 tools/axis_compare.py "$bin" \
      --ops "${OPS:-var,logsumexp}" --shapes 1 \
      --add "${ADD:-1000x65536:0,300x65536:0,500x65536:0,1500x32768:0,3000x16384:0}" --graph 50 \
      --json "$out/compare-$name-$round.jsonl" 2>&1 | grep -E "^\| [0-9]|rror|not verified|failed"
  done
done | tee "$out/compare.md"
