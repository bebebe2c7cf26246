#!/usr/bin/env bash
# Expression casts to f16/bf16 on a CUDA GPU: each map checked bit for bit against the
# scalar reference (`verified` line) at 1 … 2^28+1 elements, and compute-sanitizer
# memcheck over the f32 and f64 rounding helpers. Usage: OUT=dir scripts/gpu_half_casts.sh
set -o pipefail
B=./target/release/redlab
A='f16(x * y) + f16(x * 1e-6) * 1e6 + bf16(x * y) + bf16(x * 1e-39) * 1e20 * 1e19 + (abs(f16(x * 7e4)) == inf)'
C='f16(f64(x * y)) + f16(f64(x * y) * (1 + 1e-12)) + bf16(f64(x * y)) + bf16(f64(x * y) * (1 - 1e-12)) + f16(f64(x) * 1e-6) * 1e6 + (abs(f16(f64(x) * 7e4)) == inf)'
{
$B devices
for n in 1 1000003 16777217 268435457; do
  for m in "$A" "$C"; do $B run --map "$m" --combine sum --dtype f32 --n $n --device cuda:0 || echo "FAILED $n $m"; done
  $B run --map 'f16(x * 3) - bf16(x)' --combine max --dtype f16 --n $n --device cuda:0 || echo "FAILED f16 $n"
  $B run --map 'bf16(x / 3)' --combine sum --dtype f64 --n $n --device cuda:0 || echo "FAILED f64 $n"
  $B run --map 'f16(x * y)' --combine sum --dtype f32 --n $n --device cuda:0 || echo "FAILED plain $n"
done
compute-sanitizer --tool memcheck $B run --map "$C" --combine sum --dtype f32 --n 1000003 --device cuda:0 2>&1 | tail -4
compute-sanitizer --tool memcheck $B run --map "$A" --combine sum --dtype f32 --n 1000003 --device cuda:0 2>&1 | tail -4
} 2>&1 | tee $OUT/log
