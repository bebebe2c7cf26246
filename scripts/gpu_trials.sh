#!/usr/bin/env bash
# The four column/per-call trials in one device call, each against main's binary, and
# their merge (combo), so one call says which to keep:
#   scripts/gpu_trials.sh OUT BASE COMBO RECYCLE WIDE ARGIDX CWMATH
# 1. COMBO verified bit for bit on wide (8-byte) columns and on argmax/narrow columns,
#    and compute-sanitizer memcheck/racecheck/synccheck of its column_words;
# 2. per-call and graph GB/s, each binary on the rows its change is for, BASE beside it,
#    two passes: recycle (per call against graph), wide (f64/i64 columns), argidx (argmax
#    columns), cwmath (the 8192×8192 controls and 2^22×32 argmax), combo on all.
set -u
out=$1 base=$2 combo=$3 recycle=$4 wide=$5 argidx=$6 cwmath=$7
new=$combo
mkdir -p "$out"
log() { echo "$*" | tee -a "$out/summary.txt"; }
# shellcheck source=scripts/gpu_runs.sh
source "$(dirname "$0")/gpu_runs.sh"

fails=0 runs=0
for shape in 8192x1024 9000x132 300x132 20011x8 17000x16 1000x4096; do
  for op in max argmax; do verify check.txt --shape "$shape" --axis 0 --op "$op" --dtype f64 --dist ints; done
  verify check.txt --shape "$shape" --axis 0 --op sum --dtype i64
  verify check.txt --shape "$shape" --axis 0 --op xor --dtype u64
  verify check.txt --shape "$shape" --axis 0 --op argmax --dtype f32 --dist ints
  verify check.txt --shape "$shape" --axis 0 --op sum --dtype f32
done
log "verification: $fails failures over $runs runs"
for tool in memcheck racecheck synccheck; do
  sanitize "$tool" --shape 9000x132 --axis 0 --op argmax --dtype f64
done
sanitize memcheck --shape 20011x8 --axis 0 --op max --dtype f64

row() { # NAME BIN LIST: one speed line per argument set of LIST, the sets joined by ';'
  local name=$1 bin=$2 sets args a
  IFS=';' read -r -a sets <<<"$3"
  for args in "${sets[@]}"; do
    read -r -a a <<<"$args"
    speed "$name" "$bin" "${a[@]}"
  done
}
per_call="--shape 64x8 --axis 0 --op sum --dtype f32;--shape 1024x64 --axis 1 --op sum --dtype f32;--shape 8192x8192 --axis 0 --op sum --dtype f32;--shape 16777216x8 --axis 0 --op sum --dtype f32"
wide_rows="--shape 8192x4096 --axis 0 --op max --dtype f64;--shape 8192x4096 --axis 0 --op argmax --dtype f64;--shape 8192x4096 --axis 0 --op sum --dtype i64;--shape 2097152x16 --axis 0 --op max --dtype f64"
arg_rows="--shape 8192x8192 --axis 0 --op argmax --dtype f32;--shape 4194304x32 --axis 0 --op argmax --dtype f32;--shape 16777216x8 --axis 0 --op argmax --dtype f32"
control_rows="--shape 8192x8192 --axis 0 --op max --dtype f32;--shape 8192x8192 --axis 0 --op sum --dtype f32;--shape 4194304x32 --axis 0 --op sum --dtype f32"
for pass in 1 2; do
  row base "$base" "$per_call;$wide_rows;$arg_rows;$control_rows"
  row recycle "$recycle" "$per_call"
  row wide "$wide" "$wide_rows"
  row argidx "$argidx" "$arg_rows"
  row cwmath "$cwmath" "$arg_rows;$control_rows"
  row combo "$combo" "$per_call;$wide_rows;$arg_rows;$control_rows"
done
log "done"
