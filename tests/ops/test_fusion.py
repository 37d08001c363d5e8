"""clarray_gemm.fuse (cupy.fuse): a function of ufuncs over device arrays traced into one
elementwise kernel per argument types, computing in NumPy's loop dtypes (NEP 50 scalars):
results against NumPy (floats by relative error, integers and comparisons exactly, NaN as NumPy
propagates it), dtypes NumPy's, and the functions or calls that do not fuse running as written."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg


@cg.fuse
def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


@cg.fuse
def combine(a, x, b, y, c):
    return a * x + b * y - c


@cg.fuse(kernel_name="select")
def select(x, y, t):
    return np.where(x > t, np.maximum(x, y), np.minimum(x, y) / 2), x <= y


@cg.fuse
def wraps(i, j):
    return i * j + 7 - abs(i), -j, np.square(i) < j + 3


def _arr(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-1000, 1000, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _close(got, want, dtype):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 4 * np.finfo(dtype).eps
    err = np.linalg.norm((got.astype(np.float64) - want).ravel())
    assert err <= tol * max(np.linalg.norm(want.ravel().astype(np.float64)), 1e-30)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_expressions_match_numpy(on_device, dtype):
    if np.dtype(dtype) == np.float64 and not on_device.info.fp64:
        pytest.skip("needs doubles")
    a = _arr((33, 31), dtype, 1)
    x = cg.asarray(a, device=on_device)
    assert gelu.kernel_for(x) is not None
    got = gelu(x)
    assert type(got) is cg.DeviceArray
    _close(got, gelu.func(a), dtype)
    _close(gelu(x.T), gelu.func(a.T), dtype)                   # strided operands
    row = _arr((31,), dtype, 2)
    _close(combine(2.0, x, 3, cg.asarray(row, device=on_device), 1.5),
           combine.func(2.0, a, 3, row, 1.5), dtype)            # broadcast, scalars


def test_fused_selection_and_nan_are_numpys(on_device):
    a, b = _arr((7, 9), np.float32, 3), _arr((7, 9), np.float32, 4)
    a[0, 0], b[1, 1], a[2, 2] = np.nan, np.nan, -0.0
    x, y = cg.asarray(a, device=on_device), cg.asarray(b, device=on_device)
    (got, cmp), (want, want_cmp) = select(x, y, 0.25), select.func(a, b, 0.25)
    assert np.array_equal(np.asarray(got), want, equal_nan=True) and got.dtype == want.dtype
    assert np.array_equal(np.asarray(cmp), want_cmp) and cmp.dtype == np.bool_


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int16, np.uint8])
def test_fused_integers_wrap_as_numpys(on_device, dtype):
    i = _arr((50,), dtype, 5)
    j = _arr((50,), dtype, 6)
    if np.dtype(dtype) == np.int32:
        i[:2] = [2 ** 31 - 1, -(2 ** 31)]
    x, y = cg.asarray(i, device=on_device), cg.asarray(j, device=on_device)
    assert wraps.kernel_for(x, y) is not None
    got = wraps(x, y)
    with np.errstate(over="ignore"):
        want = wraps.func(i, j)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == w.dtype and np.array_equal(np.asarray(g), w)


def test_mixed_dtypes_promote_as_numpy(on_device):
    f, i = _arr((20,), np.float32, 7), _arr((20,), np.int32, 8)
    fused = cg.fuse(lambda p, q: p * q + 1)
    got = fused(cg.asarray(f, device=on_device), cg.asarray(i, device=on_device))
    want = f * i + 1
    assert np.asarray(got).dtype == want.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_calls_that_do_not_fuse_run_as_written(on_device):
    a = _arr((40,), np.float32, 9)
    x = cg.asarray(a, device=on_device)
    total = cg.fuse(lambda v: np.cumsum(v * 2))                 # a function it cannot trace
    assert total.kernel_for(x) is None
    np.testing.assert_allclose(np.asarray(total(x)), np.cumsum(a * 2), rtol=1e-5)
    sized = cg.fuse(lambda v: v * len(v.shape))                 # shapes: no elementwise kernel
    assert sized.kernel_for(x) is None
    np.testing.assert_allclose(np.asarray(sized(x)), a, rtol=0)
    assert gelu.kernel_for(a) is None and type(gelu(a)) is np.ndarray   # NumPy in, NumPy out
    shifted = cg.fuse(lambda i: i + 1000)
    with pytest.raises(OverflowError):                         # NumPy's, from the unfused call
        shifted(cg.asarray(np.ones(3, np.int8), device=on_device))
    add_scalar = cg.fuse(lambda i, s: i + s)
    with pytest.raises(OverflowError):                         # a Python int argument too
        add_scalar(cg.asarray(np.ones(3, np.int8), device=on_device), 1000)
    assert np.array_equal(np.asarray(add_scalar(cg.asarray(np.ones(3, np.int8), device=on_device),
                                                5)), np.full(3, 6, np.int8))


def test_small_calls_on_unified_memory_take_the_host_path(device):
    """Below the host-path crossover a fused function runs as written (NumPy's loops on the
    mapping, NumPy's bits); with the host path off it runs its kernel."""
    a = _arr((8,), np.float32, 10)
    x = cg.asarray(a, device=device)
    got = np.asarray(gelu(x))
    if cg.host_path_enabled() and device.info.host_unified_memory:
        assert got.tobytes() == gelu.func(a).tobytes()
    _close(got, gelu.func(a), np.float32)
