#!/usr/bin/env bash
# Axis jobs timed as one chain (every launch enqueued back to back, events between,
# one wait) against the binary before, which waited after each launch: the column and
# row shapes beside torch and CuPy, alternated in the same session; ncu's own kernel
# durations for two shapes; and the per-call cost of the stream path's axis calls
# (examples/axis_costs.rs) as shipped and with a trial header cache (not kept).
#   scripts/gpu_chain_timing.sh BIN_DIR OUT_DIR
# BIN_DIR holds new, old (redlab), axis_costs-new and axis_costs-old.
set -u
bins=$1 out=$2
mkdir -p "$out"
for pass in 1 2; do
  for which in new old; do
    echo "== axis_costs-$which pass $pass" | tee -a "$out/axis_costs.md"
    "$bins/axis_costs-$which" 2>&1 | tee -a "$out/axis_costs.md"
  done
done
extra=65536x1024:0,1024x65536:0,1048576x256:0
for which in new old new; do
  n=$(ls "$out"/"$which"-*.md 2>/dev/null | wc -l)
  python3 tools/axis_compare.py "$bins/$which" --ops sum,max --add "$extra" \
    --json "$out/$which-$((n + 1)).jsonl" > "$out/$which-$((n + 1)).md" 2> "$out/$which-$((n + 1)).log"
  echo "== $which $((n + 1))"; cat "$out/$which-$((n + 1)).md"
done
for spec in 8192x8192:0 8192x8192:1 65536x1024:0; do
  shape=${spec%:*} axis=${spec#*:}
  echo "== ncu $spec sum f32" >> "$out/ncu.txt"
  ncu --clock-control none --metrics gpu__time_duration.sum "$bins/new" run --device cuda:0 \
    --shape "$shape" --axis "$axis" --op sum --dtype f32 --repeat 3 --json 2>&1 |
    grep -E "^  [a-z_]+ \(|gpu__time_duration|\"seconds\"" | sed 's/\(.\{0,300\}\).*/\1/' >> "$out/ncu.txt"
done
cat "$out/ncu.txt"
