# Per-call time of redlab.sum/prod along axis 0 of f32 matrices beside np.sum
# (results/cpu-dev-2core-short-columns).
import timeit, numpy as np, redlab
rng=np.random.default_rng(1)
for shape in [(64,64),(256,1024),(3,4096),(1000,100),(4096,256)]:
    a=rng.standard_normal(shape).astype(np.float32)
    for name, f in [("redlab.sum", lambda: redlab.sum(a, axis=0)), ("np.sum", lambda: np.sum(a, axis=0)), ("redlab.prod", lambda: redlab.prod(a, axis=0))]:
        t=min(timeit.repeat(f,number=300,repeat=5))/300
        print(shape, 0, name, f"{t*1e6:.1f} us")
