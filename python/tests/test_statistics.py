"""var, std, logsumexp and the NaN-skipping statistics: one pass, the canonical merge
order (bit for bit against tests/canonical.py's transcription), numpy's semantics."""

import numpy as np
import pytest

import redlab
from canonical import canonical_exp, canonical_ln, welford
from conftest import SIZES, random_array


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_variance_is_the_canonical_welford_chan_order(n, dtype):
    x = random_array(dtype, n, seed=n + 3)
    count, _, m2 = welford(x)
    for ddof in (0, 1):
        got = redlab.var(x, ddof=ddof)
        expected = m2 / (count - ddof) if count - ddof > 0 else np.nan
        out = np.float64 if dtype != np.float32 else np.float32
        assert np.asarray(got).tobytes() == np.asarray(out(expected)).tobytes(), ddof
        if count - ddof > 0:
            assert float(got) == pytest.approx(np.var(x.astype(np.float64), ddof=ddof), rel=1e-6)
    if n > 1:
        assert float(redlab.std(x, ddof=1)) == pytest.approx(
            np.std(x.astype(np.float64), ddof=1), rel=1e-6)


def test_variance_is_robust_where_the_textbook_formula_fails():
    x = (1e9 + np.arange(100001) % 7).astype(np.float64)
    textbook = np.mean(x * x) - np.mean(x) ** 2
    assert abs(textbook - np.var(x)) > 0.1 * np.var(x)  # cancellation ruins it
    assert float(redlab.var(x)) == pytest.approx(np.var(x), rel=1e-7)


def test_statistics_along_axes_match_numpy():
    x = random_array(np.float64, 123 * 77, seed=8).reshape(123, 77)
    for axis in (0, 1, None, (0, 1)):
        assert np.allclose(redlab.var(x, axis=axis), np.var(x, axis=axis), rtol=1e-12)
        assert np.allclose(redlab.std(x, axis=axis, ddof=1), np.std(x, axis=axis, ddof=1),
                           rtol=1e-12)
        m = np.max(x, axis=axis, keepdims=True)
        expected = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
        got = redlab.logsumexp(x, axis=axis, keepdims=True)
        assert np.allclose(got, expected, rtol=1e-12)
    # Each output's bits depend on its own elements only.
    rows = redlab.var(x, axis=1)
    assert all(rows[k].tobytes() == redlab.var(x[k]).tobytes() for k in range(0, 123, 17))


def test_logsumexp_does_not_overflow_and_follows_the_special_values():
    assert float(redlab.logsumexp(np.array([1000.0, 1000.0]))) == pytest.approx(1000 + np.log(2))
    assert float(redlab.logsumexp(np.array([-np.inf, -np.inf]))) == -np.inf
    assert float(redlab.logsumexp(np.array([1.0, np.inf]))) == np.inf
    assert np.isnan(redlab.logsumexp(np.array([1.0, np.nan])))


def test_logsumexp_finishes_with_the_canonical_exp_and_ln():
    """The transcriptions in canonical.py, written from docs/canonical-order.md, give
    redlab's bits."""
    rng = np.random.default_rng(21)

    def same(got, expected):
        return np.asarray(got, dtype=np.float64).tobytes() == np.float64(expected).tobytes()

    # n copies of one value: every push and merge adds exactly 1 (equal maxima), so the
    # state is (v, n) in any number of tiles and the result ln(n) + v. (A constant array
    # on purpose: it makes the sum an exact integer, whatever the order.)
    # 43495, 345801 and 429318 are counts whose canonical ln differs from glibc's `log`
    # in the last bit, so a finish with the platform's ln fails here on glibc.
    for n in [1, 2, 3, 1024, 8193, 43495, 345801, 429318, *rng.integers(4, 40_000, size=8)]:
        v = float(rng.standard_normal())
        assert same(redlab.logsumexp(np.full(int(n), v)), canonical_ln(float(n)) + v), n
    # Two values: (a, 1) and (b, 1) merged, (max, 1 + exp(−|a − b|)).
    for a, b in rng.standard_normal((40, 2)) * [1.0, 30.0]:
        expected = canonical_ln(1.0 + canonical_exp(-abs(a - b))) + max(a, b)
        assert same(redlab.logsumexp(np.array([a, b])), expected), (a, b)


def test_nan_skipping_statistics_match_numpy():
    x = random_array(np.float32, 10007, seed=4)
    x[::5] = np.nan
    assert redlab.nanmin(x) == np.nanmin(x) and redlab.nanmax(x) == np.nanmax(x)
    assert float(redlab.nanmean(x)) == pytest.approx(float(np.nanmean(x.astype(np.float64))),
                                                    rel=1e-6)
    m = x[:10000].reshape(100, 100)
    m[3, :] = np.nan
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        expected = np.nanmax(m, axis=1)
    got = redlab.nanmax(m, axis=1)
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.isnan(redlab.nanmean(np.full(4, np.nan)))
    with pytest.raises(ValueError):
        redlab.nanmin(np.zeros(0, dtype=np.float32))


def test_opencl_devices_give_the_cpus_bits():
    gpus = [d["id"] for d in redlab.devices()["devices"] if d["id"].startswith("opencl")]
    if not gpus:
        pytest.skip("no OpenCL device here")
    x = random_array(np.float64, 40 * 301, seed=3).reshape(40, 301)
    x[::5, ::7] = np.nan
    clean = np.nan_to_num(x, nan=0.5)
    for axis in [None, 0, 1]:
        for f, data in [(redlab.var, clean), (redlab.std, clean), (redlab.nanmin, x),
                        (redlab.nanmax, x), (redlab.nanmean, x)]:
            got = f(data, axis=axis, device=gpus[0])
            assert np.asarray(got).tobytes() == np.asarray(f(data, axis=axis)).tobytes(), f
