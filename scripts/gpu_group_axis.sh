#!/usr/bin/env bash
# Axis reductions on a group of two GPUs (cuda:0,1) beside one (cuda:0): every run
# checked against the host reference of each output (`verified` line), and the median
# time of each. Usage: [DEVICES="cuda:0 cuda:0,0"] scripts/gpu_group_axis.sh REDLAB_BINARY OUT_DIR
# (a group of one GPU twice checks the split on a one-GPU machine).
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
"$bin" devices > "$out/devices.txt" 2>&1
for spec in "8192x8192 1" "8192x8192 0" "1048576x32 1" "32x4194304 1" "4194304x32 0"; do
  set -- $spec
  for case in "sum f32" "argmax f32" "min i32" "sum f64"; do
    set -- $spec $case
    for dev in ${DEVICES:-cuda:0 cuda:0,1}; do
      echo "== $1 axis $2 $3 $4 $dev"
      "$bin" run --shape "$1" --axis "$2" --op "$3" --dtype "$4" --device "$dev" --repeat 20 2>&1 \
        | grep -E "verified|time|error" || echo "FAILED"
    done
  done
done 2>&1 | tee "$out/runs.txt"
