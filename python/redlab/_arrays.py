"""What an argument is and where it lives: numpy arrays (and anything with the buffer
protocol, which numpy wraps without a copy) are read in place through numpy's array
interface; objects with ``__dlpack__`` (torch, CuPy, JAX) are read through DLPack, on
the host or on their CUDA device."""

import numpy as np

#: numpy dtype -> the library's type names.
_NAMES = {
    np.dtype(np.int8): "i8",
    np.dtype(np.uint8): "u8",
    np.dtype(np.int16): "i16",
    np.dtype(np.uint16): "u16",
    np.dtype(np.int32): "i32",
    np.dtype(np.uint32): "u32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint64): "u64",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}

#: The library's type names -> numpy result types (numpy has no bfloat16: f32 holds
#: every bf16 value exactly).
NUMPY = {name: dt.type for dt, name in _NAMES.items()}
NUMPY["bf16"] = np.float32

_CUDA, _CUDA_HOST, _CPU = 2, 3, 1


def type_name(dtype):
    """The library's name for a numpy dtype (or dtype-like: ``"float32"``, ``np.int8``,
    ``"bf16"``)."""
    if isinstance(dtype, str):
        if dtype.lower() in ("bf16", "bfloat16"):
            return "bf16"
        if dtype in NUMPY:
            return dtype
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"not a dtype: {dtype!r}") from e
    if dt.name == "bfloat16":  # ml_dtypes
        return "bf16"
    try:
        return _NAMES[dt.newbyteorder("=")] if dt.byteorder == ">" else _NAMES[dt]
    except KeyError:
        raise TypeError(f"redlab cannot reduce arrays of {dt}") from None


def host_description(a):
    """``(array, address, type name, shape, byte strides or None)`` of a host array,
    without copying when the memory can be read as it is."""
    arr = np.asarray(a)
    if arr.dtype.byteorder == ">" or not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if arr.dtype == np.bool_:
        arr = arr.view(np.uint8)
    name = type_name(arr.dtype)
    interface = arr.__array_interface__
    address = interface["data"][0]
    strides = interface["strides"]
    if address % arr.itemsize or (strides and any(s % arr.itemsize for s in strides)):
        arr = np.ascontiguousarray(arr)
        interface = arr.__array_interface__
        address, strides = interface["data"][0], None
    return arr, address, name, arr.shape, strides


def dlpack_place(a):
    """``(device type, ordinal)`` of a DLPack object, or None for host-only objects."""
    if isinstance(a, np.ndarray) or not hasattr(a, "__dlpack_device__"):
        return None
    kind, ordinal = a.__dlpack_device__()
    kind = int(kind)
    if kind == _CUDA:
        return ("cuda", int(ordinal))
    if kind in (_CPU, _CUDA_HOST):
        return None
    raise ValueError(f"arrays on DLPack device type {kind} are not supported")


def framework(a):
    """``"torch"``, ``"cupy"`` or None, from the array's type."""
    module = type(a).__module__.split(".", 1)[0]
    return module if module in ("torch", "cupy") else None


def current_stream(a, lib):
    """The caller's current CUDA stream handle for the array's device (0: the legacy
    default stream)."""
    if lib == "torch":
        import torch

        return torch.cuda.current_stream(a.device).cuda_stream
    if lib == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr
    return 0


def to_framework(value, like, lib):
    """A numpy result moved to the array's framework and device."""
    if lib == "torch":
        import torch

        return torch.as_tensor(np.asarray(value), device=like.device)
    if lib == "cupy":
        import cupy

        with like.device:
            return cupy.asarray(np.asarray(value))
    return value
