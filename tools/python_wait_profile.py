#!/usr/bin/env python3
"""Where a waiting call on a torch CUDA tensor spends its time: ``redlab.mean`` of 2^10
elements and ``redlab.var`` along rows of a 64×16 tensor (statistics take the waiting
path: wait for the caller's stream, run on redlab's, read back), a strided view's sum
(the DLPack path), and ``torch.mean``; medians of one call and a synchronize, in µs;
then cProfile of 300 ``redlab.mean`` calls.

    python3 tools/python_wait_profile.py
"""
import cProfile, pstats, time, io, statistics
import torch, redlab
t = torch.randn(1 << 10, device="cuda")
m = torch.randn(64, 16, device="cuda")
for f in [lambda: redlab.mean(t), lambda: redlab.var(m, axis=1), lambda: redlab.sum(t[::2])]:
    f(); torch.cuda.synchronize()
def timed(f, n=200):
    xs = []
    for _ in range(n):
        s = time.perf_counter(); f(); torch.cuda.synchronize(); xs.append(time.perf_counter() - s)
    return statistics.median(xs) * 1e6
print("mean 2^10 us", timed(lambda: redlab.mean(t)))
print("var 64x16 axis1 us", timed(lambda: redlab.var(m, axis=1)))
print("sum of strided view (stream path) us", timed(lambda: redlab.sum(t[::2])))
print("torch.mean us", timed(lambda: torch.mean(t)))
pr = cProfile.Profile(); pr.enable()
for _ in range(300): redlab.mean(t)
torch.cuda.synchronize(); pr.disable()
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(14); print(s.getvalue()[:3500])
