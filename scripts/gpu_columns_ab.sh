#!/usr/bin/env bash
# Statistics along columns on one CUDA GPU, two binaries in one sitting: bytes against
# the CPU's (NEW), speed beside torch and CuPy on the column shapes of
# tools/axis_compare.py (OLD and NEW alternating, ROUNDS times), compute-sanitizer on
# column runs that take both copy paths (NEW), and ncu's summary of var over 8192×8192
# columns (OLD and NEW). Few files, so that all of them come back from a remote machine.
# Usage: scripts/gpu_columns_ab.sh OLD_BINARY NEW_BINARY OUT_DIR [ROUNDS]
set -uo pipefail
old=${1:?old binary}; new=${2:?new binary}; out=${3:?output folder}; rounds=${4:-2}
mkdir -p "$out"
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
      --shapes "${COMPARE_SHAPES:-1,5}" --json "$out/compare-$which-$round.jsonl" 2>&1 | tail -n 6
  done
done | tee "$out/compare.md"
echo "== sanitizers (new)"
for tool in memcheck racecheck synccheck; do
  for run in "var f32 8200x64" "std f64 9000x40" "var f32 300x1000" "logsumexp f32 9000x40" "var i32 5000x300"; do
    set -- $run
    compute-sanitizer --tool $tool "$new" run --stat "$1" --dtype "$2" --shape "$3" --axis 0 \
      --device cuda:0 > "$out/sanitizer.log" 2>&1
    echo "$tool $run: $(tail -n 1 "$out/sanitizer.log")"
  done
done | tee "$out/sanitizers.txt"
rm -f "$out/sanitizer.log"
for which in old new; do
  bin=$old; [ "$which" = new ] && bin=$new
  echo "== $which"
  ncu --kernel-name stat_columns --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section WarpStateStats "$bin" run --stat var --dtype f32 --shape 8192x8192 --axis 0 \
    --device cuda:0 2>&1 | grep -E "Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued"
done | tee "$out/ncu.txt"
