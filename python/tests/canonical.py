"""An independent numpy transcription of redlab's canonical order, version 1
(docs/canonical-order.md): tiles of 8 rows × 1024 lanes, lanes folded by halving, an
aligned pairwise tree over tiles. numpy's element-wise float arithmetic is IEEE, so
this gives the exact bits the library must produce."""

import numpy as np

LANES, ROWS = 1024, 8
TILE = LANES * ROWS


def canonical(values, acc, product=False):
    """The canonical sum (or product) of a flat array in accumulator type ``acc``."""
    acc = np.dtype(acc).type
    x = np.asarray(values).astype(acc).ravel()
    n = x.size
    if n == 0:
        return acc(1.0) if product else acc(0.0)
    identity = acc(1.0) if product else acc(-0.0)
    op = np.multiply if product else np.add
    tiles = -(-n // TILE)
    padded = np.full(tiles * TILE, identity, dtype=acc)
    padded[:n] = x
    rows = padded.reshape(tiles, ROWS, LANES)
    lanes = np.full((tiles, LANES), identity, dtype=acc)
    for r in range(ROWS):
        lanes = op(lanes, rows[:, r, :])
    w = LANES // 2
    while w >= 1:
        lanes[:, :w] = op(lanes[:, :w], lanes[:, w : 2 * w])
        w //= 2
    level = lanes[:, 0].copy()
    while level.size > 1:
        pairs = level.size // 2
        joined = op(level[0 : 2 * pairs : 2], level[1 : 2 * pairs : 2])
        if level.size % 2:
            joined = np.append(joined, level[-1])
        level = joined
    return acc(level[0])


def canonical_along(values, axis, acc, product=False):
    """One canonical result per output of an axis reduction: the reduced axes' elements
    in C order."""
    arr = np.asarray(values)
    axes = tuple(range(arr.ndim)) if axis is None else tuple(np.atleast_1d(axis) % arr.ndim)
    kept = [d for d in range(arr.ndim) if d not in axes]
    moved = np.transpose(arr, kept + list(axes))
    out_shape = [arr.shape[d] for d in kept]
    reduced = int(np.prod([arr.shape[d] for d in axes], dtype=np.int64))
    flat = moved.reshape(int(np.prod(out_shape, dtype=np.int64)), reduced)
    results = [canonical(row, acc, product) for row in flat]
    return np.array(results, dtype=acc).reshape(out_shape)


def welford(values):
    """Count, mean and M2 of a flat array by the statistics' canonical order: Welford
    updates in each of a tile's lanes, Chan merges by halving and up the tile tree,
    all in f64 (docs/canonical-order.md, "Statistics")."""
    x = np.asarray(values).astype(np.float64).ravel()

    def merge(a, b):
        if b[0] == 0:
            return a
        if a[0] == 0:
            return b
        n = a[0] + b[0]
        d = b[1] - a[1]
        return (n, a[1] + d * (b[0] / n), a[2] + b[2] + d * d * (a[0] * b[0] / n))

    tiles = []
    for start in range(0, x.size, TILE):
        chunk = x[start : start + TILE]
        count = np.zeros(LANES)
        mean = np.zeros(LANES)
        m2 = np.zeros(LANES)
        for r in range(ROWS):
            row = chunk[r * LANES : (r + 1) * LANES]
            k = row.size
            if k == 0:
                break
            count[:k] += 1
            d = row - mean[:k]
            mean[:k] += d * (1.0 / count[:k])
            m2[:k] += d * (row - mean[:k])
        lanes = list(zip(count, mean, m2))
        w = LANES // 2
        while w >= 1:
            lanes[:w] = [merge(lanes[j], lanes[j + w]) for j in range(w)]
            w //= 2
        tiles.append(lanes[0])
    if not tiles:
        return (0.0, 0.0, 0.0)
    while len(tiles) > 1:
        tiles = [merge(*tiles[i : i + 2]) if i + 1 < len(tiles) else tiles[i]
                 for i in range(0, len(tiles), 2)]
    return tiles[0]


# The canonical exp and ln (docs/canonical-order.md, "The canonical exp" and "The
# canonical ln"), step by step from the text. Python has no fused multiply-add before
# 3.13, so `_fma` rounds the exact rational a·b + c once (float() of a Fraction rounds to
# nearest, ties to even, into the subnormals too); every other step is an ordinary
# double operation. The constants are derived here from ln 2 to 60 digits.

import decimal
import math
import struct
from fractions import Fraction

with decimal.localcontext() as _ctx:
    _ctx.prec = 60
    _LN2 = Fraction(decimal.Decimal(2).ln())


def _fma(a, b, c):
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def _bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _double(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def canonical_exp(t):
    """exp(t), version 1 of the canonical steps."""
    if math.isnan(t):
        return t
    if t < -746.0:
        return 0.0
    if t > 710.0:
        return math.inf
    log2e = float(1 / _LN2)
    ln2_hi = float(_LN2)
    ln2_lo = float(_LN2 - Fraction(ln2_hi))
    k = float(round(t * log2e))  # round() of a float: to nearest, ties to even
    r = _fma(-k, ln2_hi, t)
    r = _fma(-k, ln2_lo, r)
    p = 1.0 / math.factorial(13)
    for i in range(12, 1, -1):
        p = _fma(p, r, 1.0 / math.factorial(i))
    p = _fma(p, r, 1.0)
    p = _fma(p, r, 1.0)
    k1 = math.floor(k * 0.5)
    return (p * 2.0**k1) * 2.0 ** (k - k1)


def canonical_ln(x):
    """ln(x), version 1 of the canonical steps."""
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    if x == math.inf:
        return x
    scale = 0
    if x < 2.2250738585072014e-308:  # subnormal: times 2^54, exactly
        x *= 2.0**54
        scale = 54
    shift = (_bits(x) - _bits(math.sqrt(0.5))) >> 52  # Python's >> is arithmetic
    z = _double(_bits(x) - (shift << 52))
    k = float(shift - scale)
    f = z - 1.0
    s = f / (2.0 + f)
    w = s * s
    h = (0.5 * f) * f
    c = [2.0 / (2 * i + 3) for i in range(10)]
    q = [_fma(c[2 * j + 1], w, c[2 * j]) for j in range(5)]
    w2 = w * w
    w4 = w2 * w2
    w8 = w4 * w4
    q03 = _fma(q[1], w2, q[0])
    q47 = _fma(q[3], w2, q[2])
    q07 = _fma(q47, w4, q03)
    r = w * _fma(q[4], w8, q07)
    ln2_hi = float(Fraction(round(_LN2 * 2**42), 2**42))  # ln 2 to 42 bits
    ln2_lo = float(_LN2 - Fraction(ln2_hi))
    a = k * ln2_hi
    u = f - h
    u_lo = (f - u) - h
    hi = a + u
    lo = (a - hi) + u
    h_lo = _fma(0.5 * f, f, -h)
    return hi + (lo + ((u_lo - h_lo) + _fma(s, h + r, k * ln2_lo)))
