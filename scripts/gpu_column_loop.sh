#!/usr/bin/env bash
# column_words with its quads of lane pairs as a loop (a third of the build) and short
# rows of words for maps of several inputs, on a CUDA GPU, against the binary before.
#   [STAGES="cold check sanitize speed torch dotcols"] scripts/gpu_column_loop.sh OUT BASE NEW \
#       [OTHER_NAME=OTHER_BINARY ...]
# 1. cold first calls (fresh driver JIT cache, kernel cache off) of column jobs read as
#    words, BASE and NEW, seconds from process start;
# 2. NEW verified on column shapes of every rows case (whole tiles, 1024/2048/4096 rows,
#    partial tiles, the tree, a middle axis) and on dot products along rows of words;
# 3. compute-sanitizer memcheck of both new paths;
# 4. per-call and graph GB/s of column jobs and of the dot along 65536x1024, for every
#    binary named, alternated twice; then the dot beside torch (tools/axis_compare.py).
set -u
stages=" ${STAGES:-cold check sanitize speed torch} "
want() { [[ "$stages" == *" $1 "* ]]; }
out=$1 base=$2 new=$3
shift 3
others=("$@")
mkdir -p "$out"
log() { echo "$*" | tee -a "$out/summary.txt"; }
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"

# 1. Cold first calls.
cold() {
  local name=$1 bin=$2
  shift 2
  local jit
  jit=$(mktemp -d)
  local s e r
  s=$(date +%s.%N)
  r=$(CUDA_CACHE_PATH="$jit" REDLAB_KERNEL_CACHE=off "$bin" run --device cuda:0 --json "$@" 2>&1)
  e=$(date +%s.%N)
  log "cold $name $*: $(python3 -c "print(round($e - $s, 2))") s $(grep -o '"verified":[a-z]*' <<<"$r")"
  rm -rf "$jit"
}
want cold && for pass in 1 2; do
  for which in base new; do
    bin=$base; [ "$which" = new ] && bin=$new
    cold "$which" "$bin" --shape 8192x8192 --axis 0 --op sum --dtype f32
    cold "$which" "$bin" --shape 8192x8192 --axis 0 --map 'x * x' --dtype f32
    cold "$which" "$bin" --shape 8192x8192 --axis 0 --map 'abs(x)' --combine max --dtype i32
  done
done

# Columns of several inputs read as mapped words (SEG_MAPPED_WORDS): verified, memcheck,
# speed beside BASE, then every dot shape beside torch.
if want dotcols; then
fails=0 runs=0
for spec in 16384x200:0 9000x776:0 1024x8192:0 2048x1028:0 4096x516:0 20011x132:0 300x128:0 3x40x132:1 257x33:0; do
  shape=${spec%:*} axis=${spec#*:}
  verify dotcols-check.txt --shape "$shape" --axis "$axis" --map 'x * y' --dtype f32
  verify dotcols-check.txt --shape "$shape" --axis "$axis" --map 'x * y - z' --dtype f32
done
verify dotcols-check.txt --shape 1024x4096 --axis 0 --map 'x * y' --combine prod --dtype f32 --dist ints
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(9)
np.save("/tmp/col-x16.npy", rng.standard_normal((9000, 256)).astype(np.float16))
y = rng.standard_normal((9000, 256)).astype(np.float32)
y.reshape(-1)[rng.choice(y.size, 100, replace=False)] = np.nan
np.save("/tmp/col-y32.npy", y)
PY
verify dotcols-check.txt --input /tmp/col-x16.npy --input /tmp/col-y32.npy --axis 0 --map 'x * y'
log "dot columns verification: $fails failures over $runs runs"
for args in "--shape 9000x776 --axis 0 --map x*y --dtype f32" "--shape 1024x4096 --axis 0 --map x*y-z --dtype f32"; do
  # shellcheck disable=SC2086
  compute-sanitizer --tool memcheck "$new" run --device cuda:0 $args > "$out/m.part" 2>&1
  log "memcheck $args: exit $? $(grep -o 'ERROR SUMMARY: [0-9]* errors' "$out/m.part")"
done
rm -f "$out/m.part"
fi

# 2. Verification of NEW.
if want check; then
fails=0 runs=0
for spec in 16384x200:0 9000x776:0 1024x8192:0 2048x1028:0 4096x516:0 20011x132:0 300x128:0 3x40x132:1; do
  shape=${spec%:*} axis=${spec#*:}
  for op in sum max; do verify check.txt --shape "$shape" --axis "$axis" --op "$op" --dtype f32; done
  verify check.txt --shape "$shape" --axis "$axis" --op prod --dtype f32 --dist ints
  for op in sum xor; do verify check.txt --shape "$shape" --axis "$axis" --op "$op" --dtype i32; done
  verify check.txt --shape "$shape" --axis "$axis" --op min --dtype u32
  verify check.txt --shape "$shape" --axis "$axis" --op sum --dtype f16
  verify check.txt --shape "$shape" --axis "$axis" --map 'x * x' --dtype f32
  verify check.txt --shape "$shape" --axis "$axis" --map 'abs(x)' --combine max --dtype i32
done
for shape in 37x128 40x256 33x512 100x1024 65536x1024 40x1000 3x64x256; do
  verify check.txt --shape "$shape" --axis=-1 --map 'x * y' --dtype f32
  verify check.txt --shape "$shape" --axis=-1 --map 'x * y - z' --dtype f32
done
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
np.save("/tmp/dot-x16.npy", rng.standard_normal((70, 512)).astype(np.float16))
np.save("/tmp/dot-y32.npy", rng.standard_normal((70, 512)).astype(np.float32))
y = rng.standard_normal((70, 512)).astype(np.float32)
y.reshape(-1)[rng.choice(y.size, 50, replace=False)] = np.nan
np.save("/tmp/dot-ynan.npy", y)
PY
verify check.txt --input /tmp/dot-x16.npy --input /tmp/dot-y32.npy --axis 1 --map 'x * y'
verify check.txt --input /tmp/dot-y32.npy --input /tmp/dot-ynan.npy --axis 1 --map 'x * y'
log "verification: $fails failures over $runs runs"
fi

# 3. Sanitizer.
want sanitize && for args in "--shape 9000x776 --axis 0 --op sum --dtype f32" \
            "--shape 1024x4096 --axis 0 --map x*x --dtype f32" \
            "--shape 4096x512 --axis 1 --map x*y --dtype f32" \
            "--shape 100x1024 --axis 1 --map x*y-z --dtype f32"; do
  # shellcheck disable=SC2086
  compute-sanitizer --tool memcheck "$new" run --device cuda:0 $args > "$out/memcheck.txt.part" 2>&1
  log "memcheck $args: exit $? $(grep -o 'ERROR SUMMARY: [0-9]* errors' "$out/memcheck.txt.part")"
  cat "$out/memcheck.txt.part" >> "$out/memcheck.txt"
done
rm -f "$out/memcheck.txt.part"

# 4. Speed.
bins=("base=$base" "new=$new" "${others[@]}")
want dotcols && for pass in 1 2; do
  for entry in "base=$base" "new=$new"; do
    name=${entry%%=*} bin=${entry#*=}
    for spec in 8192x8192:0 1024x65536:0 9000x8192:0 1048576x256:0 65536x1024:1; do
      speed "$name" "$bin" --shape "${spec%:*}" --axis "${spec#*:}" --map 'x * y' --dtype f32
    done
  done
done
want dotcols && python3 tools/axis_compare.py "$new" --ops dot --graph 50 --reps 20 \
  --json "$out/dot-all.jsonl" > "$out/dot-all.md" 2> "$out/dot-all.log" && cat "$out/dot-all.md"
want speed && for pass in 1 2; do
  for entry in "${bins[@]}"; do
    name=${entry%%=*} bin=${entry#*=}
    speed "$name" "$bin" --shape 8192x8192 --axis 0 --op sum --dtype f32
    speed "$name" "$bin" --shape 8192x8192 --axis 0 --op max --dtype f32
    speed "$name" "$bin" --shape 8192x8192 --axis 0 --op sum --dtype i32
    speed "$name" "$bin" --shape 1024x65536 --axis 0 --op sum --dtype f32
    speed "$name" "$bin" --shape 2048x32768 --axis 0 --op sum --dtype f32
    speed "$name" "$bin" --shape 4096x16384 --axis 0 --op sum --dtype f32
    speed "$name" "$bin" --shape 9000x8192 --axis 0 --op sum --dtype f32
    speed "$name" "$bin" --shape 1048576x256 --axis 0 --op sum --dtype f32
    speed "$name" "$bin" --shape 8192x8192 --axis 0 --map 'x * x' --dtype f32
    speed "$name" "$bin" --shape 8192x8192 --axis 0 --op sum --dtype f16
    speed "$name" "$bin" --shape 65536x1024 --axis 1 --map 'x * y' --dtype f32
    speed "$name" "$bin" --shape 262144x256 --axis 1 --map 'x * y' --dtype f32
  done
done
want torch || exit 0
python3 tools/axis_compare.py "$new" --ops dot --shapes 3 --graph 50 --reps 20 \
  --json "$out/dot-new.jsonl" > "$out/dot-new.md" 2> "$out/dot-new.log"
python3 tools/axis_compare.py "$base" --ops dot --shapes 3 --graph 50 --reps 20 \
  --json "$out/dot-base.jsonl" > "$out/dot-base.md" 2> "$out/dot-base.log"
tail -n 12 "$out/dot-new.md" "$out/dot-base.md"
