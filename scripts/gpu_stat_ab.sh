#!/usr/bin/env bash
# Statistics kernels before and after a change, on one CUDA GPU, in one sitting: for
# each binary NAME=PATH, (1) the GPU's .npy output against the CPU's, byte for byte
# (scripts/gpu_statistics.sh section 1 over SHAPES), (2) speed beside torch and CuPy
# (tools/axis_compare.py over COMPARE_SHAPES and COMPARE_OPS), then (3) compute-sanitizer
# memcheck and racecheck and an ncu launch summary of the last binary.
# Usage: scripts/gpu_stat_ab.sh OUT_DIR NAME=BINARY [NAME=BINARY ...]
set -uo pipefail
out=${1:?output folder}; shift
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.txt"
last=
for pair in "$@"; do
  name=${pair%%=*}; bin=${pair#*=}; last=$bin
  mkdir -p "$out/$name"
  echo "== $name: bytes against the CPU's"
  SHAPES=${SHAPES:-"300x30011:1 4x5x9997:0,2 1000003:0 64x100000:1"} \
    bash scripts/gpu_statistics.sh "$bin" "$out/$name" 1 > "$out/$name/check.log" 2>&1
  grep -c ": same" "$out/$name/check.txt" | sed 's/^/same: /'
  grep -v ": same" "$out/$name/check.txt" || true
  echo "== $name: beside torch and CuPy"
  python3 tools/axis_compare.py "$bin" --ops "${COMPARE_OPS:-var,std,logsumexp}" \
    --shapes "${COMPARE_SHAPES:-0,4}" --json "$out/$name/compare.jsonl" 2>&1 | tee "$out/$name/compare.md"
done
echo "== sanitizers and ncu on $last"
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool "$last" run --stat var --ddof 1 --dtype f32 --shape 64x30011 \
    --axis 1 --device cuda:0 2>&1 | tail -3 | tee -a "$out/sanitizers.txt"
done
ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
  --section WarpStateStats -k regex:stat_ -c 1 "$last" run --stat var --ddof 1 --dtype f32 \
  --shape 8192x8192 --axis 1 --device cuda:0 > "$out/ncu-var-8192.txt" 2>&1
grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued" "$out/ncu-var-8192.txt"
