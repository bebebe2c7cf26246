#!/usr/bin/env bash
# Arrays made in place on the GPUs (`--dist hashed`, generate.cl), on a host with two:
# (1) every checked case on one GPU and on the group cuda:0,1 against the host's
#     canonical result, at 2^30 + 5 elements;
# (2) arrays larger than one GPU's memory: 200 GB (5e10 f32 / i32, 2.5e10 f64) made and
#     reduced on the two GPUs, checked against the host, with the time split into
#     generation, kernels and the host's combine;
# (3) the same 200 GB through two processes, one per GPU, exchanging roots through
#     NCCL, each making its own half on its GPU;
# (4) kernel-time scaling of cuda:0,1 over cuda:0 with device-made data at 2^33 and
#     2^34 elements, for sum f32, min i32 and argmax f32;
# (5) compute-sanitizer memcheck over the generation kernel of every width.
# Usage: scripts/gpu_generated.sh REDLAB_BINARY OUT_DIR [SECTIONS, e.g. "3 4 5"]
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
sections=${3:-"1 2 3 4 5"}
want() { [[ " $sections " == *" $1 "* ]]; }
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
"$bin" devices 2>&1 | tee "$out/devices.txt"
nproc > "$out/host-cores.txt"

if want 1; then
echo "== (1) checks at 2^30+5"
for dev in cuda:0 cuda:0,1; do
  for case in "sum f32" "sum f64" "min i32" "argmax f32" "argmin f64" "sum f16" "sum bf16" "xor u64" "max u8"; do
    set -- $case
    "$bin" run --op "$1" --dtype "$2" --n 1073741829 --dist hashed --device "$dev" --json \
      >> "$out/check.jsonl" 2>> "$out/check.err" || echo "FAILED $dev $case"
  done
done
fi

if want 2; then
echo "== (2) 200 GB on two GPUs"
for case in "sum f32 5e10" "min i32 5e10" "argmax f32 5e10" "sum f64 2.5e10"; do
  set -- $case
  "$bin" run --op "$1" --dtype "$2" --n "$3" --dist hashed --device cuda:0,1 --repeat 3 --json \
    >> "$out/200gb.jsonl" 2>&1
done
fi

if want 3; then
echo "== (3) two ranks through NCCL, 200 GB"
port=29850
for case in "sum f32 5e10" "argmax f32 5e10"; do
  set -- $case
  port=$((port+1))
  for r in 0 1; do
    "$bin" run --op "$1" --dtype "$2" --n "$3" --dist hashed --device cuda:$r --json \
      --rank $r --world 2 --rendezvous tcp://127.0.0.1:$port >> "$out/ranks-200gb.jsonl" 2>&1 &
  done
  wait
done
fi

if want 4; then
echo "== (4) scaling with device-made data"
for case in "sum f32" "min i32" "argmax f32"; do
  set -- $case
  for n in 2^33 2^34; do
    for dev in cuda:0 cuda:0,1; do
      "$bin" run --op "$1" --dtype "$2" --n "$n" --dist hashed --device "$dev" --repeat 7 --json \
        >> "$out/scaling.jsonl" 2>&1
    done
  done
done
fi

if want 5; then
echo "== (5) memcheck"
for dtype in f32 f64 f16 u8 u64; do
  compute-sanitizer --tool memcheck "$bin" run --op max --dtype "$dtype" --n 1000003 \
    --dist hashed --device cuda:0 > "$out/memcheck-$dtype.txt" 2>&1
  tail -2 "$out/memcheck-$dtype.txt"
done
fi
echo done
