#!/usr/bin/env bash
# Two GPUs of one host: (1) NCCL between two ranks, one per GPU, against the one-process
# bits; (2) kernel-time scaling of the device group cuda:0,1 over cuda:0 at 2^33
# elements (the group's time is its slowest member's kernels; the one-GPU time is one
# launch over the whole input), for sum f32, min f32 and argmax f32.
# Usage: scripts/gpu_two_check.sh REDLAB_BINARY OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
"$bin" devices 2>&1 | grep -E "^  cuda|NCCL|nccl" | tee "$out/devices.txt"
port=29800
for case in "sum f32" "min f32" "argmax f32"; do
  set -- $case
  for n in 2^30 2^33; do
    base=(run --op "$1" --dtype "$2" --n "$n" --seed 5 --json)
    "$bin" "${base[@]}" --device cuda:0 > "$out/one-$1-$n.json" 2>&1
    port=$((port+1))
    for r in 0 1; do
      "$bin" "${base[@]}" --device cuda:$r --rank $r --world 2 \
        --rendezvous tcp://127.0.0.1:$port > "$out/rank$r-$1-$n.json" 2>&1 &
    done
    wait
    echo "== $1 $2 n=$n"; cat "$out/one-$1-$n.json" "$out/rank0-$1-$n.json" "$out/rank1-$1-$n.json" | python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith('{')]
for r in rows:
    print(r.get('rank', 'one'), r.get('value_bits'), r.get('index'), r.get('exchange'), r.get('exchange_s'), r.get('reduce_s'), r.get('seconds'))
"
  done
  # Kernel-time scaling, in one run: one GPU, then the group of two.
  for dev in cuda:0 cuda:0,1; do
    "$bin" run --op "$1" --dtype "$2" --n 2^33 --seed 5 --repeat 7 --device "$dev" --json > "$out/scale-$1-$dev.json" 2>&1
  done
  python3 - "$out/scale-$1-cuda:0.json" "$out/scale-$1-cuda:0,1.json" "$1 $2" <<'PY'
import json, statistics, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(sys.argv[3], "2^33: one GPU", a.get("seconds"), "two GPUs", b.get("seconds"),
      "scaling", a["seconds"] / b["seconds"] if a.get("seconds") and b.get("seconds") else None,
      "bits equal", a.get("value_bits") == b.get("value_bits"), a.get("index") == b.get("index"))
PY
done
