#!/usr/bin/env python3
"""Var and log-sum-exp of f32 columns (along axis 0): two builds of the library call
against numpy, alternated in one sitting.

Usage: [STATS=var,logsumexp] timings.py ROUNDS OLD_PROBE NEW_PROBE
Each probe is a build of `varprobe.rs` (an example of the redlab-cpu crate); it prints
the best of REPS library calls (`CpuBackend::statistic_packed`, two threads). numpy:
best of REPS of `a.var(axis=0)`, and of `m = a.max(0, keepdims=True);
log(exp(a - m).sum(0)) + m` for log-sum-exp, on seeded normal data of the same shape.
"""
import os
import subprocess
import sys
import time

import numpy as np

rounds, old, new = int(sys.argv[1]), sys.argv[2], sys.argv[3]
shapes = [(1000, 100), (256, 1024), (1000, 256), (300, 300), (100, 1000), (64, 4096), (3, 4096), (512, 2048)]
reps = 300


def probe(binary, stat, rows, cols):
    env = dict(os.environ, ONLY_PACKED="1", STAT=stat)
    out = subprocess.run([binary, str(rows), str(cols), str(reps)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1].split(": ")[1].split()[0])


def numpy_time(stat, a):
    def lse():
        m = a.max(0, keepdims=True)
        return np.log(np.exp(a - m).sum(0)) + m[0]
    f = (lambda: a.var(axis=0)) if stat == "var" else lse
    best = 1e9
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best * 1e6


for r in range(rounds):
    for stat in os.environ.get("STATS", "var,logsumexp").split(","):
        for rows, cols in shapes:
            a = np.random.default_rng(rows + cols).standard_normal((rows, cols)).astype(np.float32)
            o, n, p = probe(old, stat, rows, cols), probe(new, stat, rows, cols), numpy_time(stat, a)
            print(f"round {r} {stat} {rows}x{cols}: old {o:.1f} new {n:.1f} numpy {p:.1f} us"
                  f"  new/old {o / n:.2f}x  numpy/new {p / n:.2f}x", flush=True)
