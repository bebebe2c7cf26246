#!/usr/bin/env bash
# Statistics on one CUDA GPU (statistics.cl): (1) the GPU's .npy output against the
# CPU's, byte for byte, for var, std, logsumexp, nanmin, nanmax and nanmean over rows, columns,
# split axes and whole arrays of f32, f64 and f16; (2) speed beside torch and CuPy
# (tools/axis_compare.py) for var, std, logsumexp and argmax; (3) compute-sanitizer.
# SHAPES (section 1) and COMPARE_SHAPES (section 2, indices into axis_compare's list)
# narrow the run.
# Usage: scripts/gpu_statistics.sh REDLAB_BINARY OUT_DIR [SECTIONS, e.g. "1 3"]
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
sections=${3:-"1 2 3"}
want() { [[ " $sections " == *" $1 "* ]]; }
mkdir -p "$out/npy"
if want 1; then
echo "== (1) GPU bytes against the CPU's"
for dtype in f32 f64 f16; do
  for shape in ${SHAPES:-"300x30011:1" "5000x300:0" "4x5x9997:0,2" "1000003:0" "20000x30:1" "33x6000:0" "4000x1000:1" "30000x100:1" "500x1024:1"}; do
    dims=${shape%%:*}; axis=${shape##*:}
    for stat in var std logsumexp nanmin nanmax nanmean; do
      for dev in cpu cuda:0; do
        f="$out/npy/$stat-$dtype-$dims-$dev.npy"
        "$bin" run --stat "$stat" --ddof 1 --dtype "$dtype" --shape "$dims" --axis "$axis" \
          --device "$dev" --out "$f" --force --json > /dev/null 2>> "$out/check.err" \
          || echo "FAILED $stat $dtype $dims $dev"
      done
      a="$out/npy/$stat-$dtype-$dims-cpu.npy"; b="$out/npy/$stat-$dtype-$dims-cuda:0.npy"
      if cmp -s "$a" "$b"; then r=same; else r="differ ($(cmp -l "$a" "$b" 2>/dev/null | wc -l) bytes)"; fi
      echo "$stat $dtype $dims axis $axis: $r" | tee -a "$out/check.txt"
    done
  done
done
rm -rf "$out/npy"
fi
if want 2; then
echo "== (2) beside torch and CuPy"
python3 tools/axis_compare.py "$bin" --ops var,std,logsumexp,argmax --json "$out/compare.jsonl" \
  ${COMPARE_SHAPES:+--shapes "$COMPARE_SHAPES"} \
  2>&1 | tee "$out/compare.md"
fi
if want 3; then
echo "== (3) sanitizers"
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool "$bin" run --stat var --dtype f32 --shape 100x9000 --axis 1 \
    --device cuda:0 > "$out/$tool-var.txt" 2>&1
  compute-sanitizer --tool $tool "$bin" run --stat logsumexp --dtype f64 --shape 9000x100 --axis 0 \
    --device cuda:0 > "$out/$tool-lse.txt" 2>&1
  compute-sanitizer --tool $tool "$bin" run --stat nanmax --dtype f32 --shape 3000x30 --axis 1 \
    --device cuda:0 > "$out/$tool-short.txt" 2>&1
  compute-sanitizer --tool $tool "$bin" run --stat nanmean --dtype f32 --shape 40x9000 --axis 1 \
    --device cuda:0 > "$out/$tool-nanmean.txt" 2>&1
  compute-sanitizer --tool $tool "$bin" run --stat var --dtype f64 --shape 3000x1000 --axis 1 \
    --device cuda:0 > "$out/$tool-warp-rows.txt" 2>&1
  tail -n 1 "$out/$tool-var.txt" "$out/$tool-lse.txt" "$out/$tool-short.txt" "$out/$tool-nanmean.txt" \
    "$out/$tool-warp-rows.txt"
done
fi
