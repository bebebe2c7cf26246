#!/usr/bin/env python3
"""Per-call time of a two-tensor dot along axes from Python: ``redlab.Reduction(map="x *
y")(t, u, axis=A)`` on torch CUDA tensors against ``torch.linalg.vecdot`` (rows) and
``(t * u).sum(A)`` in the same run, f32, pipelined (N calls then one synchronize, over
N), with the results' bits checked against the host's. Prints a table and writes one
JSON line per case to --out.

    python3 tools/python_tensor_axes.py --out results/x/tensor-axes.jsonl
"""

import argparse
import json
import time

import numpy as np
import torch

import redlab


def per_call(fn, inner=50, rounds=5):
    fn()
    torch.cuda.synchronize()
    best = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        torch.cuda.synchronize()
        best.append((time.perf_counter() - start) / inner)
    return sorted(best)[len(best) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--cases", default="8192x8192:1,8192x8192:0,1048576x32:1,1024x64:1")
    args = parser.parse_args()
    dot = redlab.Reduction(map="x * y", combine="sum")
    rows = []
    for case in args.cases.split(","):
        shape, axis = case.split(":")
        dims = tuple(int(d) for d in shape.split("x"))
        axis = int(axis)
        t = torch.randn(dims, device="cuda")
        u = torch.randn(dims, device="cuda")
        same = (dot(t, u, axis=axis).cpu().numpy().tobytes()
                == np.asarray(dot(t.cpu().numpy(), u.cpu().numpy(), axis=axis)).tobytes())
        ours = per_call(lambda: dot(t, u, axis=axis))
        theirs = per_call(lambda: (t * u).sum(axis))
        vecdot = per_call(lambda: torch.linalg.vecdot(t, u, dim=axis))
        row = {"case": case, "redlab_s": ours, "torch_mul_sum_s": theirs,
               "torch_vecdot_s": vecdot, "bits_equal_host": same,
               "redlab_gbps": 2 * t.numel() * 4 / ours / 1e9}
        rows.append(row)
        print(f"| {case} | {ours * 1e6:.1f} | {vecdot * 1e6:.1f} | {theirs * 1e6:.1f} | "
              f"{vecdot / ours:.2f} | {row['redlab_gbps']:.0f} | {same} |")
    with open(args.out, "a", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
