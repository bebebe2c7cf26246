"""torch and CuPy CUDA tensors through DLPack (skipped where neither has a GPU): results
stay on the tensor's device, on the caller's stream, with the same bits as numpy
arrays of the same values and as the canonical order."""

import numpy as np
import pytest

import redlab
from canonical import canonical
from conftest import random_array

try:
    import torch
    HAVE_TORCH = torch.cuda.is_available()
except ImportError:
    HAVE_TORCH = False
try:
    import cupy
    HAVE_CUPY = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # no CuPy, or no driver
    HAVE_CUPY = False

needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch with CUDA is not here")
needs_cupy = pytest.mark.skipif(not HAVE_CUPY, reason="CuPy with a GPU is not here")
SIZES = [0, 1, 2, 13, 31, 1023, 1025, 8193, 65537, 2**20 - 1, 2**20 + 1, 2**24 + 3]


def bits(value):
    if HAVE_TORCH and isinstance(value, torch.Tensor):
        return value.cpu().numpy().tobytes()
    if HAVE_CUPY and isinstance(value, cupy.ndarray):
        return cupy.asnumpy(value).tobytes()
    return np.asarray(value).tobytes()


@needs_torch
@pytest.mark.parametrize("n", SIZES)
def test_torch_sum_equals_numpy_and_canonical(n):
    x = random_array(np.float32, n, seed=n + 101)
    t = torch.from_numpy(x).cuda()
    got = redlab.sum(t)
    assert isinstance(got, torch.Tensor) and got.device == t.device and got.dim() == 0
    assert bits(got) == bits(redlab.sum(x)) == bits(canonical(x, np.float32))
    assert torch.equal(t.cpu(), torch.from_numpy(x))  # the input is untouched


@needs_torch
def test_torch_results_are_never_reused():
    """Results come from blocks of 0-d views: more calls than a block holds, on two
    streams and two types, each result keeps its own value while all are alive."""
    xs = [random_array(np.float32, 1000 + k, seed=k) for k in range(600)]
    side = torch.cuda.Stream()
    kept = []
    for k, x in enumerate(xs):
        t = torch.from_numpy(x).cuda()
        if k % 3 == 0:
            with torch.cuda.stream(side):
                side.wait_stream(torch.cuda.default_stream())
                t.record_stream(side)
                kept.append((redlab.sum(t), x, np.float32))
        else:
            kept.append((redlab.sum(t.double()), x.astype(np.float64), np.float64))
    torch.cuda.synchronize()
    addresses = {out.data_ptr() for out, _, _ in kept}
    assert len(addresses) == len(kept)
    for out, x, dtype in kept:
        assert out.dim() == 0 and out.dtype == getattr(torch, np.dtype(dtype).name)
        assert bits(out) == bits(canonical(x, dtype))


@needs_torch
def test_torch_results_on_many_streams_stay_right():
    """More streams than the result table keeps: the table is dropped and refilled, and
    results already handed out keep their values."""
    x = random_array(np.float32, 4097, seed=3)
    t = torch.from_numpy(x).cuda()
    kept = []
    for _ in range(80):
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.default_stream())
        with torch.cuda.stream(stream):
            kept.append(redlab.sum(t))
    torch.cuda.synchronize()
    want = bits(canonical(x, np.float32))
    assert all(bits(out) == want for out in kept)


@needs_cupy
@pytest.mark.parametrize("n", SIZES)
def test_cupy_sum_equals_numpy_and_canonical(n):
    x = random_array(np.float64, n, seed=n + 7)
    c = cupy.asarray(x)
    got = redlab.sum(c)
    assert isinstance(got, cupy.ndarray) and got.shape == ()
    assert bits(got) == bits(redlab.sum(x)) == bits(canonical(x, np.float64))


@needs_cupy
def test_cupy_whole_views_off_a_16_byte_boundary():
    x = random_array(np.float32, 4099, seed=31)
    c = cupy.asarray(x)
    for start in [1, 2, 3]:
        for call in [redlab.sum, redlab.max, redlab.argmin, redlab.mean, redlab.norm]:
            assert bits(call(c[start:])) == bits(call(x[start:])), (call.__name__, start)


@needs_torch
@pytest.mark.parametrize(
    "dtype", ["int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"])
def test_torch_operators_match_the_host(dtype):
    for n in [1, 31, 8193, 300007]:
        x = random_array(np.dtype(dtype), n, seed=n)
        t = torch.from_numpy(x).cuda()
        for op in ["sum", "min", "max", "argmin", "argmax"]:
            assert bits(redlab.reduce(op, t)) == bits(redlab.reduce(op, x)), (op, dtype, n)
        if np.dtype(dtype).kind in "iu":
            for op in ["and", "or", "xor"]:
                assert bits(redlab.reduce(op, t)) == bits(redlab.reduce(op, x)), (op, n)


@needs_torch
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float16", "float32"])
def test_torch_selections_keep_the_first_tie_and_the_first_nan(dtype):
    # Small integers tie often; floats also get signed zeros and NaNs planted early and
    # late. The production kernel scans order keys per work-item and chunk, so the
    # first index of the best key (and the first NaN) must still win.
    for n in [7, 8193, 300007, 2**22 + 5]:
        ints = np.random.default_rng(n).integers(-100, 101, n)
        for nans in [[], [n - 1 - n // 5], [n // 3, n - 1]]:
            if np.dtype(dtype).kind == "f":
                x = np.where(ints == 0, np.where(np.arange(n) % 2 == 1, -0.0, 0.0), ints)
                x = x.astype(dtype)
                x[nans] = np.nan
            elif nans:
                continue
            else:
                x = ints.astype(dtype)
            t = torch.from_numpy(x).cuda()
            for op in ["argmin", "argmax"]:
                assert bits(redlab.reduce(op, t)) == bits(redlab.reduce(op, x)), (op, n, nans)
            for op in ["min", "max"]:
                got, want = redlab.reduce(op, t).cpu().numpy(), np.asarray(redlab.reduce(op, x))
                same = got.tobytes() == want.tobytes() or (np.isnan(got) and np.isnan(want))
                assert same, (op, n, nans)


@needs_torch
@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "float16", "float32", "float64"])
def test_torch_axis_operators_match_the_host(dtype):
    # Rows and columns of every operator: the typed results come straight from the
    # device's accumulators (wide integer words, float order keys, raw sums).
    for shape in [(7, 3), (1031, 33), (5, 20011)]:
        x = random_array(np.dtype(dtype), shape[0] * shape[1], seed=shape[1]).reshape(shape)
        t = torch.from_numpy(x).cuda()
        ops = ["sum", "prod", "min", "max", "argmin", "argmax"]
        if np.dtype(dtype).kind in "iu":
            ops += ["and", "or", "xor"]
        for op in ops:
            for axis in [0, 1]:
                got = redlab.reduce(op, t, axis=axis)
                assert got.device == t.device, (op, axis)
                assert bits(got) == bits(redlab.reduce(op, x, axis=axis)), (op, dtype, shape, axis)
    empty = torch.zeros((4, 0), dtype=getattr(torch, dtype), device="cuda")
    assert bits(redlab.sum(empty, axis=1)) == bits(redlab.sum(empty.cpu().numpy(), axis=1))
    with pytest.raises(ValueError):
        redlab.min(empty, axis=1)


@needs_torch
def test_torch_axis_results_are_written_on_the_callers_stream():
    # Sums along axes are enqueued on torch's current stream, into the result tensor,
    # with no wait: inputs made on a side stream, many calls of different shapes (the
    # job header is rewritten between them, and its buffer grows), one sync at the end.
    side = torch.cuda.Stream()
    cases = []
    with torch.cuda.stream(side):
        for k, (shape, axis, keepdims) in enumerate([
            ((4096, 300), 1, False),    # rows of 33 to 1024: one warp per row
            ((3, 70001), 1, True),      # long rows: tiles, then the tree
            ((700, 65), 0, False),      # columns
            ((2**16, 4), -1, False),    # short rows
            ((2, 3, 5000), (0, 1), False),
            ((513, 1031), None, True),  # every axis, one output
            ((4, 1 << 21), 1, False),   # 1024 tile results: the scratch buffer grows
        ]):
            x = random_array(np.float32, int(np.prod(shape)), seed=k + 40).reshape(shape)
            t = torch.from_numpy(x).to("cuda", non_blocking=True) * 2
            got = redlab.sum(t, axis=axis, keepdims=keepdims)
            i = torch.from_numpy((x * 1000).astype(np.int32)).to("cuda") + 1
            got_i = redlab.max(i, axis=axis, keepdims=keepdims)
            # Float min/max: order keys turned back into floats on the device.
            y = x.astype(np.float64)
            y.flat[k * 7] = np.nan
            got_f = redlab.min(torch.from_numpy(y).to("cuda"), axis=axis, keepdims=keepdims)
            # Indices and narrowed halves are stored by the kernels too.
            got_a = redlab.argmax(t, axis=axis, keepdims=keepdims)
            h = torch.from_numpy(x.astype(np.float16)).to("cuda")
            got_h = redlab.max(h, axis=axis, keepdims=keepdims)
            cases.append((x, axis, keepdims, got, got_i, (y, got_f), (got_a, got_h)))
    side.synchronize()
    for x, axis, keepdims, got, got_i, (y, got_f), (got_a, got_h) in cases:
        want_a = redlab.argmax(x * 2, axis=axis, keepdims=keepdims)
        assert got_a.dtype == torch.int64 and bits(got_a) == bits(want_a), (x.shape, axis)
        want_h = redlab.max(x.astype(np.float16), axis=axis, keepdims=keepdims)
        assert got_h.dtype == torch.float16 and bits(got_h) == bits(want_h), (x.shape, axis)
        # NaN is NaN on every backend, its payload the device's (docs/canonical-order.md).
        want_f = redlab.min(y, axis=axis, keepdims=keepdims)
        got_f = got_f.cpu().numpy()
        assert got_f.dtype == np.float64 and np.isnan(want_f).any()
        assert np.array_equal(np.isnan(got_f), np.isnan(want_f)), (y.shape, axis)
        numbers = ~np.isnan(want_f)
        assert got_f[numbers].tobytes() == want_f[numbers].tobytes(), (y.shape, axis)
        want = redlab.sum(x * 2, axis=axis, keepdims=keepdims)
        assert got.shape == want.shape and got.dtype == torch.float32
        assert bits(got) == bits(want), (x.shape, axis)
        want_i = redlab.max((x * 1000).astype(np.int32) + 1, axis=axis, keepdims=keepdims)
        assert got_i.dtype == torch.int32 and bits(got_i) == bits(want_i), (x.shape, axis)


@needs_cupy
def test_cupy_axis_sums_match_the_host():
    x = random_array(np.int16, 999 * 77, seed=3).reshape(999, 77)
    c = cupy.asarray(x)
    for axis in [0, 1, -1, (0, 1)]:
        got = redlab.sum(c, axis=axis)
        assert isinstance(got, cupy.ndarray)
        assert bits(got) == bits(redlab.sum(x, axis=axis)), axis


@needs_torch
def test_torch_axes_views_and_statistics():
    x = random_array(np.float32, 513 * 1031, seed=5).reshape(513, 1031)
    t = torch.from_numpy(x).cuda()
    for axis in [0, 1, (0, 1)]:
        assert bits(redlab.sum(t, axis=axis)) == bits(redlab.sum(x, axis=axis))
    assert bits(redlab.sum(t.T)) == bits(redlab.sum(x.T))
    assert bits(redlab.max(t[:, ::3], axis=1)) == bits(redlab.max(x[:, ::3], axis=1))
    assert bits(redlab.mean(t)) == bits(redlab.mean(x))
    assert bits(redlab.norm(t, axis=1)) == bits(redlab.norm(x, axis=1))
    assert bits(redlab.sum(t, keepdims=True)) == bits(redlab.sum(x, keepdims=True))
    assert bits(redlab.var(t, axis=0, ddof=1)) == bits(redlab.var(x, axis=0, ddof=1))
    assert bits(redlab.logsumexp(t)) == bits(redlab.logsumexp(x))


@needs_torch
def test_torch_statistics_run_on_the_gpu_with_the_hosts_bits():
    x = random_array(np.float32, 300 * 517, seed=8).reshape(300, 517)
    x[::7, ::11] = np.nan
    clean = np.nan_to_num(x, nan=0.25)
    t, c = torch.from_numpy(x).cuda(), torch.from_numpy(clean).cuda()
    for axis in [None, 0, 1]:
        assert bits(redlab.var(c, axis=axis)) == bits(redlab.var(clean, axis=axis)), axis
        assert bits(redlab.std(c, axis=axis, ddof=1)) == bits(redlab.std(clean, axis=axis, ddof=1))
        assert bits(redlab.nanmin(t, axis=axis)) == bits(redlab.nanmin(x, axis=axis)), axis
        assert bits(redlab.nanmax(t, axis=axis)) == bits(redlab.nanmax(x, axis=axis)), axis
        assert bits(redlab.nanmean(t, axis=axis)) == bits(redlab.nanmean(x, axis=axis)), axis
        # Every backend computes the same exp (docs/canonical-order.md).
        assert bits(redlab.logsumexp(c, axis=axis)) == bits(redlab.logsumexp(clean, axis=axis))
    # A strided view reads in place; split axes of a 3-D tensor go through the host.
    assert bits(redlab.var(c[:, ::3], axis=1)) == bits(redlab.var(clean[:, ::3], axis=1))
    cube = clean[:, :516].reshape(300, 12, 43)
    assert bits(redlab.var(torch.from_numpy(cube).cuda(), axis=(0, 2))) == bits(
        redlab.var(cube, axis=(0, 2)))
    assert redlab.var(c, axis=1).device == c.device
    # Every axis of a view that starts inside its allocation and does not step evenly:
    # read from the 16-byte boundary below its start.
    for name, call in STAT_CALLS:
        assert bits(call(c[:, 1:])) == bits(call(clean[:, 1:])), name


STAT_CALLS = [
    ("mean", lambda a, **k: redlab.mean(a, **k)),
    ("norm2", lambda a, **k: redlab.norm(a, **k)),
    ("norm1", lambda a, **k: redlab.norm(a, ord=1, **k)),
    ("norminf", lambda a, **k: redlab.norm(a, ord=np.inf, **k)),
    ("nansum", lambda a, **k: redlab.nansum(a, **k)),
    ("any", lambda a, **k: redlab.any(a, **k)),
    ("all", lambda a, **k: redlab.all(a, **k)),
    ("count_nonzero", lambda a, **k: redlab.count_nonzero(a, **k)),
]


@needs_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_torch_statistics_are_enqueued_with_the_hosts_bits(dtype):
    # Statistics are mapped, reduced and finished by the segment kernels on torch's
    # current stream: many calls on a side stream, one sync, then the host's bits.
    side = torch.cuda.Stream()
    shapes = [((300, 517), 1), ((300, 517), 0), ((4096, 64), 1), ((3, 70001), 1),
              ((5, 6, 7), (0, 1)), ((999,), None), ((513, 1031), None)]
    cases = []
    with torch.cuda.stream(side):
        for k, (shape, axis) in enumerate(shapes):
            x = random_array(dtype, int(np.prod(shape)), seed=k + 70).reshape(shape)
            if np.issubdtype(dtype, np.integer):
                x[x % 5 == 0] = 0  # zeros for any/all/count_nonzero
            else:
                x.flat[::13] = 0
            if dtype == np.float32:
                x.flat[::29] = np.nan  # nansum skips them
            t = torch.from_numpy(x).to("cuda", non_blocking=True)
            for name, call in STAT_CALLS:
                for keepdims in (False, True):
                    got = call(t, axis=axis, keepdims=keepdims)
                    cases.append((name, x, axis, keepdims, got))
            # A view that starts inside the allocation (4 or 8 bytes in) reads in place.
            if len(shape) == 2:
                got = redlab.mean(t[:, 1:], axis=1)
                cases.append(("mean of a view", x[:, 1:], 1, False, got))
    side.synchronize()
    call_of = dict(STAT_CALLS)
    for name, x, axis, keepdims, got in cases:
        call = call_of.get(name, call_of["mean"])
        want = call(x, axis=axis, keepdims=keepdims)
        assert isinstance(got, torch.Tensor) and got.device.type == "cuda", name
        got_np = got.cpu().numpy()
        assert got_np.shape == np.shape(want), (name, x.shape, axis, keepdims)
        assert got_np.dtype == np.asarray(want).dtype, (name, got_np.dtype)
        # NaN is NaN on every backend, its payload the device's (docs/canonical-order.md).
        want = np.asarray(want)
        nan = np.isnan(want) if want.dtype.kind == "f" else np.zeros(want.shape, bool)
        assert np.array_equal(np.isnan(got_np) if nan.any() else nan, nan), name
        assert got_np[~nan].tobytes() == want[~nan].tobytes(), (name, x.shape, axis, keepdims)


@needs_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_torch_whole_statistics_run_in_one_launch_with_the_hosts_bits(dtype):
    # Whole contiguous tensors take the production kernel, which applies `post` in its
    # last group (16-byte aligned starts); a view starting one element in takes the
    # segment kernels. Both on a side stream, one sync, then the host's bits.
    side = torch.cuda.Stream()
    cases = []
    with torch.cuda.stream(side):
        for k, n in enumerate([1, 2, 13, 1025, 8193, 65537, 2**20 + 1, 2**24 + 3]):
            x = random_array(dtype, n, seed=k + 90)
            if np.issubdtype(dtype, np.integer):
                x[x % 5 == 0] = 0
            else:
                x[::13] = 0
            t = torch.from_numpy(x).to("cuda", non_blocking=True)
            for name, call in STAT_CALLS:
                cases.append((name, x, call(t)))
                if n > 1:
                    cases.append((name, x[1:], call(t[1:])))
    side.synchronize()
    call_of = dict(STAT_CALLS)
    for name, x, got in cases:
        want = np.asarray(call_of[name](x))
        assert isinstance(got, torch.Tensor) and got.device.type == "cuda", name
        got_np = got.cpu().numpy()
        assert (got_np.shape, got_np.dtype) == (want.shape, want.dtype), (name, x.size)
        assert got_np.tobytes() == want.tobytes(), (name, dtype, x.size, got_np, want)


@needs_cupy
def test_cupy_statistics_match_the_host():
    x = random_array(np.float32, 999 * 77, seed=9).reshape(999, 77)
    c = cupy.asarray(x)
    for axis in [0, 1, None]:
        for name, call in STAT_CALLS:
            got = call(c, axis=axis)
            assert isinstance(got, cupy.ndarray), name
            assert bits(got) == bits(call(x, axis=axis)), (name, axis)


@needs_torch
def test_torch_operators_on_views_inside_an_allocation():
    x = random_array(np.float32, 257 * 129, seed=12).reshape(257, 129)
    t = torch.from_numpy(x).cuda()
    for axis in [0, 1]:
        assert bits(redlab.sum(t[:, 1:], axis=axis)) == bits(redlab.sum(x[:, 1:], axis=axis))
        assert bits(redlab.argmax(t[3:, 1:], axis=axis)) == bits(
            redlab.argmax(x[3:, 1:], axis=axis))
    # Whole contiguous views starting 4, 8 and 12 bytes into the allocation.
    flat, host = t.reshape(-1), x.reshape(-1)
    for start in [1, 2, 3, 5]:
        for op in ["sum", "min", "max", "argmax", "prod"]:
            assert bits(redlab.reduce(op, flat[start:])) == bits(
                redlab.reduce(op, host[start:])), (op, start)


@needs_torch
def test_torch_work_on_another_stream_is_seen():
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(3):
            t = torch.arange(2**24, device="cuda", dtype=torch.float32)
            t.mul_(0.5).add_(1.0)
            got = redlab.sum(t)
        expected = canonical(t.cpu().numpy(), np.float32)
    stream.synchronize()
    assert bits(got) == bits(expected)


@needs_torch
@needs_cupy
def test_numpy_torch_and_cupy_agree_bit_for_bit():
    for n in [7, 8192 * 129 + 5, 2**22 + 1]:
        x = random_array(np.float32, n, seed=n)
        assert bits(redlab.sum(x)) == bits(redlab.sum(torch.from_numpy(x).cuda())) \
            == bits(redlab.sum(cupy.asarray(x)))


@needs_torch
def test_device_mismatch_is_a_value_error():
    t = torch.ones(4, device="cuda")
    with pytest.raises(ValueError):
        redlab.sum(t, device="cpu")


@needs_torch
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_torch_user_reductions_of_one_tensor_run_in_place_with_the_hosts_bits(dtype):
    # One tensor: the map compiled into the kernels on torch's stream, the result a
    # tensor on the same device with the bits of the numpy array of the same values.
    x = random_array(dtype, 513 * 1031, seed=31).reshape(513, 1031)
    t = torch.from_numpy(x).cuda()
    for reduction in [
        redlab.Reduction(map="x * x", combine="sum"),
        redlab.Reduction(map="abs(x)", combine="max"),
        redlab.Reduction(map="x > 0 ? x : 0", combine="sum", post="r / n"),
        redlab.Reduction(map="x * x", combine="argmax"),
    ]:
        for axis in [None, 0, 1]:
            got = reduction(t, axis=axis)
            assert isinstance(got, torch.Tensor) and got.is_cuda, reduction
            assert bits(got) == bits(reduction(x, axis=axis)), (reduction, axis)
        view = t[:, 1:]
        assert bits(reduction(view, axis=1)) == bits(reduction(x[:, 1:], axis=1))


@needs_torch
@pytest.mark.parametrize("n", SIZES)
def test_torch_dot_of_two_tensors_reads_them_in_place_with_the_hosts_bits(n):
    # Two tensors: read where they lie through a table of their addresses, the result a
    # tensor on their device with the canonical bits of the numpy arrays' dot.
    x = random_array(np.float32, n, seed=n + 7)
    y = random_array(np.float32, n, seed=n + 8)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    dot = redlab.Reduction(map="x * y", combine="sum")
    got = dot(tx, ty)
    assert isinstance(got, torch.Tensor) and got.device == tx.device
    assert bits(got) == bits(dot(x, y)) == bits(canonical(x * y, np.float32))
    assert torch.equal(tx.cpu(), torch.from_numpy(x))  # the inputs are untouched


@needs_torch
def test_torch_reductions_of_several_tensors_match_the_host_along_every_axis():
    shape = (257, 1031)
    x = random_array(np.float32, 257 * 1031, seed=41).reshape(shape)
    y = random_array(np.float32, 257 * 1031, seed=42).reshape(shape)
    h = random_array(np.float16, 257 * 1031, seed=43).reshape(shape)
    d = random_array(np.float64, 257 * 1031, seed=44).reshape(shape)
    i = random_array(np.int32, 257 * 1031, seed=45).reshape(shape)
    cases = [
        (redlab.Reduction(map="x * y", combine="sum"), (x, y)),
        (redlab.Reduction(map="abs(x - y)", combine="max"), (d, h)),
        (redlab.Reduction(map="x > y ? 1 : 0", combine="sum", dtype="i64"), (i, x)),
        (redlab.Reduction(map="x * y + z", combine="argmin"), (x, y, d)),
        (redlab.Reduction(map="x * y", combine="sum", post="sqrt(abs(r))"), (d, d)),
        (redlab.Reduction(map="x + y", combine="max(a, b)", identity="-inf"), (x, y)),
        (redlab.Reduction(map="x * y + i", combine="sum", dtype="f64"), (x, y)),
    ]
    for reduction, hosts in cases:
        tensors = [torch.from_numpy(a).cuda() for a in hosts]
        axes = [None, 0, 1, (0, 1)]
        for axis in axes:
            got = reduction(*tensors, axis=axis)
            assert isinstance(got, torch.Tensor) and got.is_cuda, (reduction, axis)
            want = reduction(*hosts, axis=axis)
            assert bits(got) == bits(want), (reduction, axis)
        # Views whose start is off a 16-byte boundary, or whose layouts differ, are
        # copied to the host first: the same bits all the same.
        views = [t[:, 1:] for t in tensors]
        want = reduction(*[a[:, 1:] for a in hosts], axis=1)
        assert bits(reduction(*views, axis=1)) == bits(want)
        # Views 8 elements in start on a 16-byte boundary for every type here: read in
        # place, rows of 1023 starting at every alignment.
        views = [t[:, 8:] for t in tensors]
        for axis in [0, 1, None]:
            want = reduction(*[a[:, 8:] for a in hosts], axis=axis)
            assert bits(reduction(*views, axis=axis)) == bits(want), (reduction, axis)
        mixed = [tensors[0].t().contiguous().t()] + tensors[1:]
        assert bits(reduction(*mixed, axis=0)) == bits(reduction(*hosts, axis=0))


@needs_torch
def test_several_tensors_keep_the_callers_stream_order():
    # The inputs are written on a side stream just before the call: the reduction must
    # see those values, not what the memory held before.
    n = 1 << 22
    x = random_array(np.float32, n, seed=3)
    y = random_array(np.float32, n, seed=4)
    side = torch.cuda.Stream()
    dot = redlab.Reduction(map="x * y", combine="sum")
    with torch.cuda.stream(side):
        tx = torch.zeros(n, device="cuda")
        ty = torch.zeros(n, device="cuda")
        tx.copy_(torch.from_numpy(x).pin_memory(), non_blocking=True)
        ty.copy_(torch.from_numpy(y).pin_memory(), non_blocking=True)
        got = dot(tx, ty)
    # The result is the side stream's, as torch's own results are.
    torch.cuda.current_stream().wait_stream(side)
    assert bits(got) == bits(dot(x, y))


@needs_torch
def test_several_tensors_of_other_shapes_or_devices_are_value_errors():
    dot = redlab.Reduction(map="x * y", combine="sum")
    t = torch.ones(8, device="cuda")
    with pytest.raises(ValueError):
        dot(t, torch.ones(9, device="cuda"))
    with pytest.raises(ValueError):
        dot(t, t, device="cpu")


@needs_cupy
def test_cupy_dot_of_two_arrays_reads_them_in_place_with_the_hosts_bits():
    x = random_array(np.float32, 2**20 + 3, seed=5)
    y = random_array(np.float32, 2**20 + 3, seed=6)
    dot = redlab.Reduction(map="x * y", combine="sum")
    got = dot(cupy.asarray(x), cupy.asarray(y))
    assert isinstance(got, cupy.ndarray)
    assert bits(got) == bits(dot(x, y))
    rows = redlab.Reduction(map="x * y", combine="sum")
    a, b = x[: 1024 * 1024].reshape(1024, 1024), y[: 1024 * 1024].reshape(1024, 1024)
    for axis in [0, 1]:
        got = rows(cupy.asarray(a), cupy.asarray(b), axis=axis)
        assert bits(got) == bits(rows(a, b, axis=axis))
