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


def test_expression_errors_are_value_errors():
    x = random_array(np.float32, 10, seed=1)
    with pytest.raises(ValueError, match="column"):
        redlab.Reduction(map="x * * y")(x, x)
    with pytest.raises(ValueError):
        redlab.Reduction(map="x ^ y")(x, x)
    with pytest.raises(ValueError):
        redlab.Reduction(map="x * y")(x, x[:5])
