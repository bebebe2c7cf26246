#!/usr/bin/env bash
# stat_columns with the stage sized by the rows a lane holds (ST_COL_ROWS), before and
# after, on one CUDA GPU in one sitting: bytes against the CPU's over column shapes of
# one, two, four and eight rows a lane, speed beside torch and CuPy (var, std,
# log-sum-exp along axis 0; CUDA graph of 50 calls), sanitizers, and ncu over
# 1000×65536. A thin wrapper over gpu_stat_rounds_ab.sh with this change's shapes.
# Usage: scripts/gpu_columns_lane_rows.sh OLD_BINARY NEW_BINARY OUT_DIR [ROUNDS]
set -uo pipefail
SHAPES="1000x40:0 1024x17:0 1500x9:0 3000x40:0 4100x14:0 1000x4096:0 300x1000:0" \
COMPARE_SHAPES=1,5 \
ADD=1000x65536:0,3000x16384:0,300x65536:0,2000x32768:0 \
OPS=var,std,logsumexp GRAPH=50 NCU_SHAPE=1000x65536 \
SANITIZE_RUNS="var f32 1000x300 0
logsumexp f32 1000x300 0
var f16 3000x40 0
logsumexp f64 1500x40 0
std f64 3000x64 0
var f32 4100x64 0" \
  bash "$(dirname "$0")/gpu_stat_rounds_ab.sh" "$@"
