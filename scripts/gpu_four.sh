#!/usr/bin/env bash
# Four GPUs of one host, arrays made in place on the GPUs (`--dist hashed`):
# (1) checks at 2^30 + 5 on cuda:0, cuda:0,1 and cuda:all against the host's canonical
#     result (every run verifies), so 1, 2 and 4 GPUs must give the CPU's bits;
# (2) kernel-time scaling of 2 and 4 GPUs over one, in one run, at SIZES, for sum f32,
#     min i32 and argmax f32 (made once, reduced 7 times in place; a repeat takes its
#     slowest member's time);
# (3) the same reductions as four processes, one per GPU, roots exchanged through NCCL,
#     each rank's bits against the one-process run's (kernels: median of 7 repeats);
# (4) axis, segment and statistic reductions split by outputs over 2 and 4 ranks
#     (one per GPU, NCCL), each rank-0 file against the one-process file, byte for byte.
# Usage: scripts/gpu_four.sh REDLAB_BINARY OUT_DIR [SECTIONS] (SIZES="2^33 2^35" default)
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
sections=${3:-"1 2 3 4"}
sizes=${SIZES:-"2^33 2^35"}
want() { [[ " $sections " == *" $1 "* ]]; }
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
# Where no libnccl.so is on the loader's path, link the wheel's libnccl.so.2 to it.
if ! ldconfig -p | grep -q "libnccl.so "; then
  nccl_dir=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0] + '/lib')" 2>/dev/null)
  if [ -n "$nccl_dir" ]; then
    links=$(mktemp -d); ln -s "$nccl_dir/libnccl.so.2" "$links/libnccl.so"
    export LD_LIBRARY_PATH=$links:$nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
fi
"$bin" devices > "$out/devices.txt" 2>&1
grep -E "cuda|NCCL|nccl" "$out/devices.txt"
nvidia-smi topo -m > "$out/topology.txt" 2>&1
nproc > "$out/host-cores.txt"
gpus=$(nvidia-smi -L | wc -l)
all=$(seq -s, 0 $((gpus - 1)))

if want 1; then
  echo "== (1) checks at 2^30+5 on 1, 2 and $gpus GPUs"
  for dev in cuda:0 cuda:0,1 "cuda:$all"; do
    for case in "sum f32" "sum f64" "min i32" "argmax f32"; do
      set -- $case
      "$bin" run --op "$1" --dtype "$2" --n 1073741829 --dist hashed --device "$dev" --json \
        >> "$out/check.jsonl" 2>> "$out/check.err" || echo "FAILED $dev $case"
    done
  done
  python3 - "$out/check.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
for r in rows:
    print(r["op"], r["dtype"], len(r["members"]), "GPUs", r["value_bits"], r.get("index"), "verified", r["verified"])
PY
fi

if want 2; then
  echo "== (2) scaling at $sizes"
  for n in $sizes; do
    for case in "sum f32" "min i32" "argmax f32"; do
      set -- $case
      for dev in cuda:0 cuda:0,1 "cuda:$all"; do
        "$bin" run --op "$1" --dtype "$2" --n "$n" --dist hashed --device "$dev" --repeat 7 --json \
          >> "$out/scaling.jsonl" 2>> "$out/scaling.err" || echo "FAILED $dev $case $n"
      done
      tail -3 "$out/scaling.jsonl" | python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin]
one = rows[0]['seconds']
for r in rows:
    print(r['op'], r['dtype'], r['n'], len(r['members']), 'GPUs', f\"{r['seconds']*1e3:.3f} ms\", f\"scaling {one / r['seconds']:.3f}\", r['value_bits'], r.get('index'), 'verified', r['verified'])
"
    done
  done
fi

if want 3; then
  echo "== (3) $gpus processes through NCCL at $sizes"
  port=29900
  for n in $sizes; do
    for case in "sum f32" "min i32" "argmax f32"; do
      set -- $case
      port=$((port + 1))
      for r in $(seq 0 $((gpus - 1))); do
        "$bin" run --op "$1" --dtype "$2" --n "$n" --dist hashed --device "cuda:$r" --json \
          --repeat 7 --rank "$r" --world "$gpus" --rendezvous "tcp://127.0.0.1:$port" \
          > "$out/ranks-$1-$2-$n-r$r.json" 2>&1 &
      done
      wait
      cat "$out"/ranks-"$1"-"$2"-"$n"-r*.json >> "$out/ranks.jsonl"
      python3 - "$out" "$1" "$2" "$n" <<'PY'
import glob, json, sys
out, op, dtype, n = sys.argv[1:]
ranks = [json.loads(open(p).read()) for p in sorted(glob.glob(f"{out}/ranks-{op}-{dtype}-{n}-r*.json"))]
one = [json.loads(l) for l in open(f"{out}/scaling.jsonl")]
one = [r for r in one if r["op"] == op and r["dtype"] == dtype and r["n"] == ranks[0]["n"] and len(r["members"]) == 1]
bits = {(r["value_bits"], r.get("index")) for r in ranks}
slowest = max(r["kernel_s"] for r in ranks)
print(op, dtype, n, len(ranks), "ranks:", "same bits" if len(bits) == 1 else f"DIFFER {bits}",
      "as one process" if one and (one[0]["value_bits"], one[0].get("index")) in bits else "(one-process row missing or different)",
      f"slowest kernels {slowest*1e3:.3f} ms", f"scaling {one[0]['seconds'] / slowest:.3f}" if one else "",
      "exchange", ranks[0]["exchange"], f"{ranks[0]['exchange_s']*1e6:.0f} us", "setup", ranks[0].get("exchange_setup_s"))
PY
    done
  done
fi

if want 4; then
  echo "== (4) outputs split over 2 and $gpus ranks"
  port=29950
  cases=(
    "--op sum --dtype f32 --shape 8192x8192 --axis 1"
    "--op max --dtype i32 --shape 8192x8192 --axis 0"
    "--op argmax --dtype f64 --shape 4096x3x1000 --axis 0,2"
    "--op sum --dtype f64 --n 10000019 --segment-size 1000"
    "--stat var --ddof 1 --dtype f32 --shape 8192x8192 --axis 1"
    "--stat logsumexp --dtype f64 --shape 4096x4096 --axis 0"
  )
  i=0
  for c in "${cases[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    "$bin" run $c --seed 9 --device cuda:0 --out "$out/shaped-$i-single.npy" > "$out/shaped-$i-single.txt" 2>&1
    for world in $(printf "%s\n" 2 "$gpus" | sort -nu); do
      port=$((port + 1))
      for r in $(seq 0 $((world - 1))); do
        # shellcheck disable=SC2086
        "$bin" run $c --seed 9 --device "cuda:$r" --out "$out/shaped-$i-w$world-r$r.npy" --json \
          --rank "$r" --world "$world" --rendezvous "tcp://127.0.0.1:$port" \
          > "$out/shaped-$i-w$world-r$r.json" 2>&1 &
      done
      wait
      verdict=$(cmp "$out/shaped-$i-single.npy" "$out/shaped-$i-w$world-r0.npy" && echo "same bytes" || echo "DIFFER")
      echo "case $i ($c), $world ranks: $verdict; exchange $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r.get('exchange'), r.get('exchange_why'))" "$out/shaped-$i-w$world-r0.json" 2>&1 | head -c 200)"
      rm -f "$out"/shaped-$i-w$world-r[1-9]*.npy
    done
    rm -f "$out/shaped-$i-single.npy" "$out"/shaped-$i-w*-r0.npy
  done
fi
echo done
