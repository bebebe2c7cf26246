"""The numpy-style reductions: each call classifies its argument (host array or CUDA
tensor), hands it to the native module without a copy, and returns numpy scalars and
arrays, or for CUDA tensors a tensor of the same framework on the same device."""

import builtins
import math

import numpy as np

from . import _arrays
from . import _native

_ndarray = np.ndarray

_OPS = ("sum", "prod", "min", "max", "argmin", "argmax", "and", "or", "xor")

# (op, input type, accumulator type, ordinal) -> result type of the stream path, or None.
_enqueue_types = {}
# The same for reductions along axes (one result per output), or None.
_enqueue_axis_types = {}
# (statistic, input type, ordinal) -> result type of its stream path, or None.
_enqueue_stat_types = {}
# Entries each of those tables keeps at most: user-defined reductions travel under their
# own keys, and a program that builds expressions as it goes must not grow a table
# without end (a cleared table only costs the next calls one native lookup each).
_TYPE_KEYS = 1024


def _remember(table, key, value):
    """Puts ``key: value`` in ``table``, first emptying a table that has _TYPE_KEYS
    entries."""
    if len(table) >= _TYPE_KEYS:
        table.clear()
    table[key] = value


def _axes(axis):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return [int(x) for x in axis]
    return [int(axis)]


def _host_device(device):
    if device in (None, "auto"):
        return "cpu"
    return str(device)


def _check_device(place, device):
    if device in (None, "auto"):
        return
    expected = f"{place[0]}:{place[1]}"
    if str(device) != expected:
        raise ValueError(f"the array is on {expected}, device={device!r} (move it first)")


def _enqueue_type(name, element, acc, ordinal):
    """``(result type, result buffer elements)`` when ``name`` over ``element`` runs on
    the caller's stream, else None (cached: it depends only on the problem and the
    device). The buffer is the kernel's whole output; the result is its element 0."""
    key = (name, element, acc, ordinal)
    result_type = _enqueue_types.get(key, False)
    if result_type is False:
        result_type = _native.enqueue_dtype("op", name, element, acc, ordinal)
        _remember(_enqueue_types, key, result_type)
    return result_type


def _enqueue_axis_type(name, element, acc, ordinal):
    """The result type when ``name`` over ``element`` along axes runs on the caller's
    stream into a result array, else None (cached per problem and device)."""
    key = (name, element, acc, ordinal)
    result_type = _enqueue_axis_types.get(key, False)
    if result_type is False:
        result_type = _native.enqueue_axis_dtype(name, element, acc, ordinal)
        _remember(_enqueue_axis_types, key, result_type)
    return result_type


def _enqueue_stat_type(name, element, ordinal):
    """The result type when statistic ``name`` over ``element`` runs on the caller's
    stream into a result array, else None (cached per statistic and device)."""
    key = (name, element, ordinal)
    result_type = _enqueue_stat_types.get(key, False)
    if result_type is False:
        result_type = _native.enqueue_stat_dtype(name, element, ordinal)
        _remember(_enqueue_stat_types, key, result_type)
    return result_type


def _torch_stat_fast(name, a, axes, keepdims):
    """A statistic (mean, a norm, nansum, any/all, count_nonzero) of a torch CUDA tensor,
    along axes or of the whole tensor, enqueued on torch's current stream into a result
    tensor of numpy's shape: the segment kernels map, reduce and finish in place. Returns
    None where this does not apply (the DLPack path then runs)."""
    if axes is None and not keepdims:
        out = _torch_stat_whole(name, a)
        if out is not None:
            return out
    return _torch_into_result(
        a, axes, keepdims,
        lambda element, ordinal: _enqueue_stat_type(name, element, ordinal),
        lambda element, *call: _native.enqueue_stat_pointer(name, element, *call),
    )


def _torch_stat_whole(name, a):
    """A statistic of a whole contiguous torch CUDA tensor: one launch of the production
    kernel on torch's current stream, its result (after `post`) written into a 0-d
    tensor from the block of fresh results, as whole-array operators do. None where this
    does not apply (the axis path then runs)."""
    if not _TORCH_TYPES:
        _torch_tables()
    element = _TORCH_TYPES.get(a.dtype)
    if element is None or not a.is_contiguous():
        return None
    address = a.data_ptr()
    if address % 16:
        return None
    ordinal = a.get_device()
    result = _enqueue_stat_type(name, element, ordinal)
    if result is None:
        return None
    stream = _torch_stream(ordinal)
    out = _torch_result(a, ordinal, _TORCH_RESULT[result], stream)
    if _native.enqueue_stat_whole(
        name, element, address, a.numel(), ordinal, stream,
        out.data_ptr(), out.element_size(),
    ):
        return out
    # Not enqueued (no elements, an unaligned start): the view was never written, and
    # goes back for a later call.
    _results.setdefault((ordinal, _TORCH_RESULT[result], stream), []).append(out)
    return None


def _torch_op_fast(name, a, axes, keepdims, acc):
    """The torch fast path of an operator: whole-array or along axes."""
    if axes is None and not keepdims:
        return _torch_fast(name, a, acc)
    return _torch_axis_fast(name, a, axes, keepdims, acc)


def _torch_fast(name, a, acc):
    """A whole-array operator over a contiguous torch CUDA tensor, enqueued on torch's
    current stream: the tensor's own address, length and stream, read from the tensor
    (the same memory DLPack describes, without building a capsule per call). Returns
    None where this does not apply."""
    if not _TORCH_TYPES:
        _torch_tables()
    element = _TORCH_TYPES.get(a.dtype)
    if element is None or not a.is_contiguous():
        return None
    ordinal = a.get_device()
    address = a.data_ptr()
    landing = _enqueue_type(name, element, acc, ordinal)
    n = a.numel()
    if landing is None or address % 16 or not n:
        # Views starting off a 16-byte boundary (`t[1:]`: the production kernel loads
        # 16-byte words), and empty tensors (argmax of nothing raises as numpy does):
        # the segment kernels, or past them the DLPack path.
        return _torch_axis_fast(name, a, None, False, acc)
    # A 0-d result with room for the value alone: the kernel writes it there directly.
    stream = _torch_stream(ordinal)
    out = _torch_result(a, ordinal, _TORCH_RESULT[landing[0]], stream)
    _native.enqueue_pointer(
        name, element, acc, address, n, ordinal,
        stream, out.data_ptr(), out.element_size(),
    )
    return out


def _torch_axis_fast(name, a, axes, keepdims, acc):
    """An operator along axes of a torch CUDA tensor, enqueued on torch's current stream
    into a result tensor of numpy's shape. Returns None where this does not apply (the
    DLPack path then runs)."""
    return _torch_into_result(
        a, axes, keepdims,
        lambda element, ordinal: _enqueue_axis_type(name, element, acc, ordinal),
        lambda element, *call: _native.enqueue_axis_pointer(name, element, acc, *call),
    )


def _torch_into_result(a, axes, keepdims, result_type, enqueue):
    """Enqueues a reduction along axes of a torch CUDA tensor on torch's current stream
    into a fresh result tensor of numpy's shape: the tensor's own address, shape, strides
    and stream, read from the tensor (the memory DLPack describes, without a capsule per
    call). `result_type(element, ordinal)` names the result's element type or None;
    `enqueue(element, address, dims, strides, axes, keepdims, ordinal, stream, result,
    result_bytes)` returns whether it enqueued. Returns None where this does not apply."""
    if not _TORCH_TYPES:
        _torch_tables()
    element = _TORCH_TYPES.get(a.dtype)
    if element is None:
        return None
    ordinal = a.get_device()
    result = result_type(element, ordinal)
    if result is None:
        return None
    shape = _reduced_shape(tuple(a.shape), axes, keepdims)
    if shape is None:
        return None
    out = a.new_empty(shape, dtype=_TORCH_RESULT[result])
    enqueued = enqueue(
        element, a.data_ptr(), tuple(a.shape), a.stride(), axes, keepdims,
        ordinal, _torch_stream(ordinal), out.data_ptr(), out.numel() * out.element_size(),
    )
    return out if enqueued else None


# Fresh 0-d results for the torch fast path, made a block at a time: one tensor of
# _RESULT_BLOCK elements allocated on the stream that will write them, split at once
# into 0-d views. Allocating each result through torch cost 2.6 µs of a 10.4 µs call on
# the H200 (tools/python_breakdown.py); a view from the list costs a list pop. Every
# view is handed out once, so no result is ever written twice; a block's memory goes
# back to torch's allocator when its last result is dropped.
_RESULT_BLOCK = 256
# Blocks kept for at most this many (device, type, stream) keys: a program that makes
# streams as it goes must not grow the table without end (dropping the table frees only
# the views not handed out yet).
_RESULT_KEYS = 64
_results = {}


def _torch_result(a, ordinal, dtype, stream):
    key = (ordinal, dtype, stream)
    free = _results.get(key)
    if not free:
        if len(_results) >= _RESULT_KEYS:
            _results.clear()
        block = a.new_empty((_RESULT_BLOCK,), dtype=dtype)
        free = list(reversed(block.unbind(0)))
        _results[key] = free
    return free.pop()


def _torch_stream(ordinal):
    raw = _RAW_STREAM[0]
    if raw is not None:
        return raw(ordinal)
    import torch

    return torch.cuda.current_stream(ordinal).cuda_stream


def _reduced_shape(shape, axes, keepdims):
    """numpy's result shape of reducing ``shape`` along ``axes`` (None: all), or None
    where the axes are not valid (the native call then says why)."""
    rank = len(shape)
    if axes is None:
        reduced = set(range(rank))
    else:
        reduced = {ax + rank if ax < 0 else ax for ax in axes}
        # (builtins: this module's own `any`, `min` and `max` reduce arrays.)
        if len(reduced) != len(axes) or builtins.any(not 0 <= ax < rank for ax in reduced):
            return None
    return tuple(
        1 if d in reduced else size
        for d, size in enumerate(shape)
        if keepdims or d not in reduced
    )


def _cuda_call(kind, name, a, place, axes, keepdims, acc, device, ddof=0.0):
    _check_device(place, device)
    lib = _arrays.framework(a)
    whole = kind == "op" and axes is None and not keepdims
    if kind == "op" and lib == "torch":
        out = _torch_op_fast(name, a, axes, keepdims, acc)
        if out is not None:
            return out
    if kind == "stat" and lib == "torch":
        out = _torch_stat_fast(name, a, axes, keepdims)
        if out is not None:
            return out
    stream = _arrays.current_stream(a, lib)
    capsule = a.__dlpack__(stream=stream if stream else 1)
    out = None
    result_address, result_bytes = None, 0
    if kind in ("op", "stat") and lib is not None:
        element = _arrays.type_name(str(a.dtype).replace("torch.", ""))
        if kind == "stat":
            result_type = _enqueue_stat_type(name, element, place[1])
            shape = _reduced_shape(tuple(a.shape), axes, keepdims)
        elif whole:
            landing = _enqueue_type(name, element, acc, place[1])
            result_type, shape = (landing[0] if landing else None), ()
            if result_type is None:
                # One output along every axis, stored by the segment kernels.
                result_type = _enqueue_axis_type(name, element, acc, place[1])
        else:
            result_type = _enqueue_axis_type(name, element, acc, place[1])
            shape = _reduced_shape(tuple(a.shape), axes, keepdims)
        if result_type is not None and shape is not None:
            # Room for the results alone, one per output: the kernels write them there
            # on the caller's stream (the native side falls back to the waiting path,
            # and returns the values, where the shape or problem does not allow it).
            numpy_type = np.dtype(_arrays.NUMPY[result_type])
            result_bytes = numpy_type.itemsize * math.prod(shape)
            if lib == "torch":
                import torch

                out = a.new_empty(shape, dtype=getattr(torch, numpy_type.name))
                result_address = out.data_ptr()
            else:
                import cupy

                with a.device:
                    out = cupy.empty(shape, dtype=numpy_type)
                result_address = out.data.ptr
    result = _native.reduce_dlpack(
        kind, name, capsule, axes, keepdims, acc, stream, result_address, result_bytes, ddof
    )
    if result is None:
        return out
    return _arrays.to_framework(result, a, lib)


_TORCH_TYPES = {}
_TORCH_RESULT = {}
# torch.Tensor once torch has been seen (the package does not import torch itself).
_TORCH_TENSOR = [None]
# torch's current-stream query without a Stream object, where this torch has it.
_RAW_STREAM = [None]


def _torch_tables():
    import torch

    _TORCH_TENSOR[0] = torch.Tensor
    _RAW_STREAM[0] = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    for name in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                 "float16", "bfloat16", "float32", "float64"]:
        t = getattr(torch, name, None)
        if t is not None:
            _TORCH_TYPES[t] = _arrays.type_name(name)
            _TORCH_RESULT[_arrays.type_name(name)] = t


def _call(kind, name, a, axis=None, keepdims=False, dtype=None, device="auto", ddof=0.0):
    axes = None if axis is None else _axes(axis)
    acc = None if dtype is None else _arrays.type_name(dtype)
    if kind != "multi" and device == "auto" and type(a) is _TORCH_TENSOR[0] and a.is_cuda:
        if kind == "op":
            out = _torch_op_fast(name, a, axes, keepdims, acc)
        else:
            out = _torch_stat_fast(name, a, axes, keepdims)
        if out is not None:
            return out
    if type(a) is not _ndarray:
        place = _arrays.dlpack_place(a)
        if place is not None:
            return _cuda_call(kind, name, a, place, axes, keepdims, acc, device, ddof)
    host_device = "cpu" if device == "auto" else _host_device(device)
    # The buffer protocol first: numpy arrays and other exporters, read in place.
    result = _native.reduce_buffer(kind, name, a, axes, keepdims, acc, host_device, ddof)
    if result is None:
        # No native buffer (lists, big-endian or unaligned data …): numpy's view or copy.
        arr, address, element, shape, strides = _arrays.host_description(a)
        result = _native.reduce_host(
            kind, name, address, element, shape, strides, axes, keepdims, acc, host_device, ddof
        )
    return result


def reduce(op, a, axis=None, dtype=None, keepdims=False, device="auto"):
    """Reduces ``a`` with ``op`` (sum, prod, min, max, argmin, argmax, and, or, xor)
    along ``axis`` (an int, a tuple, or None for all axes), accumulating in ``dtype``
    (default: numpy's). Float sums are in redlab's canonical order, so the bits do not
    depend on the device, the thread count or the array's layout."""
    if op not in _OPS:
        raise ValueError(f"unknown operator {op!r} (known: {', '.join(_OPS)})")
    return _call("op", op, a, axis, keepdims, dtype, device)


def sum(a, axis=None, dtype=None, keepdims=False, device="auto"):  # noqa: A001
    """Sum of the elements (integers exactly in 64 bits; floats in canonical order)."""
    return _call("op", "sum", a, axis, keepdims, dtype, device)


def prod(a, axis=None, dtype=None, keepdims=False, device="auto"):
    """Product of the elements."""
    return _call("op", "prod", a, axis, keepdims, dtype, device)


def min(a, axis=None, keepdims=False, device="auto"):  # noqa: A001
    """Smallest element (NaN if any element is NaN, as numpy)."""
    return _call("op", "min", a, axis, keepdims, None, device)


def max(a, axis=None, keepdims=False, device="auto"):  # noqa: A001
    """Largest element (NaN if any element is NaN, as numpy)."""
    return _call("op", "max", a, axis, keepdims, None, device)


def argmin(a, axis=None, keepdims=False, device="auto"):
    """Index of the first smallest element (in C order along the reduced axes)."""
    return _call("op", "argmin", a, axis, keepdims, None, device)


def argmax(a, axis=None, keepdims=False, device="auto"):
    """Index of the first largest element (in C order along the reduced axes)."""
    return _call("op", "argmax", a, axis, keepdims, None, device)


def mean(a, axis=None, keepdims=False, device="auto"):
    """Arithmetic mean: the canonical sum over the count (f64 for integers)."""
    return _call("stat", "mean", a, axis, keepdims, None, device)


def nansum(a, axis=None, keepdims=False, device="auto"):
    """Sum treating NaN as zero."""
    return _call("stat", "nansum", a, axis, keepdims, None, device)


def any(a, axis=None, keepdims=False, device="auto"):  # noqa: A001
    """Whether any element is non-zero."""
    return _as_bool(_call("stat", "any", a, axis, keepdims, None, device))


def all(a, axis=None, keepdims=False, device="auto"):  # noqa: A001
    """Whether every element is non-zero."""
    return _as_bool(_call("stat", "all", a, axis, keepdims, None, device))


def count_nonzero(a, axis=None, keepdims=False, device="auto"):
    """How many elements are non-zero."""
    return _call("stat", "count_nonzero", a, axis, keepdims, None, device)


def norm(a, ord=None, axis=None, keepdims=False, device="auto"):  # noqa: A002
    """Vector norm: ``ord`` None or 2 (Euclidean), 1, or ``inf`` (largest magnitude)."""
    names = {None: "norm2", 2: "norm2", 1: "norm1", math.inf: "norminf"}
    if ord not in names:
        raise ValueError(f"unsupported norm order {ord!r} (None, 1, 2 or inf)")
    return _call("stat", names[ord], a, axis, keepdims, None, device)


def var(a, axis=None, ddof=0, keepdims=False, device="auto"):
    """Variance, in one pass: Welford updates per lane and Chan merges in the canonical
    order's shape, in f64 (returned as f32 for narrower floats). Runs on the CPU and on
    OpenCL and CUDA devices with the same bits (CUDA tensors are read in place)."""
    return _call("multi", "var", a, axis, keepdims, None, device, float(ddof))


def std(a, axis=None, ddof=0, keepdims=False, device="auto"):
    """Standard deviation: the square root of :func:`var`."""
    return _call("multi", "std", a, axis, keepdims, None, device, float(ddof))


def logsumexp(a, axis=None, keepdims=False, device="auto"):
    """``log(sum(exp(a)))`` in one pass with a running maximum (no overflow). Runs on
    the CPU and on GPUs; its last bits depend on the platform's ``exp`` and ``log``."""
    return _call("multi", "logsumexp", a, axis, keepdims, None, device)


def nanmin(a, axis=None, keepdims=False, device="auto"):
    """Smallest element ignoring NaN (NaN where every element is NaN)."""
    return _call("multi", "nanmin", a, axis, keepdims, None, device)


def nanmax(a, axis=None, keepdims=False, device="auto"):
    """Largest element ignoring NaN (NaN where every element is NaN)."""
    return _call("multi", "nanmax", a, axis, keepdims, None, device)


def nanmean(a, axis=None, keepdims=False, device="auto"):
    """Mean of the elements that are not NaN (NaN where there are none), from each
    canonical tile's kept values in order; on the CPU and on GPUs, with the same bits."""
    return _call("multi", "nanmean", a, axis, keepdims, None, device)


def _as_bool(value):
    """any/all as numpy's bool. Their results are bytes of 0 or 1 (`post` is `r != 0`),
    so a torch or CuPy result is viewed as bool in place: a conversion would be a second
    launch per call."""
    if isinstance(value, np.ndarray):
        return value.astype(np.bool_)
    if isinstance(value, np.generic):
        return np.bool_(value)
    if hasattr(value, "bool"):
        if str(value.dtype) == "torch.uint8":
            import torch

            return value.view(torch.bool)
        return value.bool()
    return value.view(np.bool_) if value.dtype == np.uint8 else value.astype(bool)
