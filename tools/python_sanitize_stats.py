#!/usr/bin/env python3
"""The statistics' stream path under compute-sanitizer: mean, the norms, nansum,
any/all and count_nonzero of torch CUDA tensors along rows (short, wide, long: tiles
then the tree), columns and whole arrays (the production kernel's post), over f32, f64, i32 and f16, and a view that
starts inside its allocation, each held to the host result's bits. Run it as
``compute-sanitizer --tool memcheck python3 tools/python_sanitize_stats.py`` (and
racecheck, synccheck); it exits 1 when a result differs."""
import sys

import numpy as np
import torch

import redlab

CALLS = [
    lambda a, axis: redlab.mean(a, axis=axis),
    lambda a, axis: redlab.norm(a, axis=axis),
    lambda a, axis: redlab.norm(a, ord=1, axis=axis),
    lambda a, axis: redlab.norm(a, ord=np.inf, axis=axis),
    lambda a, axis: redlab.nansum(a, axis=axis),
    lambda a, axis: redlab.any(a, axis=axis),
    lambda a, axis: redlab.all(a, axis=axis),
    lambda a, axis: redlab.count_nonzero(a, axis=axis),
]
# Whole arrays take the production kernel (one group, then several with the tree); maps
# of 4-byte inputs read raw words in columns of 1024 rows (column_words), rows of 512
# (short rows of words) and rows of 32 (word_rows).
SHAPES = [((300, 7), 1), ((300, 100), 1), ((3, 20000), 1), ((200, 64), 0), ((999,), None),
          ((70001,), None), ((513, 1031), None), ((1024, 256), 0), ((50, 512), 1),
          ((600, 32), 1)]


def host(value):
    return np.asarray(value).tobytes()


def main():
    bad = []
    rng = np.random.default_rng(5)
    for dtype in [np.float32, np.float64, np.int32, np.float16]:
        for shape, axis in SHAPES:
            x = (rng.standard_normal(shape) * 50).astype(dtype)
            x.flat[::11] = 0
            t = torch.from_numpy(x).cuda()
            for k, call in enumerate(CALLS):
                if call(t, axis).cpu().numpy().tobytes() != host(call(x, axis)):
                    bad.append((dtype.__name__, shape, axis, k))
            if len(shape) == 2:
                for k, call in enumerate(CALLS[:2]):
                    view = call(t[:, 1:], axis).cpu().numpy().tobytes()
                    if view != host(call(x[:, 1:], axis)):
                        bad.append((dtype.__name__, shape, axis, f"view {k}"))
    torch.cuda.synchronize()
    print("sanitized statistics agree:", not bad, bad[:5])
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
