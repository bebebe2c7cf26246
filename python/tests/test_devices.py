"""Every device redlab sees (OpenCL through PoCL in CI; CUDA on GPU machines) gives the
CPU's bits for host arrays, whole and along axes."""

import numpy as np
import pytest

import redlab
from canonical import canonical
from conftest import gpu_devices, random_array

DEVICES = gpu_devices()


@pytest.mark.skipif(not DEVICES, reason="no GPU or OpenCL device here")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [0, 1, 13, 8193, 300007])
def test_devices_agree_with_the_cpu(device, n):
    for dtype in [np.float32, np.float64, np.int32]:
        x = random_array(dtype, n, seed=n + 17)
        for op in ["sum", "min", "max", "argmax"]:
            if n == 0 and op != "sum":
                continue
            cpu = redlab.reduce(op, x, device="cpu")
            got = redlab.reduce(op, x, device=device)
            assert np.asarray(got).tobytes() == np.asarray(cpu).tobytes(), (op, dtype)
    f = random_array(np.float32, n, seed=3)
    assert redlab.sum(f, device=device).tobytes() == canonical(f, np.float32).tobytes()


@pytest.mark.skipif(not DEVICES, reason="no GPU or OpenCL device here")
@pytest.mark.parametrize("device", DEVICES)
def test_device_axes_agree_with_the_cpu(device):
    x = random_array(np.float32, 257 * 129, seed=4).reshape(257, 129)
    for axis in [0, 1, None]:
        a = redlab.sum(x, axis=axis, device=device)
        b = redlab.sum(x, axis=axis, device="cpu")
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    assert np.array_equal(redlab.mean(x, axis=1, device=device), redlab.mean(x, axis=1))


def test_devices_lists_the_cpu_and_reasons():
    report = redlab.devices()
    assert report["devices"][0]["id"] == "cpu"
    for missing in report["unavailable"]:
        assert missing["reason"]
