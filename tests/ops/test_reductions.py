"""Reductions and scans on the device against NumPy: dtypes and accumulator dtypes, axes,
keepdims, out, ddof, odd and empty shapes, NaN rules; every call checked to stay on the device."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from conftest import random_array

REDUCTIONS = [np.sum, np.prod, np.mean, np.var, np.std, np.min, np.max, np.any, np.all]
SHAPES_AXES = [((1,), None), ((7,), 0), ((31, 33), None), ((31, 33), 0), ((31, 33), 1),
               ((33, 31), (0, 1)), ((3, 7, 5), (0, 2)), ((3, 7, 5), -1), ((257, 3), 0),
               ((2, 1500), 1), ((70000,), None), ((1300, 3), 1)]


@pytest.fixture(autouse=True)
def _count_fallbacks():
    cg.reset_host_calls()
    yield
    assert cg.on_host_calls() == {}, cg.on_host_calls()


def assert_close(got, want, rtol):
    got_host = np.asarray(got)
    want = np.asarray(want)
    assert isinstance(got, cg.DeviceArray)
    assert got_host.dtype == want.dtype and got_host.shape == want.shape, \
        (got_host.dtype, want.dtype, got_host.shape, want.shape)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got_host, want)
    else:
        np.testing.assert_allclose(got_host, want, rtol=rtol, atol=rtol, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.bool_, np.int64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,axis", SHAPES_AXES, ids=str)
def test_reductions_match_numpy(shape, axis, dtype):
    a = random_array(shape, dtype, seed=len(shape))
    if np.dtype(dtype).kind in "iu":
        a = (a % 3).astype(dtype)  # small values: products and sums stay exact
    x = cg.asarray(a)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for f in REDUCTIONS:
        if f is np.prod and np.dtype(dtype).kind == "f":
            continue  # products of many normals under/overflow: checked on small arrays below
        assert_close(f(x, axis=axis), f(a, axis=axis), rtol)
        assert_close(f(x, axis=axis, keepdims=True), f(a, axis=axis, keepdims=True), rtol)
    if not isinstance(axis, tuple):
        for f in (np.argmax, np.argmin, np.cumsum, np.cumprod):
            if f is np.cumprod and np.dtype(dtype).kind == "f":
                continue
            assert_close(f(x, axis=axis), f(a, axis=axis), rtol * 10)


def test_accumulator_dtypes_and_dtype_argument():
    for dt in (np.int8, np.int32, np.uint16, np.bool_):
        a = np.ones((5, 3), dt)
        x = cg.asarray(a)
        for f in (np.sum, np.prod, np.mean, np.var, np.cumsum):
            assert np.asarray(f(x)).dtype == f(a).dtype
    a = random_array((7, 33), np.float32)
    x = cg.asarray(a)
    assert_close(np.sum(x, dtype=np.float64), np.sum(a, dtype=np.float64), 1e-12)
    assert_close(np.mean(x, axis=0, dtype=np.float64), np.mean(a, axis=0, dtype=np.float64), 1e-12)
    assert_close(np.prod(x[:, :3], axis=1), np.prod(a[:, :3], axis=1), 1e-6)
    i = np.array([2 ** 62, 2 ** 62, 2 ** 62], np.int64)
    assert_close(np.sum(cg.asarray(i)), np.sum(i), 0)  # wraps like NumPy


def test_nan_rules():
    a = np.array([[1.0, np.nan, 3.0, np.nan], [np.inf, -np.inf, 0.0, -0.0]], np.float32)
    x = cg.asarray(a)
    for f in (np.max, np.min, np.argmax, np.argmin, np.sum):
        for axis in (None, 0, 1):
            assert_close(f(x, axis=axis), f(a, axis=axis), 0)
    big = np.zeros(100000, np.float64)
    big[[70001, 5003]] = np.nan
    assert int(np.argmax(cg.asarray(big))) == 5003  # the first NaN, across work-groups
    big[:] = 1.0
    big[[99999, 12]] = 2.0
    assert int(np.argmax(cg.asarray(big))) == 12


def test_var_std_ddof_and_out():
    a = random_array((31, 7), np.float64)
    x = cg.asarray(a)
    for ddof in (0, 1):
        assert_close(np.var(x, axis=0, ddof=ddof), np.var(a, axis=0, ddof=ddof), 1e-12)
        assert_close(x.std(axis=1, ddof=ddof), a.std(axis=1, ddof=ddof), 1e-12)
    out = cg.zeros(7)
    assert np.sum(x, axis=0, out=out) is out
    np.testing.assert_allclose(np.asarray(out), a.sum(axis=0), rtol=1e-12)


def test_empty_and_zero_d():
    e = np.zeros((0, 3), np.float32)
    x = cg.asarray(e)
    assert_close(np.sum(x, axis=0), np.sum(e, axis=0), 0)
    assert_close(np.prod(x), np.prod(e), 0)
    assert_close(np.any(x), np.any(e), 0)
    assert_close(np.all(x, axis=1), np.all(e, axis=1), 0)
    assert_close(np.max(cg.asarray(np.zeros((3, 0))), axis=0), np.zeros((3, 0)).max(axis=0), 0)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        np.max(x, axis=0)
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        np.argmax(x)
    z = cg.asarray(np.float32(2.5))
    assert_close(np.sum(z), np.sum(np.float32(2.5)), 0)
    assert_close(np.max(z), np.max(np.float32(2.5)), 0)
    with pytest.raises(np.exceptions.AxisError):
        np.sum(x, axis=2)


def test_methods_and_ufunc_reduce_accumulate():
    a = random_array((7, 5), np.float32)
    x = cg.asarray(a)
    assert_close(x.sum(axis=1), a.sum(axis=1), 1e-6)
    assert_close(x.max(), a.max(), 0)
    assert_close(x.argmin(axis=0), a.argmin(axis=0), 0)
    assert_close(x.any(axis=0), a.any(axis=0), 0)
    assert_close(x.cumsum(axis=1), a.cumsum(axis=1), 1e-6)
    assert_close(np.add.reduce(x), np.add.reduce(a), 1e-6)
    assert_close(np.maximum.reduce(x, axis=1), np.maximum.reduce(a, axis=1), 0)
    assert_close(np.minimum.reduce(x, axis=None), np.minimum.reduce(a, axis=None), 0)
    assert_close(np.multiply.reduce(x, axis=1, keepdims=True),
                 np.multiply.reduce(a, axis=1, keepdims=True), 1e-6)
    assert_close(np.logical_or.reduce(x > 0), np.logical_or.reduce(a > 0), 0)
    assert_close(np.logical_and.reduce(x > 0, axis=1), np.logical_and.reduce(a > 0, axis=1), 0)
    assert_close(np.add.accumulate(x, axis=1), np.add.accumulate(a, axis=1), 1e-6)
    i = np.arange(1, 9, dtype=np.int32)
    assert_close(np.multiply.accumulate(cg.asarray(i)), np.multiply.accumulate(i), 0)


def test_strided_inputs():
    a = random_array((33, 31), np.float64)
    x = cg.asarray(a)
    for view_x, view_a in ((x.T, a.T), (x[::-2, 1::3], a[::-2, 1::3]),
                           (x[:, :1].broadcast_view((33, 5)), np.broadcast_to(a[:, :1], (33, 5)))):
        for axis in (None, 0, 1):
            assert_close(np.sum(view_x, axis=axis), np.sum(view_a, axis=axis), 1e-12)
            assert_close(np.argmax(view_x, axis=axis), np.argmax(view_a, axis=axis), 0)
            assert_close(np.cumsum(view_x, axis=axis), np.cumsum(view_a, axis=axis), 1e-12)


@pytest.mark.parametrize("func", [np.sum, np.prod, np.mean, np.min, np.max, np.any, np.all,
                                  np.argmax, np.argmin, np.cumsum],
                         ids=lambda f: f.__name__)
def test_host_path_reductions_are_numpys(func, host_path):
    """On the host path (unified memory, small work) a reduction is NumPy's own on the mapping
    (``np.sum`` as ``np.add.reduce``, as NumPy itself calls it), in a device array: the same
    values, dtypes and shapes, keepdims and dtype= included, and NumPy's errors."""
    cases = [((31, 33), None, {}), ((31, 33), 0, {}), ((31, 33), -1, {"keepdims": True}),
             ((3, 7, 5), (0, 2), {}), ((7,), 0, {"dtype": np.float64}), ((9,), None, {})]
    for dtype in (np.float32, np.int32, np.uint8, np.bool_):
        for shape, axis, extra in cases:
            if func in (np.argmax, np.argmin, np.cumsum) and (isinstance(axis, tuple) or
                                                             "keepdims" in extra or "dtype" in extra):
                continue
            if func in (np.min, np.max, np.any, np.all) and "dtype" in extra:
                continue
            a = random_array(shape, dtype, seed=3)
            got = func(cg.asarray(a), axis=axis, **extra)
            want = func(a, axis=axis, **extra)
            assert isinstance(got, cg.DeviceArray) and got.storage.host_resident  # host path
            host = np.asarray(got)
            assert host.dtype == np.asarray(want).dtype and host.shape == np.shape(want)
            np.testing.assert_array_equal(host, want)
    if func in (np.min, np.max, np.argmax, np.argmin):
        empty = np.zeros((0, 3), np.float32)
        with pytest.raises(ValueError) as want:
            func(empty, axis=0)
        with pytest.raises(ValueError) as got:
            func(cg.asarray(empty), axis=0)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("func", [np.sum, np.max, np.argmax, np.cumsum, np.var],
                         ids=lambda f: f.__name__)
def test_an_axis_equal_to_an_int_but_not_one_is_numpys_type_error(func, either_path):
    """1.0 and True equal 1 (and hash alike), but NumPy refuses them as axes: after a call
    with axis 1 has been cached, they still raise NumPy's TypeError."""
    a = random_array((5, 7), np.float32, seed=4)
    x = cg.asarray(a)
    np.testing.assert_allclose(np.asarray(func(x, axis=1)), func(a, axis=1), rtol=1e-6)
    for bad in (1.0, True):
        with pytest.raises(TypeError):
            func(a, axis=bad)
        with pytest.raises(TypeError):
            func(x, axis=bad)
    if func is not np.argmax and func is not np.cumsum:
        with pytest.raises(TypeError):
            func(x, axis=(1.0,))


@pytest.mark.parametrize("n", [64, 67, 1001, 20003])
@pytest.mark.parametrize("start", [0, 1, 2, 3, 4])
def test_unit_stride_reductions_at_every_alignment(n, start):
    """Contiguous float32/int32 runs starting at every offset modulo 4 elements, odd lengths,
    single and split launches: NumPy's answers, ties (the first index) and NaN rules."""
    rng = np.random.default_rng(n + start)
    a = rng.standard_normal(n).astype(np.float32)
    a[n // 3] = a[n // 3 + 1] = a[n - 2] = np.float32(9.0)  # ties (two within one vector
    a[n // 5] = a[n - 1] = np.float32(-9.0)                # of 4): the first index wins
    i = rng.integers(-1000, 1000, n).astype(np.int32)
    d = a.astype(np.float64)
    x, xi, xd = cg.asarray(a), cg.asarray(i), cg.asarray(d)
    with cg.host_path(False):
        for got, want in ((np.argmax(x[start:]), np.argmax(a[start:])),
                          (np.argmin(x[start:]), np.argmin(a[start:])),
                          (np.max(x[start:]), np.max(a[start:])),
                          (np.sum(xi[start:]), np.sum(i[start:])),
                          (np.argmax(xi[start:]), np.argmax(i[start:])),
                          (np.argmax(xd[start:]), np.argmax(d[start:])),
                          (np.min(xd[start:]), np.min(d[start:]))):
            assert np.asarray(got) == want and np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(np.asarray(np.sum(x[start:])), a[start:].sum(dtype=np.float64),
                                   rtol=1e-5)
        np.testing.assert_allclose(np.asarray(np.linalg.norm(x[start:])),
                                   np.linalg.norm(a[start:].astype(np.float64)), rtol=1e-6)
        b = a.copy()
        b[n // 2] = b[n - 3] = np.nan  # the first NaN is argmax's and argmin's answer
        xb = cg.asarray(b)
        assert int(np.asarray(np.argmax(xb[start:]))) == int(np.argmax(b[start:]))
        assert int(np.asarray(np.argmin(xb[start:]))) == int(np.argmin(b[start:]))
        assert np.isnan(np.asarray(np.max(xb[start:])))
