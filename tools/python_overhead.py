#!/usr/bin/env python3
"""Per-call cost of the Python package against what it wraps, in one run.

CPU: ``redlab.sum`` on a numpy array of 1000 f32 elements against the Rust library's
own per-call time for the same problem (``redlab.bench`` on the CPU: median seconds of
``Backend::reduce``). GPU (where torch has CUDA): ``redlab.sum`` on a torch CUDA tensor
through DLPack against ``torch.sum`` on the same tensor, f32, 2^10 … 2^30 elements
(``--ops`` adds other operators and types against torch's same-named function, e.g.
``argmax:f32,max:f16``; ``dot:f32`` times ``redlab.Reduction(map="x * y")`` over two
tensors, read in place, against ``torch.dot``):

* ``pipelined``: N calls back to back, one synchronize at the end, time over N (what a
  training loop sees);
* ``latency``: one call then a synchronize, median of many (what a single waiting call
  sees).

Writes one JSON line per measurement to --out and prints a table.

    python3 tools/python_overhead.py --out results/python-overhead.jsonl
"""

import argparse
import json
import statistics
import time

import numpy as np

import redlab


def median_call(fn, reps, inner, finish=None):
    """Median over ``reps`` rounds of the seconds per call of ``inner`` calls.

    ``finish`` (e.g. ``torch.cuda.synchronize``) runs once at the end of each round,
    inside its time, so queued device work is counted: the pipelined time.
    """
    rounds = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        if finish is not None:
            finish()
        rounds.append((time.perf_counter() - start) / inner)
    return statistics.median(rounds)


def cpu_rows():
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float32)
    python_s = median_call(lambda: redlab.sum(x), reps=50, inner=2000)
    records = redlab.bench(device="cpu", sizes="1000", ops="sum", dtypes="f32", min_time=1.0)
    library_s = records[0]["median_s"]
    numpy_s = median_call(lambda: np.sum(x), reps=50, inner=2000)
    yield {
        "what": "cpu-sum-f32-1000",
        "python_s": python_s,
        "library_s": library_s,
        "overhead_s": python_s - library_s,
        "numpy_sum_s": numpy_s,
    }


def gpu_rows(torch, sizes, op="sum", dtype="f32"):
    torch_type = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    theirs = getattr(torch, op)
    dot = redlab.Reduction(map="x * y", combine="sum")
    for log2 in sizes:
        n = 2**log2
        t = torch.randn(n, device="cuda", dtype=torch.float32).to(torch_type)
        if op == "dot":
            u = torch.randn(n, device="cuda", dtype=torch.float32).to(torch_type)
            calls = [("torch.dot", lambda: theirs(t, u)), ("redlab.dot", lambda: dot(t, u))]
        else:
            calls = [(f"torch.{op}", lambda: theirs(t)),
                     (f"redlab.{op}", lambda: redlab.reduce(op, t))]
        inputs = 2 if op == "dot" else 1
        for name, fn in calls:
            fn()
            torch.cuda.synchronize()
            inner = max(1, min(2000, 2**31 // (inputs * n * t.element_size())))
            pipelined = median_call(fn, 7, inner, finish=torch.cuda.synchronize)
            lat = []
            for _ in range(max(20, min(500, inner))):
                start = time.perf_counter()
                fn()
                torch.cuda.synchronize()
                lat.append(time.perf_counter() - start)
            yield {
                "what": f"cuda-{op}-{dtype}-2^{log2}",
                "n": n,
                "call": name,
                "pipelined_s": pipelined,
                "latency_s": statistics.median(lat),
                "gbps_pipelined": inputs * n * t.element_size() / pipelined / 1e9,
            }
        del t
        if op == "dot":
            del u


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--sizes", default="10,14,16,20,24,28,30")
    parser.add_argument("--ops", default="sum:f32",
                        help="GPU cases OP:TYPE, e.g. sum:f32,argmax:f32,max:f16")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU row")
    args = parser.parse_args()
    rows = [] if args.no_cpu else list(cpu_rows())
    try:
        import torch

        if torch.cuda.is_available():
            sizes = [int(s) for s in args.sizes.split(",")]
            for case in args.ops.split(","):
                op, dtype = case.split(":")
                rows += list(gpu_rows(torch, sizes, op, dtype))
            rows.append({"device_name": torch.cuda.get_device_name(0)})
    except ImportError:
        pass
    with open(args.out, "a", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    for row in rows:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
