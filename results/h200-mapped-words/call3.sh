#!/bin/bash
# Call 3: the CUDA pytest suite on the new package (call 2's stopped at 200 s, 44 passed),
# and i8 whole arrays (`signed char`) without graph timing.
cd "$(dirname "$0")/../.."
xz -dkf target/ab/redlab-new.xz
xz -dkf target/ab/pkg/redlab/_native.abi3.so.xz
export PYTHONPATH=$PWD/target/ab/pkg
timeout 100 target/ab/redlab-new bench --device cuda:0 --variants production --ops sum,min,max,argmax,xor \
  --dtypes i8 --sizes 1000003,2^24 --min-reps 10 --graph-calls 0 > $OUT/checks.txt 2>&1
echo "i8 bench rc $?" | tee -a $OUT/checks.txt
timeout 380 python3 -m pytest -q -p no:cacheprovider --durations=8 python/tests/test_cuda.py >> $OUT/checks.txt 2>&1
echo "pytest rc $?" | tee -a $OUT/checks.txt
