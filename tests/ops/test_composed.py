"""NumPy functions written as device ufuncs, reductions and views (``ops/composed.py``) against
NumPy: values, dtypes and shapes (NaN and infinities included), NumPy's errors, and no host call
(the host path on and off)."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg

DTYPES = [np.float32, np.float64, np.float16, np.int32, np.bool_]


@pytest.fixture(autouse=True)
def _on_device():
    cg.reset_host_calls()
    yield
    assert cg.on_host_calls() == {}, cg.on_host_calls()


def operands(dtype):
    rng = np.random.default_rng(np.dtype(dtype).num)
    if dtype is np.bool_:
        a = rng.random((5, 7)) > 0.5
        return a, ~a
    a = (rng.standard_normal((5, 7)) * 3).astype(dtype)
    b = a.copy()
    if np.dtype(dtype).kind == "f":
        a[0, :3] = [np.nan, np.inf, -np.inf]
        b[0, :3] = [np.nan, np.inf, 1]
        b[1, 2] += np.dtype(dtype).type(1e-3)
    else:
        b[1, 2] += 1
    return a, b


def same(got, want):
    assert isinstance(got, cg.DeviceArray), type(got)
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_comparisons(dtype, either_path):
    a, b = operands(dtype)
    x, y = cg.asarray(a), cg.asarray(b)
    with np.errstate(all="ignore"):
        if dtype is not np.bool_:
            same(np.isclose(x, y), np.isclose(a, b))
            same(np.isclose(x, y, equal_nan=True), np.isclose(a, b, equal_nan=True))
            same(np.isclose(x, 1, rtol=0.1, atol=0.5), np.isclose(a, 1, rtol=0.1, atol=0.5))
            same(np.isclose(2.5, y), np.isclose(2.5, b))
            assert np.allclose(x, y) is np.allclose(a, b) is False
            assert np.allclose(x[1:], x[1:]) is True
            same(np.isposinf(x), np.isposinf(a))
            same(np.isneginf(x), np.isneginf(a))
        for x1, x2, a1, a2 in ((x, y, a, b), (x, x, a, a), (x, x[1:], a, a[1:])):
            for nan in (False, True):
                assert np.array_equal(x1, x2, equal_nan=nan) is np.array_equal(a1, a2,
                                                                               equal_nan=nan)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_reductions_differences_and_rolls(dtype, either_path):
    a, _ = operands(dtype)
    x = cg.asarray(a)
    with np.errstate(all="ignore"):
        for kw in ({}, {"axis": 1}, {"axis": 0, "keepdims": True}, {"axis": (0, 1)}):
            got, want = np.count_nonzero(x, **kw), np.count_nonzero(a, **kw)
            assert got.dtype == np.intp and np.asarray(got).shape == np.shape(want)
            np.testing.assert_array_equal(np.asarray(got), want)
        if dtype is not np.bool_:   # (NumPy's ptp refuses bool)
            same(np.ptp(x), np.ptp(a))
            same(np.ptp(x, axis=0), np.ptp(a, axis=0))
            same(np.ptp(x, axis=1, keepdims=True), np.ptp(a, axis=1, keepdims=True))
        for n, axis in ((1, -1), (2, 0), (0, 1), (3, 1)):
            same(np.diff(x, n=n, axis=axis), np.diff(a, n=n, axis=axis))
        for shift, axis in ((2, None), (-3, 1), (1, 0), ((1, 2), (0, 1)), (9, 1), (0, 0),
                            ((1, 1), 1), (-40, None)):
            same(np.roll(x, shift, axis), np.roll(a, shift, axis))
        for got, want in ((np.flip(x), np.flip(a)), (np.flip(x, 0), np.flip(a, 0)),
                          (np.flip(x, (0, 1)), np.flip(a, (0, 1))), (np.fliplr(x), np.fliplr(a)),
                          (np.flipud(x), np.flipud(a))):
            same(got, want)
            assert got.storage is x.storage   # a view, as NumPy's


def test_copyto_and_errors(either_path):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    dst = cg.zeros((3, 4), np.float64)
    assert np.copyto(dst, cg.asarray(a)) is None
    np.testing.assert_array_equal(np.asarray(dst), a)
    np.copyto(dst, cg.asarray(a[0]))            # broadcast
    np.testing.assert_array_equal(np.asarray(dst), np.broadcast_to(a[0], (3, 4)))
    with pytest.raises(TypeError, match="same_kind"):
        np.copyto(cg.zeros(3, np.int32), cg.asarray(np.ones(3)))
    with pytest.raises(ValueError, match="order must be non-negative"):
        np.diff(cg.asarray(a), n=-1)
    with pytest.raises(np.exceptions.AxisError):
        np.roll(cg.asarray(a), 1, axis=2)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_splits_repeats_tiles(dtype, either_path):
    a = (np.arange(24).reshape(4, 6) % 5).astype(dtype)
    x = cg.asarray(a)
    for got, want in ((np.array_split(x, 3, axis=1), np.array_split(a, 3, axis=1)),
                      (np.array_split(x, 5), np.array_split(a, 5)),
                      (np.split(x, [1, 3]), np.split(a, [1, 3])),
                      (np.hsplit(x, 2), np.hsplit(a, 2)), (np.vsplit(x, 2), np.vsplit(a, 2))):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    with pytest.raises(ValueError, match="equal division"):
        np.split(x, 5)
    for r, axis in ((2, None), (3, 0), (2, 1), (0, 1), (1, -1)):
        same(np.repeat(x, r, axis=axis), np.repeat(a, r, axis=axis))
    same(x.repeat(2, axis=0), a.repeat(2, axis=0))
    with pytest.raises(ValueError, match="negative"):
        np.repeat(x, -1)
    for reps in (2, (2, 1), (1, 3), (2, 2, 2), (3,), 0):
        same(np.tile(x, reps), np.tile(a, reps))
    same(np.tile(x[0], (2, 3)), np.tile(a[0], (2, 3)))


def test_vdot_and_average(either_path):
    a = np.arange(24, dtype=np.float64).reshape(4, 6) / 7
    x = cg.asarray(a)
    np.testing.assert_allclose(np.asarray(np.vdot(x, x)), np.vdot(a, a), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(np.average(x, axis=0)), np.average(a, axis=0),
                               rtol=1e-14)   # (tree sums: within float rounding)
    np.testing.assert_allclose(np.asarray(np.average(x)), np.average(a), rtol=1e-14)
    got, count = np.average(x, axis=1, returned=True)
    want, wcount = np.average(a, axis=1, returned=True)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)
    same(count, wcount)


@pytest.mark.parametrize("adt,wdt", [(np.float64, np.float64), (np.float32, np.float32),
                                     (np.int32, np.float32), (np.float32, np.int64),
                                     (np.bool_, np.int8)])
def test_weighted_average(adt, wdt, either_path):
    """Weights on the device or the host, the same shape or along the axes, ``returned`` and
    ``keepdims``: NumPy's values (within float rounding), dtypes, shapes and errors."""
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((4, 6, 5)) * 3).astype(adt)
    w = (rng.random((4, 6, 5)) * 4 + 1).astype(wdt)
    x = cg.asarray(a)
    cases = [({}, w), ({"axis": 1}, w), ({"axis": 1}, w[0, :, 0]), ({"axis": (0, 2)}, w[:, 0]),
             ({"axis": (2, 0)}, w[:, 0].T), ({"axis": -1, "keepdims": True}, w[0, 0])]
    cg.reset_host_calls()
    for kw, weights in cases:
        for given in (weights, cg.asarray(weights)):
            got, scl = np.average(x, weights=given, returned=True, **kw)
            want, wscl = np.average(a, weights=weights, returned=True, **kw)
            for g, ww in ((got, want), (scl, wscl)):
                g = np.asarray(g)
                assert g.dtype == np.asarray(ww).dtype and g.shape == np.shape(ww)
                tol = 1e-5 if g.dtype == np.float32 else 1e-12
                np.testing.assert_allclose(g, ww, rtol=tol, atol=tol)
    assert cg.on_host_calls() == {}
    with pytest.raises(TypeError, match="Axis must be specified"):
        np.average(x, weights=w[0])
    with pytest.raises(ValueError, match="Shape of weights"):
        np.average(x, axis=0, weights=w[0])
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        np.average(x, axis=1, weights=np.zeros(6, wdt))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_nansum_and_nanmean(dtype, either_path):
    """NaN-skipping sums and means on the device: NumPy's values (within float rounding: tree
    sums), dtypes and shapes, and NumPy's "Mean of empty slice" warning for an all-NaN column."""
    import warnings
    rng = np.random.default_rng(8)
    a = (rng.standard_normal((5, 7)) * 3).astype(dtype)
    if dtype is not np.int32:
        a[0, 2] = np.nan
        a[:, 4] = np.nan
    x = cg.asarray(a)
    rtol = 2e-3 if dtype is np.float16 else 1e-6
    for kw in ({}, {"axis": 0}, {"axis": 1, "keepdims": True}):
        for func in (np.nansum, np.nanmean):
            with warnings.catch_warnings(record=True) as got_warnings:
                warnings.simplefilter("always")
                got = func(x, **kw)
            with warnings.catch_warnings(record=True) as want_warnings:
                warnings.simplefilter("always")
                want = func(a, **kw)
            assert isinstance(got, cg.DeviceArray)
            g = np.asarray(got)
            assert g.dtype == np.asarray(want).dtype and g.shape == np.shape(want)
            scale = np.nansum(np.abs(a.astype(np.float64)))   # (sums with cancellation)
            np.testing.assert_allclose(g.astype(np.float64), np.asarray(want, np.float64),
                                       rtol=rtol, atol=rtol * scale, equal_nan=True)
            assert ([str(w.message) for w in got_warnings if "Mean" in str(w.message)]
                    == [str(w.message) for w in want_warnings])


@pytest.mark.parametrize("shape", [(7,), (5, 7), (3, 4, 5), (0, 3), (1,), (2, 1, 3)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_], ids=lambda d: np.dtype(d).name)
def test_nonzero_family(shape, dtype, either_path):
    """``nonzero`` (function, method, one-argument ``where``), ``flatnonzero``, ``argwhere``:
    NumPy's index arrays (intp; NaN counts as nonzero, -0.0 does not)."""
    rng = np.random.default_rng(9)
    a = (rng.random(shape) > 0.6).astype(dtype)
    if a.size and dtype is np.float32:
        a.flat[0], a.flat[-1] = np.nan, -0.0
    x = cg.asarray(a)
    for got, want in ((np.nonzero(x), np.nonzero(a)), (x.nonzero(), a.nonzero()),
                      (np.where(x), np.where(a))):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    same(np.flatnonzero(x), np.flatnonzero(a))
    same(np.argwhere(x), np.argwhere(a))


def test_meshgrid(either_path):
    a, b, c = np.linspace(0, 1, 4), np.arange(3.0), np.array([1.0, 2.0])
    x, y, z = cg.asarray(a), cg.asarray(b), cg.asarray(c)
    for kw in ({}, {"indexing": "ij"}, {"sparse": True}, {"copy": False},
               {"sparse": True, "copy": False}):
        for args, host in (((x, y), (a, b)), ((x, y, z), (a, b, c)), ((x,), (a,))):
            got, want = np.meshgrid(*args, **kw), np.meshgrid(*host, **kw)
            assert type(got) is type(want) and len(got) == len(want)
            for g, w in zip(got, want):
                same(g, w)
    with pytest.raises(ValueError, match="Valid values for `indexing`"):
        np.meshgrid(x, y, indexing="q")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16],
                         ids=lambda d: np.dtype(d).name)
def test_cross_of_3_vectors(dtype, either_path):
    rng = np.random.default_rng(10)
    a = (rng.standard_normal((5, 3)) * 10).astype(dtype)
    b = (rng.standard_normal((5, 3)) * 10).astype(dtype)
    x, y = cg.asarray(a), cg.asarray(b)
    for got, want in ((np.cross(x, y), np.cross(a, b)), (np.cross(x[0], y), np.cross(a[0], b)),
                      (np.cross(x[:, None], y[None]), np.cross(a[:, None], b[None]))):
        same(got, want)   # (NumPy's products and differences: the same bits)
        np.testing.assert_array_equal(np.asarray(got).view(np.uint8), want.view(np.uint8))
