"""Per-call time of redlab reductions along axis 0 of f32 matrices beside numpy, for
the wheel on PYTHONPATH. Usage: PYTHONPATH=WHEEL_DIR python3 timings.py LABEL"""
import sys, timeit
import numpy as np
import redlab

label = sys.argv[1]
rng = np.random.default_rng(1)
for shape in [(3, 4096), (64, 64), (256, 1024), (1000, 100), (4096, 256)]:
    a = rng.standard_normal(shape).astype(np.float32)
    calls = [("redlab.sum", lambda: redlab.sum(a, axis=0)), ("np.sum", lambda: np.sum(a, axis=0)),
             ("redlab.var", lambda: redlab.var(a, axis=0)), ("np.var", lambda: np.var(a, axis=0)),
             ("redlab.logsumexp", lambda: redlab.logsumexp(a, axis=0))]
    for name, f in calls:
        number = 200
        t = min(timeit.repeat(f, number=number, repeat=7)) / number
        print(f"{label} {shape[0]}x{shape[1]} axis 0 {name} {t*1e6:.1f} us", flush=True)
