#!/usr/bin/env bash
# The wrong integer sums of `x * x` along axes on CUDA (results/h200-map-bug): run the
# commands that failed (before row_tiles loaded mapped partial tiles unconditionally),
# tell the driver's PTX assembly from NVRTC's machine code (REDLAB_CUDA_CODE=cubin), keep
# both images, run the kernels under compute-sanitizer, try neighbouring maps, types,
# ptxas levels and inputs, and check the guard and the fix.
# Usage, on the GPU machine: scripts/gpu_map_bug.sh REDLAB_BINARY OUT
set -uo pipefail
bin="$1" out="$2"
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv
  command -v ptxas && ptxas --version | tail -2
} >"$out/gpu.txt" 2>&1
export REDLAB_CUDA_MAP_GUARD="${REDLAB_CUDA_MAP_GUARD:-off}"
# One verified run: its strategy and verdict (every output against the CPU).
r() {
  echo "== ${CODE:-ptx} $*"
  REDLAB_CUDA_CODE="${CODE:-ptx}" timeout 120 "$bin" run --device cuda:0 --explain "$@" 2>&1 |
    grep -E "strategy|verified|error" | sed 's/^/   /'
}
bug=(--map 'x * x' --dtype i32 --shape 513x1031 --axis 1)
want() { [[ " ${STEPS:-repro dump sanitize variants opencl options blocking pattern clamped guard fixed speed} " == *" $1 "* ]]; }
want repro && {
  for code in ptx cubin; do
    for _ in 1 2 3; do CODE=$code r "${bug[@]}"; done
  done
}
want dump && {
  # The driver keeps what it assembled from PTX in its JIT cache: a fresh cache holds
  # only this run's modules.
  CUDA_CACHE_PATH="$out/jit-cache" REDLAB_CUDA_DUMP="$out/dump-ptx" CODE=ptx r "${bug[@]}"
  REDLAB_CUDA_DUMP="$out/dump-cubin" CODE=cubin r "${bug[@]}"
  for f in "$out"/dump-cubin/*.cubin; do
    cuobjdump -sass "$f" >"${f%.cubin}.sass" 2>&1
  done
  for f in "$out"/dump-ptx/*.ptx; do
    ptxas -arch=sm_90 -lineinfo -o "${f%.ptx}.local.cubin" "$f" &&
      cuobjdump -sass "${f%.ptx}.local.cubin" >"${f%.ptx}.local.sass" 2>&1
  done
}
want sanitize && {
  for tool in memcheck racecheck synccheck initcheck; do
    for code in ptx cubin; do
      echo "== compute-sanitizer $tool ($code), 4x1031"
      REDLAB_CUDA_CODE=$code timeout 300 compute-sanitizer --tool "$tool" "$bin" run --device cuda:0 \
        --map 'x * x' --dtype i32 --shape 4x1031 --axis 1 2>&1 | tail -6 | sed 's/^/   /'
    done
  done
}
want variants && {
  for code in ptx cubin; do
    export CODE=$code
    r --map 'x * 3' --dtype i32 --shape 513x1031 --axis 1
    r --map 'x * x' --dtype i32 --shape 513x1031 --axis 1 --combine max
    r --map 'x * x' --dtype i32 --shape 513x1024 --axis 1
    r --map 'x * x' --dtype i32 --shape 513x8192 --axis 1
    r --map 'x * x' --dtype i32 --shape 1031x513 --axis 0
    r --map 'x * x' --dtype i8 --shape 513x1031 --axis 1
    r --map 'x * x' --dtype u16 --shape 513x1031 --axis 1
    r --map 'x * x' --dtype i32 --n 1000003
    r --map 'x + x' --dtype i32 --shape 513x1031 --axis 1
    r --map '(x + 1) * (x - 1)' --dtype i32 --shape 513x1031 --axis 1
  done
}
want opencl && {
  echo "== OpenCL devices"
  "$bin" devices 2>&1 | grep -i opencl | sed 's/^/   /'
  for map in 'x * x' 'x * 3'; do
    echo "== opencl:0 $map"
    timeout 120 "$bin" run --device opencl:0 --explain --map "$map" --dtype i32 --shape 513x1031 \
      --axis 1 2>&1 | grep -E "device|strategy|verified|error" | sed 's/^/   /'
  done
}
want options && {
  # ptxas's optimization levels, on NVRTC's machine code.
  for level in 0 1 2 3; do
    REDLAB_NVRTC_OPTIONS="-Xptxas -O$level" CODE=cubin r --map 'x * 3' --dtype i32 --shape 513x1031 --axis 1
  done
}
want blocking && {
  # Launches one at a time: a race between the job's own copies and kernels goes away.
  CUDA_LAUNCH_BLOCKING=1 r --map 'x * 3' --dtype i32 --shape 513x1031 --axis 1
}
want pattern && {
  # Inputs whose right answers are known at a glance, each row's result kept per run.
  python3 - "$out" <<'EOF2'
import sys, numpy as np
o = sys.argv[1]
np.save(f"{o}/zeros.npy", np.zeros((4, 1031), np.int32))
np.save(f"{o}/ones.npy", np.ones((4, 1031), np.int32))
np.save(f"{o}/index.npy", np.arange(4 * 1031, dtype=np.int32).reshape(4, 1031))
np.save(f"{o}/random.npy", np.random.default_rng(3).integers(-2000, 2000, (4, 1031)).astype(np.int32))
EOF2
  for input in zeros ones index random; do
    for run in 1 2 3; do
      REDLAB_CUDA_CODE=cubin timeout 60 "$bin" run --device cuda:0 --input "$out/$input.npy" \
        --map 'x * 3' --axis 1 --out "$out/$input-x3-$run.npy" 2>&1 | grep -E "verified|error" | sed "s/^/   $input $run /"
    done
  done
  python3 - "$out" <<'EOF2'
import sys, glob, numpy as np
o = sys.argv[1]
for name in ["zeros", "ones", "index", "random"]:
    x = np.load(f"{o}/{name}.npy").astype(np.int64)
    want = (3 * x).sum(axis=1)
    for f in sorted(glob.glob(f"{o}/{name}-x3-*.npy")):
        got = np.load(f)
        print(name, f[-6:-4], "errors", (got - want).tolist())
EOF2
}
want clamped && {
  # row_tiles with unpredicated (clamped) loads in its partial tiles: the experiment's
  # define (SEG_CLAMPED_LOADS) is gone, the form is now what mapped inputs always run.
  for map in 'x * x' 'x * 3' 'x + x'; do
    for code in ptx cubin; do
      REDLAB_NVRTC_OPTIONS=-DSEG_CLAMPED_LOADS CODE=$code r --map "$map" --dtype i32 --shape 513x1031 --axis 1
    done
  done
}
want guard && {
  # The shipped rule: these map on the host on CUDA, then reduce with the plain kernels.
  for map in 'x * x' 'x * 3' 'x + x' 'x + 1'; do
    REDLAB_CUDA_MAP_GUARD=on r --map "$map" --dtype i32 --shape 513x1031 --axis 1
  done
  REDLAB_CUDA_MAP_GUARD=on r --map 'x * x' --dtype u16 --shape 64x9000 --axis 1
}
want fixed && {
  # After the fix (row_tiles loads its partial tiles unconditionally), unguarded: every
  # strategy with the maps that failed and their neighbours, and the plain operators.
  for dtype in i32 u32 i16 u16; do
    for map in 'x * x' 'x * 3' 'x + x' 'x + 1'; do
      r --map "$map" --dtype $dtype --shape 513x1031 --axis 1
    done
  done
  for shape in 64x9000 4x1031 513x100 513x20 1031x513 1031x4096; do
    for axis in 1 0; do r --map 'x * x' --dtype i32 --shape $shape --axis $axis; done
  done
  r --map 'x * x' --dtype i32 --n 528903 --segment-size 1031
  r --map 'x * 3' --dtype i32 --shape 513x1031 --axis 1 --combine argmax
  for op in sum min argmax; do
    for dtype in i32 f32 f64 f16; do r --op $op --dtype $dtype --shape 513x1031 --axis 1; done
  done
  for tool in memcheck racecheck synccheck; do
    echo "== compute-sanitizer $tool, x * 3 over i32 64x9000 axis 1"
    timeout 300 compute-sanitizer --tool "$tool" "$bin" run --device cuda:0 \
      --map 'x * 3' --dtype i32 --shape 64x9000 --axis 1 2>&1 | grep -E "verified|SUMMARY" | sed 's/^/   /'
  done
}
want speed && [ -n "${OLD:-}" ] && {
  # Partial tiles before and after the fix, one call each, the graph's steady state.
  for spec in 'f32|8192x8191' 'i32|8192x8191' 'f32|16384x3000' 'f64|4096x12000'; do
    IFS='|' read -r dtype shape <<<"$spec"
    for which in old new; do
      b=$bin; [ $which = old ] && b=$OLD
      echo "== $which sum $dtype $shape axis 1"
      REDLAB_CUDA_MAP_GUARD=off timeout 120 "$b" run --device cuda:0 --op sum --dtype $dtype \
        --shape $shape --axis 1 --graph-calls 50 --repeat 20 2>&1 | grep -E "verified|time|graph" | sed 's/^/   /'
    done
  done
}
