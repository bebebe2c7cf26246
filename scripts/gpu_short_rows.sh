#!/usr/bin/env bash
# short_rows (axis and segment outputs of at most 1024 elements) on a CUDA GPU: every
# operator × type on row lengths that give each lane count, verified bit for bit against
# the host by `redlab run`; compute-sanitizer over a few; then the common shapes beside
# torch and CuPy for the new binary and the one before the change, in the same session.
#   scripts/gpu_short_rows.sh NEW_BINARY OLD_BINARY OUT_DIR
# SHAPES, SANITIZE ("op dtype shape" specs, comma-separated), COMPARE_SHAPES (indices for
# tools/axis_compare.py) and COMPARE_OPS override the defaults.
set -u
new=$1 old=$2 out=$3
mkdir -p "$out"
fails=0
shapes=${SHAPES:-4099x1000 3001x513 2000x257 5000x64 9999x33 1000x17 777x1}
runs=0
for shape in $shapes; do
  for op in sum min max argmax; do
    for dt in f32 f64 i32 f16; do
      runs=$((runs + 1))
      r=$("$new" run --device cuda:0 --shape "$shape" --axis 1 --op "$op" --dtype "$dt" --json 2>&1)
      if ! grep -q '"verified":true' <<<"$r"; then
        fails=$((fails + 1))
        echo "FAIL $shape $op $dt: $r" | head -c 600
        echo
      fi
    done
  done
done
echo "verification: $fails failures over $runs runs" | tee "$out/check.txt"
"$new" run --device cuda:0 --shape 65536x1024 --axis 1 --op sum --dtype f32 --explain 2>&1 | grep -i "short_rows\|verified" | tee -a "$out/check.txt"
IFS=, read -ra specs <<<"${SANITIZE:-sum f32 300x1000,argmax f64 200x513}"
for spec in "${specs[@]}"; do
  set -- $spec
  for tool in memcheck racecheck; do
    echo "== $tool $spec" >> "$out/sanitizers.txt"
    compute-sanitizer --tool "$tool" "$new" run --device cuda:0 --shape "$3" --axis 1 --op "$1" --dtype "$2" 2>&1 |
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|verified" >> "$out/sanitizers.txt"
  done
done
cat "$out/sanitizers.txt"
cmp=(--shapes "${COMPARE_SHAPES:-2,3}" --ops "${COMPARE_OPS:-sum,max,argmax}")
python3 tools/axis_compare.py "$new" "${cmp[@]}" --json "$out/after.jsonl" > "$out/after.md" 2> "$out/after.log"
python3 tools/axis_compare.py "$old" "${cmp[@]}" --json "$out/before.jsonl" > "$out/before.md" 2> "$out/before.log"
cat "$out/before.md" "$out/after.md"
