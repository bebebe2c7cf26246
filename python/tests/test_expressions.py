"""User-defined reductions from Python: the map per element, then the canonical order."""

import numpy as np
import pytest

import redlab
from canonical import canonical
from conftest import random_array


@pytest.mark.parametrize("n", [0, 1, 31, 8193, 100003])
def test_dot_is_the_canonical_sum_of_products(n):
    x = random_array(np.float32, n, seed=1)
    y = random_array(np.float32, n, seed=2)
    dot = redlab.Reduction(map="x * y", combine="sum")
    assert dot(x, y).tobytes() == canonical(x * y, np.float32).tobytes()


def test_documented_examples():
    x = random_array(np.float64, 5001, seed=3)
    y = random_array(np.float64, 5001, seed=4)
    l2 = redlab.Reduction(map="x * x", combine="sum", post="sqrt(r)")
    assert float(l2(x)) == pytest.approx(np.linalg.norm(x), rel=1e-12)
    above = redlab.Reduction(map="x > 10 ? 1 : 0", combine="sum", dtype="i64")
    assert int(above(x)) == int(np.sum(x > 10))
    l1 = redlab.Reduction(map="abs(x - y)", combine="sum")
    assert float(l1(x, y)) == pytest.approx(np.sum(np.abs(x - y)), rel=1e-12)
    biggest = redlab.Reduction(map="x * x", combine="argmax")
    assert int(biggest(x)) == int(np.argmax(x * x))
    rows = redlab.Reduction(map="x * y", combine="sum")(
        x[:5000].reshape(50, 100), y[:5000].reshape(50, 100), axis=1)
    assert np.allclose(rows, np.sum(x[:5000].reshape(50, 100) * y[:5000].reshape(50, 100), axis=1))


def test_several_arrays_read_in_place_or_copied_give_the_same_bits():
    # C-contiguous numpy arrays go through the buffer protocol; strided and Fortran-order
    # ones, lists and mixed objects are described in Python and copied into C order.
    x = random_array(np.float32, 61 * 94, seed=11).reshape(61, 94)
    y = random_array(np.float64, 61 * 94, seed=12).reshape(61, 94)
    dot = redlab.Reduction(map="x * y", combine="sum", dtype="f64")
    for axis in [None, 0, 1]:
        want = dot(np.ascontiguousarray(x), np.ascontiguousarray(y), axis=axis)
        assert np.asarray(want).tobytes() == np.asarray(
            dot(np.asfortranarray(x), np.asfortranarray(y), axis=axis)).tobytes()
    flat_x, flat_y = x.ravel(), y.ravel()
    want = canonical(flat_x.astype(np.float64) * flat_y, np.float64)
    assert np.asarray(dot(flat_x, flat_y)).tobytes() == want.tobytes()
    assert np.asarray(dot(flat_x.tolist(), flat_y)).tobytes() == want.tobytes()
    strided = dot(flat_x[::3], flat_y[::3])
    assert np.asarray(strided).tobytes() == canonical(
        flat_x[::3].astype(np.float64) * flat_y[::3], np.float64).tobytes()


def test_expression_errors_are_value_errors():
    x = random_array(np.float32, 10, seed=1)
    with pytest.raises(ValueError, match="column"):
        redlab.Reduction(map="x * * y")(x, x)
    with pytest.raises(ValueError):
        redlab.Reduction(map="x ^ y")(x, x)
    with pytest.raises(ValueError):
        redlab.Reduction(map="x * y")(x, x[:5])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
def test_one_input_reads_any_layout_with_the_bits_of_its_c_order_copy(dtype):
    # One input takes the in-place path (the buffer protocol, any strides); the same
    # values in C order, and the two-input path over (x, x), give the same bits.
    base = random_array(dtype, 61 * 94, seed=5).reshape(61, 94)
    views = [base[:, ::2], base.T, base[3:50, 7:], np.asfortranarray(base)]
    square = redlab.Reduction(map="x * x", combine="sum")
    product = redlab.Reduction(map="x * y", combine="sum")
    biggest = redlab.Reduction(map="abs(x)", combine="argmax")
    for view in views:
        copy = np.ascontiguousarray(view)
        for axis in [None, 0, 1, (0, 1)]:
            got = square(view, axis=axis)
            assert np.asarray(got).tobytes() == np.asarray(square(copy, axis=axis)).tobytes()
            assert np.asarray(got).tobytes() == np.asarray(product(copy, copy, axis=axis)).tobytes()
            if not isinstance(axis, tuple):  # (numpy's argmax takes one axis)
                picked = biggest(view, axis=axis)
                assert np.array_equal(picked, np.argmax(np.abs(copy), axis=axis))


def test_maps_of_the_index_number_elements_in_c_order_on_any_layout():
    base = random_array(np.float64, 40 * 30, seed=6).reshape(40, 30)
    view = base[::3, 1::2]
    weighted = redlab.Reduction(map="x * i", combine="sum")
    flat = np.ascontiguousarray(view).ravel()
    assert float(weighted(view)) == pytest.approx(float(np.sum(flat * np.arange(flat.size))))
    rows = weighted(view, axis=1)
    assert rows.shape == (view.shape[0],)


def test_one_input_errors_name_the_reduction_not_its_key():
    empty = np.zeros(0, dtype=np.float32)
    with pytest.raises(ValueError, match="operation reduce"):
        redlab.Reduction(map="x", combine="argmax")(empty)
    with pytest.raises(ValueError, match="column"):
        redlab.Reduction(map="x * * 2")(empty)
    with pytest.raises(ValueError):
        redlab.Reduction(map="x ^ 2")(random_array(np.float32, 5, seed=1))
    with pytest.raises(ValueError, match="control"):
        redlab.Reduction(map="x", post="r\x1f")(random_array(np.float32, 5, seed=1))


def test_the_stream_paths_type_tables_stay_bounded():
    # Every user-defined reduction's key gets its own entry: a program that builds
    # expressions as it goes must not grow the tables without end.
    from redlab import _reductions

    table = {}
    for k in range(3 * _reductions._TYPE_KEYS + 7):
        _reductions._remember(table, ("key", k), k)
        assert len(table) <= _reductions._TYPE_KEYS
        assert table[("key", k)] == k
    assert len(table) == (3 * _reductions._TYPE_KEYS + 7) % _reductions._TYPE_KEYS


def test_custom_combines_along_axes_fold_each_output_in_the_canonical_order():
    # `a + b` from -0.0 is the canonical float sum, so every row is the canonical sum of
    # its own elements; `max(a, b)` from -inf is exact, so numpy's max.
    x = random_array(np.float32, 37 * 9000, seed=21).reshape(37, 9000)
    total = redlab.Reduction(map="x", combine="a + b", identity="-0.0")
    rows = np.asarray(total(x, axis=1))
    assert rows.dtype == np.float32 and rows.shape == (37,)
    for k in range(37):
        assert rows[k].tobytes() == canonical(x[k], np.float32).tobytes(), k
    columns = np.asarray(total(x, axis=0))
    for k in [0, 1, 4999, 8999]:
        assert columns[k].tobytes() == canonical(x[:, k], np.float32).tobytes(), k
    d = random_array(np.float64, 61 * 94, seed=22).reshape(61, 94)
    biggest = redlab.Reduction(map="abs(x)", combine="max(a, b)", identity="-inf")
    for axis in [0, 1]:
        assert np.array_equal(np.asarray(biggest(d, axis=axis)), np.max(np.abs(d), axis=axis))
    # An empty axis gives the identity.
    empty = np.asarray(biggest(np.zeros((3, 0)), axis=1))
    assert np.array_equal(empty, np.full(3, -np.inf))
