#!/usr/bin/env python3
"""The Python package's stream path under compute-sanitizer: whole-array sums, min/max
and argmin/argmax of f32, f16, bf16 and i32 torch CUDA tensors of 1 … 4194309 elements
through ``redlab.reduce`` (the production kernel's last group storing the result: raw
bytes, an index, a float from its order key, narrowed for halves), each held to the
host result's bits. Run it as ``compute-sanitizer --tool memcheck python3
tools/python_sanitize.py`` (and racecheck); it exits 1 when a result differs."""
import sys

import numpy as np
import torch

import redlab

bad = []
for n in [1, 1000, 24577, 100003, 4194309]:
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    for dtype, ops in [(np.float32, ["sum", "min", "max", "argmin", "argmax"]),
                       (np.float16, ["sum", "max", "argmax"]),
                       (np.int32, ["sum", "min", "argmax"])]:
        h = (x * 1000).astype(dtype) if dtype == np.int32 else x.astype(dtype)
        t = torch.from_numpy(h).cuda()
        for op in ops:
            if redlab.reduce(op, t).cpu().numpy().tobytes() != np.asarray(
                    redlab.reduce(op, h)).tobytes():
                bad.append((n, dtype.__name__, op))
    b = torch.from_numpy(x).cuda().bfloat16()
    hb = b.float().cpu().numpy()
    for op in ["min", "argmin"]:
        got = redlab.reduce(op, b)
        want = np.asarray(redlab.reduce(op, hb))
        if np.asarray(got.float().cpu() if op == "min" else got.cpu()).tobytes() != want.tobytes():
            bad.append((n, "bfloat16", op))
torch.cuda.synchronize()
print("sanitized run agrees:", not bad, bad[:5])
sys.exit(1 if bad else 0)
