#!/usr/bin/env bash
# nanmean's compaction pushes (st_push_kept) on one CUDA GPU, BINARY against OLD, in one
# short job:
# (1) BINARY's .npy output against the CPU's, byte for byte: f32 and f64 9000×100 and
#     f32 9000×600 with 10% NaN along axis 0, in the default shape, with
#     stat_kept_columns forced (REDLAB_KEPT_COLUMNS=4,2) and with every tile sent
#     straight to the second pass (REDLAB_NANMEAN_FIRST_PASS=0); and along axis 1;
# (2) per call and in a CUDA graph of 50, two passes, OLD and BINARY alternating:
#     nanmean of 8192² f32 with 10% NaN along each axis and of 2^22×32 along axis 0, and
#     BINARY with REDLAB_NANMEAN_FIRST_PASS=0 over the columns;
# (3) compute-sanitizer memcheck, racecheck and synccheck over stat_kept (9000×100 along
#     axis 0, and rows of 9000) and stat_kept_columns (forced).
# Usage: scripts/gpu_nanmean_push.sh OUT BINARY OLD
#   PART=speed (1) and (2) only, keeping the inputs; PART=sanitize (3) only (default: all)
set -u
out=$1 new=$2 old=$3
mkdir -p "$out/npy"
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"
[ -f "$out/npy/rows.npy" ] || python3 - "$out/npy" <<'PY'
import sys
import numpy as np
r = np.random.default_rng(5)
for name, dims, dtype in [("a", (9000, 100), "float32"), ("b", (9000, 100), "float64"),
                          ("c", (9000, 600), "float32"), ("big", (8192, 8192), "float32"),
                          ("tall", (4194304, 32), "float32"), ("rows", (100, 9000), "float32")]:
    a = r.standard_normal(dims).astype(dtype)
    a[r.random(dims) < 0.1] = np.nan
    np.save(f"{sys.argv[1]}/{name}.npy", a)
PY
compare() {
  local f=$1 axis=$2 tag=$3
  shift 3
  "$new" run --stat nanmean --input "$out/npy/$f.npy" --axis "$axis" --device cpu \
    --out "$out/npy/cpu.npy" --force > /dev/null 2>&1 || echo "FAILED cpu $f" | tee -a "$out/summary.txt"
  env "$@" "$new" run --stat nanmean --input "$out/npy/$f.npy" --axis "$axis" --device cuda:0 \
    --out "$out/npy/gpu.npy" --force > "$out/npy/log.txt" 2>&1 ||
    echo "FAILED cuda $f $tag: $(head -c 400 "$out/npy/log.txt")" | tee -a "$out/summary.txt"
  if cmp -s "$out/npy/cpu.npy" "$out/npy/gpu.npy"; then r=same; else r=differ; fi
  echo "nanmean $f axis $axis, $tag: $r" | tee -a "$out/summary.txt"
}
part=${PART:-all}
if [ "$part" != sanitize ]; then
for f in a b c; do
  compare "$f" 0 default X=1
  compare "$f" 0 "kept_columns 4,2" REDLAB_KEPT_COLUMNS=4,2
  compare "$f" 0 nofirst REDLAB_NANMEAN_FIRST_PASS=0
done
compare a 1 default X=1
compare rows 1 default X=1
for pass in 1 2; do
  for b in old new; do
    bin=$new
    [ "$b" = old ] && bin=$old
    speed "columns $b" "$bin" --stat nanmean --input "$out/npy/big.npy" --axis 0
    speed "tall $b" "$bin" --stat nanmean --input "$out/npy/tall.npy" --axis 0
    speed "rows $b" "$bin" --stat nanmean --input "$out/npy/big.npy" --axis 1
  done
  REDLAB_NANMEAN_FIRST_PASS=0 speed "columns nofirst" "$new" --stat nanmean --input "$out/npy/big.npy" --axis 0
  REDLAB_NANMEAN_FIRST_PASS=0 speed "tall nofirst" "$new" --stat nanmean --input "$out/npy/tall.npy" --axis 0
done
fi
if [ "$part" != speed ]; then
for tool in memcheck racecheck synccheck; do
  sanitize "$tool" --stat nanmean --input "$out/npy/a.npy" --axis 0
  sanitize "$tool" --stat nanmean --input "$out/npy/rows.npy" --axis 1
  REDLAB_KEPT_COLUMNS=4,2 sanitize "$tool" --stat nanmean --input "$out/npy/a.npy" --axis 0
done
fi
[ "$part" = speed ] || rm -rf "$out/npy"
