"""Per-call times from Python on 1000 f32 elements (and one 3x4096 sum along axis 0),
best of 7 rounds of 20000 calls. Usage: PYTHONPATH=WHEEL_DIR python3 timings.py LABEL"""
import sys
import timeit

import numpy as np

import redlab

n = 1000
x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
y = x[::-1].copy()
m = np.random.default_rng(2).standard_normal((3, 4096)).astype(np.float32)
dot = redlab.Reduction(map="x * y", combine="sum")
square = redlab.Reduction(map="x * x", combine="sum")
cases = [
    ("Reduction x*y", lambda: dot(x, y)),
    ("Reduction x*x", lambda: square(x)),
    ("redlab.sum", lambda: redlab.sum(x)),
    ("redlab.max", lambda: redlab.max(x)),
    ("sum 3x4096 axis 0", lambda: redlab.sum(m, axis=0)),
    ("np.dot", lambda: np.dot(x, y)),
    ("np.sum", lambda: np.sum(x)),
]
out = []
for name, f in cases:
    t = min(timeit.repeat(f, number=20000, repeat=7)) / 20000
    out.append(f"{name} {t * 1e6:.2f}")
print(sys.argv[1] if len(sys.argv) > 1 else "", " | ".join(out), flush=True)
