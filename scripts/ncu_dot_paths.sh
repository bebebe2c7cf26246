#!/usr/bin/env bash
# The f32 dot product (map x*y, sum) at 2^28 under ncu, by the two ways it reaches the
# GPU: the CLI's packed inputs (`redlab run --map 'x * y'`, both inputs in one buffer)
# and the Python package on two torch tensors read in place through a table of their
# addresses. Keeps ncu's CSV per path, to compare launch shape, registers, DRAM share
# and stalls. Usage, on the GPU machine:
#   scripts/ncu_dot_paths.sh REDLAB_BINARY WHEEL OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
wheel=${2:?wheel}
out=${3:?output folder}
mkdir -p "$out"
rm -rf /tmp/ncu-py && python3 -m pip install -q --no-deps --target /tmp/ncu-py "$wheel" 2>&1 | tail -n 2
metrics="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__warps_eligible.avg.per_cycle_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__inst_executed.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
sections="--section LaunchStats --section Occupancy"
n=$((1 << 28))
ncu --csv $sections --metrics "$metrics" -k regex:'^reduce' --launch-skip 2 --launch-count 1 \
  "$bin" run --device cuda:0 --map 'x * y' --dtype f32 --n "$n" --repeat 3 \
  > "$out/cli-packed.csv" 2> "$out/cli-packed.err"
PYTHONPATH=/tmp/ncu-py ncu --csv $sections --metrics "$metrics" -k regex:'^reduce' --launch-skip 2 \
  --launch-count 1 python3 "$(dirname "$0")/dot_two_tensors.py" > "$out/python-tensors.csv" 2> "$out/python-tensors.err"
PYTHONPATH=/tmp/ncu-py ncu --csv $sections --metrics "$metrics" -k regex:'dot' --launch-skip 0 \
  --launch-count 1 python3 "$(dirname "$0")/dot_two_tensors.py" > "$out/torch-dot.csv" 2> "$out/torch-dot.err"
for f in "$out"/*.csv; do
  echo "== $f"
  grep -E '"(Duration|DRAM Throughput|Registers Per Thread|Grid Size|Block Size|Achieved Occupancy)"|gpu__time_duration|dram__throughput|dram__bytes_read|warps_eligible|long_scoreboard|lg_throttle|inst_executed|t_sectors|t_requests|"Function Name"' "$f" \
    | awk -F'","' '{print $5" | "$(NF-2)" | "$NF}' | head -40
done
