#!/usr/bin/env bash
# The one-launch kernel's atomic finish (ATOMIC_FINISH) on one CUDA GPU, in one sitting:
# every order-free operator with a native atomic checked against the host reference
# (sizes from one element to several groups, three calls on one scratch buffer, so a
# missed reset shows), the sanitizers, then `auto` of two binaries beside CUB.
# Usage: scripts/gpu_atomic_finish.sh BASE_BINARY NEW_BINARY OUT_DIR
# (SETS and ROUNDS as scripts/gpu_binary_ab.sh; the CUB comparator is built into /tmp.)
set -uo pipefail
base=${1:?binary before the change}
new=${2:?binary with the change}
out=${3:?output folder}
mkdir -p "$out"
nvidia-smi -L >"$out/gpu.txt"
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/redlab-cub tools/cub/cub_reduce.cu || exit 1
check() {
  "$new" run --op "$1" --dtype "$2" --n "$3" --repeat 3 --device cuda:0 --json "${@:4}" |
    python3 -c "import json,sys; d=json.load(sys.stdin); print(d['op'], d['dtype'], d['n'], d['verified'], d['value_bits'])"
}
for spec in "sum i32" "min i32" "max i32" "min f32" "max f32" "min f64" "max f64" "sum u32" \
  "and u32" "or u32" "xor i32" "min i64" "max u64" "min f16" "max bf16"; do
  read -r op dtype <<<"$spec"
  for n in 1 1000 8191 8193 65537 1048575 16777217; do
    check "$op" "$dtype" "$n" --variant production --param ATOMIC_FINISH=1
  done
done >"$out/check.txt" 2>&1
echo "checked: $(grep -c True "$out/check.txt") verified of $(wc -l <"$out/check.txt")"
for tool in memcheck racecheck synccheck; do
  for spec in "min i32 1048576" "sum i32 4194304" "max f64 1048576" "xor i32 300000"; do
    read -r op dtype n <<<"$spec"
    echo "== $tool $spec"
    compute-sanitizer --tool "$tool" "$new" run --op "$op" --dtype "$dtype" --n "$n" --repeat 2 \
      --device cuda:0 --variant production --param ATOMIC_FINISH=1 2>&1 |
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|rror" | head -4
  done
done >"$out/sanitizers.txt" 2>&1
grep -E "SUMMARY" "$out/sanitizers.txt" | sort | uniq -c
SETS=${SETS:-"sum,min,max i32 2^10,2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^28;min,max f32,f64 2^10,2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^28"} \
  scripts/gpu_binary_ab.sh /tmp/redlab-cub "$out" base="$base" new="$new" >"$out/ab.log" 2>&1
tail -2 "$out/ab.log"
