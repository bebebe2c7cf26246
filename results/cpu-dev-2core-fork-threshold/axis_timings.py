# Per-call time of redlab.sum/max/var along an axis of small f32 arrays beside np.sum
# (results/cpu-dev-2core-fork-threshold, the "Along axes" table).
import timeit, numpy as np, redlab
rng=np.random.default_rng(1)
for shape, axis in [((64,64),1),((64,64),0),((1000,10),1),((256,1024),1),((256,1024),0),((4096,256),1)]:
    a=rng.standard_normal(shape).astype(np.float32)
    for name, f in [("redlab.sum", lambda: redlab.sum(a, axis=axis)), ("np.sum", lambda: np.sum(a, axis=axis)),
                    ("redlab.max", lambda: redlab.max(a, axis=axis)), ("redlab.var", lambda: redlab.var(a, axis=axis))]:
        t=min(timeit.repeat(f,number=500,repeat=5))/500
        print(shape, axis, name, f"{t*1e6:.1f} us")
