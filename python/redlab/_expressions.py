"""User-defined reductions: a map per element and a combine, written once in redlab's
expression language (docs/expressions.md) and run on any device."""

import math

import numpy as np

from . import _arrays
from . import _native
from . import _reductions
from ._reductions import _axes, _host_device


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
        self._stream_type = (None, None)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name in _FIELDS:
            # What was worked out from the fields is made again on the next call.
            object.__setattr__(self, "_key", _UNSET)
            object.__setattr__(self, "_prepared", None)

    def __repr__(self):
        return f"Reduction(map={self.map!r}, combine={self.combine!r})"

    def __call__(self, *arrays, axis=None, keepdims=False, device="auto"):
        """Reduces ``arrays`` (one per input the map names, all of one shape).

        One input is read in place, as the statistics read it: a numpy array of any
        layout through the buffer protocol, a torch or CuPy CUDA tensor on the caller's
        stream (the map compiled into the kernels, the result a tensor on the same
        device). Several CUDA tensors are read in place too, through a table of their
        addresses, when each starts on a 16-byte boundary and all share one layout, and
        several C-contiguous numpy arrays through the buffer protocol; other inputs
        (host arrays among CUDA tensors, other host layouts, views off those
        boundaries, maps that read ``i`` along axes) are copied into C order on the host
        first."""
        if not arrays:
            raise ValueError("a reduction needs at least one input array")
        if len(arrays) == 1:
            key = self._one_input_key()
            if key is not None:
                return _reductions._call("stat", key, arrays[0], axis, keepdims, None, device)
        if type(arrays[0]) is np.ndarray:
            # C-contiguous host arrays through the buffer protocol, read in place (None
            # where one of them cannot be).
            native = self._prepared
            if native is None:
                native = _native.MappedReduction(*self._fields())
                object.__setattr__(self, "_prepared", native)
            result = native.reduce_buffers(
                arrays, None if axis is None else _axes(axis), keepdims,
                "cpu" if device == "auto" else _host_device(device),
            )
            if result is not None:
                return result
        else:
            on_device = self._on_device(arrays, axis, keepdims, device)
            if on_device is not None:
                return on_device
        hosts = [np.ascontiguousarray(_host_copy(a)) for a in arrays]
        shape = hosts[0].shape
        for k, h in enumerate(hosts[1:], start=1):
            if h.shape != shape:
                raise ValueError(f"input {k} has shape {h.shape}, input 0 has {shape}")
        inputs = []
        for h in hosts:
            _, address, name, _, _ = _arrays.host_description(h)
            inputs.append((address, name))
        result = _native.reduce_mapped(
            *self._fields(), inputs, list(shape), _axes(axis), keepdims, _host_device(device),
        )
        lib = _arrays.framework(arrays[0])
        if lib is not None and _arrays.dlpack_place(arrays[0]) is not None:
            # Tensors in, a tensor out on their device, whichever path computed it.
            return _arrays.to_framework(result, arrays[0], lib)
        return result

    def _on_device(self, arrays, axis, keepdims, device):
        """The reduction of CUDA tensors read where they lie, on the caller's stream,
        as a tensor of their framework on their device; None where they cannot be."""
        first = arrays[0]
        axes = _axes(axis)
        if (device in (None, "auto") and type(first) is _reductions._TORCH_TENSOR[0]
                and first.is_cuda):
            # torch's fast path: no DLPack query, the raw current stream.
            ordinal = first.get_device()
            out = self._enqueue(arrays, ordinal, "torch", _reductions._torch_stream(ordinal),
                                axes, keepdims)
            if out is not None:
                return out
        place = _arrays.dlpack_place(first)
        lib = _arrays.framework(first)
        if place is None or lib is None:
            return None
        if lib == "torch" and not _reductions._TORCH_TYPES:
            _reductions._torch_tables()
        _reductions._check_device(place, device)
        stream = _arrays.current_stream(first, lib)
        out = self._enqueue(arrays, place[1], lib, stream, axes, keepdims)
        if out is not None:
            return out
        capsules = []
        for a in arrays:
            if _arrays.dlpack_place(a) is None:
                return None
            capsules.append(a.__dlpack__(stream=stream if stream else 1))
        result = _native.reduce_mapped_dlpack(
            *self._fields(), capsules, axes, keepdims, stream,
        )
        if result is None:
            return None
        return _arrays.to_framework(result, first, lib)

    def _enqueue(self, arrays, ordinal, lib, stream, axes, keepdims):
        """Tensors of one framework, device, shape and strides: enqueued on the caller's
        stream into a result tensor, nothing waited for (whole contiguous tensors in one
        launch of the production kernel, the rest through the segment kernels). None
        where that path does not apply."""
        first = arrays[0]
        shape = first.shape
        addresses = []
        contiguous = True
        if lib == "torch":
            strides = first.stride()
            for a in arrays:
                if (_arrays.framework(a) != lib or a.shape != shape
                        or a.get_device() != ordinal or a.stride() != strides):
                    return None
                contiguous = contiguous and a.is_contiguous()
                addresses.append(a.data_ptr())
        else:
            strides = tuple(s // first.itemsize for s in first.strides)
            for a in arrays:
                if (_arrays.framework(a) != lib or a.shape != shape or a.device.id != ordinal
                        or any(s % a.itemsize for s in a.strides)
                        or tuple(s // a.itemsize for s in a.strides) != strides):
                    return None
                contiguous = contiguous and a.flags.c_contiguous
                addresses.append(a.data.ptr)
        # What a call needs besides the addresses, worked out once per fields, input
        # types and device: the type names and the result's type.
        key = (self.map, self.combine, self.identity, self.post, self.dtype,
               tuple(a.dtype for a in arrays), ordinal)
        if self._stream_type[0] != key:
            self._stream_type = (key, self._stream_plan(arrays, ordinal, lib))
        plan = self._stream_type[1]
        n = math.prod(shape)
        if plan is None or n == 0:
            return None
        fields, elements, result_type, itemsize = plan
        inputs = list(zip(addresses, elements))
        if axes is None and not keepdims and contiguous:
            if lib == "torch":
                # A 0-d view from a block of fresh results, as redlab.sum's.
                out = _reductions._torch_result(first, ordinal, result_type, stream)
                result = out.data_ptr()
            else:
                import cupy

                with first.device:
                    out = cupy.empty((), dtype=result_type)
                result = out.data.ptr
            if _native.enqueue_tensors_whole(*fields, inputs, n, ordinal, stream, result,
                                             itemsize):
                return out
            return None
        out_shape = _reductions._reduced_shape(tuple(shape), axes, keepdims)
        if out_shape is None:
            return None
        if lib == "torch":
            out = first.new_empty(out_shape, dtype=result_type)
            result = out.data_ptr()
        else:
            import cupy

            with first.device:
                out = cupy.empty(out_shape, dtype=result_type)
            result = out.data.ptr
        if _native.enqueue_tensors_axes(*fields, inputs, list(shape), list(strides), axes,
                                        keepdims, ordinal, stream, result,
                                        itemsize * math.prod(out_shape)):
            return out
        return None

    def _stream_plan(self, arrays, ordinal, lib):
        """``(fields, input type names, result type, result bytes)`` for
        :meth:`_enqueue`, or None where the reduction cannot be enqueued."""
        fields = self._fields()
        elements = []
        for a in arrays:
            name = str(a.dtype).replace("torch.", "") if lib == "torch" else a.dtype.name
            elements.append(_arrays.type_name(name))
        name = _native.enqueue_tensors_dtype(*fields, elements, ordinal)
        if name is None:
            return None
        numpy_type = np.dtype(_arrays.NUMPY[name])
        if lib == "torch":
            import torch

            result_type = getattr(torch, numpy_type.name)
        else:
            result_type = numpy_type
        return fields, elements, result_type, numpy_type.itemsize

    def _fields(self):
        """``(map, combine, identity, post, accumulator)`` as the native functions take
        them: identity and post as text, the accumulator by the library's type name."""
        return (self.map, self.combine,
                None if self.identity is None else str(self.identity),
                None if self.post is None else str(self.post),
                None if self.dtype is None else _arrays.type_name(self.dtype))

    def _one_input_key(self):
        """The native key of this reduction over one input (None where the map reads
        ``i``), made again only when a field changed."""
        key = self._key
        if key is _UNSET:
            key = _native.reduction_key(*self._fields())
            object.__setattr__(self, "_key", key)
        return key


# The fields a Reduction is made of; setting one drops what was worked out from them.
_FIELDS = frozenset(["map", "combine", "identity", "post", "dtype"])
# No key worked out yet (None is a key's value: a map reading ``i`` has none).
_UNSET = object()


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
