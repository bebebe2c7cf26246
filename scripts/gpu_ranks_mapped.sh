#!/usr/bin/env bash
# User-defined reductions of whole arrays over ranks on one GPU: each case once in one
# process on cuda:0, then as two ranks sharing cuda:0 (they exchange through the
# rendezvous, since NCCL takes one rank per GPU); every rank must print the one-process
# bits. Usage: scripts/gpu_ranks_mapped.sh REDLAB_BINARY OUT_DIR
set -uo pipefail
bin=${1:?redlab binary}
out=${2:?output folder}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
port=29700
cases=(
  "--map x*y --combine sum --dtype f32 --n 67108867"
  "--map x*i --combine sum --dtype f64 --n 10000019"
  "--map x --combine a+b+(a%7)*(b%5) --identity 0 --dtype i32 --n 1000003"
  "--map x*x --combine argmax --dtype f32 --n 33554433"
  "--map x*x --combine sum --post sqrt(r) --dtype f64 --n 16777219"
)
for c in "${cases[@]}"; do
  port=$((port + 1))
  # shellcheck disable=SC2086
  "$bin" run $c --seed 11 --device cuda:0 --json > "$out/one.json" 2>&1
  for r in 0 1; do
    # shellcheck disable=SC2086
    "$bin" run $c --seed 11 --device cuda:0 --json --rank $r --world 2 \
      --rendezvous "tcp://127.0.0.1:$port" > "$out/r$r.json" 2>&1 &
  done
  wait
  cat "$out/one.json" "$out/r0.json" "$out/r1.json" >> "$out/records.jsonl"
  python3 - "$c" "$out" <<'PY'
import json, sys
case, out = sys.argv[1:]
rows = []
for name in ["one", "r0", "r1"]:
    text = open(f"{out}/{name}.json").read()
    try:
        rows.append(json.loads(text))
    except Exception:
        print(case, name, "FAILED:", text.strip()[:300]); rows.append({})
bits = [(r.get("value_bits"), r.get("index")) for r in rows]
print(f"{case}: one process {bits[0]} verified {rows[0].get('verified')}; ranks",
      "same bits" if len(set(bits)) == 1 else f"DIFFER {bits}", "exchange", rows[1].get("exchange"))
PY
done
