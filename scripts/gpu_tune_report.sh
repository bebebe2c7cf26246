#!/usr/bin/env bash
# Tuning databases, a bench report with charts, and host-data placement on a GPU host.
# Usage: scripts/gpu_tune_report.sh REDLAB_BINARY OUT_DIR MODE
#   tune:            tuning databases for CUDA and every OpenCL device → OUT_DIR/tuning/<backend>/<family>.json
#   tune-gpu:        CUDA and the NVIDIA OpenCL device only
#   tune-opencl-gpu: the NVIDIA OpenCL device only
#   report:          bench rows + HTML report (with CPU rows), `run --device auto` at three sizes, then staged
#   staged:          host data through pinned staging buffers, end to end, against the pinned bandwidth
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
what=${3:?tune or report}
mkdir -p "$out"
# No user database from an earlier run may steer `auto` here.
export REDLAB_TUNING_DIR="$out/user-tuning"
# Every OpenCL device here: the NVIDIA GPU and, where installed, PoCL on the host CPU.
"$bin" devices --json > "$out/devices.json"
opencl=$(python3 - "$out/devices.json" <<'PY'
import json, sys
print(" ".join(d["id"] for d in json.load(open(sys.argv[1]))["devices"] if d["backend"] == "opencl"))
PY
)
case "$what" in
  tune)
    for device in cuda:0 $opencl; do
      "$bin" tune --device "$device" --budget 150 --out-dir "$out/tuning" > "$out/tune-${device/:/}.log" 2>&1
      echo "tune $device: exit $?"
    done
    ;;
  tune-gpu)
    "$bin" tune --device cuda:0 --budget 150 --out-dir "$out/tuning" > "$out/tune-cuda0.log" 2>&1
    echo "tune cuda:0: exit $?"
    ;&
  tune-opencl-gpu)
    for device in $opencl; do
      case "$(grep -o "\"id\":\"$device\",\"backend\":\"opencl\",\"name\":\"[^\"]*" "$out/devices.json")" in
        *NVIDIA*) "$bin" tune --device "$device" --budget 150 --out-dir "$out/tuning" > "$out/tune-${device/:/}.log" 2>&1
                  echo "tune $device: exit $?" ;;
      esac
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
    ;&
  staged)
    # Host data through pinned staging buffers, end to end against the pinned bandwidth.
    for dtype in f32 i32 f64; do
      for n in 2^22 2^26 2^28; do
        "$bin" run --op sum --dtype "$dtype" --n "$n" --device cuda:0 --staged --repeat 3 --json >> "$out/staged.jsonl" 2>> "$out/staged.log"
        echo "staged $dtype $n: exit $?"
      done
    done
    ;;
esac
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
