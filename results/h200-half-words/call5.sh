#!/bin/bash
# Call 5: words of 4 elements hold 2-byte elements too. Plain f16/bf16/i16 along axes per
# call, the build before (base, commit 66dedd84's kernels) against this one (new), two
# rounds; Python f16/bf16 statistics base/new against torch; sanitizers; pytest.
cd "$(dirname "$0")/../.."
for b in base new; do xz -dkf target/ab/redlab-$b.xz; done
for p in pkg pkg-base; do xz -dkf target/ab/$p/redlab/_native.abi3.so.xz; done
S=8192x8192:0,1024x65536:0,65536x1024:1,1048576x32:1,8192x8192:1
for round in 1 2; do
for bin in base new; do
  timeout 120 target/ab/redlab-$bin bench --device cuda:0 --shapes $S --ops sum,max --dtypes f16,i16 \
    --min-reps 10 --min-time 0.02 --quiet --json $OUT/halves-$bin.jsonl >> $OUT/halves.txt 2>&1
  echo "halves $bin round $round rc $?" | tee -a $OUT/halves.txt
done
done
grep -c '"status":"ok"' $OUT/halves-*.jsonl
OPS=mean:f16,norm2:bf16,sum:f16
PS=8192x8192:0,1024x65536:0,65536x1024:1,1048576x32:1,4194304x32:0
for round in 1 2; do
for pkg in pkg-base pkg; do
  PYTHONPATH=$PWD/target/ab/$pkg timeout 100 python3 tools/python_axis_calls.py --reps 20 \
    --out $OUT/py-$pkg.jsonl --ops $OPS --shapes $PS >> $OUT/py.md 2>&1
  echo "python $pkg round $round rc $?" | tee -a $OUT/py.md
done
done
export PYTHONPATH=$PWD/target/ab/pkg
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool python3 tools/python_sanitize_stats.py > $OUT/one.txt 2>&1
  echo "$tool stats rc $? $(grep -o 'agree: [A-Za-z]*' $OUT/one.txt) $(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards displayed ([0-9]* errors' $OUT/one.txt)" | tee -a $OUT/checks.txt
  for c in "sum|f16|1024x1024:0" "max|bf16|1024x1024:0" "sum|f16|4096x256:1" "min|i16|2048x16:1"; do
    IFS='|' read -r op d shape <<< "$c"
    timeout 60 compute-sanitizer --tool $tool target/ab/redlab-new run --device cuda:0 --op $op --dtype $d \
      --shape ${shape%:*} --axis ${shape#*:} --explain --json > $OUT/one.txt 2>&1
    echo "$tool $op $d $shape rc $? $(grep -o '"verified":[a-z]*' $OUT/one.txt | head -1) $(grep -o '"strategy":"[a-z_]*' $OUT/one.txt) $(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards displayed ([0-9]* errors' $OUT/one.txt)" | tee -a $OUT/checks.txt
  done
done
rm -f $OUT/one.txt
timeout 130 python3 -m pytest -q -p no:cacheprovider python/tests/test_cuda.py > $OUT/pytest.txt 2>&1
echo "pytest rc $? $(tail -1 $OUT/pytest.txt)" | tee -a $OUT/checks.txt
