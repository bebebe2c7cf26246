#!/usr/bin/env bash
# Runs the OpenCL lab bench on the first NVIDIA OpenCL device of this machine.
# Usage: scripts/gpu_opencl_bench.sh OUT_DIR SIZES [VARIANTS] [DTYPES]
set -euo pipefail
out=$1; sizes=$2; variants=${3:-all}; dtypes=${4:-i8,u8,i16,u16,i32,u32,i64,u64,f16,bf16,f32,f64}
bin=${REDLAB:-./target/release/redlab}
mkdir -p "$out"
"$bin" devices --json > "$out/devices.json"
"$bin" devices > "$out/devices.txt"
device=$(python3 - "$out/devices.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for d in report["devices"]:
    if d["backend"] == "opencl" and "nvidia" in (d["name"] + str(d["details"])).lower():
        print(d["id"]); break
PY
)
if [ -z "$device" ]; then echo "no NVIDIA OpenCL device found" >&2; cat "$out/devices.txt" >&2; exit 1; fi
echo "NVIDIA OpenCL device: $device"
"$bin" bench --device "$device" --ops sum --dtypes "$dtypes" --sizes "$sizes" --variants "$variants" \
  --min-reps 20 --min-time 0.05 --max-row-time 2 --json "$out/bench.jsonl" 2>&1 | tee -a "$out/bench.txt"
