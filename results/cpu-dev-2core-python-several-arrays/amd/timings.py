"""A two-input Reduction (x * y) over 1000 f32 numpy arrays beside redlab.sum and np.dot,
best of 7 rounds of 20000 calls. Usage: python3 timings.py LABEL"""
import sys, timeit
import numpy as np
import redlab
n = 1000
x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
y = x[::-1].copy()
dot = redlab.Reduction(map="x * y", combine="sum")
out = []
for name, f in [("Reduction x*y", lambda: dot(x, y)), ("redlab.sum", lambda: redlab.sum(x)), ("np.dot", lambda: np.dot(x, y))]:
    t = min(timeit.repeat(f, number=20000, repeat=7)) / 20000
    out.append(f"{name} {t*1e6:.2f}")
print(sys.argv[1] if len(sys.argv) > 1 else "", " | ".join(out))
