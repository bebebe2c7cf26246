#!/usr/bin/env python3
"""Short-row axis reductions on the CPU: two redlab binaries and numpy, in rounds.

Each round runs every (shape, op) with binary A, then binary B (`redlab run --op OP
--dtype DTYPE --shape S --axis 1 --repeat R --json`, its own seeded data, median time),
then numpy's `a.sum(axis=1)` / `a.max(axis=1)` on a seeded array of the same shape
(median of R). Alternating in one sitting keeps the machine's drifting bandwidth out of
the A/B. Prints GB/s of input read and the ratios.

Usage: cpu_binaries_rows.py A_BINARY B_BINARY [ROUNDS] [REPEAT] [ROWSxLEN:OP[:DTYPE],...]
REDLAB_ARGS, if set, is added to every `redlab run` (e.g. `--device cpu --threads 2` on a
machine with a GPU, whose default device it would be).
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

first, second = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 9
names = (sys.argv[5].split(",") if len(sys.argv) > 5
         else ["1048576x32:sum", "4194304x3:sum", "1048576x32:max", "4194304x3:max"])
# ROWSxLEN:OP[:DTYPE], f32 unless given.
cases = [(tuple(map(int, c.split(":")[0].split("x"))), c.split(":")[1],
          (c.split(":") + ["f32"])[2]) for c in names]


def redlab(binary, shape, op, dtype):
    out = subprocess.run(
        [binary, "run", "--op", op, "--dtype", dtype, "--shape", "x".join(map(str, shape)),
         "--axis", "1", "--repeat", str(repeat), "--json"] + os.environ.get("REDLAB_ARGS", "").split(),
        check=True, capture_output=True, text=True).stdout
    record = json.loads(out)
    assert record["verified"], record
    return record["gbps"]


def reduce_rows(a, op):
    """numpy's reduction of each row: the array method, or the bitwise ufunc's reduce."""
    bitwise = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
    return bitwise[op].reduce(a, axis=1) if op in bitwise else getattr(a, op)(axis=1)


def numpy_gbps(shape, op, dtype):
    rng = np.random.default_rng(1)
    floats = {"f32": np.float32, "f64": np.float64}
    a = (rng.standard_normal(shape, dtype=floats[dtype]) if dtype in floats
         else rng.integers(-1000, 1000, shape, dtype=np.dtype(dtype.replace("i", "int"))))
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        reduce_rows(a, op)
        times.append(time.perf_counter() - t)
    return a.nbytes / sorted(times)[len(times) // 2] / 1e9


print("| round | shape | op, dtype | A GB/s | B GB/s | B / A | numpy GB/s | A / numpy | B / numpy |")
print("|---|---|---|---|---|---|---|---|---|")
for r in range(1, rounds + 1):
    for shape, op, dtype in cases:
        a = redlab(first, shape, op, dtype)
        b = redlab(second, shape, op, dtype)
        n = numpy_gbps(shape, op, dtype)
        print(f"| {r} | {shape[0]}×{shape[1]} | {op} {dtype} | {a:.2f} | {b:.2f} | {b / a:.2f} "
              f"| {n:.2f} | {a / n:.2f} | {b / n:.2f} |", flush=True)
