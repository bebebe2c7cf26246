#!/usr/bin/env python3
"""Statistics on the CPU: redlab binaries against numpy, in one sitting.

For each shape and axis, each statistic and each binary NAME=PATH:
`redlab run --stat S --ddof 0 --dtype f32 --shape SHAPE --axis A --repeat R --device cpu
--json` (its own seeded data; median time), alternated over ROUNDS rounds; then numpy on
an array of the same shape: `a.var(axis)` for var, and a max-shifted log-sum-exp
(`m = a.max(axis, keepdims=True); log(exp(a - m).sum(axis)) + m`) for logsumexp, median
of R. Prints GB/s of f32 input read, each binary's range over the rounds.
Usage: cpu_stats_numpy.py STATS ROUNDS NAME=BINARY [NAME=BINARY ...] [cases=SHAPE:AXIS,...]
  e.g. cpu_stats_numpy.py logsumexp,var 3 old=/tmp/old new=target/release/redlab
  cases= replaces the default shapes, e.g. cases=262144x100:1,65536x1024:1,16777216:
  (an empty axis reduces every axis).
  REPEAT (environment, default 5) sets R; numpy is timed once per round, after the
  binaries, and its range printed like theirs.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

stats = sys.argv[1].split(",")
rounds = int(sys.argv[2])
binaries = [arg.split("=", 1) for arg in sys.argv[3:] if not arg.startswith("cases=")]
repeat = int(os.environ.get("REPEAT", "5"))
cases = [
    ((2**24,), None),
    ((8192, 8192), 1),
    ((65536, 1024), 1),
    ((2**20, 32), 1),
    ((8192, 8192), 0),
    ((2**22, 32), 0),
]
for arg in sys.argv[3:]:
    if arg.startswith("cases="):
        cases = []
        for case in arg[len("cases="):].split(","):
            shape, axis = case.split(":")
            cases.append((tuple(int(d) for d in shape.split("x")), int(axis) if axis else None))


def ours(binary, stat, shape, axis):
    args = [binary, "run", "--stat", stat, "--ddof", "0", "--dtype", "f32", "--shape",
            "x".join(map(str, shape)), "--repeat", str(repeat), "--device", "cpu", "--json"]
    if axis is not None:
        args += ["--axis", str(axis)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["gbps"]


def numpy_gbps(a, stat, axis):
    def once():
        if stat == "var":
            return a.var(axis=axis)
        m = a.max(axis=axis, keepdims=True)
        return np.log(np.exp(a - m).sum(axis=axis)) + np.squeeze(m, axis=axis)

    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        once()
        times.append(time.perf_counter() - t)
    return a.nbytes / sorted(times)[len(times) // 2] / 1e9


names = [name for name, _ in binaries]
print("| shape, axis | stat | " + " | ".join(names) + " | numpy |")
print("|---|---|" + "---|" * (len(names) + 1))
for shape, axis in cases:
    a = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
    for stat in stats:
        seen = {name: [] for name in names + ["numpy"]}
        for _ in range(rounds):
            for name, binary in binaries:
                seen[name].append(ours(binary, stat, shape, axis))
            seen["numpy"].append(numpy_gbps(a, stat, axis))
        cells = [f"{min(v):.2f}–{max(v):.2f}" for v in seen.values()]
        where = "×".join(map(str, shape)) + ("" if axis is None else f", {axis}")
        print(f"| {where} | {stat} | " + " | ".join(cells) + " |", flush=True)
