#!/usr/bin/env bash
# The dot product over two torch tensors read in place (a table of their addresses) on
# one CUDA GPU, with the table copied into registers (the default) and left in global
# memory (REDLAB_ADDRESS_TABLE=global), beside torch.dot:
# (1) ncu, one launch of each at 2^28 f32 after warm-up calls: time, DRAM share,
#     registers, instructions, load requests and sectors, eligible warps, stalls;
# (2) tools/python_overhead.py's pipelined and waiting times of the dot at 2^20, 2^24
#     and 2^28 beside torch.dot, both settings alternating, two rounds;
# (3) the package's CUDA tests of tensors read in place, and memcheck over them.
# Usage, on the GPU machine: scripts/gpu_dot_table.sh WHEEL OUT
set -uo pipefail
wheel=${1:?wheel} out=${2:?output folder}
mkdir -p "$out"
rm -rf /tmp/dt-py && python3 -m pip install -q --no-deps --target /tmp/dt-py "$wheel" 2>&1 | tail -n 2
export PYTHONPATH=/tmp/dt-py
# Runs "$@" with the table in registers (registers) or in global memory (global).
with_table() {
  local table=$1
  shift
  if [ "$table" = global ]; then REDLAB_ADDRESS_TABLE=global "$@"; else "$@"; fi
}
metrics="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__warps_eligible.avg.per_cycle_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__inst_executed.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
for table in registers global; do
  with_table "$table" ncu --csv --section LaunchStats --section Occupancy --metrics "$metrics" \
    -k regex:'^reduce' --launch-skip 2 --launch-count 1 python3 "$(dirname "$0")/dot_two_tensors.py" \
    > "$out/ncu-$table.csv" 2> "$out/ncu-$table.err"
done
ncu --csv --section LaunchStats --section Occupancy --metrics "$metrics" -k regex:'dot' \
  --launch-count 1 python3 "$(dirname "$0")/dot_two_tensors.py" > "$out/ncu-torch.csv" 2> "$out/ncu-torch.err"
for f in "$out"/ncu-*.csv; do
  echo "== $f"
  grep -E '"(Registers Per Thread|Grid Size|Block Size|Achieved Occupancy)"|gpu__time_duration|dram__throughput|dram__bytes_read|warps_eligible|long_scoreboard|lg_throttle|inst_executed|t_sectors|t_requests' "$f" \
    | awk -F'","' '{print $(NF-2)" | "$NF}' | head -20
done > "$out/ncu-summary.txt"
for round in 1 2; do
  for table in registers global; do
    rm -f /tmp/dt-o.jsonl
    with_table "$table" python3 tools/python_overhead.py --no-cpu --ops dot:f32 --sizes 20,24,28 \
      --out /tmp/dt-o.jsonl > /dev/null 2>> "$out/overhead.err"
    sed "s/^{/{\"table\": \"$table\", \"round\": $round, /" /tmp/dt-o.jsonl >> "$out/overhead.jsonl"
  done
done
python3 -m pytest -q python/tests/test_cuda.py -k "tensors or dot" > "$out/pytest.txt" 2>&1
compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -x \
  python/tests/test_cuda.py -k "several_tensors or dot_of_two" 2>&1 | tail -n 4 > "$out/memcheck.txt"
