#!/usr/bin/env bash
# nanmean over 8192² f32 columns with 10% NaN under ncu: both kernels of the path
# (stat_columns first, then the rerun of the tiles with a NaN mean) in the default shape,
# and the rerun on stat_kept (REDLAB_KEPT_COLUMNS=1,1) and double-buffered
# (REDLAB_KEPT_COLUMNS=4,1,2). One launch each, after a warm-up call, at base clocks with
# flushed caches; ncu's CSV per case, for launch shape, registers, DRAM share, occupancy,
# eligible warps and the stalls that dominate. Usage, on the GPU machine:
#   scripts/ncu_nanmean_columns.sh REDLAB_BINARY OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
mkdir -p "$out"
python3 - "$out/in.npy" <<'PY'
import sys
import numpy as np
r = np.random.default_rng(5)
a = r.standard_normal((8192, 8192)).astype(np.float32)
a[r.random(a.shape) < 0.1] = np.nan
np.save(sys.argv[1], a)
PY
metrics="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__warps_eligible.avg.per_cycle_active,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__inst_executed.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,lts__t_sectors_srcunit_tex_op_read.sum"
for shape in default 1,1 4,1,2; do
  env_shape=()
  [ "$shape" != default ] && env_shape=(env "REDLAB_KEPT_COLUMNS=$shape")
  "${env_shape[@]}" ncu --csv --section LaunchStats --section Occupancy --metrics "$metrics" \
    -k regex:'^stat_' --launch-skip 2 --launch-count 2 \
    "$bin" run --device cuda:0 --stat nanmean --input "$out/in.npy" --axis 0 --repeat 2 \
    > "$out/ncu-$shape.csv" 2> "$out/ncu-$shape.err"
  echo "$shape: exit $?, $(grep -c '' "$out/ncu-$shape.csv") lines"
done
rm -f "$out/in.npy"
