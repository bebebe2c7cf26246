#!/usr/bin/env bash
# word_rows (rows of exactly 8, 16 or 32 4-byte elements side by side) on a CUDA GPU:
# every operator × type on those row lengths and their neighbours, verified bit for bit
# against the host by `redlab run` (with a CUDA graph of 20 calls, whose results must
# equal the timed calls'); compute-sanitizer over the kernel; then per call and in a graph
# of 100 calls, the new binary beside the one before the change, alternating (AB_SHAPES,
# AB_CASES: "op dtype" specs, comma-separated, and CHECK_SHAPES override the defaults),
# and tools/axis_compare.py for the rows of 32 beside torch (unless SKIP_COMPARE is set).
# AB_AXIS (default 1) is the reduced axis of the A/B shapes (0: columns).
#   scripts/gpu_word_rows.sh NEW_BINARY OLD_BINARY OUT_DIR [check|speed|all]
set -u
new=$1 old=$2 out=$3 phase=${4:-all}
mkdir -p "$out"
fails=0 runs=0
if [ "$phase" != speed ]; then
for shape in ${CHECK_SHAPES:-1001x32 4097x16 999x8 131x64 3x43x16 5000x31 777x33 1x32}; do
  axis=1
  [ "$shape" = 3x43x16 ] && axis=2
  for case in "sum f32" "max f32" "argmax f32" "argmin f32" "sum i32" "min i32" "xor u32" \
              "prod f32" "sum f64" "max f16"; do
    set -- $case
    runs=$((runs + 1))
    r=$("$new" run --device cuda:0 --shape "$shape" --axis "$axis" --op "$1" --dtype "$2" \
        --graph-calls 20 --json 2>&1)
    if ! grep -q '"verified":true' <<<"$r"; then
      fails=$((fails + 1))
      echo "FAIL $shape $case: $(head -c 500 <<<"$r")" | tee -a "$out/check.txt"
    fi
  done
done
echo "verification: $fails failures over $runs runs" | tee -a "$out/check.txt"
"$new" run --device cuda:0 --shape 1048576x32 --axis 1 --op sum --dtype f32 --explain 2>&1 |
  grep -i "word_rows\|verified" | tee -a "$out/check.txt"
for tool in memcheck racecheck synccheck; do
  for spec in "sum f32 1001x32" "argmax f32 999x8" "min i32 4097x16" "max f32 131x64"; do
    set -- $spec
    echo "== $tool $spec" >> "$out/sanitizers.txt"
    compute-sanitizer --tool "$tool" "$new" run --device cuda:0 --shape "$3" --axis 1 \
      --op "$1" --dtype "$2" 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|verified" >> "$out/sanitizers.txt"
  done
done
cat "$out/sanitizers.txt"
fi
[ "$phase" = check ] && exit 0
# A/B: the same shapes and operators, new and old binary alternating, twice.
for pass in 1 2; do
  for shape in ${AB_SHAPES:-1048576x32 2097152x16 4194304x8}; do
    IFS=, read -ra cases <<<"${AB_CASES:-sum f32,max f32,argmax f32,sum i32,xor u32}"
    for case in "${cases[@]}"; do
      set -- $case
      for which in new old; do
        bin=$new; [ "$which" = old ] && bin=$old
        "$bin" run --device cuda:0 --shape "$shape" --axis "${AB_AXIS:-1}" --op "$1" --dtype "$2" \
          --repeat 50 --graph-calls 100 --json 2>/dev/null |
          python3 -c "import json,sys; r=json.loads(sys.stdin.read()); \
print(json.dumps({'pass': $pass, 'bin': '$which', 'shape': '$shape', 'op': '$1', \
'dtype': '$2', 'gbps': r['gbps'], 'graph_gbps': r.get('graph_gbps'), \
'verified': r['verified'], 'strategy': r['strategy'][:40]}))" >> "$out/ab.jsonl"
      done
    done
  done
done
python3 - "$out/ab.jsonl" <<'EOF' | tee "$out/ab.md"
import json, os, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
cells = {}
for r in rows:
    cells.setdefault((r["shape"], r["op"], r["dtype"]), {}).setdefault(r["bin"], []).append(r)
print(f"| shape, axis {os.environ.get('AB_AXIS', '1')} | op | dtype | old GB/s per call | new | old GB/s in graph | new | graph new/old |")
print("|---|---|---|---|---|---|---|---|")
for (shape, op, dtype), by in cells.items():
    med = lambda b, k: statistics.median(r[k] for r in by.get(b, [])) if by.get(b) else float("nan")
    go, gn = med("old", "graph_gbps"), med("new", "graph_gbps")
    print(f"| {shape} | {op} | {dtype} | {med('old', 'gbps'):.0f} | {med('new', 'gbps'):.0f} "
          f"| {go:.0f} | {gn:.0f} | {gn / go:.2f} |")
bad = [r for r in rows if not r["verified"]]
print(f"unverified runs: {len(bad)}")
EOF
[ -n "${SKIP_COMPARE:-}" ] && exit 0
python3 tools/axis_compare.py "$new" --shapes 2 --ops sum,max,argmax \
  --add 2097152x16:1,4194304x8:1 --graph 100 --json "$out/compare.jsonl" \
  > "$out/compare.md" 2> "$out/compare.log"
cat "$out/compare.md"
