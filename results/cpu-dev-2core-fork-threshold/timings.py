# Per-call time of redlab.sum and a one-input Reduction on f32 arrays around the
# sizes where whole-array reductions started to fork (results/cpu-dev-2core-fork-threshold).
import timeit, numpy as np, redlab
rng=np.random.default_rng(1)
for n in (60000, 65536, 65537, 70000, 100000, 131072, 131073, 200000, 1000000):
    x=rng.standard_normal(n).astype(np.float32)
    sq=redlab.Reduction(map="x")
    a=min(timeit.repeat(lambda: redlab.sum(x),number=1000,repeat=5))/1000
    b=min(timeit.repeat(lambda: sq(x),number=1000,repeat=5))/1000
    print(n, f"sum {a*1e6:.1f} us  map x {b*1e6:.1f} us")
