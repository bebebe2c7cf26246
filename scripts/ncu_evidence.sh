#!/usr/bin/env bash
# Counters behind the CUB comparison (docs/cuda.md, "Counters against CUB"): runs what
# `redlab run` executes (the tuned production choice) and cub::DeviceReduce under ncu at
# 2^24 and 2^28 and keeps ncu's raw CSV, one file per case.
# Usage: scripts/ncu_evidence.sh REDLAB_BINARY CUB_BINARY OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
cub=${2:?redlab-cub binary}
out=${3:?output folder}
mkdir -p "$out"
wanted="gpu__time_duration.sum
dram__throughput.avg.pct_of_peak_sustained_elapsed
dram__bytes_read.sum
sm__warps_active.avg.pct_of_peak_sustained_active
smsp__warps_eligible.avg.per_cycle_active
smsp__issue_active.avg.per_cycle_active"
# Launch shape and theoretical occupancy come from ncu's own sections (their launch__
# metrics are not in the queryable list).
sections="--section LaunchStats --section Occupancy"
ncu --query-metrics --chip gh100 > "$out/query.txt" 2>&1
metrics=""
for m in $wanted; do
  if grep -q "^${m%%.*} " "$out/query.txt"; then metrics="$metrics,$m"; else echo "not available: $m" >> "$out/skipped_metrics.txt"; fi
done
# Every stall reason this ncu knows, as warps stalled per issued instruction.
for base in $(grep -o '^smsp__average_warps_issue_stalled_[a-z_]*_per_issue_active' "$out/query.txt" | sort -u); do
  metrics="$metrics,$base.ratio"
done
metrics=${metrics#,}
echo "$metrics" > "$out/metrics.txt"
for size in 24 28; do
  n=$((1 << size))
  for case in "sum f32" "sum f64" "sum i32" "min f32" "max f64" "min i32"; do
    set -- $case
    op=$1 dtype=$2
    name="$op-$dtype-pow$size"
    # ours: one reduction after two warm-up calls of the same choice
    ncu --csv $sections --metrics "$metrics" -k regex:'^reduce$' --launch-skip 2 --launch-count 1 \
      "$bin" run --device cuda:0 --op "$op" --dtype "$dtype" --n "$n" --repeat 3 \
      > "$out/ours-$name.csv" 2> "$out/ours-$name.err"
    echo "ours $name: exit $?"
    # CUB: its two launches of the call after three warm-up calls
    ncu --csv $sections --metrics "$metrics" -k regex:'DeviceReduce' --launch-skip 6 --launch-count 2 \
      "$cub" "$op" "$dtype" "$n" 1 1 > "$out/cub-$name.csv" 2> "$out/cub-$name.err"
    echo "cub $name: exit $?"
  done
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
