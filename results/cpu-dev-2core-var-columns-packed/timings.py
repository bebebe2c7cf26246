"""var and std along axis 0 of f32 matrices from Python against numpy, best of 7 rounds.
Usage: PYTHONPATH=WHEEL_DIR python3 timings.py LABEL"""
import sys
import timeit

import numpy as np

import redlab

out = []
for shape in [(3, 4096), (64, 64), (1000, 100), (256, 1024)]:
    m = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    number = max(20, 200000 // m.size)
    for name, f in [("var", lambda: redlab.var(m, axis=0)), ("np.var", lambda: np.var(m, axis=0)),
                    ("std", lambda: redlab.std(m, axis=0))]:
        t = min(timeit.repeat(f, number=number, repeat=7)) / number
        out.append(f"{name} {shape[0]}x{shape[1]} {t * 1e6:.1f}")
print(sys.argv[1] if len(sys.argv) > 1 else "", " | ".join(out), flush=True)
