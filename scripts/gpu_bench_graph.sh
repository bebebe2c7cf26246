#!/usr/bin/env bash
# `redlab bench --shapes` on one CUDA GPU with its graph timing (--graph-calls), and
# compute-sanitizer memcheck over `redlab run`'s resident repeats and a statistic's
# graph. Usage: scripts/gpu_bench_graph.sh OUT BINARY
set -u
out=$1 new=$2
mkdir -p "$out"
"$new" bench --device cuda:0 --shapes 8192x8192:1,8192x8192:0,4194304x32:0,65536x1024:1 \
  --ops sum,max,argmax --dtypes f32,i32 --graph-calls 200 --json "$out/bench.jsonl" 2>&1 |
  tee "$out/bench.txt"
echo "bench exit ${PIPESTATUS[0]}" | tee -a "$out/summary.txt"
for args in "--op sum --dtype f32 --shape 9000x132 --axis 0 --repeat 3" \
  "--op argmax --dtype f32 --shape 1000x4097 --axis 1 --repeat 3" \
  "--stat var --dtype f32 --shape 300x9000 --axis 1 --graph-calls 4"; do
  # shellcheck disable=SC2086
  r=$(compute-sanitizer --tool memcheck "$new" run --device cuda:0 $args 2>&1)
  echo "memcheck $args: exit $? $(grep -o 'ERROR SUMMARY: [0-9]* errors' <<<"$r")" | tee -a "$out/summary.txt"
  echo "$r" >> "$out/sanitizers.txt"
done
