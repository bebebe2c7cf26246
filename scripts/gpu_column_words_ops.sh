#!/usr/bin/env bash
# Column reductions (axis 0) of more operators and types, new binary against old, two
# alternated passes, GB/s of input from `redlab run --json` (kernel time), verified.
#   scripts/gpu_column_words_ops.sh NEW_BINARY OLD_BINARY OUT_DIR
new=$1 old=$2 out=$3; mkdir -p "$out"
for pass in 1 2; do
for spec in 8192x8192 65536x1024 1024x65536 1048576x256; do
  for od in "prod f32 ints" "sum i32 normal" "max i32 normal" "xor i32 normal" "min f32 normal" "sum u32 normal"; do
    set -- $od
    for which in new old; do
      bin=$new; [ "$which" = old ] && bin=$old
      r=$("$bin" run --device cuda:0 --shape "$spec" --axis 0 --op "$1" --dtype "$2" --dist "$3" --repeat 30 --json --explain 2>/dev/null | tail -1)
      python3 -c "import json,sys; j=json.loads(sys.argv[1]); print(json.dumps({'pass':$pass,'which':'$which','shape':'$spec','op':'$1','dtype':'$2','seconds':j['seconds'],'gbps':$(echo $spec | tr x '*')*4/j['seconds']/1e9,'verified':j['verified'],'strategy':j.get('strategy','').split(':')[0]}))" "$r" >> "$out/ops.jsonl"
    done
  done
done
done
python3 - "$out/ops.jsonl" <<'PY'
import json,sys,statistics
rows=[json.loads(l) for l in open(sys.argv[1])]
keys=sorted({(r['shape'],r['op'],r['dtype']) for r in rows})
print("| shape, axis 0 | op | dtype | new GB/s | old GB/s | new/old | verified |")
print("|---|---|---|---:|---:|---:|---|")
for k in keys:
    g=lambda w:[r['gbps'] for r in rows if (r['shape'],r['op'],r['dtype'])==k and r['which']==w]
    v=all(r['verified'] for r in rows if (r['shape'],r['op'],r['dtype'])==k)
    n,o=g('new'),g('old')
    print(f"| {k[0]} | {k[1]} | {k[2]} | {'/'.join(f'{x:.0f}' for x in n)} | {'/'.join(f'{x:.0f}' for x in o)} | {statistics.median(n)/statistics.median(o):.2f} | {v} |")
PY
