#!/usr/bin/env python3
"""Where the host time of a Python axis call of a torch CUDA tensor goes, piece by
piece, beside torch's own call: the stream query, the DLPack capsule, the result
tensor's allocation, the native call (plan, header copy, launches), and the whole
``redlab.reduce`` call. Host time of each piece only (a synchronize follows every rep,
outside the timing), medians of --reps, f32.

    python3 tools/python_axis_breakdown.py --out breakdown.jsonl
"""

import argparse
import json
import statistics
import time

import redlab
from redlab import _arrays, _reductions

SHAPES = [((1024, 64), 1), ((8192, 8192), 1), ((1 << 22, 4), 1)]


def host_time(piece, sync, reps):
    """Median host seconds of ``piece(prepared)``, where ``prepare()`` runs untimed."""
    times = []
    for _ in range(reps):
        prepared = piece[0]()
        start = time.perf_counter()
        piece[1](prepared)
        times.append(time.perf_counter() - start)
        sync()
    return statistics.median(times[3:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args()
    import torch

    sync = torch.cuda.synchronize
    rows = []
    with open(args.out, "w") as out:
        for shape, axis in SHAPES:
            t = torch.randn(shape, device="cuda")
            out_shape = tuple(s for d, s in enumerate(shape) if d != axis)
            stream = _arrays.current_stream(t, "torch")

            def capsule():
                return t.__dlpack__(stream=stream if stream else 1)

            def native(c):
                result = t.new_empty(out_shape)
                _reductions._native.reduce_dlpack(
                    "op", "sum", c, [axis], False, None, stream, result.data_ptr(),
                    result.numel() * 4, 0.0)

            pieces = {
                "stream query": (lambda: None, lambda _: _arrays.current_stream(t, "torch")),
                "dlpack capsule": (lambda: None, lambda _: capsule()),
                "result tensor": (lambda: None, lambda _: t.new_empty(out_shape)),
                "native call + result tensor": (capsule, native),
                "redlab.sum": (lambda: None, lambda _: redlab.sum(t, axis=axis)),
                "torch.sum": (lambda: None, lambda _: torch.sum(t, dim=axis)),
            }
            for name, piece in pieces.items():
                seconds = host_time(piece, sync, args.reps)
                record = {"shape": list(shape), "axis": axis, "piece": name, "host_us": seconds * 1e6}
                out.write(json.dumps(record) + "\n")
                rows.append(record)
    print("| shape | axis | piece | host µs |")
    print("|---|---|---|---:|")
    for r in rows:
        shape = "×".join(str(d) for d in r["shape"])
        print(f"| {shape} | {r['axis']} | {r['piece']} | {r['host_us']:.1f} |")


if __name__ == "__main__":
    main()
