#!/usr/bin/env python3
"""Whole-array reductions on the CPU: two redlab binaries alternating, in rounds.

Each round runs every case with binary A, then binary B: `redlab run --op OP --dtype T
--n N --repeat R --json` (its own seeded data, cold: the median of R calls on an input
far larger than the caches), or with `--map` for a user-defined map. Alternating in one
sitting keeps the machine's drifting bandwidth out of the A/B. Prints GB/s of input read
and B / A per case and round, and writes every record to OUT (JSON lines, tagged).

Usage: cpu_flat_ab.py A_BINARY B_BINARY OUT [ROUNDS] [N] [CASE,...]
  CASE: OP:DTYPE, or map=EXPR:DTYPE (a map of x, combined by sum)
"""
import json
import subprocess
import sys

first, second, out = sys.argv[1], sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
n = sys.argv[5] if len(sys.argv) > 5 else str(2**26)
cases = (sys.argv[6].split(",") if len(sys.argv) > 6 else
         ["sum:f32", "sum:f64", "sum:f16", "sum:i32", "max:f32", "max:f64", "max:i32",
          "max:i64", "argmax:f32", "argmax:f64", "map=x*2:f32", "map=abs(x):f32"])


def run(binary, case):
    what, dtype = case.rsplit(":", 1)
    if what.startswith("map="):
        args = ["--map", what[4:], "--combine", "sum"]
    else:
        args = ["--op", what]
    text = subprocess.run([binary, "run", *args, "--dtype", dtype, "--n", n, "--repeat", "15",
                           "--json"], check=True, capture_output=True, text=True).stdout
    record = json.loads(text)
    assert record["verified"], record
    return record


print("| round | case | A GB/s | B GB/s | B / A |")
print("|---|---|---:|---:|---:|")
with open(out, "a", encoding="utf-8") as sink:
    for r in range(1, rounds + 1):
        for case in cases:
            rates = []
            for version, binary in (("A", first), ("B", second)):
                record = run(binary, case)
                sink.write(json.dumps({"version": version, "round": r, "case": case, **record}) + "\n")
                rates.append(record["gbps"])
            print(f"| {r} | {case} | {rates[0]:.2f} | {rates[1]:.2f} | {rates[1] / rates[0]:.2f} |",
                  flush=True)
