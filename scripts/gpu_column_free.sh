#!/usr/bin/env bash
# column_words' order-free fold (min, max, integer sums, bitwise operators: each lane
# class folded as its words arrive) on a CUDA GPU, against the binary before, which ran
# these operators on column_tiles for most grids and tested every row of short columns.
#   [STAGES="check sanitize speed torch argcheck argspeed argtorch"] \
#       scripts/gpu_column_free.sh OUT BASE NEW [OTHER_NAME=OTHER_BINARY ...]
# 1. NEW verified (every output bitwise equal to the host's) on column shapes of every
#    kind (whole tiles, exactly 1024/2048/4096 rows, partial tiles, the tree, a middle
#    axis, short columns) × order-free operators and types, and float sums as a control;
# 2. compute-sanitizer memcheck and racecheck of the order-free path;
# 3. per-call and graph GB/s of column jobs, every binary named, alternated twice;
# 4. NEW's maxima and minima of columns beside torch (tools/axis_compare.py --graph);
# 5. the same for argmin/argmax, which column_words scans by order key (arg* stages):
#    verified with ties (--dist ints) and NaNs, memcheck, speed, torch.
set -u
stages=" ${STAGES:-check sanitize speed torch} "
want() { [[ "$stages" == *" $1 "* ]]; }
out=$1 base=$2 new=$3
shift 3
others=("$@")
mkdir -p "$out"
log() { echo "$*" | tee -a "$out/summary.txt"; }
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"

if want check; then
  fails=0 runs=0
  for spec in 16384x200:0 9000x776:0 1024x8192:0 2048x1028:0 4096x516:0 20011x132:0 \
              300x128:0 1000x4100:0 8200x136:0 3x40x132:1 33x4096:0; do
    shape=${spec%:*} axis=${spec#*:}
    for op in max min; do verify check.txt --shape "$shape" --axis "$axis" --op "$op" --dtype f32; done
    for op in sum xor max; do verify check.txt --shape "$shape" --axis "$axis" --op "$op" --dtype i32; done
    verify check.txt --shape "$shape" --axis "$axis" --op min --dtype u32
    verify check.txt --shape "$shape" --axis "$axis" --op max --dtype f16
    verify check.txt --shape "$shape" --axis "$axis" --op min --dtype bf16
    verify check.txt --shape "$shape" --axis "$axis" --op sum --dtype i16
    verify check.txt --shape "$shape" --axis "$axis" --map 'abs(x)' --combine max --dtype i32
    verify check.txt --shape "$shape" --axis "$axis" --op sum --dtype f32
  done
  # NaNs planted in some columns: max and min must give NaN there.
  python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(11)
x = rng.standard_normal((9000, 256)).astype(np.float32)
x.reshape(-1)[rng.choice(x.size, 40, replace=False)] = np.nan
np.save("/tmp/col-nan.npy", x)
np.save("/tmp/col-nan16.npy", x.astype(np.float16))
PY
  for op in max min; do
    verify check.txt --input /tmp/col-nan.npy --axis 0 --op "$op"
    verify check.txt --input /tmp/col-nan16.npy --axis 0 --op "$op"
  done
  log "verification: $fails failures over $runs runs"
fi

if want sanitize; then
  for tool in memcheck racecheck; do
    for args in "--shape 9000x776 --axis 0 --op max --dtype f32" \
                "--shape 300x132 --axis 0 --op sum --dtype i32" \
                "--shape 1024x4096 --axis 0 --op min --dtype f16"; do
      # shellcheck disable=SC2086
      sanitize "$tool" $args
    done
  done
fi

bins=("base=$base" "new=$new" "${others[@]}")
free_rows() {
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op max --dtype f32
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op sum --dtype i32
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op xor --dtype u32
  speed "$1" "$2" --shape 65536x1024 --axis 0 --op max --dtype f32
  speed "$1" "$2" --shape 1024x65536 --axis 0 --op max --dtype f32
  speed "$1" "$2" --shape 4096x16384 --axis 0 --op min --dtype f32
  speed "$1" "$2" --shape 1048576x256 --axis 0 --op max --dtype f32
  speed "$1" "$2" --shape 1000x65536 --axis 0 --op max --dtype f32
  speed "$1" "$2" --shape 9000x8192 --axis 0 --op max --dtype f32
  speed "$1" "$2" --shape 3000x16384 --axis 0 --op min --dtype i32
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op max --dtype f16
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op sum --dtype f32
}
want speed && alternate free_rows "${bins[@]}"

if want argcheck; then
  fails=0 runs=0
  for spec in 16384x200:0 9000x776:0 1024x8192:0 2048x1028:0 300x128:0 1000x4100:0 \
              8200x136:0 3x40x132:1 33x4096:0; do
    shape=${spec%:*} axis=${spec#*:}
    for op in argmax argmin; do
      verify argcheck.txt --shape "$shape" --axis "$axis" --op "$op" --dtype f32
      verify argcheck.txt --shape "$shape" --axis "$axis" --op "$op" --dtype f32 --dist ints
    done
    verify argcheck.txt --shape "$shape" --axis "$axis" --op argmax --dtype i32 --dist ints
    verify argcheck.txt --shape "$shape" --axis "$axis" --op argmin --dtype f16
    verify argcheck.txt --shape "$shape" --axis "$axis" --op argmax --dtype u16 --dist ints
  done
  python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(12)
x = rng.integers(-3, 4, (9000, 256)).astype(np.float32)
x.reshape(-1)[rng.choice(x.size, 60, replace=False)] = np.nan
np.save("/tmp/col-argnan.npy", x)
np.save("/tmp/col-argnan16.npy", x.astype(np.float16))
PY
  for op in argmax argmin; do
    verify argcheck.txt --input /tmp/col-argnan.npy --axis 0 --op "$op"
    verify argcheck.txt --input /tmp/col-argnan16.npy --axis 0 --op "$op"
  done
  log "argmin/argmax verification: $fails failures over $runs runs"
  for args in "--shape 9000x776 --axis 0 --op argmax --dtype f32" \
              "--shape 300x132 --axis 0 --op argmin --dtype f16"; do
    # shellcheck disable=SC2086
    sanitize memcheck $args
  done
fi

arg_rows() {
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op argmax --dtype f32
  speed "$1" "$2" --shape 65536x1024 --axis 0 --op argmax --dtype f32
  speed "$1" "$2" --shape 1024x65536 --axis 0 --op argmax --dtype f32
  speed "$1" "$2" --shape 1048576x256 --axis 0 --op argmin --dtype f32
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op argmin --dtype i32
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op argmax --dtype f16
  speed "$1" "$2" --shape 1000x65536 --axis 0 --op argmax --dtype f32
  speed "$1" "$2" --shape 8192x8192 --axis 0 --op max --dtype f32
}
want argspeed && alternate arg_rows "${bins[@]}"

want argtorch && python3 tools/axis_compare.py "$new" --ops argmax --shapes 1 --graph 50 \
  --reps 20 --add 65536x1024:0,1024x65536:0,1048576x256:0 \
  --json "$out/argtorch.jsonl" > "$out/argtorch.md" 2> "$out/argtorch.log" &&
  tail -n 20 "$out/argtorch.md"

want torch || exit 0
python3 tools/axis_compare.py "$new" --ops max,min --shapes 1 --graph 50 --reps 20 \
  --add 65536x1024:0,1024x65536:0,4096x16384:0,1048576x256:0 \
  --json "$out/torch.jsonl" > "$out/torch.md" 2> "$out/torch.log"
tail -n 40 "$out/torch.md"
