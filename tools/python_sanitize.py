#!/usr/bin/env python3
"""The Python package's stream path under compute-sanitizer: whole-array sums, min/max
and argmin/argmax of f32, f16, bf16 and i32 torch CUDA tensors of 1 … 4194309 elements
through ``redlab.reduce`` (the production kernel's last group storing the result: raw
bytes, an index, a float from its order key, narrowed for halves), each held to the
host result's bits, on normal data and on ties with signed zeros and NaNs. Run it as
``compute-sanitizer --tool memcheck python3 tools/python_sanitize.py`` (and racecheck);
it exits 1 when a result differs."""
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
# Ties, signed zeros and NaNs: the first of equal keys and the first NaN must win (the
# production kernel scans order keys per work-item and chunk, order_free.h).
for n in [7, 8193, 300007, 4194309]:
    ints = np.random.default_rng(n + 1).integers(-100, 101, n)
    x = np.where(ints == 0, np.where(np.arange(n) % 2 == 1, -0.0, 0.0), ints).astype(np.float32)
    for nans in [[], [n - 1 - n // 5], [n // 3, n - 1]]:
        h32 = x.copy()
        h32[nans] = np.nan
        for dtype in [np.float32, np.float16]:
            h = h32.astype(dtype)
            t = torch.from_numpy(h).cuda()
            for op in ["argmin", "argmax", "min", "max"]:
                got = redlab.reduce(op, t).cpu().numpy()
                want = np.asarray(redlab.reduce(op, h))
                # Same bits, or for min/max both NaN (payloads are the hardware's).
                same = got.tobytes() == want.tobytes() or (
                    op in ("min", "max") and np.isnan(got) and np.isnan(want))
                if not same:
                    bad.append((n, dtype.__name__, op, "ties", len(nans)))
torch.cuda.synchronize()
print("sanitized run agrees:", not bad, bad[:5])
sys.exit(1 if bad else 0)
