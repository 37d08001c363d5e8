"""``np.take_along_axis`` and ``np.lexsort`` of device arrays: NumPy's values bit for bit, along
every axis, broadcast and negative indices, strided arrays, ``axis=None``; NumPy's errors; no
host calls."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.bool_, np.float16])
@pytest.mark.parametrize("shape", [(7,), (4, 5, 6), (1, 33), (31, 1)])
def test_take_along_axis_is_numpys(on_device, dtype, shape):
    rng = np.random.default_rng(sum(shape))
    a = (rng.standard_normal(shape) * 9).astype(dtype)
    x = cg.asarray(a, device=on_device)
    for axis in range(-1, -len(shape) - 1, -1):
        n = shape[axis]
        orders = [np.argsort(a, axis=axis, kind="stable")]
        small = list(shape)
        small[axis] = 3
        orders.append(rng.integers(-n, n, small))                        # negatives, repeats
        wide = [1] * len(shape)
        wide[axis] = 2
        orders.append(rng.integers(0, n, wide).astype(np.int32))         # broadcast
        for idx in orders:
            for view, host in ((x, a), (x[..., ::-1], a[..., ::-1])):
                got = np.take_along_axis(view, cg.asarray(idx, device=on_device), axis)
                want = np.take_along_axis(host, idx, axis)
                assert isinstance(got, cg.DeviceArray)
                assert np.asarray(got).dtype == want.dtype
                assert np.asarray(got).tobytes() == want.tobytes()
    flat = np.array([0, -1, 2], np.int64)
    np.testing.assert_array_equal(np.asarray(np.take_along_axis(x, flat, None)),
                                  np.take_along_axis(a, flat, None))
    assert cg.on_host_calls() == {}


def test_take_along_axis_errors(on_device):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = cg.asarray(a, device=on_device)
    for idx, axis, kind in ((np.full((2, 1, 4), 3), 1, IndexError),
                            (np.full((2, 1, 4), -4), 1, IndexError),
                            (np.zeros((3, 4), np.int64), 1, ValueError),
                            (np.zeros((2, 2), np.int64), None, ValueError),
                            (np.zeros((2, 1, 4), np.float64), 1, IndexError)):
        with pytest.raises(kind) as want:
            np.take_along_axis(a, idx, axis)
        with pytest.raises(kind, match=str(want.value)[:24].replace("(", r"\(")):
            np.take_along_axis(x, cg.asarray(idx, device=on_device), axis)


@pytest.mark.parametrize("dtypes", [(np.int32, np.int32, np.float64), (np.uint8, np.float32),
                                    (np.float16, np.int64, np.bool_)])
def test_lexsort_is_numpys(on_device, dtypes):
    rng = np.random.default_rng(len(dtypes))
    keys = [rng.integers(0, 3, (5, 29)).astype(dt) for dt in dtypes]
    if np.dtype(dtypes[-1]).kind == "f":
        keys[-1][0, :3] = np.nan
    dev = [cg.asarray(k, device=on_device) for k in keys]
    for axis in (-1, 0):
        got = np.lexsort(tuple(dev), axis=axis)
        want = np.lexsort(tuple(keys), axis=axis)
        assert isinstance(got, cg.DeviceArray) and np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    stacked = np.stack([k.astype(np.float64) for k in keys])
    np.testing.assert_array_equal(np.asarray(np.lexsort(cg.asarray(stacked, device=on_device))),
                                  np.lexsort(stacked))
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_put_along_axis_is_numpys(on_device, dtype, axis):
    """Values (broadcast, cast) written at indices along an axis, negative and repeated ones
    (the last write wins, as in NumPy), in place; a strided target goes through NumPy."""
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((6, 7)) * 5).astype(dtype)
    x = cg.asarray(a, device=on_device)
    if axis is None:
        idx = np.array([0, 41, -1, 3, 3])
        values = np.arange(5.0)
    else:
        shape = [6, 7]
        shape[axis] = 3
        idx = rng.integers(-a.shape[axis], a.shape[axis], shape)
        idx.flat[1] = idx.flat[0]   # a repeated position
        values = rng.standard_normal(shape) * 9
    for vals in (values, values[..., :1] if axis is not None else values[:1], 2.5):
        want = a.copy()
        np.put_along_axis(want, idx, vals, axis)
        assert np.put_along_axis(x, cg.asarray(idx, device=on_device), vals, axis) is None
        assert np.asarray(x).tobytes() == want.tobytes()
        a = want
    assert cg.on_host_calls() == {}
    strided = cg.asarray(np.zeros((6, 14), dtype), device=on_device)[:, ::2]
    np.put_along_axis(strided, np.zeros((6, 1), np.int64), 1, 1)
    np.testing.assert_array_equal(np.asarray(strided)[:, 0], np.ones(6, dtype))
    assert cg.on_host_calls() == {"put_along_axis": 1}
    with pytest.raises(IndexError, match="out of bounds"):
        np.put_along_axis(x, np.full((6, 1), 7), 0.0, 1)
