#!/usr/bin/env python3
"""torch.nanmean and cupy.nanmean along axis 0 of each .npy file given, on the first CUDA
device: the median per call of 30 (CUDA events, after 3 warm-up calls), as GB/s of
input read, one line per library and file, prefixed with LABEL. A library that is not
installed, or fails, gets a line saying so.

Usage: tools/nanmean_reference.py LABEL FILE.npy...
"""

import sys

import numpy as np

# The median of timed calls between CUDA events, as axis_compare.py times its libraries.
from axis_compare import timed


def main():
    label, paths = sys.argv[1], sys.argv[2:]
    for path in paths:
        a = np.load(path)
        name = f"{label} {path.rsplit('/', 1)[-1]}".strip()
        try:
            import torch

            x = torch.from_numpy(a).cuda()
            s = timed(
                lambda: torch.nanmean(x, dim=0),
                30,
                torch.cuda.synchronize,
                lambda: torch.cuda.Event(enable_timing=True),
            )
            print(name, "torch.nanmean per call %.0f GB/s" % (a.nbytes / s / 1e9))
            del x
        except Exception as e:  # a missing or failing library is reported, not fatal
            print(name, "torch: not run:", e)
        try:
            import cupy as cp

            y = cp.asarray(a)
            s = timed(
                lambda: cp.nanmean(y, axis=0),
                30,
                cp.cuda.Device().synchronize,
                cp.cuda.Event,
                cp.cuda.get_elapsed_time,
            )
            print(name, "cupy.nanmean per call %.0f GB/s" % (a.nbytes / s / 1e9))
            del y
        except Exception as e:
            print(name, "cupy: not run:", e)


if __name__ == "__main__":
    main()
