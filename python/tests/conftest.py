"""Shared fixtures: seeded random data of every type, the sizes every reduction is
checked on, and the devices present."""

import numpy as np
import pytest

import redlab

SIZES = [0, 1, 2, 3, 5, 7, 13, 31, 1023, 1025, 8191, 8193, 65537, 300007]


def random_array(dtype, n, seed):
    """Seeded values spread over the type's range (never zeros or constants)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (rng.standard_normal(n) * 100).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)


def gpu_devices():
    """Names of the GPU devices redlab sees here (OpenCL through PoCL in CI)."""
    return [d["id"] for d in redlab.devices()["devices"] if d["id"] != "cpu"]


@pytest.fixture
def rand():
    return random_array
