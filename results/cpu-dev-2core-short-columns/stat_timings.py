# Per-call time of redlab.var/logsumexp along axis 0 of f32 matrices beside np.var
# (results/cpu-dev-2core-short-columns, statistics table).
import timeit, numpy as np, redlab
rng=np.random.default_rng(1)
for shape in [(64,64),(3,4096),(256,1024),(1000,100)]:
    a=rng.standard_normal(shape).astype(np.float32)
    for name, f in [("redlab.var", lambda: redlab.var(a, axis=0)), ("np.var", lambda: np.var(a, axis=0)), ("redlab.logsumexp", lambda: redlab.logsumexp(a, axis=0))]:
        t=min(timeit.repeat(f,number=200,repeat=5))/200
        print(shape, 0, name, f"{t*1e6:.1f} us")
