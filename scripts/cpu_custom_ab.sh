#!/usr/bin/env bash
# Custom combines on the CPU, two builds alternating, with the built-in operator of the
# same combine in the same rounds: `redlab run --map x --combine C --identity=E --dtype
# DTYPE SHAPE --repeat 15 --json` (GB/s of input, the median call, verified against the
# element-by-element reference). Lines "round build dtype shape combine gbps verified"
# go to OUT/table.txt, the JSON records to OUT/runs.jsonl.
# Usage: scripts/cpu_custom_ab.sh OUT OLD NEW ROUNDS
set -u
out=$1 old=$2 new=$3 rounds=$4
mkdir -p "$out"
cases=(
  "f32|--n 16777216|a + b|-0.0|sum"
  "f32|--n 16777216|max(a, b)|-inf|max"
  "i32|--n 16777216|a ^ (b * 3)|0|xor"
  "f32|--shape 4096x4096 --axis 1|max(a, b)|-inf|max"
  "f32|--shape 4096x4096 --axis 1|a + b|-0.0|sum"
  "f64|--shape 4096x2048 --axis 1|a + b * 1.5|-0.0|sum"
  "f32|--shape 65536x200 --axis 1|max(a, b)|-inf|max"
  "f32|--shape 262144x64 --axis 1|max(a, b)|-inf|max"
  "f32|--shape 1048576x16 --axis 1|a + b|-0.0|sum"
  "f32|--shape 4096x4096 --axis 0|max(a, b)|-inf|max"
  "f32|--shape 4096x4096 --axis 0|abs(a) > abs(b) ? a : b|0|max"
  "f64|--shape 2048x4096 --axis 0|a + b * 1.5|-0.0|sum"
  "f32|--shape 4096x4096 --axis 0|a + b|-0.0|sum"
)
one() {
  local round=$1 name=$2 bin=$3 dtype=$4 shape=$5 shift_args r g v
  shift 5
  # shellcheck disable=SC2086 # the shape is several words
  r=$("$bin" run --map x "$@" --dtype "$dtype" $shape --repeat 15 --json 2>&1)
  echo "$r" >> "$out/runs.jsonl"
  g=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(round(d["gbps"],2), d["verified"])' "$r" 2>/dev/null || echo "error")
  echo "$round $name $dtype ${shape// /_} $* $g" | tee -a "$out/table.txt"
}
for round in $(seq "$rounds"); do
  for c in "${cases[@]}"; do
    IFS='|' read -r dtype shape combine identity builtin <<<"$c"
    one "$round" old "$old" "$dtype" "$shape" --combine "$combine" --identity="$identity"
    one "$round" new "$new" "$dtype" "$shape" --combine "$combine" --identity="$identity"
    one "$round" builtin "$new" "$dtype" "$shape" --combine "$builtin"
  done
done
