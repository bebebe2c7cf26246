"""logsumexp along axis 0 of f32 matrices from Python, best of 7 rounds.
Usage: PYTHONPATH=WHEEL_DIR python3 lse_timings.py LABEL"""
import sys
import timeit

import numpy as np

import redlab

out = []
for shape in [(3, 4096), (64, 64), (1000, 100)]:
    m = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    number = max(20, 200000 // m.size)
    t = min(timeit.repeat(lambda: redlab.logsumexp(m, axis=0), number=number, repeat=7)) / number
    out.append(f"logsumexp {shape[0]}x{shape[1]} {t * 1e6:.1f}")
print(sys.argv[1] if len(sys.argv) > 1 else "", " | ".join(out), flush=True)
