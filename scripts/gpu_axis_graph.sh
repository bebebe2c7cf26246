#!/usr/bin/env bash
# Axis reductions in the steady state on a CUDA GPU: `redlab run --graph-calls` checked
# on shapes that reach every segment strategy (its replayed results must equal the
# timed calls' and the host's), compute-sanitizer over the graph path once, then the
# issue's shapes and the column shapes beside torch, per call and in a CUDA graph: twice,
# or once each for BINARY and OLD_BINARY (the binary before a change), in that order.
#   scripts/gpu_axis_graph.sh BINARY OUT_DIR [OLD_BINARY]
set -u
bin=$1 out=$2 old=${3:-$1}
mkdir -p "$out"
fails=0 runs=0
for spec in 8192x8192:0 8192x8192:1 9000x776:0 1000x4100:0 65536x1024:0 1048576x32:1 \
            65536x1024:1 32x4194304:1 3x40x132:1 20011x97:0 1000003x3:1; do
  shape=${spec%:*} axis=${spec#*:}
  for case in "sum f32" "max f32" "argmax f32" "sum i32" "xor u32" "sum f64" "min f16"; do
    set -- $case
    runs=$((runs + 1))
    r=$("$bin" run --device cuda:0 --json --op "$1" --dtype "$2" --shape "$shape" --axis "$axis" \
        --graph-calls 20 2>&1)
    if ! grep -q '"verified":true' <<<"$r" || ! grep -q '"graph_seconds"' <<<"$r"; then
      fails=$((fails + 1))
      echo "FAIL $case $spec: $(head -c 400 <<<"$r")" | tee -a "$out/check.txt"
    fi
  done
done
echo "graph verification: $fails failures over $runs runs" | tee -a "$out/check.txt"
for tool in memcheck racecheck synccheck; do
  echo "== $tool sum f32 9000x776 0 --graph-calls 3" >> "$out/sanitizers.txt"
  compute-sanitizer --tool "$tool" "$bin" run --device cuda:0 --shape 9000x776 --axis 0 \
    --op sum --dtype f32 --graph-calls 3 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|verified|graph" >> "$out/sanitizers.txt"
done
cat "$out/sanitizers.txt"
extra=65536x1024:0,1024x65536:0,1048576x256:0
for pass in 1 2; do
  which=$bin; [ "$pass" = 2 ] && which=$old
  python3 tools/axis_compare.py "$which" --ops sum,max,argmax --add "$extra" --graph 100 \
    --json "$out/compare-$pass.jsonl" > "$out/compare-$pass.md" 2> "$out/compare-$pass.log"
  echo "== pass $pass: $which"; cat "$out/compare-$pass.md"
done
