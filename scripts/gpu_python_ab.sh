#!/usr/bin/env bash
# Two builds of the Python package alternated in one session: A = WHEEL_A (with
# OLD_PY_DIR's .py files over its own, where given), B = WHEEL_B with the working
# tree's python/redlab/*.py. Runs B's CUDA tests and memcheck on its result-block and
# sum tests, then tools/python_overhead.py for A and B in turn, ROUNDS times, and
# tools/python_breakdown.py for each. Writes log.txt, overhead-ab.jsonl and
# breakdown-ab.jsonl (each line tagged with its version and round) under OUT.
# Usage, on the GPU machine:
#   scripts/gpu_python_ab.sh WHEEL_A WHEEL_B OUT [ROUNDS] [OLD_PY_DIR]
#   SKIP_TESTS=1  (optional) times only: no pytest, no memcheck
#   SIZES=10,14,…  (optional) log2 sizes to time (default 10,14,16,20,24)
set -uo pipefail
wheel_a="$1" wheel_b="$2" out="$3" rounds="${4:-3}" old="${5:-}"
mkdir -p "$out"
log="$out/log.txt"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch; print('torch', torch.__version__)"
} >"$log" 2>&1
rm -rf /tmp/ab-A /tmp/ab-B
python3 -m pip install -q --no-deps --target /tmp/ab-A "$wheel_a" 2>&1 | tail -n 3
python3 -m pip install -q --no-deps --target /tmp/ab-B "$wheel_b" 2>&1 | tail -n 3
[ -n "$old" ] && cp "$old"/*.py /tmp/ab-A/redlab/
cp python/redlab/*.py /tmp/ab-B/redlab/
if [ -z "${SKIP_TESTS:-}" ]; then
  echo "== pytest (B)" >>"$log"
  PYTHONPATH=/tmp/ab-B python3 -m pytest -q python/tests/test_cuda.py 2>&1 | tail -n 6 >>"$log"
  echo "== memcheck (B)" >>"$log"
  PYTHONPATH=/tmp/ab-B compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -x \
    python/tests/test_cuda.py -k "torch_results or sum" 2>&1 | tail -n 4 >>"$log"
fi
tag() { sed "s/^{/{\"version\": \"$1\", \"round\": $2, /" "$3"; }
for r in $(seq 1 "$rounds"); do
  for v in A B; do
    rm -f /tmp/ab-o.jsonl
    PYTHONPATH=/tmp/ab-$v python3 tools/python_overhead.py --no-cpu --sizes "${SIZES:-10,14,16,20,24}" \
      --out /tmp/ab-o.jsonl >/dev/null 2>>"$log"
    tag "$v" "$r" /tmp/ab-o.jsonl >>"$out/overhead-ab.jsonl"
  done
done
for v in A B; do
  rm -f /tmp/ab-b.jsonl
  PYTHONPATH=/tmp/ab-$v python3 tools/python_breakdown.py --n 1024 --out /tmp/ab-b.jsonl \
    >/dev/null 2>>"$log"
  tag "$v" 0 /tmp/ab-b.jsonl >>"$out/breakdown-ab.jsonl"
done
