#!/usr/bin/env bash
# nanmean of tiles of at most a row on one CUDA GPU, before (OLD) and after (NEW) a
# change, and a third build (THIRD, optional) timed beside them: (1) NEW's .npy output
# against the CPU's, byte for byte, over numpy-made f32 and f16 inputs with 10% and 60%
# NaN, along rows (stat_warp_rows, stat_short, stat_thread_tiles) and columns (stat_kept,
# stat_short);
# (2) compute-sanitizer memcheck, racecheck and synccheck of NEW on NaN inputs; (3) the
# three binaries in turn, twice, on f32 inputs with 10% NaN (`speed` lines: 20 calls and
# a CUDA graph of 50; NO_SPEED=1 skips them).
# Usage: scripts/gpu_nanmean_warp.sh OUT OLD NEW [THIRD]
set -u
out=$1 old=$2 new=$3 third=${4:-}
mkdir -p "$out/npy"
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"
make() { # FILE DIMS DTYPE NAN_SHARE
  python3 -c "import numpy as np; r=np.random.default_rng(5); a=r.standard_normal(($(tr x , <<<"$2"))).astype(np.$3); a[r.random(a.shape)<$4]=np.nan; np.save('$1', a)"
}
for spec in 1000x300:1 3000x1024:1 2000x77:1 500x1000:1 777x33:1 5000x32:1 3000x7:1 999x1:1 9000x6:0 100000x32:0 700x40:0 20000x200:0; do
  dims=${spec%%:*} axis=${spec##*:}
  for dtype in float32 float16; do
    for share in 0.1 0.6; do
      f="$out/npy/in-$dims-$dtype-$share.npy"
      make "$f" "$dims" "$dtype" "$share"
      for dev in cpu cuda:0; do
        "$new" run --stat nanmean --input "$f" --axis "$axis" --device "$dev" \
          --out "$out/npy/out-$dev.npy" --force --explain > "$out/npy/log-$dev.txt" 2>&1 ||
          echo "FAILED $dims $dtype $share $dev: $(head -c 400 "$out/npy/log-$dev.txt")"
      done
      if cmp -s "$out/npy/out-cpu.npy" "$out/npy/out-cuda:0.npy"; then r=same; else r=differ; fi
      echo "nanmean $dims $dtype NaN $share axis $axis: $r ($(grep -o 'stat_[a-z_]*' "$out/npy/log-cuda:0.txt" | head -1))" |
        tee -a "$out/summary.txt"
    done
  done
done
for tool in memcheck racecheck synccheck; do
  for spec in 1000x300-float32-0.6:1 777x33-float16-0.1:1 5000x32-float32-0.6:1 9000x6-float32-0.6:0; do
    r=$(compute-sanitizer --tool "$tool" "$new" run --device cuda:0 --stat nanmean \
      --input "$out/npy/in-${spec%%:*}.npy" --axis "${spec##*:}" 2>&1)
    echo "$tool nanmean $spec: $(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards[a-z ]*' <<<"$r" | head -1)" |
      tee -a "$out/summary.txt"
  done
done
rm -rf "$out/npy"
# NO_SPEED=1: the checks only.
[ -n "${NO_SPEED:-}" ] && exit 0
mkdir -p "$out/speed"
for spec in 65536x1024:1 262144x300:1 262144x100:1 262144x40:1 1048576x32:1 4194304x32:0 8192x8192:0; do
  make "$out/speed/in-$spec.npy" "${spec%%:*}" float32 0.1
done
for pass in 1 2; do
  for which in old new third; do
    bin=${!which}
    [ -n "$bin" ] || continue
    for spec in 65536x1024:1 262144x300:1 262144x100:1 262144x40:1 1048576x32:1 4194304x32:0 8192x8192:0; do
      speed "$which-$pass" "$bin" --stat nanmean --input "$out/speed/in-$spec.npy" --axis "${spec##*:}"
    done
  done
done
rm -rf "$out/speed"
