#!/usr/bin/env bash
# nanmean on one CUDA GPU: (1) the GPU's .npy output against the CPU's, byte for byte,
# over f32 inputs with 10% NaN (numpy-made) along short rows and columns (stat_short's
# compaction) and long ones (stat_kept); (2) speed per call and in a CUDA graph on the
# axis issue's shapes; (3) compute-sanitizer memcheck and racecheck.
# Usage: scripts/gpu_nanmean.sh OUT BINARY
set -u
out=$1 new=$2
mkdir -p "$out/npy"
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"
for spec in 1048576x32:1 600x33:1 33x600:0 4096x256:1 4096x200:1 7x1:0 100x9000:1 9000x100:0; do
  dims=${spec%%:*} axis=${spec##*:}
  f="$out/npy/in-$dims.npy"
  python3 -c "import numpy as np; r=np.random.default_rng(3); a=r.standard_normal(($(tr x , <<<"$dims"))).astype(np.float32); a[r.random(a.shape)<0.1]=np.nan; np.save('$f', a)"
  for dev in cpu cuda:0; do
    "$new" run --stat nanmean --input "$f" --axis "$axis" --device "$dev" \
      --out "$out/npy/out-$dims-$dev.npy" --force --explain > "$out/npy/log-$dims-$dev.txt" 2>&1 ||
      echo "FAILED $dims $dev"
  done
  if cmp -s "$out/npy/out-$dims-cpu.npy" "$out/npy/out-$dims-cuda:0.npy"; then r=same; else r=differ; fi
  echo "nanmean $dims axis $axis: $r ($(grep -o 'stat_[a-z_]*' "$out/npy/log-$dims-cuda:0.txt" | head -1))" |
    tee -a "$out/summary.txt"
done
for shape in 8192x8192:1 8192x8192:0 1048576x32:1 65536x1024:1 32x4194304:1 4194304x32:0; do
  speed nanmean "$new" --stat nanmean --dtype f32 --shape "${shape%%:*}" --axis "${shape##*:}"
done
for tool in memcheck racecheck; do
  r=$(compute-sanitizer --tool "$tool" "$new" run --device cuda:0 --stat nanmean \
    --input "$out/npy/in-600x33.npy" --axis 1 2>&1)
  echo "$tool nanmean 600x33: exit $? $(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards[a-z ]*' <<<"$r" | head -1)" |
    tee -a "$out/summary.txt"
done
rm -rf "$out/npy"
