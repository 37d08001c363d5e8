"""Reductions, joins, einsum, pad and broadcasting of device arrays give device arrays (0-d where
NumPy gives a scalar) with NumPy's values and errors; 0-d device arrays format, convert and
compare as NumPy's 0-d arrays do."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg
import clarray_gemm.array_api as xp
from conftest import assert_matches, random_array


@pytest.mark.parametrize("func, kwargs", [
    (np.sum, {}), (np.sum, {"axis": 0}), (np.mean, {"axis": 1, "keepdims": True}),
    (np.std, {"ddof": 1}), (np.var, {"axis": (0, 1)}), (np.max, {}), (np.min, {"axis": -1}),
    (np.prod, {"axis": 0}), (np.argmax, {"axis": 1}), (np.any, {}), (np.nanmean, {"axis": 0}),
    (np.cumsum, {"axis": 1}), (np.median, {}), (np.percentile, {"q": [10, 90], "axis": 0}),
])
def test_reductions_are_device_arrays(func, kwargs):
    a = random_array((7, 5), np.float32, 1)
    got = func(cg.asarray(a), **kwargs)
    want = func(a, **kwargs)
    assert isinstance(got, cg.DeviceArray) and got.shape == np.shape(want)
    assert got.dtype == np.asarray(want).dtype
    assert_matches(got, want)


def test_reduction_out_and_errors_are_numpys():
    a = random_array((4, 3), np.float64, 2)
    out = cg.empty(3)
    assert np.sum(cg.asarray(a), axis=0, out=out) is out
    assert_matches(out, a.sum(axis=0))
    with pytest.raises(np.exceptions.AxisError):
        np.sum(cg.asarray(a), axis=2)


def test_zero_d_results_format_convert_and_compare():
    a = np.array([[1.25, 2.5], [3.0, 4.0]])
    s = np.sum(cg.asarray(a))
    ref = np.asarray(np.sum(a))
    assert s.shape == () and f"{s:.3f}" == f"{ref:.3f}" == "10.750"
    assert f"{s}" == f"{ref}" and str(s) == str(ref)
    assert float(s) == 10.75 and int(s) == 10 and complex(s) == 10.75 + 0j
    assert bool(s > 10) and isinstance(s > 10, cg.DeviceArray) and (s > 10).shape == ()
    assert s == 10.75 and not (s < 1)
    with pytest.raises(TypeError):
        f"{cg.asarray(a):.3f}"  # like NumPy: only 0-d arrays take a format spec
    i = np.argmax(cg.asarray(a))
    assert [10, 20, 30, 40][i] == 40  # operator.index


def test_concatenate_and_stack():
    a = random_array((3, 4), np.float32, 3)
    b = random_array((2, 4), np.int32, 4)
    got = np.concatenate([cg.asarray(a), b])
    assert isinstance(got, cg.DeviceArray)
    assert_matches(got, np.concatenate([a, b]))
    assert_matches(np.concatenate([cg.asarray(a), cg.asarray(a).T.T], axis=1),
                   np.concatenate([a, a], axis=1))
    assert_matches(np.concatenate([cg.asarray(a), a], axis=None), np.concatenate([a, a], None))
    assert_matches(np.stack([cg.asarray(a), a], axis=-1), np.stack([a, a], axis=-1))
    with pytest.raises(ValueError, match="must match exactly"):
        np.concatenate([cg.asarray(a), b[:, :3]])
    with pytest.raises(ValueError, match="same shape"):
        np.stack([cg.asarray(a), b])


@pytest.mark.parametrize("subscripts, shapes", [
    ("ij,jk->ik", [(5, 7), (7, 3)]),
    ("bij,bjk->bik", [(2, 5, 7), (2, 7, 3)]),
    ("...ij,...jk", [(2, 5, 7), (2, 7, 3)]),
    ("...abc,...ab->...c", [(3, 4, 5, 6), (3, 4, 5)]),
    ("ij,kj,kl->il", [(4, 6), (5, 6), (5, 3)]),
    ("i,j->ij", [(4,), (5,)]),
    ("ij,ij->", [(4, 5), (4, 5)]),
    ("ii->i", [(4, 4)]),                      # host: a diagonal
    ("ij,jk->i", [(4, 5), (5, 3)]),           # host: k summed within one operand
    ("ij,j->i", [(4, 5), (1,)]),              # host: a broadcast length-1 axis
])
def test_einsum_matches_numpy(subscripts, shapes):
    arrays = [random_array(s, np.float32, i) for i, s in enumerate(shapes)]
    got = np.einsum(subscripts, *[cg.asarray(a) for a in arrays])
    assert isinstance(got, cg.DeviceArray)
    assert_matches(got, np.einsum(subscripts, *[a.astype(np.float64) for a in arrays]))
    assert_matches(xp.einsum(subscripts, *[cg.asarray(a) for a in arrays]), got)


def test_einsum_integer_and_errors():
    a = random_array((3, 4), np.int64, 5)
    b = random_array((4, 2), np.int64, 6)
    assert_matches(np.einsum("ij,jk->ik", cg.asarray(a), cg.asarray(b)), a @ b)
    with pytest.raises(ValueError):
        np.einsum("ij,jk->ik", cg.asarray(a), cg.asarray(a))
    with pytest.raises(TypeError, match="Cannot cast"):
        np.einsum("ij,jk->ik", cg.asarray(a.astype(np.float64)), cg.asarray(b), dtype=np.int32)


def test_einsum_contracts_with_gemm(monkeypatch):
    from clarray_gemm.ops import einsum as einsum_module
    calls = []
    real = einsum_module._mm.matmul
    monkeypatch.setattr(einsum_module._mm, "matmul", lambda a, b: calls.append(1) or real(a, b))
    a = random_array((2, 3, 4), np.float32, 7)
    b = random_array((2, 4, 5), np.float32, 8)
    np.einsum("bij,bjk->bik", cg.asarray(a), cg.asarray(b))
    assert calls == [1]


@pytest.mark.parametrize("width, kwargs", [
    (2, {}), (((1, 2), (0, 3)), {"constant_values": 7}), (((0, 1),), {}),
    (1, {"mode": "edge"}), (((2, 1), (1, 0)), {"mode": "reflect"}),
    (1, {"constant_values": ((1, 2), (3, 4))}),
])
def test_pad_matches_numpy(width, kwargs):
    a = random_array((4, 5), np.float32, 9)
    got = np.pad(cg.asarray(a), width, **kwargs)
    assert isinstance(got, cg.DeviceArray)
    np.testing.assert_array_equal(np.asarray(got), np.pad(a, width, **kwargs))
    np.testing.assert_array_equal(np.asarray(xp.pad(cg.asarray(a), width, **kwargs)),
                                  np.pad(a, width, **kwargs))


def test_broadcast_views_and_sliding_windows():
    a = random_array((1, 5), np.float32, 10)
    view = np.broadcast_to(cg.asarray(a), (3, 5))
    assert isinstance(view, cg.DeviceArray) and view.strides[0] == 0
    np.testing.assert_array_equal(np.asarray(view), np.broadcast_to(a, (3, 5)))
    x, y = np.broadcast_arrays(cg.asarray(a), np.ones((3, 1), np.float32))
    assert isinstance(x, cg.DeviceArray) and x.shape == y.shape == (3, 5)
    s = random_array((10,), np.float32, 11)
    w = xp.lib.stride_tricks.sliding_window_view(cg.asarray(s), 4)
    np.testing.assert_array_equal(np.asarray(w), np.lib.stride_tricks.sliding_window_view(s, 4))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_in_place_between_overlapping_views_of_one_buffer(dtype):
    # scipy.signal.oaconvolve's overlap-add: ret[1:, :k] += ret[:-1, -k:] on one buffer. The
    # kernel once wrote the temporary with the target view's strides (out of bounds).
    base = random_array((6, 44), dtype, 12)
    x = cg.asarray(base)
    target = x[:, :-8][1:, :8]
    target += x[:, -8:][:-1]
    want = base.copy()
    want[1:, :8] += base[:-1, -8:]
    np.testing.assert_array_equal(np.asarray(x), want)
    y = cg.asarray(base)
    np.subtract(y[1:], y[:-1], out=y[:-1])
    want = base.copy()
    np.subtract(want[1:], want[:-1].copy(), out=want[:-1])
    np.testing.assert_array_equal(np.asarray(y), want)
