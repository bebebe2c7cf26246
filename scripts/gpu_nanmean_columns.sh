#!/usr/bin/env bash
# nanmean over columns on one CUDA GPU, the moments' columns kernel first and stat_kept
# only over tiles whose mean came out NaN (redlab_kernels::nan_columns):
# (1) the GPU's .npy output against the CPU's, byte for byte, over f32 inputs that are
#     clean, with 10% NaN (nearly every tile runs again), with NaN in a few columns'
#     tiles only, and with +inf and -inf in a column (a NaN mean without NaN);
# (2) per call and in a CUDA graph, OLD and NEW alternating (two passes), var beside;
# (3) compute-sanitizer memcheck, racecheck and synccheck over both kernels of the path.
# Usage: scripts/gpu_nanmean_columns.sh OUT OLD NEW
set -u
out=$1 old=$2 new=$3
mkdir -p "$out/npy"
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"
for spec in clean:9000x100 dense:9000x100 few:20000x64 inf:9000x40 dense:700x6 clean:8192x8192; do
  kind=${spec%%:*} dims=${spec##*:}
  f="$out/npy/in-$kind-$dims.npy"
  python3 - "$f" "$kind" "$(tr x , <<<"$dims")" <<'PY'
import sys
import numpy as np
path, kind, dims = sys.argv[1], sys.argv[2], tuple(int(d) for d in sys.argv[3].split(","))
r = np.random.default_rng(5)
a = r.standard_normal(dims).astype(np.float32)
if kind == "dense":
    a[r.random(dims) < 0.1] = np.nan
elif kind == "few":
    a[100, 3] = a[9000, 3] = a[17000, 40] = np.nan
elif kind == "inf":
    a[5, 0], a[4000, 0] = np.inf, -np.inf
    a[8500, 7] = np.nan
np.save(path, a)
PY
  for dev in cpu cuda:0; do
    "$new" run --stat nanmean --input "$f" --axis 0 --device "$dev" \
      --out "$out/npy/out-$kind-$dims-$dev.npy" --force --explain > "$out/npy/log-$kind-$dims-$dev.txt" 2>&1 ||
      echo "FAILED $kind $dims $dev" | tee -a "$out/summary.txt"
  done
  if cmp -s "$out/npy/out-$kind-$dims-cpu.npy" "$out/npy/out-$kind-$dims-cuda:0.npy"; then r=same; else r=differ; fi
  echo "nanmean $kind $dims axis 0: $r ($(grep -o 'stat_[a-z_]* first\|stat_[a-z_]*' "$out/npy/log-$kind-$dims-cuda:0.txt" | head -1))" |
    tee -a "$out/summary.txt"
done
for pass in 1 2; do
  for shape in 8192x8192 4194304x32 1000x65536 2000x32768 300x65536; do
    speed "old" "$old" --stat nanmean --dtype f32 --shape "$shape" --axis 0
    speed "new" "$new" --stat nanmean --dtype f32 --shape "$shape" --axis 0
    [ "$pass" = 1 ] && speed "var" "$new" --stat var --dtype f32 --shape "$shape" --axis 0
  done
done
for tool in memcheck racecheck synccheck; do
  sanitize "$tool" --stat nanmean --input "$out/npy/in-inf-9000x40.npy" --axis 0
done
rm -rf "$out/npy"
