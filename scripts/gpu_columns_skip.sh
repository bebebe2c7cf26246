#!/usr/bin/env bash
# Short columns in stat_columns, several builds side by side on one CUDA GPU in one
# sitting: speed beside torch and CuPy (tools/axis_compare.py, var and log-sum-exp along
# axis 0, per call and in a CUDA graph of 50 calls, builds alternating each round), the
# last build's bytes against the CPU's over column shapes whose classes skip leaves, its
# sanitizers, and ncu's summary of each build over one problem (var of 300×65536 unless
# NCU_PROBLEM gives `run` arguments, e.g. "--stat logsumexp --shape 1500x32768 --axis 0").
# OPS replaces the statistics compared (var,logsumexp), ADD_SHAPES the column shapes
# timed and BIT_SHAPES those checked against the CPU; SANITIZE lists the sanitizers'
# problems ("STAT DTYPE SHAPE AXIS;…"), NCU_KERNEL the kernel ncu profiles (stat_columns).
# A BINARY may be a wrapper script
# that sets REDLAB_NVRTC_OPTIONS, to compare kernel switches in one build.
# Usage: scripts/gpu_columns_skip.sh OUT_DIR ROUNDS NAME=BINARY...
set -uo pipefail
out=${1:?output folder}; rounds=${2:?rounds}; shift 2
mkdir -p "$out"
builds=("$@")
last=${builds[-1]#*=}
for round in $(seq "$rounds"); do
  for build in "${builds[@]}"; do
    echo "== round $round, ${build%%=*}"
    python3 tools/axis_compare.py "${build#*=}" --ops "${OPS:-var,logsumexp}" --shapes 1 \
      --add "${ADD_SHAPES:-1000x65536:0,300x65536:0,500x65536:0,1500x32768:0,3000x16384:0}" --graph 50 \
      --json "$out/compare-${build%%=*}-$round.jsonl" 2>&1 | grep -E "^\| [0-9]"
  done
done | tee "$out/compare.md"
SHAPES="${BIT_SHAPES:-257x40:0 300x16384:0 1000x4096:0 1500x4096:0 3000x4096:0 8492x40:0}" \
  bash scripts/gpu_statistics.sh "$last" "$out/bits" 1 > /dev/null
echo "bits: $(grep -c same "$out/bits/check.txt") outputs byte-identical to the CPU's, $(grep -vc same "$out/bits/check.txt") not"
grep -v same "$out/bits/check.txt"
mv "$out/bits/check.txt" "$out/check.txt"; rm -rf "$out/bits"
echo "== sanitizers (${builds[-1]%%=*})"
for tool in memcheck racecheck synccheck; do
  IFS=';' read -ra runs <<< "${SANITIZE:-var f32 300x16384 0;var f32 1000x16384 0;logsumexp f64 257x4096 0;nanmean f32 8492x64 0}"
  for run in "${runs[@]}"; do
    set -- $run
    compute-sanitizer --tool $tool "$last" run --stat "$1" --dtype "$2" --shape "$3" --axis "$4" \
      --device cuda:0 > "$out/sanitizer.log" 2>&1
    echo "$tool $run: $(tail -n 1 "$out/sanitizer.log")"
  done
done | tee "$out/sanitizers.txt"
rm -f "$out/sanitizer.log"
for build in "${builds[@]}"; do
  echo "== ${build%%=*}"
  ncu --kernel-name "${NCU_KERNEL:-stat_columns}" --section SpeedOfLight --section Occupancy --section WarpStateStats \
    "${build#*=}" run ${NCU_PROBLEM:---stat var --shape 300x65536 --axis 0} --dtype f32 \
    --device cuda:0 2>&1 \
    | grep -E "Duration|DRAM Throughput|Achieved Occupancy|Warp Cycles Per Issued"
done | tee "$out/ncu.txt"
