#!/usr/bin/env python3
"""Where the per-call time of ``redlab.sum`` (and ``redlab.mean``, and sums along rows)
on a small torch CUDA tensor goes.

Times, back to back with one synchronize per round (as ``python_overhead.py``'s
pipelined column), each piece of the torch fast path on its own beside ``torch.sum``
and the whole call: the result allocation, the stream query, the tensor attribute
reads, the native launch with a result allocated once, and an empty Python call.
Prints one JSON line per piece; median microseconds per call of 7 rounds.

    python3 tools/python_breakdown.py --n 1024 --out breakdown.jsonl
"""

import argparse
import json

from python_overhead import median_call


def per_call_us(torch, fn, inner=4000, rounds=7):
    """Median microseconds per call, pipelined: one synchronize per round."""
    fn()
    torch.cuda.synchronize()
    return median_call(fn, rounds, inner, finish=torch.cuda.synchronize) * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import torch

    import redlab
    from redlab import _native, _reductions

    t = torch.randn(args.n, device="cuda", dtype=torch.float32)
    out = t.new_empty((), dtype=torch.float32)
    pool = torch.empty(1024, device="cuda", dtype=torch.float32)
    stream = _reductions._torch_stream(0)
    counter = [0]
    rows = t.reshape(-1, 64) if args.n % 64 == 0 else t.reshape(1, -1)
    row_out = rows.new_empty(rows.shape[0], dtype=torch.float32)

    def pool_select():
        counter[0] = (counter[0] + 1) & 1023
        return pool.select(0, counter[0])

    def attributes():
        return (t.dtype, t.is_contiguous(), t.get_device(), t.data_ptr(), t.numel())

    def nothing(a, b, c):
        return None

    pieces = [
        ("torch.sum", lambda: torch.sum(t)),
        ("redlab.sum", lambda: redlab.sum(t)),
        ("_torch_fast", lambda: _reductions._torch_fast("sum", t, None)),
        ("_torch_result (a view from the block)", lambda: _reductions._torch_result(
            t, 0, torch.float32, stream)),
        ("t.new_empty(())", lambda: t.new_empty((), dtype=torch.float32)),
        ("torch.empty((), device)", lambda: torch.empty((), dtype=torch.float32, device=t.device)),
        ("pool.select(0, k)", pool_select),
        ("_torch_stream", lambda: _reductions._torch_stream(0)),
        ("tensor attributes", attributes),
        ("enqueue_dtype (cached dict)", lambda: _reductions._enqueue_type("sum", "f32", None, 0)),
        ("_native.enqueue_pointer", lambda: _native.enqueue_pointer(
            "sum", "f32", None, t.data_ptr(), t.numel(), 0, stream, out.data_ptr(), 4)),
        # A native call that parses the same kind of arguments and looks the device
        # up but launches nothing and keeps the GIL: the crossing from Python alone.
        ("_native.enqueue_dtype (no launch)", lambda: _native.enqueue_dtype(
            "op", "sum", "f32", None, 0)),
        ("empty python call", lambda: nothing(1, 2, 3)),
        # Statistics: whole arrays in one launch of the production kernel; along an
        # axis (here the only one, the same elements), the segment kernels' stream
        # path: a header copy and the job's launches.
        ("torch.mean", lambda: torch.mean(t)),
        ("redlab.mean", lambda: redlab.mean(t)),
        ("redlab.mean(axis=0) (segment kernels)", lambda: redlab.mean(t, axis=0)),
        ("_native.enqueue_stat_whole (mean)", lambda: _native.enqueue_stat_whole(
            "mean", "f32", t.data_ptr(), args.n, 0, stream, out.data_ptr(), 4)),
        ("_native.enqueue_stat_pointer (mean, axis 0)", lambda: _native.enqueue_stat_pointer(
            "mean", "f32", t.data_ptr(), (args.n,), (1,), [0], False, 0, stream,
            out.data_ptr(), 4)),
        ("torch.sum(rows)", lambda: torch.sum(rows, dim=1)),
        ("redlab.sum(rows)", lambda: redlab.sum(rows, axis=1)),
        ("_native.enqueue_axis_pointer (rows)", lambda: _native.enqueue_axis_pointer(
            "sum", "f32", None, rows.data_ptr(), tuple(rows.shape), rows.stride(), [1],
            False, 0, stream, row_out.data_ptr(), row_out.numel() * 4)),
    ]
    records = []
    for name, fn in pieces:
        records.append({"piece": name, "n": args.n, "us_per_call": per_call_us(torch, fn)})
    records.append({"device_name": torch.cuda.get_device_name(0), "torch": torch.__version__})
    with open(args.out, "a", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")
    for record in records:
        print(json.dumps(record))


if __name__ == "__main__":
    main()
