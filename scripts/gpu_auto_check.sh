#!/usr/bin/env bash
# auto on the GPU: what it picks from the shipped databases, and that every pick verifies.
set -u
b=./target/gpu/redlab
export REDLAB_TUNING_DIR=/tmp/empty-tuning
for spec in "max i32 2^14" "sum i32 2^18" "max f32 2^18" "sum f32 2^22" "sum f64 2^26" "max f64 2^14" "argmin f32 2^20" "sum f16 2^20"; do
  set -- $spec
  $b run --op $1 --dtype $2 --n $3 --device cuda:0 --explain --repeat 3 2>&1 | grep -E "^auto|verified|time|from |no " | head -5
  $b run --op $1 --dtype $2 --n $3 --device opencl:1 --explain --repeat 3 2>&1 | grep -E "^auto|verified|time" | head -3
done
$b run --op max --dtype i32 --n 2^20 --device cuda:0 --variant blocked-slm-tree 2>&1 | grep -E "verified|time"
