"""One user-defined reduction of a CUDA tensor, timed in phases, for finding a call that
does not return (scripts/gpu_python_hang.sh runs each in its own process).

Usage: python3 scripts/gpu_python_one_call.py DTYPE MAP COMBINE POST AXIS [view] [SECONDS]
(POST "-" for none, AXIS "none" for the whole array). Prints when each phase starts
and ends, so the last line before a timeout names the phase that stopped: building
the reduction, the call (enqueue and any compile), the wait for the stream, the copy
back, or the host reference.
"""

import faulthandler
import sys
import time

import numpy as np
import torch

import redlab

args = sys.argv[1:]
# A trailing number: seconds after which every thread's Python stack is printed.
seconds = int(args.pop()) if args[-1].isdigit() else 50
faulthandler.dump_traceback_later(seconds, exit=False)

dtype, map_, combine, post, axis = args[:5]
use_view = args[5:] == ["view"]
axis = None if axis == "none" else int(axis)
post = None if post == "-" else post

start = time.perf_counter()


def say(what):
    print(f"{time.perf_counter() - start:8.3f} s  {what}", flush=True)


rng = np.random.default_rng(31)
info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
n = 513 * 1031
if info is not None:
    x = rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
else:
    x = (rng.standard_normal(n) * 100).astype(dtype)
x = x.reshape(513, 1031)
t = torch.from_numpy(x).cuda()
torch.cuda.synchronize()
if use_view:
    x, t = x[:, 1:], t[:, 1:]
say("input on the device")
reduction = redlab.Reduction(map=map_, combine=combine, post=post)
say(f"built {reduction}")
got = reduction(t, axis=axis)
say(f"call returned {type(got).__name__}")
torch.cuda.synchronize()
say("stream done")
got_bits = got.cpu().numpy().tobytes()
say("copied back")
want = reduction(x, axis=axis)
say("host reference")
print("verified", "yes" if np.asarray(want).tobytes() == got_bits else "NO", flush=True)
