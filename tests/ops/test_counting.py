"""``np.bincount`` and ``np.histogram`` of device arrays (``opencl/bincount.cl``): counts exact
and int64, weighted sums float64 (the weights' type for a histogram) to rounding, NumPy's bin
edges bit for bit and its bin for every value (values on edges, outside the range, NaN, inf),
NumPy's errors; device results without host calls; the host path gives NumPy's."""
from __future__ import annotations

import numpy as np
import pytest

import clarray_gemm as cg


@pytest.fixture
def on_device(on_device):
    if not (on_device.info.fp64 and on_device.info.int64_atomics):
        pytest.skip("the cases include float64 sums")
    return on_device


def _close(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    scale = max(np.linalg.norm(want.astype(np.float64)), 1.0)
    assert np.linalg.norm(got.astype(np.float64) - want) / scale < 1e-6


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                   np.int64, np.bool_])
@pytest.mark.parametrize("n", [1, 7, 33, 257, 4099])
def test_bincount_counts_and_sums(on_device, dtype, n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 2 if dtype == np.bool_ else 40, n).astype(dtype)
    xd = cg.asarray(x, device=on_device)
    cg.reset_host_calls()
    got = np.bincount(xd)
    assert isinstance(got, cg.DeviceArray)
    np.testing.assert_array_equal(np.asarray(got), np.bincount(x))
    assert np.asarray(got).dtype == np.int64
    np.testing.assert_array_equal(np.asarray(np.bincount(xd, minlength=50)),
                                  np.bincount(x, minlength=50))
    for wt in (np.float32, np.float64, np.int32, np.float16):
        w = rng.standard_normal(n).astype(wt) if wt != np.int32 else rng.integers(-9, 9, n)
        _close(np.bincount(xd, weights=cg.asarray(w, device=on_device)), np.bincount(x, w))
    _close(np.bincount(xd, weights=list(range(n))), np.bincount(x, list(range(n))))
    assert cg.on_host_calls() == {}


@pytest.mark.parametrize("top", [4095, 4096, 9000])
def test_bincount_many_bins(on_device, top):
    """Up to 4096 bins the counts gather in local memory first; past it, straight to the bins."""
    x = np.random.default_rng(top).integers(0, top, 20011)
    x[:3] = [0, top - 1, top - 1]
    got = np.bincount(cg.asarray(x, device=on_device))
    np.testing.assert_array_equal(np.asarray(got), np.bincount(x))
    hist, _ = np.histogram(cg.asarray(x, device=on_device), bins=top)
    np.testing.assert_array_equal(np.asarray(hist), np.histogram(x, bins=top)[0])


def test_bincount_strided_and_errors(on_device):
    x = np.arange(40, dtype=np.int32) % 7
    xd = cg.asarray(x, device=on_device)
    np.testing.assert_array_equal(np.asarray(np.bincount(xd[::3])), np.bincount(x[::3]))
    for bad, kw in ((np.array([1, -1, 2]), {}), (np.array([1, 2]), {"minlength": -1})):
        with pytest.raises(ValueError) as want:
            np.bincount(bad, **kw)
        with pytest.raises(ValueError, match=str(want.value)):
            np.bincount(cg.asarray(bad, device=on_device), **kw)
    for bad in (np.zeros((2, 2), np.int64), np.array([1.5, 2.0])):
        with pytest.raises(Exception) as want:
            np.bincount(bad)
        with pytest.raises(type(want.value)):
            np.bincount(cg.asarray(bad, device=on_device))
    with pytest.raises(ValueError):
        np.bincount(xd, weights=np.ones(3))


def _data(dtype, n, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(n) * 3).round(1).astype(dtype)   # many values on the edges
    if np.dtype(dtype).kind == "f" and n > 10:
        a[[1, 5, 9]] = [np.inf, -np.inf, 2.5]
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("bins,range_", [(10, None), (7, (-2.5, 4.0)), (1, None),
                                         ([-3, -1, 0, 0, 2.5, 7], None),
                                         (np.array([-1.5, 0.25, 1.0], np.float32), None),
                                         (13, (np.float32(-1.3), np.float32(2.2)))])
@pytest.mark.parametrize("n", [1, 33, 4099])
def test_histogram_is_numpys(on_device, dtype, bins, range_, n):
    a = _data(dtype, n, seed=n)
    if dtype == np.uint8:
        a = np.abs(a.astype(np.int64)).astype(np.uint8)
    ad = cg.asarray(a, device=on_device)
    cg.reset_host_calls()
    if range_ is None and np.dtype(dtype).kind == "f" and n > 10 and np.ndim(bins) == 0:
        with pytest.raises(ValueError, match="autodetected range of"):   # the infinities
            np.histogram(ad, bins=bins)
        a, ad = a[10:], ad[10:]
    hist, edges = np.histogram(ad, bins=bins, range=range_)
    want_hist, want_edges = np.histogram(a, bins=bins, range=range_)
    assert isinstance(hist, cg.DeviceArray)
    if want_edges is bins:   # NumPy hands the caller's float array back as it is
        assert edges is bins
    else:
        assert isinstance(edges, cg.DeviceArray)
    np.testing.assert_array_equal(np.asarray(hist), want_hist)
    assert np.asarray(hist).dtype == want_hist.dtype
    assert np.asarray(edges).tobytes() == want_edges.tobytes()
    w = np.random.default_rng(1).standard_normal(a.size).astype(np.float32)
    got_w, _ = np.histogram(ad, bins=bins, range=range_, weights=cg.asarray(w, device=on_device))
    assert np.asarray(got_w).dtype == np.float32   # NumPy's: the weights' type
    reference = np.histogram(a, bins=bins, range=range_, weights=w.astype(np.float64))[0]
    _close(np.asarray(got_w).astype(np.float64), reference)
    got_d, _ = np.histogram(ad, bins=bins, range=range_, density=True)
    want_d = np.histogram(a, bins=bins, range=range_, density=True)[0]
    np.testing.assert_allclose(np.asarray(got_d), want_d, rtol=1e-12, equal_nan=True)
    assert cg.on_host_calls() == {}


def test_histogram_errors_are_numpys(on_device):
    a = np.array([1.0, np.nan, 3.0], np.float32)
    ad = cg.asarray(a, device=on_device)
    cases = [({"bins": 5}, a), ({"bins": [3, 1, 2]}, a[[0, 2]]),
             ({"bins": 4, "range": (2, 1)}, a[[0, 2]]), ({"bins": -1}, a[[0, 2]])]
    for kw, data in cases:
        with pytest.raises(ValueError) as want:
            np.histogram(data, **kw)
        with pytest.raises(ValueError, match=str(want.value)[:20].replace("[", r"\[")):
            np.histogram(cg.asarray(data, device=on_device), **kw)
    h, e = np.histogram(ad, bins="auto", range=(0, 4))   # estimators: NumPy's, on the host
    np.testing.assert_array_equal(np.asarray(h), np.histogram(a, bins="auto", range=(0, 4))[0])


def test_host_path_gives_numpys(device):
    if not device.info.host_unified_memory:
        pytest.skip("the host path needs a device whose memory is the host's")
    a = _data(np.float64 if device.info.fp64 else np.float32, 300, seed=3)[10:]   # finite
    ad = cg.asarray(a, device=device)
    h, e = np.histogram(ad, bins=9)
    np.testing.assert_array_equal(np.asarray(h), np.histogram(a, bins=9)[0])
    x = np.arange(30) % 4
    np.testing.assert_array_equal(np.asarray(np.bincount(cg.asarray(x, device=device))),
                                  np.bincount(x))


def test_given_edges_come_back_as_the_callers_object(device):
    """NumPy returns a float64 edge array it was given as it is; so does the device."""
    a = _data(np.float32, 300, seed=5)[10:]
    edges = np.array([-4.0, -1.0, 0.5, 2.0, 6.0])
    with cg.host_path(False if device.info.int64_atomics else True):
        for given in (edges, cg.asarray(edges, device=device)):
            hist, got = np.histogram(cg.asarray(a, device=device), bins=given)
            assert got is given
            np.testing.assert_array_equal(np.asarray(hist), np.histogram(a, bins=edges)[0])
        _, fresh = np.histogram(cg.asarray(a, device=device), bins=[-4, 0, 6])   # made anew
        assert isinstance(fresh, cg.DeviceArray)
