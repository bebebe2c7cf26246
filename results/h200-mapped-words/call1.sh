#!/bin/bash
# Call 1: maps of 4-byte inputs read raw words along axes (MAP_BITS), the build before
# (base) against this one (new); Python statistics base/new against torch; the CUDA
# pytest suite; i8 as `signed char`; sanitizers over the new paths.
cd "$(dirname "$0")/../.."
for b in base new; do xz -dkf target/ab/redlab-$b.xz; done
for p in pkg pkg-base; do xz -dkf target/ab/$p/redlab/_native.abi3.so.xz; done
S="8192x8192:0 1024x65536:0 4096x16384:0 65536x1024:1 1048576x32:1"
for round in 1 2; do
for shape in $S; do
for m in "x * x|sum" "abs(x)|max"; do
for bin in base new; do
  timeout 60 target/ab/redlab-$bin run --device cuda:0 --map "${m%|*}" --combine "${m#*|}" --dtype f32 \
    --shape ${shape%:*} --axis ${shape#*:} --repeat 100 --json > $OUT/one.json 2>> $OUT/cli.txt
  echo "$bin $round $shape ${m} rc $?" >> $OUT/cli.txt
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); r['bin']=sys.argv[2]; r['round']=int(sys.argv[3]); r.pop('values',None); print(json.dumps(r))" $OUT/one.json $bin $round >> $OUT/cli.jsonl 2>> $OUT/cli.txt
done
done
done
done
rm -f $OUT/one.json
grep -c verified $OUT/cli.jsonl
OPS=mean:f32,norm2:f32,norm1:f32,sum:f32
PS=8192x8192:0,1024x65536:0,4194304x32:0,65536x1024:1,1048576x32:1,1024x64:1
for round in 1 2; do
for pkg in pkg-base pkg; do
  PYTHONPATH=$PWD/target/ab/$pkg timeout 120 python3 tools/python_axis_calls.py --reps 20 \
    --out $OUT/py-$pkg.jsonl --ops $OPS --shapes $PS >> $OUT/py.md 2>&1
  echo "python $pkg round $round rc $?" | tee -a $OUT/py.md
done
done
