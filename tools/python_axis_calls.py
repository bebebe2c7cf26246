#!/usr/bin/env python3
"""Whole-call time of axis reductions of torch CUDA tensors: ``redlab.sum`` and
``redlab.max`` along an axis against ``torch.sum``/``torch.amax`` on the same tensor,
one call then a synchronize, median of many, on one CUDA GPU.

This is the time a Python caller waits for, host work included (redlab's axis results
of CUDA tensors are read back, decoded and handed to torch on the tensor's device);
``tools/axis_compare.py`` reports device-event time instead.

Writes one JSON line per measurement to --out and prints a table.

    python3 tools/python_axis_calls.py --out axis-calls.jsonl
"""

import argparse
import json
import statistics
import time

import redlab

SHAPES = [((1 << 22, 4), 1), ((1 << 20, 32), 1), ((8192, 8192), 1), ((8192, 8192), 0)]


def median_wait(fn, sync, reps):
    for _ in range(3):
        fn()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    import torch

    sync = torch.cuda.synchronize
    generator = torch.Generator(device="cuda").manual_seed(3)
    rows = []
    with open(args.out, "w") as out:
        for shape, axis in SHAPES:
            t = torch.randn(shape, device="cuda", generator=generator)
            for op, theirs in [("sum", torch.sum), ("max", torch.amax)]:
                ours_s = median_wait(lambda: redlab.reduce(op, t, axis=axis), sync, args.reps)
                torch_s = median_wait(lambda: theirs(t, dim=axis), sync, args.reps)
                record = {
                    "shape": list(shape), "axis": axis, "op": op, "dtype": "f32",
                    "redlab_s": ours_s, "torch_s": torch_s,
                    "torch_over_redlab": torch_s / ours_s,
                }
                out.write(json.dumps(record) + "\n")
                rows.append(record)
    print("| shape | axis | op | redlab ms | torch ms | torch / redlab |")
    print("|---|---|---|---:|---:|---:|")
    for r in rows:
        shape = "×".join(str(d) for d in r["shape"])
        print(f"| {shape} | {r['axis']} | {r['op']} | {r['redlab_s'] * 1e3:.3f} | "
              f"{r['torch_s'] * 1e3:.3f} | {r['torch_over_redlab']:.3f} |")


if __name__ == "__main__":
    main()
