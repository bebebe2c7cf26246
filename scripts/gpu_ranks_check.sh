#!/usr/bin/env bash
# Multi-process runs on a one-GPU machine: what `redlab devices` says about NCCL (not on
# the loader's path, only as libnccl.so.2, linked as libnccl.so), one rank exchanging
# through NCCL, two ranks sharing the GPU (auto falls back to the rendezvous, and
# --exchange nccl refuses), each against the one-process run on the GPU and on the CPU.
# Usage: scripts/gpu_ranks_check.sh REDLAB_BINARY OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
nccl_dir=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0] + '/lib')" 2>/dev/null)
echo "nccl wheel folder: $nccl_dir"; ls "$nccl_dir" 2>&1
echo "== devices, libnccl not on the loader's path"; "$bin" devices 2>&1 | tail -3
echo "== devices, the wheel's folder on LD_LIBRARY_PATH"; LD_LIBRARY_PATH=$nccl_dir "$bin" devices 2>&1 | tail -3
links=$(mktemp -d); ln -s "$nccl_dir/libnccl.so.2" "$links/libnccl.so"
export LD_LIBRARY_PATH=$links:$nccl_dir
echo "== devices, libnccl.so linked"; "$bin" devices 2>&1 | tail -3
port=29600
for case in "sum f32" "sum f64" "min i32" "argmax f32"; do
  set -- $case
  for n in 1000003 2^28; do
    base=(run --op "$1" --dtype "$2" --n "$n" --seed 3 --json)
    "$bin" "${base[@]}" --device cpu > "$out/cpu.json" 2>&1
    "$bin" "${base[@]}" --device cuda:0 > "$out/gpu.json" 2>&1
    port=$((port+1))
    "$bin" "${base[@]}" --device cuda:0 --rank 0 --world 1 --rendezvous tcp://127.0.0.1:$port --exchange nccl > "$out/w1.json" 2>&1
    port=$((port+1))
    for r in 0 1; do
      "$bin" "${base[@]}" --device cuda:0 --rank $r --world 2 --rendezvous tcp://127.0.0.1:$port > "$out/w2r$r.json" 2>&1 &
    done
    wait
    python3 - "$1 $2 n=$n" "$out" <<'PY'
import json, sys
what, out = sys.argv[1], sys.argv[2]
rows = {}
for name in ["cpu", "gpu", "w1", "w2r0", "w2r1"]:
    text = open(f"{out}/{name}.json").read()
    try:
        rows[name] = json.loads(text)
    except Exception:
        print(what, name, "FAILED:", text.strip()[:300]); rows[name] = {}
bits = {k: (v.get("value_bits"), v.get("index")) for k, v in rows.items()}
same = len(set(bits.values())) == 1
print(f"{what}: bits {'all equal' if same else 'DIFFER'} {bits['cpu']}; "
      f"w1 exchange {rows['w1'].get('exchange')} {rows['w1'].get('exchange_s')} s; "
      f"w2 exchange {rows['w2r0'].get('exchange')} ({rows['w2r0'].get('exchange_why')}), "
      f"reduce {rows['w2r0'].get('reduce_s')} / {rows['w2r1'].get('reduce_s')} s")
if not same: print("   ", bits)
PY
  done
done
port=$((port+1))
echo "== two ranks on one GPU with --exchange nccl (must refuse)"
for r in 0 1; do
  "$bin" run --op sum --dtype f32 --n 1000 --device cuda:0 --rank $r --world 2 --rendezvous tcp://127.0.0.1:$port --exchange nccl 2>&1 &
done
wait
