#!/usr/bin/env python3
"""Whole-call time of axis reductions of torch CUDA tensors: ``redlab.sum`` and
``redlab.max`` along an axis against ``torch.sum``/``torch.amax`` on the same tensor,
on one CUDA GPU, two ways, medians of many:

- ``wait``: one call then a synchronize, the time a Python caller waits for, host work
  included;
- ``pipelined``: 20 calls back to back, then one synchronize, per call: what a program
  that keeps the GPU busy sees (the host's per-call cost hides behind the kernels).

Every operator along axes is enqueued on torch's stream and writes the result tensor on
the device. ``tools/axis_compare.py`` reports device-event time instead.

Writes one JSON line per measurement to --out and prints a table. ``--ops`` picks the
operators and types (default ``sum:f32,max:f32,sum:i32,max:i32``; also ``min``,
``argmin``, ``argmax`` and ``f16``, ``bf16``).

    python3 tools/python_axis_calls.py --out axis-calls.jsonl --ops argmax:f32,max:f16
"""

import argparse
import json
import statistics
import time

import redlab

SHAPES = [((1 << 22, 4), 1), ((1 << 20, 32), 1), ((8192, 8192), 1), ((8192, 8192), 0),
          ((1 << 16, 1024), 1), ((32, 1 << 22), 1), ((1 << 22, 32), 0), ((1024, 64), 1)]
PIPELINE = 20


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


def median_pipelined(fn, sync, reps):
    def batch():
        for _ in range(PIPELINE):
            fn()

    return median_wait(batch, sync, max(3, reps // 4)) / PIPELINE


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--ops", default="sum:f32,max:f32,sum:i32,max:i32")
    args = parser.parse_args()
    import torch

    theirs_by_name = {"sum": torch.sum, "min": torch.amin, "max": torch.amax,
                      "argmin": torch.argmin, "argmax": torch.argmax}
    cases = [tuple(case.split(":")) for case in args.ops.split(",")]
    for op, dtype in cases:
        if op not in theirs_by_name or dtype not in ("f32", "i32", "f16", "bf16"):
            parser.error(f"--ops: unknown case {op}:{dtype}")

    sync = torch.cuda.synchronize
    generator = torch.Generator(device="cuda").manual_seed(3)
    rows = []
    with open(args.out, "w") as out:
        for shape, axis in SHAPES:
            floats = torch.randn(shape, device="cuda", generator=generator)
            tensors = {"f32": floats, "i32": (floats * 1000).to(torch.int32),
                       "f16": floats.half(), "bf16": floats.bfloat16()}
            for op, dtype in cases:
                t, theirs = tensors[dtype], theirs_by_name[op]
                for mode, timer in [("wait", median_wait), ("pipelined", median_pipelined)]:
                    ours_s = timer(lambda: redlab.reduce(op, t, axis=axis), sync, args.reps)
                    torch_s = timer(lambda: theirs(t, dim=axis), sync, args.reps)
                    record = {
                        "shape": list(shape), "axis": axis, "op": op, "dtype": dtype,
                        "mode": mode, "redlab_s": ours_s, "torch_s": torch_s,
                        "torch_over_redlab": torch_s / ours_s,
                        "input_gbps": t.numel() * t.element_size() / ours_s / 1e9,
                    }
                    out.write(json.dumps(record) + "\n")
                    rows.append(record)
    print("| shape | axis | op | dtype | mode | redlab ms | torch ms | torch / redlab |")
    print("|---|---|---|---|---|---:|---:|---:|")
    for r in rows:
        shape = "×".join(str(d) for d in r["shape"])
        print(f"| {shape} | {r['axis']} | {r['op']} | {r['dtype']} | {r['mode']} | "
              f"{r['redlab_s'] * 1e3:.3f} | {r['torch_s'] * 1e3:.3f} | "
              f"{r['torch_over_redlab']:.3f} |")

if __name__ == "__main__":
    main()
