#!/usr/bin/env bash
# Column words with the class fold written out as a tree (no counter stack) against the
# first column_words build and column_tiles: ncu's registers, occupancy and local memory
# for the tree build, then one alternated pass of `redlab run --repeat 30` per shape,
# operator and binary (TREE with every qualifying shape forced to column_words through
# RL_TMP_ALL_WORDS, a switch of that measurement build only; shipped builds choose by
# SegmentJob::for_problem's measured rule and have no such switch).
#   scripts/gpu_column_words_tree.sh TREE_BINARY STACK_BINARY OLD_BINARY OUT_DIR
set -u
tree=$1 stack=$2 old=$3 out=$4
mkdir -p "$out"
export RL_TMP_ALL_WORDS=1
for c in "sum 8192x8192" "max 8192x8192" "sum 1024x65536" "max 1024x65536"; do
  set -- $c
  echo "=== $1 $2" >> "$out/ncu.txt"
  ncu -k regex:column_words -c 1 --section LaunchStats --section Occupancy --section SpeedOfLight \
    --metrics l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum \
    "$tree" run --device cuda:0 --shape "$2" --axis 0 --op "$1" --dtype f32 >> "$out/ncu.txt" 2>&1
done
grep -E "===|Registers Per|Achieved Occupancy|DRAM Throughput|Duration|local_op" "$out/ncu.txt"
for spec in 8192x8192 65536x1024 1024x65536 1048576x256; do
  for od in "sum f32" "max f32" "sum i32" "max i32"; do
    set -- $od
    for which in tree stack old; do
      case $which in tree) bin=$tree ;; stack) bin=$stack ;; old) bin=$old ;; esac
      r=$("$bin" run --device cuda:0 --shape "$spec" --axis 0 --op "$1" --dtype "$2" --repeat 30 --json --explain 2>/dev/null | tail -1)
      python3 -c "import json,sys; j=json.loads(sys.argv[1]); print(json.dumps({'which':'$which','shape':'$spec','op':'$1','dtype':'$2','seconds':j['seconds'],'gbps':$(echo $spec | tr x '*')*4/j['seconds']/1e9,'verified':j['verified'],'strategy':j.get('strategy','').split(':')[0]}))" "$r" >> "$out/runs.jsonl"
    done
  done
done
python3 - "$out/runs.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| shape, axis 0 | op | tree GB/s | stack GB/s | column_tiles GB/s | tree / column_tiles | verified |")
print("|---|---|---:|---:|---:|---:|---|")
seen = []
for r in rows:
    k = (r["shape"], r["op"], r["dtype"])
    if k in seen:
        continue
    seen.append(k)
    g = {x["which"]: x for x in rows if (x["shape"], x["op"], x["dtype"]) == k}
    v = all(x["verified"] for x in g.values())
    print(f"| {k[0]} | {k[1]} {k[2]} | {g['tree']['gbps']:.0f} ({g['tree']['strategy']}) | {g['stack']['gbps']:.0f} | {g['old']['gbps']:.0f} | {g['tree']['gbps'] / g['old']['gbps']:.2f} | {v} |")
PY
