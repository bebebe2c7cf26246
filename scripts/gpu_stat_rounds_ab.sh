#!/usr/bin/env bash
# A statistics kernel before and after a change, on one CUDA GPU, in one sitting: bytes
# against the CPU's (NEW, over SHAPES), speed beside torch and CuPy on COMPARE_SHAPES of
# tools/axis_compare.py (OLD and NEW alternating, ROUNDS times), compute-sanitizer on
# SANITIZE_RUNS ("stat dtype shape axis", NEW), and ncu's summary of NCU_STAT (var) over
# NCU_SHAPE along NCU_AXIS in NCU_KERNEL (OLD and NEW; NCU_KERNEL=none skips it). The
# defaults are the columns kernel's. GRAPH=N also times each row in a CUDA graph of N calls;
# ADD (ROWSxCOLS:AXIS, comma-separated) adds shapes to the comparison.
# Few files, so that all of them come back from a remote machine.
# Usage: scripts/gpu_stat_rounds_ab.sh OLD_BINARY NEW_BINARY OUT_DIR [ROUNDS]
set -uo pipefail
old=${1:?old binary}; new=${2:?new binary}; out=${3:?output folder}; rounds=${4:-2}
mkdir -p "$out"
# One sanitizer run per line: stat, dtype, shape, axis.
mapfile -t sanitize_runs <<< "${SANITIZE_RUNS:-"var f32 8200x64 0
std f64 9000x40 0
var f32 300x1000 0
logsumexp f32 9000x40 0
var i32 5000x300 0"}"
SHAPES=${SHAPES:-"5000x300:0 300x16384:0 9000x40:0 9000x37:0 4x5x9997:0,2"} \
  bash scripts/gpu_statistics.sh "$new" "$out/bits" 1 > /dev/null
echo "bits: $(grep -c same "$out/bits/check.txt") outputs byte-identical to the CPU's"
grep -v same "$out/bits/check.txt"
mv "$out/bits/check.txt" "$out/check.txt"; rm -rf "$out/bits"
for round in $(seq "$rounds"); do
  for which in old new; do
    bin=$old; [ "$which" = new ] && bin=$new
    echo "== round $round, $which"
    python3 tools/axis_compare.py "$bin" --ops "${OPS:-var,std,logsumexp}" \
      --shapes "${COMPARE_SHAPES:-1,5}" ${ADD:+--add "$ADD"} ${GRAPH:+--graph "$GRAPH"} --json "$out/compare-$which-$round.jsonl" 2>&1 | grep -E "^\| [0-9]"
  done
done | tee "$out/compare.md"
echo "== sanitizers (new)"
for tool in memcheck racecheck synccheck; do
  for run in "${sanitize_runs[@]}"; do
    set -- $run
    compute-sanitizer --tool $tool "$new" run --stat "$1" --dtype "$2" --shape "$3" --axis "$4" \
      --device cuda:0 > "$out/sanitizer.log" 2>&1
    echo "$tool $run: $(tail -n 1 "$out/sanitizer.log")"
  done
done | tee "$out/sanitizers.txt"
rm -f "$out/sanitizer.log"
[ "${NCU_KERNEL:-}" = none ] && exit 0
for which in old new; do
  bin=$old; [ "$which" = new ] && bin=$new
  echo "== $which"
  ncu --kernel-name "${NCU_KERNEL:-stat_columns}" --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats "$bin" run --stat "${NCU_STAT:-var}" --dtype f32 \
    --shape "${NCU_SHAPE:-8192x8192}" --axis "${NCU_AXIS:-0}" \
    --device cuda:0 2>&1 | grep -E "Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued"
done | tee "$out/ncu.txt"
