#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over axis reductions of `redlab
# run --device cuda:0`, each case "OP DTYPE SHAPE AXIS"; the summaries (and the run's
# verification line) are appended to OUT_DIR/sanitizers.txt, then printed.
#   scripts/axis_sanitizers.sh BINARY OUT_DIR "sum f32 9000x776 0" ...
set -u
bin=$1 out=$2
shift 2
for spec in "$@"; do
  set -- $spec
  for tool in memcheck racecheck synccheck; do
    echo "== $tool $spec" >> "$out/sanitizers.txt"
    compute-sanitizer --tool "$tool" "$bin" run --device cuda:0 --shape "$3" --axis "$4" --op "$1" --dtype "$2" 2>&1 |
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY|verified" >> "$out/sanitizers.txt"
  done
done
cat "$out/sanitizers.txt"
