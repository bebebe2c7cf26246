"""redlab: reproducible parallel reductions for numpy, torch and CuPy arrays.

Float sums are computed in one canonical order, so ``redlab.sum`` gives the same bits on
the CPU, on any GPU, for any thread count and any memory layout. numpy arrays are read
in place; torch and CuPy CUDA tensors through DLPack, on the caller's current stream.

>>> import numpy as np, redlab
>>> int(redlab.sum(np.arange(10, dtype=np.int32)))
45
"""

from . import _native
from ._expressions import Reduction
from ._native import CANONICAL_VERSION, DeviceError
from ._reductions import (
    all,
    any,
    argmax,
    argmin,
    count_nonzero,
    logsumexp,
    max,
    mean,
    min,
    nanmax,
    nanmean,
    nanmin,
    nansum,
    norm,
    prod,
    reduce,
    std,
    sum,
    var,
)
from ._tools import CommandError, analyze, bench, devices

__all__ = [
    "CANONICAL_VERSION",
    "CommandError",
    "DeviceError",
    "Reduction",
    "all",
    "any",
    "analyze",
    "argmax",
    "argmin",
    "bench",
    "count_nonzero",
    "devices",
    "logsumexp",
    "max",
    "mean",
    "min",
    "nanmax",
    "nanmean",
    "nanmin",
    "nansum",
    "norm",
    "prod",
    "reduce",
    "statistics",
    "std",
    "sum",
    "var",
]

statistics = _native.statistics
