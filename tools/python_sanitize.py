#!/usr/bin/env python3
"""The Python package's stream path under compute-sanitizer: sums and maxima of f32 and
i32 torch CUDA tensors of 1 … 4194309 elements through ``redlab.reduce``, each held to
the host result's bits. Run it as ``compute-sanitizer --tool memcheck python3
tools/python_sanitize.py`` (and racecheck)."""
import numpy as np, torch, redlab
ok = True
for n in [1, 1000, 24577, 100003, 4194309]:
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    t = torch.from_numpy(x).cuda()
    for op in ["sum", "max"]:
        a = redlab.reduce(op, t).cpu().numpy().tobytes()
        b = np.asarray(redlab.reduce(op, x)).tobytes()
        ok &= a == b
    i = torch.from_numpy((x * 1000).astype(np.int32)).cuda()
    ok &= int(redlab.sum(i)) == int(np.sum((x * 1000).astype(np.int32), dtype=np.int64))
torch.cuda.synchronize()
print("sanitized run agrees:", ok)
