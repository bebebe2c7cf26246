#!/usr/bin/env bash
# Hardware counters for the analyzer's cross-check (docs/analyzer.md): runs the CUDA
# builds of reduce0/1/2 and the production kernel under ncu, one bench row each, and
# keeps ncu's raw CSV. Usage: scripts/ncu_crosscheck.sh REDLAB_BINARY OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
mkdir -p "$out"
wanted="l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
smsp__inst_executed_op_shared_ld.sum
smsp__inst_executed_op_shared_st.sum
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
smsp__sass_branch_targets.sum
smsp__sass_branch_targets_threads_divergent.sum
smsp__sass_branch_targets_threads_uniform.sum
smsp__thread_inst_executed_per_inst_executed.ratio
smsp__inst_executed.sum
smsp__inst_executed_op_barrier.sum
smsp__sass_inst_executed_op_shared_ld.sum
smsp__sass_inst_executed_op_shared_st.sum
smsp__sass_inst_executed_op_global_ld.sum
smsp__sass_inst_executed_op_global_st.sum"
# Keep only the metrics this ncu knows (an unknown name would abort the run).
ncu --query-metrics --chip gh100 > "$out/query.txt" 2>&1
metrics=""
for m in $wanted; do
  base=${m%.*}
  if grep -q "^$base " "$out/query.txt"; then metrics="$metrics,$m"; else echo "not available: $m" >> "$out/skipped_metrics.txt"; fi
done
metrics=${metrics#,}
echo "$metrics" > "$out/metrics.txt"
run() { # name, launches, bench arguments...
  local name=$1 launches=$2; shift 2
  ncu --clock-control none --csv --metrics "$metrics" -k regex:'^reduce$' --launch-count "$launches" \
    "$bin" bench --device cuda:0 --ops sum --min-reps 1 --max-row-time 0.1 --cache warm "$@" \
    > "$out/$name.csv" 2> "$out/$name.err"
  echo "$name: exit $?"
}
for v in reduce0 reduce1 reduce2; do
  run "$v-wg256-n512" 2 --variants "$v" --dtypes f32 --sizes 512 --param WG=256
  run "$v-wg64-n128" 2 --variants "$v" --dtypes f32 --sizes 128 --param WG=64
done
run production-f32-n65536 1 --variants production --dtypes f32 --sizes 65536
run production-i32-n65536 1 --variants production --dtypes i32 --sizes 65536
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
