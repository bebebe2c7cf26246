"""User-defined reductions: a map per element and a combine, written once in redlab's
expression language (docs/expressions.md) and run on any device."""

import numpy as np

from . import _arrays
from . import _native
from ._reductions import _axes, _host_device, _result


class Reduction:
    """A reduction written as expressions.

    ``map`` uses the inputs ``x``, ``y``, ``z``, ``w`` (or ``x0`` … ``x7``) and the index
    ``i``; ``combine`` is a built-in (sum, prod, min, max, and, or, xor, argmin, argmax)
    or an expression in ``a`` and ``b`` with an ``identity``; ``post`` is applied to the
    result ``r`` over ``n`` elements; ``dtype`` is the accumulator type. Float sums keep
    the canonical order: the map per element, then the same summation tree as
    ``redlab.sum``.
    """

    def __init__(self, map, combine="sum", identity=None, post=None, dtype=None):  # noqa: A002
        self.map = map
        self.combine = combine
        self.identity = identity
        self.post = post
        self.dtype = dtype

    def __repr__(self):
        return f"Reduction(map={self.map!r}, combine={self.combine!r})"

    def __call__(self, *arrays, axis=None, keepdims=False, device="auto"):
        """Reduces ``arrays`` (one per input the map names, all of one shape).

        Device tensors are copied to the host first: user-defined reductions read host
        memory (the whole-array built-in reductions read tensors in place)."""
        if not arrays:
            raise ValueError("a reduction needs at least one input array")
        hosts = [np.ascontiguousarray(_host_copy(a)) for a in arrays]
        shape = hosts[0].shape
        for k, h in enumerate(hosts[1:], start=1):
            if h.shape != shape:
                raise ValueError(f"input {k} has shape {h.shape}, input 0 has {shape}")
        inputs = []
        for h in hosts:
            _, address, name, _, _ = _arrays.host_description(h)
            inputs.append((address, name))
        acc = None if self.dtype is None else _arrays.type_name(self.dtype)
        triple = _native.reduce_mapped(
            self.map, self.combine, self.identity, self.post, acc, inputs,
            list(shape), _axes(axis), keepdims, _host_device(device),
        )
        return _result(triple)


def _host_copy(a):
    place = _arrays.dlpack_place(a)
    if place is None:
        return np.asarray(a)
    lib = _arrays.framework(a)
    if lib == "torch":
        return a.detach().cpu().numpy()
    if lib == "cupy":
        return a.get()
    raise TypeError(f"cannot copy a {type(a).__name__} on {place[0]} to the host")
