"""Same run: a two-input f32 dot through the former per-array description in Python
(numpy's array interface, then `_native.reduce_mapped`) against `Reduction`'s buffer
protocol path, with redlab.sum, a one-input map and np.dot beside them.
Run from outside the source tree, with the package installed: python3 timings.py"""
import platform
import timeit

import numpy as np

import redlab
from redlab import _arrays, _native

print("machine:", platform.processor() or platform.machine(), "| numpy", np.__version__)
for n in [1000, 100000]:
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    y = x[::-1].copy()
    dot = redlab.Reduction(map="x * y", combine="sum")
    sq = redlab.Reduction(map="x * x", combine="sum")

    def described():
        inputs = []
        for h in (np.ascontiguousarray(x), np.ascontiguousarray(y)):
            _, address, name, _, _ = _arrays.host_description(h)
            inputs.append((address, name))
        return _native.reduce_mapped("x * y", "sum", None, None, None, inputs, [n], None,
                                     False, "cpu")

    rows = []
    for name, f in [("redlab.sum(x)", lambda: redlab.sum(x)),
                    ("Reduction x*x (one array)", lambda: sq(x)),
                    ("two arrays, described in Python (before)", described),
                    ("Reduction x*y (buffer protocol, now)", lambda: dot(x, y)),
                    ("np.dot", lambda: np.dot(x, y))]:
        number = 20000 if n == 1000 else 500
        rows.append((name, min(timeit.repeat(f, number=number, repeat=5)) / number))
    print(f"n = {n}")
    for name, t in rows:
        print(f"  {name}: {t * 1e6:.2f} µs")
    times = dict(rows)
    print(f"  before / now: {times['two arrays, described in Python (before)'] / times['Reduction x*y (buffer protocol, now)']:.2f}")
