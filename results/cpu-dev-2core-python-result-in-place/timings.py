"""Per-call time of redlab reductions along axis 0 beside np.sum, for the wheel on
PYTHONPATH (best of 15 rounds of 1000 calls). Usage: PYTHONPATH=WHEEL_DIR python3 timings.py LABEL"""
import sys, timeit
import numpy as np
import redlab
a = np.random.default_rng(1).standard_normal((3, 4096)).astype(np.float32)
b = np.random.default_rng(1).standard_normal((1000, 100)).astype(np.float32)
out = []
for name, f in [("3x4096 sum ax0", lambda: redlab.sum(a, axis=0)), ("3x4096 var ax0", lambda: redlab.var(a, axis=0)), ("1000x100 sum ax0", lambda: redlab.sum(b, axis=0)), ("np.sum 3x4096 ax0", lambda: np.sum(a, axis=0))]:
    t = min(timeit.repeat(f, number=1000, repeat=15)) / 1000
    out.append(f"{name} {t*1e6:.2f}")
print(sys.argv[1], " | ".join(out))
