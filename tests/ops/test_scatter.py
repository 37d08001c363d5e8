"""``np.add.at`` into device arrays (``opencl/scatter.cl``): repeated, negative and broadcast
indices and values along the first axis, rows of a 2-D target, views with an offset; integers
exact (wrapping), floats to rounding; NumPy's IndexError; other ufuncs and index forms through
NumPy (written back, counted)."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg


DTYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]


def _usable(device, dtype):
    info = device.info
    return (np.dtype(dtype).itemsize == 4 or info.int64_atomics) and (
        dtype != np.float64 or info.fp64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (6, 3), (33, 2, 2)])
def test_add_at_is_numpys(on_device, dtype, shape):
    if not _usable(on_device, dtype):
        pytest.skip("no 64-bit atomics or doubles on this device")
    rng = np.random.default_rng(len(shape))
    a = (rng.standard_normal(shape) * 50).astype(dtype)
    x = cg.asarray(a, device=on_device)
    n = shape[0]
    idx = rng.integers(-n, n, 3 * n + 1)
    idx[:3] = [0, 0, -1]                                # repeats, a negative
    vals = (rng.standard_normal((idx.size,) + shape[1:]) * 20).astype(dtype)
    cases = [(idx, vals), (cg.asarray(idx, device=on_device), cg.asarray(vals, device=on_device)),
             (idx, vals[:1]), ((idx[:5],), 3), (np.array(2), vals[0])]
    for ind, v in cases:
        host_ind = np.asarray(ind[0] if isinstance(ind, tuple) else ind)
        host_ind = host_ind if not isinstance(ind, tuple) else (host_ind,)
        host_v = np.asarray(v) if isinstance(v, cg.DeviceArray) else v
        np.add.at(a, host_ind, host_v)
        assert np.add.at(x, ind, v) is None
        got = np.asarray(x)
        if np.dtype(dtype).kind == "f":
            np.testing.assert_allclose(got, a, rtol=1e-5 if dtype == np.float32 else 1e-12)
        else:
            np.testing.assert_array_equal(got, a)
    # uint64 plus a Python int: NumPy's loop adds in float64 (uint64 with int64) and casts
    # back, losing the large values; that case is left to NumPy
    assert cg.on_host_calls() == ({"add.at": 1} if dtype == np.uint64 else {})


def test_float32_targets_take_numpys_float64_sums(on_device):
    """A float32 target plus Python floats: NumPy's loop adds in float64 and rounds each sum to
    float32 (0.1 is not float32's 0.1); so does the device."""
    if not on_device.info.fp64:
        pytest.skip("float64 sums")
    a = np.linspace(-3, 3, 11).astype(np.float32)
    x = cg.asarray(a, device=on_device)
    idx = np.array([0, 3, 3, 10, -2])
    np.add.at(a, idx, 0.1)
    np.add.at(x, idx, 0.1)
    assert np.asarray(x).tobytes() == a.tobytes()
    assert cg.on_host_calls() == {}


def test_add_at_views_errors_and_other_forms(on_device):
    base = np.zeros((5, 4), np.int32)
    x = cg.asarray(base, device=on_device)
    view = x[1:4]                                       # C-contiguous, at an offset
    np.add.at(view, np.array([0, 2, 2]), np.int32(7))
    np.add.at(base[1:4], np.array([0, 2, 2]), np.int32(7))
    np.testing.assert_array_equal(np.asarray(x), base)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        np.add.at(view, np.array([3]), 1)
    assert cg.on_host_calls() == {}
    np.add.at(x, (np.array([0]), np.array([1])), 5)    # two index arrays: NumPy's
    np.multiply.at(x, np.array([0]), 3)                 # another ufunc: NumPy's
    np.add.at(x[:, ::2], np.array([1]), 1)              # a strided target: NumPy's
    want = base.copy()
    np.add.at(want, (np.array([0]), np.array([1])), 5)
    np.multiply.at(want, np.array([0]), 3)
    np.add.at(want[:, ::2], np.array([1]), 1)
    np.testing.assert_array_equal(np.asarray(x), want)
    assert cg.on_host_calls() == {"add.at": 2, "multiply.at": 1}
