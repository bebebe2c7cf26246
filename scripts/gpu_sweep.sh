# Sourced by the GPU scripts.
# gpu_family prints the tuning family of GPU 0 (the name of its shipped database,
# tuning/cuda/FAMILY.json): nvidia-h200 or nvidia-h100.
gpu_family() {
  case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
    *H200*) echo nvidia-h200 ;;
    *) echo nvidia-h100 ;;
  esac
}

# sanitize_runs FILE BINARY SPEC... runs compute-sanitizer memcheck, racecheck and
# synccheck over `BINARY run` for each SPEC ("OP DTYPE N [NAME=VALUE ...]"; with
# parameters the run names the production variant), appending each summary, the
# verification line and any error to FILE.
sanitize_runs() {
  local file=$1 bin=$2 tool spec op dtype n rest p
  shift 2
  for tool in memcheck racecheck synccheck; do
    for spec in "$@"; do
      read -r op dtype n rest <<<"$spec"
      local args=()
      for p in $rest; do args+=(--param "$p"); done
      [ ${#args[@]} -gt 0 ] && args=(--variant production "${args[@]}")
      echo "== $tool $spec" >>"$file"
      compute-sanitizer --tool "$tool" "$bin" run --device cuda:0 "${args[@]}" \
        --op "$op" --dtype "$dtype" --n "$n" 2>&1 | grep -E "SUMMARY|verified|rror" >>"$file"
    done
  done
}

# sweep_configs OPS DTYPES SIZES LIMIT runs the production kernel of $after at each entry
# of CONFIGS (space-separated lists of NAME=VALUE joined by commas; "-" for the defaults)
# beside CUB (${common[@]}), writing $out/sweep-N.jsonl.
sweep_configs() {
  local ops=$1 dtypes=$2 sizes=$3 limit=$4 n=0 config p
  for config in ${CONFIGS:-}; do
    n=$((n + 1))
    local params=() pairs=()
    if [ "$config" != "-" ]; then
      IFS=, read -ra pairs <<<"$config"
      for p in "${pairs[@]}"; do params+=(--param "$p"); done
    fi
    echo "== production $config"
    timeout "$limit" "$after" bench "${common[@]}" --variants production \
      "${params[@]}" --ops "$ops" --dtypes "$dtypes" --sizes "$sizes" \
      --json "$out/sweep-$n.jsonl" 2>&1 | grep -E "vs cub|rror"
  done
}

# packed_work OUT makes a work folder ($work) holding gpu.txt, builds CUB at
# /tmp/redlab-cub (log in $work/nvcc.log) and defines pack, which refreshes OUT/all.tgz
# from $work (one file back from the device however many records a run writes).
packed_work() {
  work=$(mktemp -d)
  packed_out=$1
  pack() { tar czf "$packed_out/all.tgz" -C "$work" .; }
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$work/gpu.txt"
  nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/redlab-cub tools/cub/cub_reduce.cu > "$work/nvcc.log" 2>&1
}

# retune_then_ab OLD NEW LIMIT MERGE_FROM AB_SIZES TUNE_ARGS... re-tunes the f16/bf16
# sums with `NEW tune` (graph time, merged into MERGE_FROM, at most LIMIT seconds; the
# sizes and budget in TUNE_ARGS) into $work/tuned, then runs `auto` of OLD with its
# shipped database against NEW with the re-tuned one beside CUB at AB_SIZES
# (gpu_binary_ab.sh, ROUNDS rounds, default 2), packing after each step.
retune_then_ab() {
  local old=$1 new=$2 limit=$3 merge_from=$4 ab_sizes=$5
  shift 5
  timeout "$limit" "$new" tune --device cuda:0 --variants production --ops sum \
    --dtypes f16,bf16 "$@" --objective graph --merge-from "$merge_from" \
    --out-dir "$work/tuned" > "$work/tune.log" 2>&1
  echo "tune exit $?" >> "$work/tune.log"
  pack
  SETS="sum f16,bf16 $ab_sizes" ROUNDS=${ROUNDS:-2} BENCH_LIMIT=100 \
    bash "$here/gpu_binary_ab.sh" /tmp/redlab-cub "$work/ab" shipped="$old" \
    tuned="env REDLAB_TUNING_DIR=$work/tuned $new" > "$work/ab.log" 2>&1
  pack
}
