#!/usr/bin/env bash
# nanmean over columns with NaN on one CUDA GPU: the tiles whose mean came out NaN rerun
# on stat_kept (a work-group per tile, REDLAB_KEPT_COLUMNS=1,1) or on stat_kept_columns
# (REDLAB_KEPT_COLUMNS=TILES,ROWS[,BUFFERS]: TILES neighbouring columns per work-group,
# ROWS rows staged at once, 2 BUFFERS to copy the next part during this one), or in the
# shape the library picks (default), or with every tile sent straight to the second pass
# in the default shape (nofirst: REDLAB_NANMEAN_FIRST_PASS=0):
# (1) the GPU's .npy output against the CPU's, byte for byte, in the default shape and in
#     SHAPES' double-buffered one and in nofirst (f32 and f64 with 10% NaN, f16 with NaN clustered, NaN
#     in a few columns' tiles, +inf and -inf in a column);
# (2) per call and in a CUDA graph of 50, each shape of SHAPES in turn, two passes, over
#     8192² f32 with 10% NaN, 2^22×32 with 10% NaN, 8192² with one NaN in each of its
#     first K columns (K = 128, 256, 512, 2048 tiles to rerun), and 8192×4096 f64 with 10% NaN; then
#     torch.nanmean and cupy.nanmean on the f32 files;
# (3) with OLD, another build: nanmean along the rows of 8192² f32 with 10% NaN and
#     without, and along the columns of 8192² and 2^22×32 f32 with 10% NaN, in the
#     default shape, OLD and BINARY alternating;
# (4) compute-sanitizer memcheck, racecheck and synccheck over the default shape and the
#     double-buffered one.
# Usage: SHAPES="default 1,1 4,2 4,1,2" scripts/gpu_nanmean_kept_columns.sh OUT BINARY [OLD]
set -u
out=$1 new=$2 old=${3:-}
shapes=${SHAPES:-default 1,1 4,2 4,1 2,4 2,2}
double=$(tr ' ' '\n' <<<"$shapes" | grep -m1 ',.*,2$' || echo 2,4)
# Runs "$@" with REDLAB_KEPT_COLUMNS set to $1 (unset for "default").
with_shape() {
  local shape=$1
  shift
  case $shape in
    default) "$@" ;;
    nofirst) REDLAB_NANMEAN_FIRST_PASS=0 "$@" ;;
    *) REDLAB_KEPT_COLUMNS=$shape "$@" ;;
  esac
}
mkdir -p "$out/npy"
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"
make_input() {
  python3 - "$1" "$2" "$3" "$4" <<'PY'
import sys
import numpy as np
path, kind, dims, dtype = sys.argv[1], sys.argv[2], tuple(int(d) for d in sys.argv[3].split("x")), sys.argv[4]
r = np.random.default_rng(5)
a = r.standard_normal(dims).astype(dtype)
if kind == "dense":
    a[r.random(dims) < 0.1] = np.nan
elif kind == "clustered":
    a[: dims[0] // 3, ::2] = np.nan
elif kind.startswith("cols"):
    for j in range(int(kind[4:])):
        a[(j * 7919) % dims[0], j] = np.nan
elif kind == "few":
    a[100, 3] = a[min(5000, dims[0] - 1), dims[1] // 2] = a[dims[0] - 1, dims[1] - 1] = np.nan
elif kind == "inf":
    a[5, 0], a[4000, 0] = np.inf, -np.inf
    a[8500, 7] = np.nan
np.save(path, a)
PY
}
for spec in dense:9000x100:float32 dense:9000x100:float64 clustered:20000x36:float16 \
  few:20000x64:float32 inf:9000x40:float32 cols600:9000x1000:float32 dense:8192x8192:float32; do
  IFS=: read -r kind dims dtype <<<"$spec"
  f="$out/npy/in-$kind-$dims-$dtype.npy"
  make_input "$f" "$kind" "$dims" "$dtype"
  "$new" run --stat nanmean --input "$f" --axis 0 --device cpu --out "$out/npy/cpu.npy" --force > /dev/null 2>&1 ||
    echo "FAILED cpu $spec" | tee -a "$out/summary.txt"
  for shape in default "$double" nofirst; do
    with_shape "$shape" "$new" run --stat nanmean --input "$f" --axis 0 --device cuda:0 \
      --out "$out/npy/gpu.npy" --force > "$out/npy/log.txt" 2>&1 ||
      echo "FAILED cuda $spec $shape: $(head -c 400 "$out/npy/log.txt")" | tee -a "$out/summary.txt"
    if cmp -s "$out/npy/cpu.npy" "$out/npy/gpu.npy"; then r=same; else r=differ; fi
    echo "nanmean $spec axis 0, shape $shape: $r" | tee -a "$out/summary.txt"
  done
done
make_input "$out/npy/dense-tall.npy" dense 4194304x32 float32
make_input "$out/npy/dense-f64.npy" dense 8192x4096 float64
for k in 128 256 512 2048; do make_input "$out/npy/cols$k.npy" "cols$k" 8192x8192 float32; done
for pass in 1 2; do
  for shape in $shapes; do
    for f in in-dense-8192x8192-float32 dense-tall cols128 cols256 cols512 cols2048 dense-f64; do
      with_shape "$shape" speed "$shape $f" "$new" --stat nanmean --input "$out/npy/$f.npy" --axis 0
    done
  done
done
python3 "$(dirname "$0")/../tools/nanmean_reference.py" "" "$out/npy/in-dense-8192x8192-float32.npy" \
  "$out/npy/dense-tall.npy" "$out/npy/cols512.npy" 2>&1 | tee -a "$out/summary.txt"
if [ -n "$old" ]; then
  for pass in 1 2; do
    for b in old new; do
      bin=$new
      [ "$b" = old ] && bin=$old
      speed "rows $b 10% NaN" "$bin" --stat nanmean --input "$out/npy/in-dense-8192x8192-float32.npy" --axis 1
      speed "rows $b clean" "$bin" --stat nanmean --dtype f32 --shape 8192x8192 --axis 1
      speed "rows $b 16385 clean" "$bin" --stat nanmean --dtype f32 --shape 1024x16385 --axis 1
      speed "columns $b 10% NaN" "$bin" --stat nanmean --input "$out/npy/in-dense-8192x8192-float32.npy" --axis 0
      speed "columns $b tall 10% NaN" "$bin" --stat nanmean --input "$out/npy/dense-tall.npy" --axis 0
    done
  done
fi
for tool in memcheck racecheck synccheck; do
  for shape in default "$double"; do
    with_shape "$shape" sanitize "$tool" --stat nanmean --input "$out/npy/in-dense-9000x100-float32.npy" --axis 0
    with_shape "$shape" sanitize "$tool" --stat nanmean --input "$out/npy/in-dense-9000x100-float64.npy" --axis 0
  done
done
rm -rf "$out/npy"
