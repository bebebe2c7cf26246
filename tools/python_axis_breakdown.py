#!/usr/bin/env python3
"""Where a Python axis call of a torch CUDA tensor spends its time: the native call
(stream wait, launches, readback, decode into the typed array), numpy's view of the
bytes, and the copy back to the tensor's device; beside torch's own call. Medians of
--reps, one synchronize after each piece, f32.

    python3 tools/python_axis_breakdown.py --out breakdown.jsonl
"""

import argparse
import json

import numpy as np

import redlab
from python_axis_calls import median_wait as median  # this folder is on the path
from redlab import _arrays, _reductions

SHAPES = [((1 << 22, 4), 1), ((1 << 20, 32), 1), ((8192, 8192), 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    import torch

    sync = torch.cuda.synchronize
    with open(args.out, "w") as out:
        for shape, axis in SHAPES:
            t = torch.randn(shape, device="cuda")
            for op in ["sum", "max"]:
                stream = torch.cuda.current_stream().cuda_stream

                def native():
                    capsule = t.__dlpack__(stream=stream if stream else 1)
                    return _reductions._native.reduce_dlpack(
                        "op", op, capsule, [axis], False, None, stream, None, 0, 0.0)

                triple = native()
                host = _reductions._result(triple)
                record = {
                    "shape": list(shape), "axis": axis, "op": op,
                    "native_s": median(native, sync, args.reps),
                    "numpy_view_s": median(lambda: _reductions._result(triple), sync, args.reps),
                    "to_device_s": median(
                        lambda: _arrays.to_framework(host, t, "torch"), sync, args.reps),
                    "whole_s": median(lambda: redlab.reduce(op, t, axis=axis), sync, args.reps),
                    "torch_s": median(
                        lambda: (torch.sum if op == "sum" else torch.amax)(t, dim=axis),
                        sync, args.reps),
                    "result_bytes": int(np.asarray(host).nbytes),
                }
                out.write(json.dumps(record) + "\n")
                print(" ".join(f"{k}={v * 1e3:.3f}ms" if k.endswith("_s") else f"{k}={v}"
                               for k, v in record.items()))


if __name__ == "__main__":
    main()
