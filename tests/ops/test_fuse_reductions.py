"""clarray_gemm.fuse of functions with reductions (a row softmax, a normalisation, column
statistics): one kernel a call, with each way of walking the rows forced on every device (a
work-group a row; a work-item a row), against NumPy: floats by relative norm error against a
float64 evaluation, integers exactly, NaN as NumPy propagates it, dtypes and shapes NumPy's. The
calls it does not fuse (reductions of reduced values or of a broadcast operand, a reduced value
broadcast along the wrong axis, empty rows, a bad axis) run as written, with NumPy's answers and
errors."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
from clarray_gemm.ops import fused_rows

WALKS = {"group-per-row": (32, False), "item-per-row": (4, True)}


@pytest.fixture(params=list(WALKS))
def walked(request, monkeypatch, on_device):
    """The device with every fused row kernel built in one walk, whatever the shape."""
    monkeypatch.setattr(fused_rows, "walk",
                        lambda info, rows, cols, columns=False: WALKS[request.param])
    return on_device


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def column_stats(x, eps):
    m = np.mean(x, axis=0)
    d = x - m
    return d, np.sqrt((d * d).sum(axis=0) / x.shape[0] + eps), (x > 0).sum(0), np.max(x, 0)


def _arr(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -10**6), min(info.max, 10**6), shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _close(got, want, rtol):
    assert type(got) is cg.DeviceArray
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind in "iub":
        assert np.array_equal(got, want)
        return
    err = np.linalg.norm((got.astype(np.float64) - want.astype(np.float64)).ravel())
    assert err <= rtol * max(np.linalg.norm(want.astype(np.float64).ravel()), 1e-30)


def _dtypes(device):
    return [np.float32] + ([np.float64] if device.info.fp64 else [])


@pytest.mark.parametrize("shape", [(1, 1), (7, 33), (33, 257), (3, 5, 31), (2, 300)])
def test_fused_softmax_is_one_launch_and_numpys(walked, launches, shape):
    for dtype in _dtypes(walked):
        fused = cg.fuse(softmax)
        a = _arr(shape, dtype, 1) * 4
        x = cg.asarray(a, device=walked)
        plan = fused.kernel_for(x)
        assert isinstance(plan, fused_rows.RowPlan) and "2 reduction stage" in plan.describe()
        launches.clear()
        got = fused(x)
        assert len(launches) == 1
        rtol = 8 * np.finfo(dtype).eps
        _close(got, softmax(a.astype(np.float64)).astype(dtype), rtol)
        if len(shape) == 2:   # strided and transposed operands
            _close(fused(x[:, ::2]), softmax(a[:, ::2].astype(np.float64)).astype(dtype), rtol)
            _close(fused(x.T), softmax(a.T.astype(np.float64)).astype(dtype), rtol)
    assert cg.on_host_calls() == {}


def test_column_statistics_over_axis_zero(walked):
    a = _arr((37, 19), np.float32, 2)
    a[3, 4] = np.nan
    x = cg.asarray(a, device=walked)
    fused = cg.fuse(column_stats)
    assert isinstance(fused.kernel_for(x, 1e-5), fused_rows.RowPlan)
    got = fused(x, 1e-5)
    with np.errstate(invalid="ignore"):
        want = column_stats(a, 1e-5)
    assert len(got) == 4
    for g, w in zip(got[:2], want[:2]):
        finite = np.isfinite(w)
        assert np.array_equal(np.isnan(np.asarray(g)), np.isnan(w))
        g = np.where(finite, np.asarray(g), 0)
        _close(cg.asarray(g, device=walked), np.where(finite, w, 0).astype(w.dtype), 1e-5)
    _close(got[2], want[2], 0)                                  # bool count: int64, exact
    assert np.array_equal(np.asarray(got[3]), want[3], equal_nan=True)   # NaN propagates
    assert got[3].dtype == np.float32 and got[2].dtype == np.int64


def test_several_axes_keepdims_and_whole_array(walked):
    a = _arr((4, 6, 5), np.float32, 3)
    x = cg.asarray(a, device=walked)
    centred = cg.fuse(lambda v: v - v.mean(axis=(0, 2), keepdims=True))
    assert centred.kernel_for(x) is not None
    _close(centred(x), centred.func(a.astype(np.float64)).astype(np.float32), 1e-6)
    whole = cg.fuse(lambda v, s: (v - np.min(v)) / (np.max(v) - np.min(v)) * s)
    assert whole.kernel_for(x, 2) is not None
    _close(whole(x, 2), whole.func(a.astype(np.float64), 2).astype(np.float32), 1e-6)
    norm = cg.fuse(lambda v: np.sqrt(np.sum(v * v, axis=-1)))   # a per-row output only
    assert norm.kernel_for(x) is not None
    _close(norm(x), np.linalg.norm(a.astype(np.float64), axis=-1).astype(np.float32), 1e-6)
    reduce = cg.fuse(lambda v: np.add.reduce(v * 2, keepdims=True))   # ufunc.reduce, axis 0
    _close(reduce(x), np.add.reduce(a.astype(np.float64) * 2, keepdims=True).astype(np.float32),
           1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int16, np.uint8])
def test_integer_reductions_are_exact(walked, dtype):
    i = _arr((9, 40), dtype, 4)
    if np.dtype(dtype) == np.int64:
        i[0, :2] = [np.iinfo(np.int64).max, 5]                  # the sum wraps, as NumPy's
    x = cg.asarray(i, device=walked)
    fused = cg.fuse(lambda v: (v.sum(axis=1), np.prod(v, axis=1),
                               v.max(axis=1, keepdims=True) - v, np.min(v, axis=1)))
    assert fused.kernel_for(x) is not None
    got = fused(x)
    with np.errstate(over="ignore"):
        want = fused.func(i)
    for g, w in zip(got, want):
        _close(g, w, 0)
    if walked.info.fp64:
        mean = cg.fuse(lambda v: v.mean(axis=-1))                # float64, as NumPy's
        _close(mean(x), i.mean(axis=-1), 1e-12)


def test_broadcast_operands_and_scalars(walked):
    a = _arr((6, 50), np.float32, 5)
    row, col = _arr((50,), np.float32, 6), _arr((6, 1), np.float32, 7)
    x, r, c = (cg.asarray(v, device=walked) for v in (a, row, col))
    fused = cg.fuse(lambda v, w, u, s: np.exp(v * w - (v * w).max(axis=1, keepdims=True)) * s
                    + u)
    assert fused.kernel_for(x, r, c, 3) is not None
    want = fused.func(a.astype(np.float64), row.astype(np.float64), col.astype(np.float64), 3)
    _close(fused(x, r, c, 3), want.astype(np.float32), 1e-6)


def test_what_does_not_fuse_runs_as_written(on_device):
    a = _arr((5, 7), np.float32, 8)
    x = cg.asarray(a, device=on_device)
    cases = [
        lambda v: v.sum(axis=1).sum(),                          # a reduction of reduced values
        lambda v: v.sum(axis=0) + v.sum(axis=1, keepdims=True),   # two sets of axes
        lambda v: v - v.sum(axis=1),                            # broadcast along the wrong axis
        lambda v: v.cumsum(axis=1).sum(axis=1),                 # a method the trace lacks
        lambda v: v.sum(axis=1, dtype=np.float64),              # dtype=
    ]
    for f in cases:
        fused = cg.fuse(f)
        try:
            want = f(a)
        except ValueError as exc:
            with pytest.raises(type(exc)):
                fused(x)
            continue
        assert fused.kernel_for(x) is None
        got = np.asarray(fused(x))
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5)
    short = cg.fuse(lambda v, c: (c * 2).sum(axis=1, keepdims=True) + v)   # F = c's shape
    col = _arr((5, 1), np.float32, 9)
    assert short.kernel_for(x, cg.asarray(col, device=on_device)) is None
    np.testing.assert_allclose(np.asarray(short(x, cg.asarray(col, device=on_device))),
                               (col * 2).sum(axis=1, keepdims=True) + a, rtol=1e-6)
    top = cg.fuse(lambda v: v.max(axis=1))
    with pytest.raises(ValueError):                             # NumPy's: empty rows
        top(cg.asarray(np.zeros((3, 0), np.float32), device=on_device))
    with pytest.raises(np.exceptions.AxisError):
        cg.fuse(lambda v: v.sum(axis=2))(x)
    with pytest.raises(TypeError):                              # NumPy's: a float axis
        cg.fuse(lambda v: v.sum(axis=1.0))(x)


@pytest.mark.parametrize("axis", [1, 0, (0, 2), None])
def test_var_and_std_are_one_kernel(walked, launches, axis):
    """np.var / np.std of float arrays on the device: the mean and the squared deviations in
    one fused kernel, NumPy's values (ddof, keepdims) and shapes."""
    for dtype in _dtypes(walked):
        a = _arr((6, 40, 3), dtype, 10) + 3
        x = cg.asarray(a, device=walked)
        for func in (np.var, np.std):
            for ddof, keepdims in ((0, False), (1, True), (2.5, False)):
                launches.clear()
                got = func(x, axis=axis, ddof=ddof, keepdims=keepdims)
                assert len(launches) == 1, (func, axis)
                want = func(a.astype(np.float64), axis=axis, ddof=ddof, keepdims=keepdims)
                _close(got, want.astype(dtype), 8 * np.finfo(dtype).eps)
    assert cg.on_host_calls() == {}
