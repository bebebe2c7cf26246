import numpy as np, torch, redlab
for shape, axis in [((300, 7), 1), ((300, 100), 1), ((3, 20000), 1), ((200, 64), 0)]:
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    t = torch.from_numpy(x).cuda()
    for op in ["sum", "min", "max"]:
        got = redlab.reduce(op, t, axis=axis)
        assert got.cpu().numpy().tobytes() == redlab.reduce(op, x, axis=axis).tobytes()
    i = torch.from_numpy((x * 100).astype(np.int16)).cuda()
    assert redlab.max(i, axis=axis).cpu().numpy().tobytes() == redlab.max((x * 100).astype(np.int16), axis=axis).tobytes()
    # Indices and narrowed halves stored by the kernels (and whole-array argmax).
    assert redlab.argmax(t, axis=axis).cpu().numpy().tobytes() == redlab.argmax(x, axis=axis).tobytes()
    assert int(redlab.argmin(t).cpu()) == int(redlab.argmin(x))
    h = x.astype(np.float16)
    assert redlab.max(torch.from_numpy(h).cuda(), axis=axis).cpu().numpy().tobytes() == redlab.max(h, axis=axis).tobytes()
torch.cuda.synchronize()
print("sanitize.py: all equal")
