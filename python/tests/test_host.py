"""numpy arrays on the CPU: every operator × type against an independent reference
(integers exactly, floats bit for bit against the canonical order), on the edge sizes,
any layout, and the inputs left untouched."""

import numpy as np
import pytest

import redlab
from canonical import canonical, canonical_along
from conftest import SIZES, random_array

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_sum_is_canonical(n, dtype):
    x = random_array(dtype, n, seed=n + 1)
    before = x.copy()
    acc = np.float64 if dtype == np.float64 else np.float32
    assert same_bits(redlab.sum(x), canonical(x, acc))
    assert same_bits(x, before)


@pytest.mark.parametrize("n", [0, 1, 7, 1025, 8193, 65537])
def test_float_prod_is_canonical(n):
    rng = np.random.default_rng(n)
    x = (1 + rng.standard_normal(n) * 1e-3).astype(np.float64)
    assert same_bits(redlab.prod(x), canonical(x, np.float64, product=True))


def test_sum_takes_a_wider_accumulator():
    x = random_array(np.float32, 100003, seed=3)
    assert same_bits(redlab.sum(x, dtype=np.float64), canonical(x, np.float64))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", INTS)
def test_integer_operators_are_exact(n, dtype):
    x = random_array(dtype, n, seed=7 * n + 5)
    acc = np.uint64 if np.dtype(dtype).kind == "u" else np.int64
    with np.errstate(over="ignore"):
        assert same_bits(redlab.sum(x), np.sum(x, dtype=acc))
    for name, ufunc in [("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)]:
        assert same_bits(redlab.reduce(name, x), ufunc.reduce(x))
    if n:
        assert same_bits(redlab.min(x), np.min(x))
        assert same_bits(redlab.max(x), np.max(x))
        assert same_bits(redlab.argmin(x), np.int64(np.argmin(x)))
        assert same_bits(redlab.argmax(x), np.int64(np.argmax(x)))


@pytest.mark.parametrize("n", [1, 2, 13, 8193, 300007])
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_selections_match_numpy(n, dtype):
    x = random_array(dtype, n, seed=n)
    x[n // 2] = x.max()  # a tie: the first index wins, as in numpy
    assert same_bits(redlab.min(x), np.min(x))
    assert same_bits(redlab.max(x), np.max(x))
    assert int(redlab.argmin(x)) == np.argmin(x)
    assert int(redlab.argmax(x)) == np.argmax(x)


def test_nan_propagates_like_numpy():
    x = random_array(np.float32, 1000, seed=1)
    x[500] = np.nan
    assert np.isnan(redlab.max(x)) and np.isnan(redlab.min(x)) and np.isnan(redlab.sum(x))
    assert int(redlab.argmax(x)) == np.argmax(x) == 500


@pytest.mark.parametrize("shape,axis", [
    ((37, 1025), 1), ((37, 1025), 0), ((5, 7, 9), (0, 2)), ((5, 7, 9), 1),
    ((3, 8193), None), ((0, 4), 1), ((4, 0), 1), ((1, 1), 0),
    ((1000, 3), 1), ((300, 32), 1), ((7, 300, 17), 2),
])
def test_axes_are_canonical_per_output(shape, axis):
    x = random_array(np.float32, int(np.prod(shape)), seed=11).reshape(shape)
    got = redlab.sum(x, axis=axis)
    assert same_bits(got, canonical_along(x, axis, np.float32))
    kept = redlab.sum(x, axis=axis, keepdims=True)
    assert kept.shape == np.sum(x, axis=axis, keepdims=True).shape
    if x.size:
        assert same_bits(redlab.max(x, axis=axis), np.max(x, axis=axis))


@pytest.mark.parametrize("dtype,acc", [
    (np.float32, None), (np.float64, None), (np.float16, np.float32), (np.int8, None),
    (np.uint16, None), (np.int64, None),
])
def test_array_results_own_their_memory(dtype, acc):
    # Results of many outputs are the computed bytes themselves, viewed in place: they
    # must stay valid and writable after the call, and not be shared between calls.
    x = random_array(dtype, 3 * 4096, seed=13).reshape(3, 4096)
    first = redlab.sum(x, axis=0, dtype=acc)
    expected = first.copy()
    assert first.flags.writeable and first.flags.owndata is False
    assert first.shape == (4096,)
    assert first.dtype == np.asarray(redlab.sum(x[:, 0], dtype=acc)).dtype
    for _ in range(20):
        again = redlab.sum(x, axis=0, dtype=acc)
        assert again.ctypes.data != first.ctypes.data
        assert same_bits(again, expected)
    del again
    import gc
    gc.collect()
    assert same_bits(first, expected)
    first[0] = 0
    assert first[0] == 0 and same_bits(first[1:], expected[1:])
    assert same_bits(redlab.min(x, axis=0), np.min(x, axis=0))


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_results_are_numpys_own_types(dtype):
    # Scalars and arrays are made natively through numpy's C API: each must be the
    # very type numpy returns (np.float32, not a Python float), with numpy's values.
    x = random_array(dtype, 7 * 5, seed=21).reshape(7, 5)
    for name in ["sum", "min", "max", "argmin", "argmax"]:
        got, want = getattr(redlab, name)(x), getattr(np, name)(x)
        # Half-precision sums accumulate in, and return, float32 (redlab.sum).
        wide = name == "sum" and dtype == np.float16
        assert type(got) is (np.float32 if wide else type(want)), (name, type(got))
        if name != "sum" or not np.issubdtype(dtype, np.floating):
            assert got == want, (name, got, want)
        along = getattr(redlab, name)(x, axis=1)
        want_type = np.float32 if wide else getattr(np, name)(x, axis=1).dtype
        assert type(along) is np.ndarray and along.dtype == want_type
        assert along.flags.c_contiguous and along.flags.writeable and along.shape == (7,)
    for shape, axis in [((0, 5), 0), ((5, 0), 1), ((0, 5), 1), ((0, 0), 0)]:
        empty = random_array(dtype, 0, seed=1).reshape(shape)
        got, want = redlab.sum(empty, axis=axis), np.sum(empty, axis=axis)
        if dtype == np.float16:
            want = want.astype(np.float32)
        assert same_bits(got, want), (shape, axis, got, want)


@pytest.mark.parametrize("make", [
    lambda x: np.asfortranarray(x),
    lambda x: x.T.copy().T,
    lambda x: x[::-1, ::-1].copy()[::-1, ::-1],
    lambda x: np.ascontiguousarray(x),
])
def test_layout_does_not_change_bits(make):
    x = random_array(np.float32, 300 * 301, seed=5).reshape(300, 301)
    y = make(x)
    assert np.array_equal(x, y)
    assert same_bits(redlab.sum(y), redlab.sum(x))
    assert same_bits(redlab.sum(y, axis=0), redlab.sum(x, axis=0))
    assert same_bits(redlab.sum(y, axis=1), canonical_along(x, 1, np.float32))


def test_strided_views_are_read_in_place():
    base = random_array(np.float64, 10000, seed=9)
    view = base[3:9000:7]
    assert not view.flags.c_contiguous
    assert same_bits(redlab.sum(view), canonical(view.copy(), np.float64))
    assert int(redlab.argmax(view)) == np.argmax(view)
    broadcast = np.broadcast_to(base[:5], (4, 5))
    assert same_bits(redlab.sum(broadcast, axis=0), canonical_along(broadcast, 0, np.float64))


def test_buffer_protocol_objects():
    import array

    data = array.array("i", range(1000))
    assert int(redlab.sum(data)) == sum(range(1000))
    assert int(redlab.sum(memoryview(bytes(range(200))))) == sum(range(200))


def test_statistics_match_numpy():
    x = random_array(np.float64, 10007, seed=2)
    assert float(redlab.mean(x)) == pytest.approx(np.mean(x), rel=1e-12)
    assert float(redlab.norm(x)) == pytest.approx(np.linalg.norm(x), rel=1e-12)
    assert float(redlab.norm(x, 1)) == pytest.approx(np.linalg.norm(x, 1), rel=1e-12)
    assert float(redlab.norm(x, np.inf)) == np.linalg.norm(x, np.inf)
    m = x[:10000].reshape(100, 100)
    assert np.allclose(redlab.mean(m, axis=0), np.mean(m, axis=0), rtol=1e-12)
    y = x.copy()
    y[::3] = np.nan
    assert float(redlab.nansum(y)) == pytest.approx(np.nansum(y), rel=1e-12)
    z = (x > 50).astype(np.int32)
    assert int(redlab.count_nonzero(z)) == np.count_nonzero(z)
    assert redlab.any(z) == np.any(z) and redlab.all(z) == np.all(z)
    assert redlab.all(np.ones(4, dtype=np.int8)) and not redlab.any(np.zeros(4, dtype=np.int8))
    assert np.array_equal(redlab.any(z.reshape(10007, 1), axis=1), z.astype(bool))


def test_bad_input_raises_python_errors():
    x = random_array(np.float32, 10, seed=1)
    with pytest.raises(TypeError):
        redlab.sum(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        redlab.sum(np.ones(3, dtype=np.complex64))
    with pytest.raises(TypeError):
        redlab.sum(x, dtype=np.int8)
    with pytest.raises(TypeError):
        redlab.reduce("xor", x)
    with pytest.raises(ValueError):
        redlab.sum(x, axis=1)
    with pytest.raises(ValueError):
        redlab.sum(x.reshape(2, 5), axis=(0, 0))
    with pytest.raises(ValueError):
        redlab.max(np.zeros(0, dtype=np.float32))
    with pytest.raises(ValueError):
        redlab.reduce("median", x)
    with pytest.raises(ValueError):
        redlab.norm(x, ord=3)
    with pytest.raises(ValueError):
        redlab.sum(x, device="tpu:0")


def test_missing_gpu_is_a_device_error():
    if any(d.startswith("cuda") for d in redlab.devices()["devices"] and
           [d["id"] for d in redlab.devices()["devices"]]):
        pytest.skip("a CUDA device is present")
    with pytest.raises(redlab.DeviceError):
        redlab.sum(np.ones(4, dtype=np.float32), device="cuda:0")


def test_threads_share_the_library():
    from concurrent.futures import ThreadPoolExecutor

    arrays = [random_array(np.float32, 200003, seed=s) for s in range(8)]
    expected = [canonical(a, np.float32) for a in arrays]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(redlab.sum, arrays * 4))
    assert all(same_bits(g, e) for g, e in zip(got, expected * 4))


def test_result_shapes_for_device_tensors_follow_numpy():
    # The shape of the result tensor that CUDA axis reductions write in place.
    from redlab import _reductions

    x = random_array(np.float64, 210, seed=1).reshape(2, 3, 5, 7)
    for axes in [None, [0], [-1], [1, 3], [0, 1, 2, 3], [], [-4, 2]]:
        for keepdims in [False, True]:
            axis = None if axes is None else tuple(axes)
            want = np.sum(x, axis=axis, keepdims=keepdims).shape
            assert _reductions._reduced_shape(x.shape, axes, keepdims) == want, (axes, keepdims)
    # Axes numpy refuses get no shape: the native call then raises numpy's error.
    for bad in [[4], [-5], [1, 1], [0, -4]]:
        assert _reductions._reduced_shape(x.shape, bad, False) is None, bad
