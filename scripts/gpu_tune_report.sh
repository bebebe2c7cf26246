#!/usr/bin/env bash
# Tuning databases, a bench report with charts, and host-data placement on a GPU host.
# Usage: scripts/gpu_tune_report.sh REDLAB_BINARY OUT_DIR (tune|report)
#   tune:   tuning databases for CUDA and OpenCL → OUT_DIR/tuning/<backend>/<family>.json
#   report: bench rows + HTML report (with CPU rows) and `run --device auto` at three sizes
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
what=${3:?tune or report}
mkdir -p "$out"
# No user database from an earlier run may steer `auto` here.
export REDLAB_TUNING_DIR="$out/user-tuning"
case "$what" in
  tune)
    for backend in cuda opencl; do
      "$bin" tune --device "$backend:0" --budget 150 --out-dir "$out/tuning" > "$out/tune-$backend.log" 2>&1
      echo "tune $backend: exit $?"
    done
    ;;
  report)
    "$bin" bench --device cuda:0 --variants production,canonical,two-stage,many-per-thread,reduce6,blocked-slm-tree,khronos-vanilla,reduce2 \
      --ops sum --dtypes f32,i32 --sizes 2^12,2^16,2^20,2^24,2^27 --min-reps 10 --max-row-time 1 \
      --json "$out/bench.jsonl" --report "$out/report.html" --quiet > "$out/bench.log" 2>&1
    echo "bench: exit $?"
    for n in 2^16 2^24 2^28; do
      "$bin" run --op sum --dtype f32 --n "$n" --device auto --explain >> "$out/auto.log" 2>&1
      echo "run auto $n: exit $?"
    done
    ;;
esac
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
