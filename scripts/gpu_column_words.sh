#!/usr/bin/env bash
# Columns of 4-byte elements read as 16-byte words (column_words + column_finish) on a
# CUDA GPU: every operator of f32/i32/u32 over column shapes that reach the word path
# (whole and partial tiles, the tree, a middle axis, blocks with fewer than 128 outputs),
# verified bit for bit against the host by `redlab run`, with NaNs of both signs from a
# .npy; compute-sanitizer over the new kernels; then the column shapes beside torch and
# CuPy for the new binary and the one before, alternated twice in the same session.
#   scripts/gpu_column_words.sh NEW_BINARY OLD_BINARY OUT_DIR [check|compare|all]
set -u
new=$1 old=$2 out=$3 stage=${4:-all}
mkdir -p "$out"
if [ "$stage" != compare ]; then
fails=0 runs=0
check() {
  runs=$((runs + 1))
  local r
  r=$("$new" run --device cuda:0 --json --explain "$@" 2>&1)
  if ! grep -q '"verified":true' <<<"$r"; then
    fails=$((fails + 1))
    echo "FAIL $*: $(head -c 600 <<<"$r")" | tee -a "$out/check.txt"
  elif ! grep -q 'column_words' <<<"$r"; then
    echo "NOTE $* took $(grep -o '"strategy":"[a-z_]*' <<<"$r")" >> "$out/check.txt"
  fi
}
for spec in 8192x8192:0 9000x776:0 20011x132:0 300x128:0 1000x4100:0 65536x1024:0 3x40x132:1; do
  shape=${spec%:*} axis=${spec#*:}
  for op in sum min max; do check --shape "$shape" --axis "$axis" --op "$op" --dtype f32; done
  check --shape "$shape" --axis "$axis" --op prod --dtype f32 --dist ints
  for op in sum max xor and; do check --shape "$shape" --axis "$axis" --op "$op" --dtype i32; done
  for op in sum or min; do check --shape "$shape" --axis "$axis" --op "$op" --dtype u32; done
done
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(5)
a = rng.standard_normal((9000, 256)).astype(np.float32)
flat = a.reshape(-1)
idx = rng.choice(flat.size, size=200, replace=False)
flat[idx[:100]] = np.nan
flat[idx[100:]] = -np.nan
np.save("/tmp/nan-cols.npy", a)
PY
for op in sum min max; do check --input /tmp/nan-cols.npy --axis 0 --op "$op"; done
echo "verification: $fails failures over $runs runs" | tee -a "$out/check.txt"
bash scripts/axis_sanitizers.sh "$new" "$out" "sum f32 9000x776 0" "max i32 20011x132 0" "min f32 300x128 0"
fi
[ "$stage" = check ] && exit 0
extra=65536x1024:0,1024x65536:0,1048576x256:0
for pass in 1 2; do
  for which in new old; do
    bin=$new; [ "$which" = old ] && bin=$old
    python3 tools/axis_compare.py "$bin" --ops sum,max --shapes 1,5 --add "$extra" \
      --json "$out/$which-$pass.jsonl" > "$out/$which-$pass.md" 2> "$out/$which-$pass.log"
  done
done
cat "$out"/new-*.md "$out"/old-*.md
