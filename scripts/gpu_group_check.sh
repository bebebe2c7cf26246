#!/usr/bin/env bash
# Statistics along axes and user-defined reductions on a device group beside one device:
# statistics' outputs written by `cuda:0` and by the group and compared byte for byte,
# user-defined reductions checked by `run`'s own `verified` line. On a one-GPU machine
# the group is the same GPU twice. Usage: scripts/gpu_group_check.sh REDLAB OUT [GROUP [ONE]]
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
group=${3:-cuda:0,1}
one=${4:-cuda:0}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
{
for stat in var logsumexp nanmean; do
  for spec in "8192x8192 1" "8192x8192 0" "1048576x32 1" "5x7x30001 0,2"; do
    set -- $spec
    "$bin" run --shape "$1" --axis "$2" --stat "$stat" --dtype f32 --device "$one" \
      --out "$out/one.npy" --force > /dev/null 2>&1 || echo "FAILED one $stat $spec"
    "$bin" run --shape "$1" --axis "$2" --stat "$stat" --dtype f32 --device "$group" \
      --out "$out/group.npy" --force 2>&1 | grep -E "verified|error"
    if cmp -s "$out/one.npy" "$out/group.npy"; then echo "SAME $stat $spec"; else echo "DIFFER $stat $spec"; fi
  done
done
for m in "x*y sum f32" "x*x argmax f32" "x>y sum f32" "x*3-y xor i32" "abs(x-y) max f64"; do
  set -- $m
  for n in 1000003 268435459; do
    echo "== $1 $2 $3 n=$n"
    "$bin" run --map "$1" --combine "$2" --dtype "$3" --n "$n" --device "$group" 2>&1 \
      | grep -E "verified|error" || echo FAILED
  done
done
rm -f "$out/one.npy" "$out/group.npy"
} 2>&1 | tee "$out/runs.txt"
