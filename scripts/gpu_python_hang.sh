#!/usr/bin/env bash
# The Python CUDA test that did not finish (int32 user-defined reductions of one torch
# tensor): each of its calls in its own process under a time limit, timed in phases
# (scripts/gpu_python_one_call.py). A call still running at the limit gets its GPU's
# utilization and its threads' kernel stacks recorded, then compute-sanitizer runs it.
# Usage, on the GPU machine with the wheel installed: scripts/gpu_python_hang.sh OUT
set -uo pipefail
out="$1"
mkdir -p "$out"
limit="${LIMIT:-60}"
stuck=()
one() {
  local label="$1"
  shift
  echo "== $label: $*"
  python3 scripts/gpu_python_one_call.py "$@" $((limit - 5)) >"$out/call.log" 2>&1 &
  local pid=$! waited=0
  while kill -0 "$pid" 2>/dev/null && ((waited < limit)); do
    sleep 1
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "   STILL RUNNING after ${limit} s"
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader | sed 's/^/   gpu: /'
    for task in /proc/"$pid"/task/*; do
      echo "   thread $(basename "$task") $(cat "$task/comm") wchan=$(cat "$task/wchan" 2>/dev/null)"
    done
    command -v gdb >/dev/null &&
      timeout 60 gdb -batch -p "$pid" -ex "thread apply all bt 12" 2>&1 | grep -E "^#|^Thread" | head -80 | sed 's/^/   /'
    kill -9 "$pid"
    stuck+=("$(printf '%q ' "$@")")
  fi
  wait "$pid" 2>/dev/null
  sed 's/^/   /' "$out/call.log"
}
calls=()
for spec in "x * x|sum|-" "abs(x)|max|-" "x > 0 ? x : 0|sum|r / n" "x * x|argmax|-"; do
  IFS='|' read -r map combine post <<<"$spec"
  for axis in none 0 1; do calls+=("$map|$combine|$post|$axis|"); done
  calls+=("$map|$combine|$post|1|view")
done
for guard in ${GUARDS:-off on}; do
  export REDLAB_CUDA_MAP_GUARD=$guard
  for spec in "${calls[@]}"; do
    IFS='|' read -r map combine post axis view <<<"$spec"
    one "guard $guard int32" int32 "$map" "$combine" "$post" "$axis" $view
  done
done
if [[ "${FLOATS:-}" == yes ]]; then
  export REDLAB_CUDA_MAP_GUARD=off
  for spec in "${calls[@]}"; do
    IFS='|' read -r map combine post axis view <<<"$spec"
    one "float32" float32 "$map" "$combine" "$post" "$axis" $view
  done
fi
echo "== stuck: ${#stuck[@]}"
for s in "${stuck[@]:0:2}"; do
  echo "== compute-sanitizer memcheck: $s"
  eval "set -- $s"
  timeout 120 compute-sanitizer --tool memcheck python3 scripts/gpu_python_one_call.py "$@" 100 2>&1 | tail -30 | sed 's/^/   /'
done
