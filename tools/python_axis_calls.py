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
``argmin``, ``argmax``, the statistics ``mean``, ``nansum``, ``norm2``, ``norm1``,
``any``, ``all``, ``count_nonzero`` against torch's, and ``f16``, ``bf16``);
``--shapes`` the shapes and axes.

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
    parser.add_argument("--shapes", default=None,
                        help="e.g. 8192x8192:1,1024x65536:0,16777216:all (default: the issue's shapes)")
    args = parser.parse_args()
    import torch

    theirs_by_name = {"sum": torch.sum, "min": torch.amin, "max": torch.amax,
                      "argmin": torch.argmin, "argmax": torch.argmax,
                      "mean": torch.mean, "nansum": torch.nansum,
                      "norm2": lambda t, dim: torch.linalg.vector_norm(t, dim=dim),
                      "norm1": lambda t, dim: torch.linalg.vector_norm(t, ord=1, dim=dim),
                      "any": torch.any, "all": torch.all,
                      "count_nonzero": torch.count_nonzero}
    # The statistics, by their numpy-style names (the operators go through reduce).
    ours_by_name = {"mean": redlab.mean, "nansum": redlab.nansum, "norm2": redlab.norm,
                    "norm1": lambda t, axis: redlab.norm(t, ord=1, axis=axis),
                    "any": redlab.any, "all": redlab.all,
                    "count_nonzero": redlab.count_nonzero}
    cases = [tuple(case.split(":")) for case in args.ops.split(",")]
    for op, dtype in cases:
        if op not in theirs_by_name or dtype not in ("f32", "i32", "f16", "bf16"):
            parser.error(f"--ops: unknown case {op}:{dtype}")
    def shape_axis(spec):
        dims, axis = spec.split(":")
        return tuple(int(d) for d in dims.split("x")), None if axis == "all" else int(axis)

    shapes = SHAPES if args.shapes is None else [shape_axis(s) for s in args.shapes.split(",")]

    sync = torch.cuda.synchronize
    generator = torch.Generator(device="cuda").manual_seed(3)
    rows = []
    with open(args.out, "w") as out:
        for shape, axis in shapes:
            floats = torch.randn(shape, device="cuda", generator=generator)
            tensors = {"f32": floats, "i32": (floats * 1000).to(torch.int32),
                       "f16": floats.half(), "bf16": floats.bfloat16()}
            for op, dtype in cases:
                t, theirs = tensors[dtype], theirs_by_name[op]
                stat = ours_by_name.get(op)

                def ours():
                    if stat is None:
                        return redlab.reduce(op, t, axis=axis)
                    return stat(t, axis=axis)

                for mode, timer in [("wait", median_wait), ("pipelined", median_pipelined)]:
                    ours_s = timer(ours, sync, args.reps)
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
