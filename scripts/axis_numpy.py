#!/usr/bin/env python3
"""Axis reductions on the CPU, redlab against numpy in the same sitting.

For each shape and axis: `redlab run --op OP --dtype f32 --shape S --axis A --repeat R
--json` (its own seeded data; median time) and numpy's `a.sum(axis=A)` / `a.max(...)`
on an array of the same shape and type (median of R). Prints GB/s of input read and the
ratio. Usage: axis_numpy.py [REDLAB_BINARY] [REPEAT]
"""
import json
import subprocess
import sys
import time

import numpy as np

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/redlab"
repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
cases = [
    ((8192, 8192), 1),
    ((8192, 8192), 0),
    ((2**20, 32), 1),
    ((2**16, 1024), 1),
    ((32, 2**22), 1),
    ((2**22, 32), 0),
]
print("| shape, axis | op | redlab GB/s | numpy GB/s | redlab / numpy |")
print("|---|---|---|---|---|")
for shape, axis in cases:
    a = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
    for op in ["sum", "max"]:
        out = subprocess.run(
            [binary, "run", "--op", op, "--dtype", "f32", "--shape", "x".join(map(str, shape)),
             "--axis", str(axis), "--repeat", str(repeat), "--json"],
            check=True, capture_output=True, text=True).stdout
        ours = json.loads(out)
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            getattr(a, op)(axis=axis)
            times.append(time.perf_counter() - t)
        numpy_gbps = a.nbytes / sorted(times)[len(times) // 2] / 1e9
        print(f"| {shape[0]}×{shape[1]}, {axis} | {op} | {ours['gbps']:.1f} | {numpy_gbps:.1f} "
              f"| {ours['gbps'] / numpy_gbps:.2f} |")
