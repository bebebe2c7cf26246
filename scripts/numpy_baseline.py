#!/usr/bin/env python3
"""Times numpy's a.sum() on seeded random data, for side-by-side ratios with `redlab bench`.

Run it in the same sitting as the bench, on the same machine:

    python3 scripts/numpy_baseline.py --n 134217728 --json results/numpy.jsonl

Each row: the median, min and max of --reps calls of a.sum() (f32 sums in f32 as numpy
does; int32 sums accumulate in int64, numpy's default on 64-bit Linux), GB/s of input.
"""

import argparse
import json
import platform
import statistics
import time

import numpy as np


def time_sum(a, reps):
    a.sum()  # warm-up
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        a.sum()
        samples.append(time.perf_counter() - start)
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 27)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="append one JSON line per row to this file")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    inputs = {
        "f32": rng.uniform(-1.0, 1.0, args.n).astype(np.float32),
        "i32": rng.integers(-(2**31), 2**31, args.n, dtype=np.int32),
    }
    rows = []
    for dtype, a in inputs.items():
        samples = time_sum(a, args.reps)
        median = statistics.median(samples)
        row = {
            "comparator": "numpy",
            "numpy_version": np.__version__,
            "machine": platform.processor() or platform.machine(),
            "op": "sum",
            "dtype": dtype,
            "acc": str(a.sum().dtype),
            "n": args.n,
            "median_s": median,
            "min_s": min(samples),
            "max_s": max(samples),
            "reps": len(samples),
            "gbps": a.nbytes / median / 1e9,
            "unix_time": int(time.time()),
        }
        rows.append(row)
        print(f"numpy sum {dtype:>4} n={args.n}: median {median * 1e3:.3f} ms, {row['gbps']:.2f} GB/s")
    if args.json:
        with open(args.json, "a", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
