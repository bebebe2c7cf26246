#!/bin/bash
# Call 2, checks of call 1's new build: the CUDA pytest suite; i8 as `signed char`;
# sanitizers over the mapped word paths along axes.
cd "$(dirname "$0")/../.."
for b in base new; do xz -dkf target/ab/redlab-$b.xz; done
for p in pkg pkg-base; do xz -dkf target/ab/$p/redlab/_native.abi3.so.xz; done
export PYTHONPATH=$PWD/target/ab/pkg
timeout 200 python3 -m pytest -q -x python/tests/test_cuda.py > $OUT/checks.txt 2>&1
echo "pytest rc $?" | tee -a $OUT/checks.txt
timeout 60 target/ab/redlab-new bench --device cuda:0 --variants production --ops sum,min,max,argmax,xor \
  --dtypes i8 --sizes 1,1000003,2^24 --min-reps 10 --quiet >> $OUT/checks.txt 2>&1
echo "i8 bench rc $?" | tee -a $OUT/checks.txt
timeout 60 target/ab/redlab-new bench --device cuda:0 --shapes 4096x1024:0,1048576x32:1,300x7:1 --ops sum,max,argmin \
  --dtypes i8 --min-reps 5 --quiet >> $OUT/checks.txt 2>&1
echo "i8 shapes rc $?" | tee -a $OUT/checks.txt
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool python3 tools/python_sanitize_stats.py > $OUT/one.txt 2>&1
  echo "$tool stats rc $? $(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards displayed ([0-9]* errors' $OUT/one.txt)" | tee -a $OUT/checks.txt
  for c in "x * x|sum|1024x1024:0" "x * x|sum|4096x256:1" "x * x|sum|2048x16:1" "abs(x)|max|1024x1024:0" "x * x|argmax|2048x16:1"; do
    IFS='|' read -r m comb shape <<< "$c"
    timeout 60 compute-sanitizer --tool $tool target/ab/redlab-new run --device cuda:0 --map "$m" --combine $comb --dtype f32 \
      --shape ${shape%:*} --axis ${shape#*:} --json > $OUT/one.txt 2>&1
    echo "$tool $m $comb $shape rc $? $(grep -o '"verified":[a-z]*' $OUT/one.txt | head -1) $(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards displayed ([0-9]* errors' $OUT/one.txt)" | tee -a $OUT/checks.txt
  done
done
rm -f $OUT/one.txt
